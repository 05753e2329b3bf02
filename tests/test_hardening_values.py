"""Hardening: wrong answers, rejected valid input, raw or wrong errors and memory use of the scatter,
unique, bincount, gather, one_hot, fill/zeros, tile and reshape ops, and big-endian input.

Values are checked against hand-derived numbers or plain Python loops written here."""
import tracemalloc

import ml_dtypes
import numpy as np
import pytest

import reference as R
import segflow as sf
from segflow.framework import errors, ops
from segflow.kernels import BadInput, scatter
from segflow._ops import gather as gather_ops, shape as shape_ops, stitch as stitch_ops
from segflow.ops import variables
from segflow.ops import state_ops

BF16 = np.dtype(ml_dtypes.bfloat16)
I64_MIN = np.iinfo(np.int64).min


def _init(mode):
    if not mode.eager:
        mode.session.run(variables.global_variables_initializer())


def _wrap(v, dtype):
    """v wrapped into `dtype` as two's complement does."""
    bits = 8 * np.dtype(dtype).itemsize
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


# ----------------------------------------------------------------------------------------------
# 5. Integer scatter_div truncates toward zero (and MIN / -1 wraps to MIN)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_scatter_div_int_truncates_toward_zero(mode, dtype):
    x = np.array([-7, 7, -7, 7, 100, -100], dtype)
    ids = np.array([0, 1, 2, 3, 4, 4, 5, 5, 5])              # duplicates divide one after another
    upd = np.array([2, -2, -2, 2, -3, 7, 3, -3, 2], dtype)
    want = [int(v) for v in x]
    for r, u in zip(ids, upd):
        want[r] = int(R.truncatediv(np.int64(want[r]), np.int64(u)))   # C division: toward zero
    assert want == [-3, -3, 3, 3, -4, 5]                     # hand-derived: -7/2 = -3, 100/-3/7 = -4 ...
    v = sf.Variable(x)
    _init(mode)
    got = mode.evaluate(state_ops.scatter_div(v, ids, upd))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.array(want, dtype))


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_scatter_div_int_min_by_minus_one_wraps(mode, dtype):
    lo = int(np.iinfo(dtype).min)
    x = np.array([lo, lo, lo + 1], dtype)
    ids = np.array([0, 1, 1, 2])
    upd = np.array([-1, -1, 2, -1], dtype)
    want = [lo, int(R.truncatediv(np.int64(_wrap(-lo, dtype)), np.int64(2))), -(lo + 1)]
    assert want[0] == lo and want[1] == lo // 2              # MIN / -1 wraps to MIN, then / 2
    v = sf.Variable(x)
    _init(mode)
    np.testing.assert_array_equal(mode.evaluate(state_ops.scatter_div(v, ids, upd)), np.array(want, dtype))


def test_scatter_rows_kernel_int_div_unsigned_and_fallback():
    t = np.array([[7, 9]], np.uint32)
    scatter.scatter_rows(t, np.array([0, 0]), np.array([[2, 4], [3, 2]], np.uint32), "div")
    np.testing.assert_array_equal(t, [[1, 1]])
    t = np.array([[-7, 7, I64_MIN]], np.int64)                # the NumPy fallback truncates as well
    with np.errstate(over="ignore"):
        scatter._numpy_scatter(t, np.array([0, 0]), np.array([[2, -2, -1], [1, 1, 1]], np.int64), scatter.HOWS["div"])
    np.testing.assert_array_equal(t, [[-3, -3, I64_MIN]])


# ----------------------------------------------------------------------------------------------
# 5. scatter_min / scatter_max: a NaN update never wins, a NaN already in the table stays, for
#    every float dtype (float16/bfloat16 used to take a NaN-propagating NumPy path)


def _ref_min_max(x, ids, upd, how):
    out = [float(v) for v in x.astype(np.float64)]
    for r, u in zip(ids, upd.astype(np.float64)):
        if (u < out[r]) if how == "min" else (u > out[r]):   # the compiled loop's rule
            out[r] = float(u)
    return np.array(out)


@pytest.mark.parametrize("how", ["min", "max"])
@pytest.mark.parametrize("dtype", [np.float16, BF16, np.float32, np.float64])
def test_scatter_min_max_ignore_nan_updates(mode, how, dtype):
    nan = np.nan
    x = np.array([1.0, nan, 3.0, 5.0, -2.0], dtype)
    ids = np.array([0, 1, 2, 3, 3, 3, 4, 0])
    upd = np.array([nan, 0.0, 2.0, nan, 4.0, 6.0, nan, 0.5], dtype)
    want = _ref_min_max(x, ids, upd, how)
    if how == "min":
        np.testing.assert_array_equal(want, [0.5, nan, 2.0, 4.0, -2.0])
    else:
        np.testing.assert_array_equal(want, [1.0, nan, 3.0, 6.0, -2.0])
    v = sf.Variable(x)
    _init(mode)
    fn = state_ops.scatter_min if how == "min" else state_ops.scatter_max
    got = mode.evaluate(fn(v, ids, upd))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.astype(np.float64), want)


def test_scatter_min_keeps_signed_zero_like_compiled_path():
    for dtype in (np.float16, BF16, np.float32):
        t = np.array([[0.0, -0.0]], dtype)
        scatter.scatter_rows(t, np.array([0]), np.array([[-0.0, 0.0]], dtype), "min")
        assert np.signbit(t.astype(np.float32)).tolist() == [[False, True]], dtype   # ties keep the table


def test_scatter_min_max_numpy_fallback_follows_the_compiled_rule():
    # the path taken without Numba (and by small integer dtypes): same NaN and signed-zero rules
    for dtype in (np.float16, BF16, np.float64):
        nan = np.nan
        x = np.array([[1.0, nan, 0.0]], dtype)
        rows = np.array([0, 0, 0])
        upd = np.array([[nan, 0.0, -0.0], [0.5, nan, -1.0], [2.0, -5.0, nan]], dtype)
        for how, want in (("min", [0.5, nan, -1.0]), ("max", [2.0, nan, 0.0])):
            t = x.copy()
            with np.errstate(invalid="ignore"):      # scatter_rows sets this for the kernels
                scatter._numpy_scatter(t, rows, upd, scatter.HOWS[how])
            np.testing.assert_array_equal(t.astype(np.float64), [want], err_msg=f"{dtype} {how}")
        t = np.array([[0.0]], dtype)
        scatter._numpy_scatter(t, np.array([0]), np.array([[-0.0]], dtype), scatter.HOWS["min"])
        assert not np.signbit(t.astype(np.float64)).any()


# ----------------------------------------------------------------------------------------------
# 5. unique keeps every NaN distinct (NaN != NaN), as TensorFlow does


@pytest.mark.parametrize("dtype", [np.float16, BF16, np.float32, np.float64, np.complex64])
def test_unique_keeps_nans_distinct(mode, dtype):
    x = np.array([np.nan, 1.0, np.nan, 1.0, 2.0, np.nan], dtype)
    y, idx, count = mode.evaluate(sf.unique_with_counts(x))
    assert y.dtype == dtype
    yy = y.astype(np.complex128)
    assert np.isnan(yy[[0, 2, 4]]).all() and yy[1] == 1 and yy[3] == 2 and y.shape == (5,)
    np.testing.assert_array_equal(idx, [0, 1, 2, 1, 3, 4])
    np.testing.assert_array_equal(count, [1, 2, 1, 1, 1])
    y2, idx2 = mode.evaluate(sf.unique(x))
    np.testing.assert_array_equal(idx2, idx)
    assert y2.shape == (5,)


def test_unique_merges_signed_zeros():
    y, idx = sf.unique(np.array([0.0, -0.0, 1.0], np.float32))
    np.testing.assert_array_equal(idx.numpy(), [0, 0, 1])
    assert y.numpy().tolist() == [0.0, 1.0]


# ----------------------------------------------------------------------------------------------
# 5/7. bincount: big values are handled in int64, never wrapped; big values above maxlength are
#      ignored; empty N-D arrays count nothing


def test_bincount_graph_big_value_is_not_wrapped():
    with ops.Graph().as_default(), sf.Session() as sess:
        arr = shape_ops.placeholder(sf.int64, [None])
        capped = sf.math.bincount(arr, maxlength=3)
        np.testing.assert_array_equal(sess.run(capped, {arr: [2**40, 1, 1]}), [0, 2, 0])
        full = sf.math.bincount(arr)
        # 2**40 + 1 bins (4 TiB): refused as out of memory, not counted into a wrapped int32 size
        with pytest.raises(errors.ResourceExhaustedError, match=r"Bincount"):
            sess.run(full, {arr: [2**40, 1]})


def test_bincount_eager_big_value_is_out_of_memory():
    with pytest.raises(errors.ResourceExhaustedError, match=r"Bincount.*1099511627777"):
        sf.math.bincount(np.array([2**40, 1], np.int64))


def test_bincount_values_beyond_2_62_with_maxlength(mode):
    arr = np.array([2**62, 1, 2**63 - 1, 2, 1], np.int64)
    np.testing.assert_array_equal(mode.evaluate(sf.math.bincount(arr, maxlength=3)), [0, 2, 1])
    w = np.array([1.5, 2.0, 4.0, 8.0, 0.25])
    np.testing.assert_array_equal(mode.evaluate(sf.math.bincount(arr, weights=w, maxlength=3)), [0, 2.25, 8.0])


def test_bincount_empty_rank_2(mode):
    arr = np.zeros((0, 3), np.int32)
    got = mode.evaluate(sf.math.bincount(arr))
    assert got.shape == (0,) and got.dtype == np.int32
    np.testing.assert_array_equal(mode.evaluate(sf.math.bincount(arr, minlength=4)), [0, 0, 0, 0])
    got = mode.evaluate(sf.math.bincount(arr, weights=np.zeros((0, 3)), minlength=2))
    np.testing.assert_array_equal(got, [0.0, 0.0])
    assert got.dtype == np.float64


# ----------------------------------------------------------------------------------------------
# 7. Big-endian NumPy arrays are converted to native byte order


def test_big_endian_arrays_are_accepted(mode):
    a = np.arange(4, dtype=">f4")
    got = mode.evaluate(sf.add(a, a))
    assert got.dtype == np.float32 and got.dtype.isnative
    np.testing.assert_array_equal(got, [0, 2, 4, 6])
    params = np.arange(12.0, dtype=">f8").reshape(4, 3)
    idx = np.array([3, 0], dtype=">i4")
    np.testing.assert_array_equal(mode.evaluate(sf.gather(params, idx)), [[9, 10, 11], [0, 1, 2]])
    np.testing.assert_array_equal(mode.evaluate(sf.reduce_sum(np.array([1, 2, 3], ">i8"))), 6)
    c = sf.constant(np.arange(3, dtype=">i8"))
    assert c.dtype == sf.int64
    assert mode.evaluate(c).dtype.isnative
    c = sf.constant(np.arange(3, dtype=">f4"), dtype=sf.float32)
    np.testing.assert_array_equal(mode.evaluate(c), [0, 1, 2])
    np.testing.assert_array_equal(mode.evaluate(sf.math.unsorted_segment_sum(
        np.array([1.0, 2.0, 4.0], ">f4"), np.array([1, 0, 1], ">i8"), 2)), [2.0, 5.0])


def test_big_endian_eager_tensor_is_native():
    t = ops.convert_to_tensor(np.arange(3, dtype=">u2"))
    assert t.dtype == sf.uint16 and t.numpy().dtype.isnative
    np.testing.assert_array_equal(t.numpy(), [0, 1, 2])
    t = ops.convert_to_tensor(np.float64(2.5).astype(">f8"))
    assert t.numpy().dtype.isnative and t.numpy() == 2.5


# ----------------------------------------------------------------------------------------------
# 8. Out of memory is ResourceExhaustedError naming the op and the shape; int overflow of sizes
#    is InvalidArgumentError


def test_zeros_too_big_is_resource_exhausted(mode):
    with pytest.raises(errors.ResourceExhaustedError, match=r"Fill.*\[1099511627776\].*float32"):
        mode.evaluate(sf.zeros([2**40]))
    with pytest.raises(errors.ResourceExhaustedError, match=r"Fill.*\[1048576, 1048576\].*int64"):
        mode.evaluate(sf.fill([2**20, 2**20], np.int64(3)))


def test_fill_element_count_overflow_is_invalid(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"Fill.*'dims'.*2\*\*63"):
        mode.evaluate(sf.fill(np.array([2**40, 2**40], np.int64), 1.0))


def test_one_hot_depth_beyond_int32_is_invalid(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"OneHot.*'depth'.*2147483648.*int32"):
        mode.evaluate(sf.one_hot([1], 2**31))


def test_one_hot_too_big_is_resource_exhausted(mode):
    with pytest.raises(errors.ResourceExhaustedError, match=r"OneHot.*\[1048576, 1073741824\].*float32"):
        mode.evaluate(sf.one_hot(np.zeros(2**20, np.int32), 2**30))


def test_tile_too_big_and_overflow(mode):
    with pytest.raises(errors.ResourceExhaustedError, match=r"Tile.*\[2, 1099511627776\]"):
        mode.evaluate(sf.tile(np.ones((1, 2)), [2, 2**39]))
    with pytest.raises(errors.InvalidArgumentError, match=r"Tile.*'multiples'.*2\*\*63"):
        mode.evaluate(sf.tile(np.ones((2, 2)), np.array([2**40, 2**40], np.int64)))


def test_kernel_memory_error_becomes_resource_exhausted(mode, monkeypatch):
    from segflow._core.registry import lookup_op

    def kernel(x):
        np.zeros(2**62, np.int8).sum()       # NumPy's own out-of-memory error
        return x

    monkeypatch.setattr(lookup_op("Identity"), "kernel", kernel)
    with pytest.raises(errors.ResourceExhaustedError, match=r"Identity.*\[4611686018427387904\].*int8"):
        mode.evaluate(sf.identity(sf.constant(1.0)))


# ----------------------------------------------------------------------------------------------
# 8. gather / gather_nd: clear errors at graph build and in the kernels


def test_gather_axis_must_be_scalar(mode):
    params = np.ones((2, 3))
    with pytest.raises(errors.InvalidArgumentError, match=r"GatherV2.*'axis'.*scalar"):
        mode.evaluate(sf.gather(params, [0], axis=[1]))


def test_gather_nd_scalar_indices(mode):
    params = np.ones((2, 3))
    with pytest.raises(errors.InvalidArgumentError, match=r"GatherNd.*'indices'.*rank >= 1"):
        mode.evaluate(sf.gather_nd(params, 1))


def test_gather_nd_depth_beyond_rank_at_run_time():
    with ops.Graph().as_default(), sf.Session() as sess:
        p = shape_ops.placeholder(sf.float32)
        i = shape_ops.placeholder(sf.int32)
        out = sf.gather_nd(p, i)
        with pytest.raises(errors.InvalidArgumentError, match=r"GatherNd.*'indices'.*depth.*3.*rank 2"):
            sess.run(out, {p: np.ones((2, 3)), i: [[0, 0, 0]]})
        with pytest.raises(errors.InvalidArgumentError, match=r"GatherNd.*'indices'.*\[1, 3\]"):
            sess.run(out, {p: np.ones((2, 3)), i: [[0, 0], [1, 3]]})
        np.testing.assert_array_equal(sess.run(out, {p: np.arange(6.0).reshape(2, 3), i: [[1, 2], [0, 1]]}),
                                      [5.0, 1.0])


def test_gather_kernels_reject_float_indices():
    with pytest.raises(BadInput, match=r"indices has dtype float64; indices must be int16 or int32 or int64"):
        gather_ops.take_rows(np.ones((3, 2)), np.array([np.nan, 0.0]))
    with pytest.raises(BadInput, match=r"indices has dtype float32"):
        gather_ops._gather_nd_kernel(np.ones((3, 2)), np.array([[0.5]], np.float32))
    with pytest.raises(BadInput, match=r"indices\[1\] = 3 is .*\[0, 3\)"):
        gather_ops.take_rows(np.ones((3, 2)), np.array([0, 3]))


def test_gather_nd_values_still_right(mode):
    p = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(mode.evaluate(sf.gather_nd(p, [[1, 2], [0, 0]])), [p[1, 2], p[0, 0]])
    np.testing.assert_array_equal(mode.evaluate(sf.gather_nd(p, [1, 2, 3])), p[1, 2, 3])
    np.testing.assert_array_equal(mode.evaluate(sf.gather_nd(p, np.zeros((2, 0), np.int32))), [p, p])
    np.testing.assert_array_equal(mode.evaluate(sf.gather_nd(np.zeros((2, 0)), [[1]])), np.zeros((1, 0)))
    np.testing.assert_array_equal(mode.evaluate(sf.gather_nd(p, [[[1], [0]]], batch_dims=0)), [[p[1], p[0]]])


# ----------------------------------------------------------------------------------------------
# 8. Accepted though invalid: one_hot depth 2.5, float tile multiples, float reshape shapes,
#    dynamic_partition with num_partitions <= 0


def test_one_hot_fractional_depth_is_rejected(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"OneHot.*'depth'"):
        mode.evaluate(sf.one_hot([1], 2.5))
    with pytest.raises(TypeError):
        mode.evaluate(sf.one_hot([1], 2.5))
    with pytest.raises(errors.InvalidArgumentError, match=r"OneHot.*'depth'"):
        mode.evaluate(sf.one_hot([1], sf.constant(2.5)))


@pytest.mark.parametrize("mult", [[2.0], [2.5], np.array([2.0], np.float32)])
def test_tile_float_multiples_rejected(mode, mult):
    with pytest.raises(errors.InvalidArgumentError, match=r"Tile.*'multiples'"):
        mode.evaluate(sf.tile(sf.constant([1, 2]), mult))
    with pytest.raises(TypeError):
        mode.evaluate(sf.tile(sf.constant([1, 2]), sf.constant(np.asarray(mult, np.float32))))


@pytest.mark.parametrize("shape", [[2.0], [2.5, 1], np.array([2.0])])
def test_reshape_float_shape_rejected(mode, shape):
    with pytest.raises(errors.InvalidArgumentError, match=r"Reshape.*'shape'"):
        mode.evaluate(sf.reshape(sf.constant([1, 2]), shape))
    with pytest.raises(TypeError):
        mode.evaluate(sf.reshape(sf.constant([1, 2]), sf.constant(np.asarray(shape, np.float32))))


def test_fill_float_dims_rejected(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"Fill.*'dims'"):
        mode.evaluate(sf.fill([2.5], 1.0))
    with pytest.raises(errors.InvalidArgumentError, match=r"Fill.*'dims'"):
        mode.evaluate(sf.zeros([2.5]))


def test_shapes_with_integer_values_still_work(mode):
    np.testing.assert_array_equal(mode.evaluate(sf.reshape(sf.constant([1, 2]), [np.int64(2), 1])), [[1], [2]])
    np.testing.assert_array_equal(mode.evaluate(sf.tile(sf.constant([1, 2]), np.array([2], np.uint8))),
                                  [1, 2, 1, 2])
    assert mode.evaluate(sf.zeros(sf.TensorShape([2, 3]))).shape == (2, 3)
    assert mode.evaluate(sf.ones((), dtype=sf.int32)) == 1


@pytest.mark.parametrize("make", [
    lambda: sf.broadcast_to(1.0, [2.0]),
    lambda: sf.transpose(np.ones((2, 3)), [1.0, 0.0]),
    lambda: sf.expand_dims(np.ones(2), 0.0),
    lambda: sf.slice(np.ones(3), [0.5], [1.0]),
    lambda: sf.pad(np.ones(2), [[1.0, 0.0]]),
    lambda: sf.reverse(np.ones(2), [0.0]),
    lambda: sf.concat([np.ones(2), np.ones(2)], 0.0),
])
def test_float_index_arguments_rejected(mode, make):
    with pytest.raises(errors.InvalidArgumentError, match=r"dtype float(32|64) is not supported"):
        mode.evaluate(make())


@pytest.mark.parametrize("n", [0, -1])
def test_dynamic_partition_needs_a_partition(mode, n):
    with pytest.raises(errors.InvalidArgumentError, match=r"DynamicPartition.*num_partitions.*at least 1"):
        mode.evaluate(sf.dynamic_partition(sf.constant([1, 2]), sf.constant([0, 0]), n))


def test_dynamic_partition_fractional_count_rejected():
    with pytest.raises(TypeError, match=r"num_partitions"):
        sf.dynamic_partition(sf.constant([1, 2]), sf.constant([0, 0]), 2.5)


def test_dynamic_partition_kernel_rejects_zero_partitions():
    with pytest.raises(BadInput, match=r"num_partitions"):
        stitch_ops.partition(np.ones(2), np.zeros(2, np.int32), 0)


# ----------------------------------------------------------------------------------------------
# 9. one_hot fills the output once: ~1x the output's memory, and the same values


@pytest.mark.parametrize("axis", [-1, 0, 1, 2])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8])
def test_one_hot_values(mode, axis, dtype):
    idx = np.array([[0, 3, -1], [2, 9, 1]]).astype(dtype) if dtype != np.uint8 else \
        np.array([[0, 3, 255], [2, 9, 1]], np.uint8)
    got = mode.evaluate(sf.one_hot(idx, 4, on_value=5.0, off_value=-1.0, axis=axis))
    want = R.one_hot(idx, 4, 5.0, -1.0, axis)
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    assert got.flags.c_contiguous


def test_one_hot_edge_shapes(mode):
    assert mode.evaluate(sf.one_hot(np.zeros((0, 2), np.int32), 3)).shape == (0, 2, 3)
    assert mode.evaluate(sf.one_hot([1, 2], 0)).shape == (2, 0)
    np.testing.assert_array_equal(mode.evaluate(sf.one_hot(2, 3, dtype=sf.int64)), [0, 0, 1])
    np.testing.assert_array_equal(mode.evaluate(sf.one_hot([True and 1], 2, on_value=True, off_value=False)),
                                  [[False, True]])


def test_one_hot_memory_is_about_the_output():
    idx = np.random.default_rng(0).integers(-2, 1000, size=20000).astype(np.int32)
    sf.one_hot(idx[:10], 1000)          # warm up
    tracemalloc.start()
    try:
        out = sf.one_hot(idx, 1000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    nbytes = out.numpy().nbytes
    assert peak / nbytes < 1.1, peak / nbytes
    want = np.zeros((20000, 1000), np.float32)
    ok = (idx >= 0) & (idx < 1000)
    want[np.flatnonzero(ok), idx[ok]] = 1
    np.testing.assert_array_equal(out.numpy(), want)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32, np.uint64, np.int8, np.int64])
def test_scatter_div_int_extremes_are_exact(dtype):
    """Big unsigned values stay exact (a loop that mixes uint64 with -1 computes in float64)."""
    from segflow.kernels import scatter as scatter_kernels
    info = np.iinfo(dtype)
    table = np.array([[info.max, 7, info.min]], dtype)
    scatter_kernels.scatter_rows(table, np.array([0]), np.array([[3, 2, 1]], dtype), "div")
    np.testing.assert_array_equal(table, np.array([[int(info.max) // 3, 3, int(info.min)]]).astype(dtype))

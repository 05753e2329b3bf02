"""Bugs the hardening fuzz suite (tests/fuzz) found: hangs, NumPy/Python exceptions, silent wrong
answers and needless allocations in dynamic_partition, dynamic_stitch, zeros/ones/fill, bincount,
gather, reshape, unique, one_hot, Session feeds, embedding_lookup, scatter_nd on variables, tile,
unsorted_segment_prod and updates run through a Session.

Each test failed before its fix. Expected values are hand-derived or computed with NumPy here.
"""
import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import segflow as sf
from segflow.client.session import Session
from segflow.framework import errors, ops
from segflow.ops import variables

I64_MIN = np.iinfo(np.int64).min


def _graph_run(build, feed=None):
    """Builds `build()` (-> fetches, or (fetches, {placeholder: value})) in a new graph; runs it."""
    g = ops.Graph()
    with g.as_default():
        out = build()
        fetches, fd = out if isinstance(out, tuple) else (out, None)
        return Session(graph=g).run(fetches, fd)


# ----------------------------------------------------------------------------------------------
# 1. dynamic_partition with num_partitions of 2**31 and up hung (one output spec or array per
#    partition was built first). TF reads the attr as an int32: InvalidArgumentError.

_HUGE_PARTITIONS = textwrap.dedent("""
    import resource, numpy as np, segflow as sf
    from segflow.framework import errors, ops
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))   # a runaway allocation fails fast
    data, parts = np.ones(3), np.array([0, 0, 0], np.int32)
    for n in (2**31, 2**40, 2**62, np.int64(2**40)):
        try:
            sf.dynamic_partition(data, parts, n)
            print("eager", n, "returned")
        except errors.InvalidArgumentError as e:
            print("eager", n, "invalid", "int32" in str(e) and "num_partitions" in str(e))
        with ops.Graph().as_default():
            try:
                sf.dynamic_partition(data, parts, n)
                print("graph", n, "returned")
            except errors.InvalidArgumentError as e:
                print("graph", n, "invalid", "int32" in str(e) and "num_partitions" in str(e))
    # fits int32, but 2**31 - 1 outputs cannot fit in memory: refused before any is made
    try:
        sf.dynamic_partition(data, parts, 2**31 - 1)
        print("eager max returned")
    except errors.ResourceExhaustedError as e:
        print("eager max exhausted", "num_partitions" in str(e))
""")


def test_dynamic_partition_huge_num_partitions_is_refused_not_hung():
    out = subprocess.run([sys.executable, "-c", _HUGE_PARTITIONS], capture_output=True, text=True, timeout=120)
    lines = out.stdout.split("\n")
    assert out.returncode == 0, out.stderr[-2000:]
    for mode in ("eager", "graph"):
        for n in (2**31, 2**40, 2**62, 2**40):
            assert f"{mode} {n} invalid True" in lines, out.stdout
    assert "eager max exhausted True" in lines, out.stdout


def test_dynamic_partition_valid_counts_still_split(mode):
    parts = mode.evaluate(sf.dynamic_partition(np.array([10., 20., 30., 40.]), np.array([1, 0, 1, 2], np.int32),
                                               np.int64(3)))
    for got, want in zip(parts, [[20.], [10., 30.], [40.]]):
        np.testing.assert_array_equal(got, want)


# ----------------------------------------------------------------------------------------------
# 2. A float num_partitions raised a plain TypeError; now a segflow error (still a TypeError)


@pytest.mark.parametrize("n", [2.5, 2.0, True])
def test_dynamic_partition_float_num_partitions_is_a_segflow_error(mode, n):
    with pytest.raises(errors.InvalidArgumentError, match=r"DynamicPartition.*num_partitions.*int") as e:
        sf.dynamic_partition(np.ones(2), np.array([0, 0], np.int32), n)
    assert isinstance(e.value, TypeError)


# ----------------------------------------------------------------------------------------------
# 3. zeros/ones/fill of an empty shape whose other dims overflow: NumPy's ValueError "array is too
#    big". NumPy cannot describe such an array: InvalidArgumentError naming the shape. An empty
#    shape NumPy can describe is still answered, however big its dims.


@pytest.mark.parametrize("make", [
    lambda: sf.zeros([2**62, 0, 2**40]),
    lambda: sf.ones([0, 2**62], dtype=sf.float64),
    lambda: sf.fill([2**62, 0, 2**40], 1.5),
    lambda: sf.zeros([2**63 - 1, 0], dtype=sf.int32),
])
def test_empty_shape_numpy_cannot_describe_is_invalid(mode, make):
    with pytest.raises(errors.InvalidArgumentError, match=r"Fill.*'dims'.*empty.*2\*\*63 - 1 bytes"):
        mode.evaluate(make())


def test_empty_shape_with_huge_dims_is_answered(mode):
    got = mode.evaluate(sf.zeros([2**40, 0]))
    assert got.shape == (2**40, 0) and got.dtype == np.float32
    got = mode.evaluate(sf.ones([0, 2**63 - 1], dtype=sf.bool))      # 2**63 - 1 bytes: just fits
    assert got.shape == (0, 2**63 - 1) and got.dtype == np.bool_


# ----------------------------------------------------------------------------------------------
# 4/14. bincount read float values as Python ints before checking the dtype (ValueError for NaN,
#       OverflowError for inf / 1e30), overflowed on 2**63 - 1, took empty bool / float arrays,
#       and took empty weights of another shape than arr as "count".


@pytest.mark.parametrize("arr", [np.array([1.0, np.nan]), np.array([1.0, np.inf]), np.array([1e30], np.float32),
                                 np.array([], np.float32), np.array([], bool), np.array([True, False])])
def test_bincount_refuses_a_non_integer_arr(arr):
    with pytest.raises(errors.InvalidArgumentError, match=r"Bincount.*'arr'.*dtype") as e:
        sf.math.bincount(arr)
    assert isinstance(e.value, TypeError)


def test_bincount_int64_max_value():
    with pytest.raises(errors.InvalidArgumentError, match=r"Bincount.*'arr'.*9223372036854775808 bins"):
        sf.math.bincount(np.array([2**63 - 1]))
    # capped by maxlength the count is small: values >= maxlength are ignored
    np.testing.assert_array_equal(sf.math.bincount(np.array([2**63 - 1, 1, 1]), maxlength=3).numpy(), [0, 2, 0])


def test_bincount_int64_max_value_in_a_graph():
    def build():
        a = sf.placeholder(sf.int64, None)
        return sf.math.bincount(a, maxlength=4), {a: np.array([1, 2**63 - 1, 3, 3])}
    np.testing.assert_array_equal(_graph_run(build), [0, 1, 0, 2])


@pytest.mark.parametrize("arr, weights", [
    (np.array([1, 2], np.int32), np.ones(3)),
    (np.array([], np.int32), np.zeros((0, 1))),          # empty, but of another shape: not "count"
    (np.array([1, 2], np.int32), np.zeros(0)),
])
def test_bincount_weights_must_have_arr_shape(mode, arr, weights):
    with pytest.raises(errors.InvalidArgumentError, match=r"Bincount.*'weights'.*shape"):
        mode.evaluate(sf.math.bincount(arr, weights=weights))


def test_bincount_weights_shape_checked_at_run_time():
    def build():
        a, w = sf.placeholder(sf.int32, None), sf.placeholder(sf.float32, None)
        return sf.math.bincount(a, weights=w), {a: np.zeros(0, np.int32), w: np.zeros((0, 1), np.float32)}
    with pytest.raises(errors.InvalidArgumentError, match=r"Bincount.*'weights'.*\[0, 1\].*\[0\]"):
        _graph_run(build)


def test_bincount_values(mode):
    # bins 0..3: 1 appears twice (0.5 + 0.25), 3 once (2.0)
    np.testing.assert_allclose(mode.evaluate(sf.math.bincount(np.array([1, 1, 3], np.int32),
                                                              weights=np.array([0.5, 0.25, 2.0]))),
                               [0.0, 0.75, 0.0, 2.0])
    np.testing.assert_array_equal(mode.evaluate(sf.math.bincount(np.array([[2, 0], [2, 2]]))), [1, 0, 3])
    got = mode.evaluate(sf.math.bincount([]))                 # a Python [] is an empty int32 arr, as in TF
    assert got.shape == (0,) and got.dtype == np.int32
    got = mode.evaluate(sf.math.bincount(np.zeros(0, np.int32), weights=np.zeros(0, np.float64), minlength=2))
    np.testing.assert_array_equal(got, [0.0, 0.0])
    assert got.dtype == np.float64


# ----------------------------------------------------------------------------------------------
# 5. Graph gather with batch_dims beyond the indices' rank: IndexError in inference


@pytest.mark.parametrize("batch_dims", [1, 2, -1])
def test_gather_batch_dims_beyond_indices_rank_in_a_graph(batch_dims):
    with ops.Graph().as_default():
        p = sf.placeholder(sf.int32, [])
        with pytest.raises(errors.InvalidArgumentError, match=r"GatherV2.*batch_dims.*rank 0"):
            sf.gather(np.zeros((3, 1)), p, batch_dims=batch_dims)


def test_gather_batch_dims_in_range_still_right():
    params = np.arange(6.0).reshape(3, 2)

    def build():
        p = sf.placeholder(sf.int32, [3, None])
        return sf.gather(params, p, axis=1, batch_dims=-1), {p: [[1], [0], [1]]}
    np.testing.assert_array_equal(_graph_run(build), [[1.0], [2.0], [5.0]])


# ----------------------------------------------------------------------------------------------
# 6. Graph dynamic_stitch with a constant negative index: ValueError "Dimension -1 must be >= 0"


def test_dynamic_stitch_constant_negative_index_in_a_graph():
    with ops.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match=r"DynamicStitch.*'indices'.*= -2 is negative"):
            sf.dynamic_stitch([np.array([-2], np.int32)], [np.ones(1)])
        with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\]\[1\] = -1 is negative"):
            sf.dynamic_stitch([np.array([0], np.int32), np.array([1, -1], np.int32)], [np.ones(1), np.ones(2)])


# ----------------------------------------------------------------------------------------------
# 7. reshape took any negative size for -1: [-2] gave (4,), [-3, 2] gave (3, 2)


@pytest.mark.parametrize("shape", [[-2], [-3, 2], [2, -5], [-1, -1]])
def test_reshape_only_one_minus_one(mode, shape):
    with pytest.raises(errors.InvalidArgumentError, match=r"Reshape.*'shape'"):
        mode.evaluate(sf.reshape(np.ones(6), shape))


def test_reshape_fed_negative_size():
    def build():
        p = sf.placeholder(sf.int32, [None])
        return sf.reshape(np.ones(4), p), {p: [-2]}
    with pytest.raises(errors.InvalidArgumentError, match=r"Reshape.*'shape'.*-2"):
        _graph_run(build)


def test_reshape_values_still_right(mode):
    x = np.arange(6.0)
    np.testing.assert_array_equal(mode.evaluate(sf.reshape(x, [-1, 2])), x.reshape(3, 2))
    np.testing.assert_array_equal(mode.evaluate(sf.reshape(x, [2, -1, 3])), x.reshape(2, 1, 3))
    assert mode.evaluate(sf.reshape(np.zeros(0), [2**40, 0])).shape == (2**40, 0)


# ----------------------------------------------------------------------------------------------
# 8. dynamic_stitch / parallel_dynamic_stitch took float indices (1.7 -> row 1)


@pytest.mark.parametrize("fn", [sf.dynamic_stitch, sf.parallel_dynamic_stitch])
def test_dynamic_stitch_refuses_float_indices(fn):
    with pytest.raises(errors.InvalidArgumentError, match=r"'indices'.*indices\[0\] has dtype float64"):
        fn([np.array([0.0, 1.7])], [np.ones(2)])
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] has dtype float32"):
        fn([np.array([0], np.int32), np.array([1.0], np.float32)], [np.ones(1), np.ones(1)])


@pytest.mark.parametrize("fn", [sf.dynamic_stitch, sf.parallel_dynamic_stitch])
def test_dynamic_stitch_int_indices_values(fn):
    # later entries win for row 1; row 3 is named by nobody: 0
    got = fn([np.array([0, 1], np.int64), np.array([1, 4], np.int32)],
             [np.array([[1., 2.], [3., 4.]]), np.array([[5., 6.], [7., 8.]])]).numpy()
    np.testing.assert_array_equal(got, [[1, 2], [5, 6], [0, 0], [0, 0], [7, 8]])


# ----------------------------------------------------------------------------------------------
# 9. unique / unique_with_counts took out_idx float32 / int16 / uint8


@pytest.mark.parametrize("out_idx", [sf.float32, sf.int16, sf.uint8])
@pytest.mark.parametrize("fn", [sf.unique, sf.unique_with_counts])
def test_unique_out_idx_must_be_int32_or_int64(mode, fn, out_idx):
    with pytest.raises(errors.InvalidArgumentError, match=r"Unique.*out_idx.*int32 or int64") as e:
        fn(np.array([1, 1]), out_idx=out_idx)
    assert isinstance(e.value, TypeError)


def test_unique_int64_out_idx_values(mode):
    y, idx, count = mode.evaluate(list(sf.unique_with_counts(np.array([3, 1, 3, 3]), out_idx=sf.int64)))
    np.testing.assert_array_equal(y, [3, 1])
    np.testing.assert_array_equal(idx, [0, 1, 0, 0])
    np.testing.assert_array_equal(count, [3, 1])
    assert idx.dtype == count.dtype == np.int64


# ----------------------------------------------------------------------------------------------
# 10. one_hot took an integral float depth (4.0, np.float32(3)); TF: TypeError, depth is int32


@pytest.mark.parametrize("depth", [4.0, np.float32(3), np.float64(2)])
def test_one_hot_float_depth_is_a_dtype_error(mode, depth):
    with pytest.raises(errors.InvalidArgumentError, match=r"OneHot.*'depth'.*int32") as e:
        sf.one_hot([0, 1], depth)
    assert isinstance(e.value, TypeError)


# ----------------------------------------------------------------------------------------------
# 11. one_hot: an int64 depth fed 2**32 wrapped to 0 (shape (2, 0)) in the int32 cast


def test_one_hot_int64_depth_beyond_int32_at_run_time():
    def build(value):
        def b():
            n = sf.placeholder(sf.int64, [])
            return sf.one_hot([0, 1], n), {n: value}
        return b
    with pytest.raises(errors.InvalidArgumentError, match=r"OneHot.*'depth'.*4294967296.*int32"):
        _graph_run(build(2**32))
    np.testing.assert_array_equal(_graph_run(build(3)), [[1, 0, 0], [0, 1, 0]])


def test_one_hot_int64_depth_tensor_eagerly():
    np.testing.assert_array_equal(sf.one_hot([2, 0], sf.constant(3, sf.int64)).numpy(), [[0, 0, 1], [1, 0, 0]])
    with pytest.raises(errors.InvalidArgumentError, match=r"OneHot.*'depth'.*4294967296.*int32"):
        sf.one_hot([0], sf.constant(2**32, sf.int64))


# ----------------------------------------------------------------------------------------------
# 12. A float feed of 2.0**63 into an int64 placeholder wrapped to INT64_MIN (compared as floats
#     against float(2**63 - 1), which rounds up to 2**63)


def _feed(dtype, value):
    def build():
        p = sf.placeholder(dtype, [])
        return sf.identity(p), {p: value}
    return _graph_run(build)


@pytest.mark.parametrize("dtype, value", [(sf.int64, 2.0**63), (sf.int64, np.float32(2.0**63)),
                                          (sf.int32, 2.0**31), (sf.int32, -2.0**31 - 1), (sf.uint8, 256.0),
                                          (sf.uint64, 2.0**64), (sf.int64, np.inf)])
def test_float_feed_out_of_integer_range(dtype, value):
    with pytest.raises(errors.InvalidArgumentError, match=r"out of range.*" + dtype.name):
        _feed(dtype, value)


def test_float_feed_at_integer_bounds_is_exact():
    assert _feed(sf.int64, -2.0**63) == I64_MIN
    assert _feed(sf.int64, 2.0**62) == 2**62
    assert _feed(sf.int64, 9.223372036854775e18) == 9223372036854774784     # the largest float < 2**63
    assert _feed(sf.int32, 2.0**31 - 1) == 2**31 - 1
    assert _feed(sf.uint64, 2.0**63) == 2**63


# ----------------------------------------------------------------------------------------------
# 13. embedding_lookup 'div' on a partitioned table answered a row for huge ids: the int32 cast of
#     the partition wrapped into range (-2**63 + 1 -> partition 0, 2**32 + 1 -> partition 0)

_TABLE = [np.array([[1.0], [2.0]]), np.array([[3.0]])]


@pytest.mark.parametrize("strategy", ["div", "mod"])
@pytest.mark.parametrize("bad", [-2**63 + 1, -2**63, 2**32 + 1, 2**31, 3, -1, 2**63 - 1])
def test_embedding_lookup_out_of_range_ids_raise(mode, strategy, bad):
    with pytest.raises(errors.InvalidArgumentError):
        mode.evaluate(sf.compat.v1.nn.embedding_lookup(_TABLE, np.array([0, bad]), partition_strategy=strategy))


@pytest.mark.parametrize("strategy", ["div", "mod"])
@pytest.mark.parametrize("ids", [np.array([1], np.uint8), np.zeros((0, 0), np.uint8), np.array([True]),
                                 np.array([1.0])])
def test_embedding_lookup_partitioned_refuses_non_int_ids(mode, strategy, ids):
    # found by the long fuzz run once the partition was clipped: uint8 / bool ids cannot hold -1
    with pytest.raises(errors.InvalidArgumentError, match=r"GatherV2.*'indices'.*dtype.*int32, int64") as e:
        mode.evaluate(sf.compat.v1.nn.embedding_lookup(_TABLE, ids, partition_strategy=strategy))
    assert isinstance(e.value, TypeError)


def test_embedding_lookup_partitioned_values(mode):
    # div: rows 0, 1 in partition 0, row 2 in partition 1; mod: 0, 2 in partition 0, 1 in partition 1
    got = mode.evaluate(sf.compat.v1.nn.embedding_lookup(_TABLE, np.array([2, 0, 1]), partition_strategy="div"))
    np.testing.assert_array_equal(got, [[3.0], [1.0], [2.0]])
    got = mode.evaluate(sf.compat.v1.nn.embedding_lookup(_TABLE, np.array([2, 0, 1]), partition_strategy="mod"))
    np.testing.assert_array_equal(got, [[2.0], [1.0], [3.0]])


# ----------------------------------------------------------------------------------------------
# 15. Empty inner dimensions: reshape((-1,) + tail) with a 0 in tail is ambiguous for NumPy
#     ("cannot reshape array of size 0 into shape (0)")


@pytest.mark.parametrize("fn", [sf.dynamic_stitch, sf.parallel_dynamic_stitch])
def test_dynamic_stitch_empty_inner_dims(mode, fn):
    got = mode.evaluate(fn([np.array([1, 0], np.int32)], [np.zeros((2, 0))]))
    assert got.shape == (2, 0) and got.dtype == np.float64
    got = mode.evaluate(fn([np.array([3], np.int32), np.array([[0, 1]], np.int32)],
                           [np.zeros((1, 2, 0), np.float32), np.zeros((1, 2, 2, 0), np.float32)]))
    assert got.shape == (4, 2, 0) and got.dtype == np.float32


@pytest.mark.parametrize("how", ["add", "sub", "update"])
@pytest.mark.parametrize("shape, indices, updates", [
    ((3, 0), [[1]], np.zeros((1, 0))),
    ((3, 2, 0), [[1, 1], [2, 0]], np.zeros((2, 0))),
    ((3, 0, 2), [[1]], np.zeros((1, 0, 2))),
])
def test_scatter_nd_on_variable_with_empty_inner_dims(mode, how, shape, indices, updates):
    v = variables.Variable(np.zeros(shape))
    if not mode.eager:
        mode.session.run(variables.global_variables_initializer())
    op = getattr(sf, "scatter_nd_" + how)(v, np.array(indices), updates)
    if not mode.eager:
        mode.session.run(op)
    got = mode.evaluate(v.read_value())
    assert got.shape == shape
    with pytest.raises(errors.InvalidArgumentError, match=r"ScatterNd.*'indices'.*does not index"):
        mode.evaluate(getattr(sf, "scatter_nd_" + how)(v, np.array([[3] + [0] * (len(indices[0]) - 1)]),
                                                      updates[:1]))


def test_scatter_nd_on_variable_values_still_right():
    v = sf.Variable(np.arange(6.0).reshape(3, 2))
    sf.scatter_nd_add(v, np.array([[1]]), np.array([[10.0, 20.0]]))
    sf.scatter_nd_update(v, np.array([[2, 1]]), np.array([-1.0]))
    np.testing.assert_array_equal(v.numpy(), [[0, 1], [12, 23], [4, -1]])


# ----------------------------------------------------------------------------------------------
# 16. tile with an empty result allocated an intermediate (ResourceExhausted for [2**40, 0])


def test_tile_empty_result_with_huge_multiple(mode):
    got = mode.evaluate(sf.tile(np.ones((1, 1), np.float32), [2**40, 0]))
    assert got.shape == (2**40, 0) and got.dtype == np.float32
    got = mode.evaluate(sf.tile(np.ones((0, 3), np.int8), [2**62, 2]))
    assert got.shape == (0, 6) and got.dtype == np.int8


def test_tile_empty_result_whose_dim_overflows_int64(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"Tile.*'multiples'.*9223372036854775808.*int64"):
        mode.evaluate(sf.tile(np.ones((0, 2)), np.array([2**62, 2**62])))      # 2 * 2**62 overflows


def test_tile_values_still_right(mode):
    x = np.array([[1, 2]], np.int32)
    np.testing.assert_array_equal(mode.evaluate(sf.tile(x, [2, 3])), np.tile(x, (2, 3)))


# ----------------------------------------------------------------------------------------------
# 17. unsorted_segment_prod of complex data with an empty inner shape allocated a count per
#     segment (8 TiB for 2**40 segments)


@pytest.mark.parametrize("dtype", [np.complex64, np.float32])
def test_unsorted_segment_prod_empty_rows_huge_num_segments(mode, dtype):
    got = mode.evaluate(sf.math.unsorted_segment_prod(np.ones((2, 0), dtype), np.array([0, 1]), 2**40))
    assert got.shape == (2**40, 0) and got.dtype == dtype


def test_segment_prod_empty_rows_huge_last_id(mode):
    got = mode.evaluate(sf.math.segment_prod(np.ones((2, 0), np.complex64), np.array([0, 2**40])))
    assert got.shape == (2**40 + 1, 0) and got.dtype == np.complex64


def test_unsorted_segment_prod_complex_values_still_right(mode):
    data = np.array([1 + 1j, 2, 3j, 4], np.complex64)
    got = mode.evaluate(sf.math.unsorted_segment_prod(data, np.array([0, 1, 0, -1]), 3))
    np.testing.assert_allclose(got, [(1 + 1j) * 3j, 2, 1])
    with pytest.raises(errors.InvalidArgumentError, match=r"segment_ids\[1\] = 2 is out of range"):
        mode.evaluate(sf.math.unsorted_segment_prod(np.ones((2, 0), np.complex64), np.array([0, 2]), 2))


# ----------------------------------------------------------------------------------------------
# 18. Session.run on the result of v.scatter_add outside `with graph.as_default():` built the read
#     eagerly ("symbolic tensor ... cannot be used while executing eagerly")


@pytest.mark.parametrize("how", ["function", "method"])
def test_session_runs_an_update_result_outside_its_graph(how):
    g = ops.Graph()
    with g.as_default():
        v = variables.Variable(np.array([1.0, 2.0, 3.0], np.float32))
        if how == "function":
            result = sf.scatter_add(v, [1], [5.0])
        else:
            result = v.scatter_add(sf.IndexedSlices(sf.constant([5.0]), sf.constant([1])))
        init = variables.global_variables_initializer()
    sess = Session(graph=g)
    sess.run(init)
    np.testing.assert_array_equal(sess.run(result), [1.0, 7.0, 3.0])
    np.testing.assert_array_equal(sess.run(result), [1.0, 12.0, 3.0])     # each run applies the update
    assert math.isclose(float(sess.run(result)[1]), 17.0)

"""The segment family: unsorted, sorted and sparse segment reductions and bincount. Values against
the NumPy references in tests/reference.py for every supported dtype, edge
cases (empty data and segments, negative ids, N-D ids, ties), gradients against numerical Jacobians
in both modes and to second order, errors with their messages, num_segments fed at run time."""
import ml_dtypes
import numpy as np
import pytest

import reference as R
import segflow as sf
from segflow.framework import errors, ops
from segflow.ops import gradient_checker, gradient_checker_v2
from segflow._ops import segment as segment_ops, shape as shape_ops
from segflow.ops import math_ops

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.float16, BF16, np.float32, np.float64]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
COMPLEX = [np.complex64, np.complex128]
ALL = FLOATS + INTS + COMPLEX
UNSORTED = ["sum", "prod", "max", "min", "mean", "sqrt_n"]
SORTED = ["sum", "prod", "max", "min", "mean"]
SPARSE = ["sum", "mean", "sqrt_n"]


def supported(kind, dtype):
    kind_char = np.dtype(dtype).kind
    if kind in ("max", "min"):
        return kind_char != "c"
    if kind in ("mean", "sqrt_n"):
        return kind_char not in "iu"
    return True


def dtype_cases(kinds):
    return [pytest.param(k, d, id=f"{k}-{np.dtype(d).name}") for k in kinds for d in ALL if supported(k, d)]


# ----------------------------------------------------------------------------------------------
# NumPy references: tests/reference.py's, accumulating wide (float64, int64, uint64, complex128) and
# rounding once to the data's dtype, as the kernels do.


def ref_unsorted(kind, data, ids, n):
    return R.unsorted_segment_reduce(kind, data, ids, n, acc_dtype=R.wide(data.dtype))


def ref_sorted(kind, data, ids):
    return R.segment_reduce(kind, data, ids, acc_dtype=R.wide(data.dtype))


def ref_sparse(kind, data, indices, ids, n=None):
    return R.sparse_segment_reduce(kind, data, indices, ids, n, acc_dtype=R.wide(data.dtype))


def sample(dtype, shape, seed=0, low=-3, high=4):
    """Small integers (exact in every dtype, products stay small); complex gets an imaginary part."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "u":
        low = 0
    x = rng.integers(low, high, size=shape).astype(np.float64)
    if dtype.kind == "c":
        x = x + 1j * rng.integers(low, high, size=shape)
    return x.astype(dtype)


def assert_values(got, want):
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
        return
    tol = {np.dtype(np.float16): 2e-3, BF16: 1e-2, np.dtype(np.float32): 1e-6,
           np.dtype(np.complex64): 1e-6}.get(want.dtype, 1e-12)
    cast = np.complex128 if want.dtype.kind == "c" else np.float64
    np.testing.assert_allclose(got.astype(cast), want.astype(cast), rtol=tol, atol=tol)


UNSORTED_FN = {k: getattr(sf.math, f"unsorted_segment_{k}") for k in UNSORTED}
SORTED_FN = {k: getattr(sf.math, f"segment_{k}") for k in SORTED}
SPARSE_FN = {k: getattr(sf.math, f"sparse_segment_{k}") for k in SPARSE}
UNSORTED_OP = {"sum": "UnsortedSegmentSum", "prod": "UnsortedSegmentProd", "max": "UnsortedSegmentMax",
               "min": "UnsortedSegmentMin", "mean": "UnsortedSegmentMean", "sqrt_n": "UnsortedSegmentSqrtN"}

# Segments 2 and 4 are empty; one row is dropped (-1); segment 3 has three rows.
IDS = np.array([3, 0, -1, 3, 1, 0, 3])
IDS_2D = np.array([[3, 0], [-1, 3], [1, 1]])
SORTED_IDS = np.array([0, 0, 1, 3, 3, 3])  # segment 2 is a gap


# ----------------------------------------------------------------------------------------------
# Values


@pytest.mark.parametrize("kind,dtype", dtype_cases(UNSORTED))
def test_unsorted_values_every_dtype(mode, kind, dtype):
    data = sample(dtype, (7, 2))
    got = mode.evaluate(UNSORTED_FN[kind](data, IDS.astype(np.int32), 5))
    assert_values(got, ref_unsorted(kind, data, IDS, 5))
    # N-D ids: the leading dims of data are indexed by position.
    data = sample(dtype, (3, 2, 2), seed=1)
    got = mode.evaluate(UNSORTED_FN[kind](data, IDS_2D, np.int64(5)))
    assert_values(got, ref_unsorted(kind, data, IDS_2D, 5))


@pytest.mark.parametrize("kind", UNSORTED)
def test_unsorted_int64_ids_sorted_ids_and_1d_data(mode, kind):
    data = sample(np.float64, (7,))
    for ids in (IDS.astype(np.int64), np.sort(IDS)):
        got = mode.evaluate(UNSORTED_FN[kind](data, ids, sf.constant(6, dtype=sf.int64)))
        assert_values(got, ref_unsorted(kind, data, ids, 6))


@pytest.mark.parametrize("kind", UNSORTED)
def test_unsorted_empty_data_and_segments(mode, kind):
    data = np.zeros((0, 3), np.float32)
    got = mode.evaluate(UNSORTED_FN[kind](data, np.zeros((0,), np.int32), 2))
    lo, hi = R.lowest(np.float32), R.highest(np.float32)
    fill = {"prod": 1, "max": lo, "min": hi}.get(kind, 0)
    np.testing.assert_array_equal(got, np.full((2, 3), fill, np.float32))
    got = mode.evaluate(UNSORTED_FN[kind](data, np.zeros((0,), np.int32), 0))
    assert got.shape == (0, 3)
    # All ids negative: every segment is empty.
    got = mode.evaluate(UNSORTED_FN[kind](np.ones((2, 3), np.float32), [-1, -5], 2))
    np.testing.assert_array_equal(got, np.full((2, 3), fill, np.float32))


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.float16, BF16])
def test_unsorted_empty_max_min_are_dtype_extremes(mode, dtype):
    lo, hi = R.lowest(dtype), R.highest(dtype)
    data = np.array([1, 2], dtype)
    got_max = mode.evaluate(sf.math.unsorted_segment_max(data, [0, 0], 2))
    got_min = mode.evaluate(sf.math.unsorted_segment_min(data, [0, 0], 2))
    np.testing.assert_array_equal(got_max.astype(np.float64), np.array([2, lo], np.float64))
    np.testing.assert_array_equal(got_min.astype(np.float64), np.array([1, hi], np.float64))


@pytest.mark.parametrize("indices", [np.array([0, 4, 0, 8, 3, 8, 4, 7, 7, 3]),
                                     np.array([0, 4, 0, 8, 3, 8, 4, 7, 7, 3]).reshape(5, 2)],
                         ids=["flat", "2d"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.complex64, np.complex128])
def test_drop_negatives(mode, indices, dtype):
    # TF's testDropNegatives: ids 8 become -1, so row 8 of the answer becomes 0.
    num_segments = 12
    data = sample(dtype, indices.shape + (2,))
    want = ref_unsorted("sum", data, indices, num_segments)
    want[8:] = 0
    indices = np.where(indices == 8, -1, indices)
    s = sf.math.unsorted_segment_sum(data=data, segment_ids=indices, num_segments=num_segments)
    if not mode.eager:
        assert s.shape.as_list() == list(want.shape)
    assert_values(mode.evaluate(s), want)


@pytest.mark.parametrize("kind,dtype", dtype_cases(SORTED))
def test_sorted_values_every_dtype(mode, kind, dtype):
    data = sample(dtype, (6, 2))
    got = mode.evaluate(SORTED_FN[kind](data, SORTED_IDS.astype(np.int32)))
    want = ref_sorted(kind, data, SORTED_IDS)
    assert_values(got, want)
    if kind in ("max", "min"):
        np.testing.assert_array_equal(got[2], 0)  # sorted max/min: an empty segment holds 0


@pytest.mark.parametrize("kind", SORTED)
def test_sorted_int64_ids_nd_data_empty(mode, kind):
    data = sample(np.float64, (6, 2, 3))
    got = mode.evaluate(SORTED_FN[kind](data, SORTED_IDS.astype(np.int64)))
    assert_values(got, ref_sorted(kind, data, SORTED_IDS))
    got = mode.evaluate(SORTED_FN[kind](np.zeros((0, 2)), np.zeros((0,), np.int64)))
    assert got.shape == (0, 2)
    got = mode.evaluate(SORTED_FN[kind](np.array([5.0, 7.0]), [2, 2]))  # leading empty segments
    assert_values(got, ref_sorted(kind, np.array([5.0, 7.0]), np.array([2, 2])))


SPARSE_DTYPES = [pytest.param(k, d, id=f"{k}-{np.dtype(d).name}") for k in SPARSE
                 for d in FLOATS + ([np.int32, np.int64, np.uint8] if k == "sum" else [])]


@pytest.mark.parametrize("kind,dtype", SPARSE_DTYPES)
def test_sparse_values(mode, kind, dtype):
    data = sample(dtype, (5, 2))
    indices = np.array([0, 0, 4, 2, 1, 4])  # repeated indices; segment 1 is a gap
    ids = np.array([0, 0, 0, 2, 3, 3])
    got = mode.evaluate(SPARSE_FN[kind](data, indices, ids))
    assert_values(got, ref_sparse(kind, data, indices, ids))
    got = mode.evaluate(SPARSE_FN[kind](data, indices.astype(np.int32), ids.astype(np.int32), num_segments=6))
    assert_values(got, ref_sparse(kind, data, indices, ids, 6))
    with_n = getattr(sf.math, f"sparse_segment_{kind}_with_num_segments")
    assert_values(mode.evaluate(with_n(data, indices, ids, 4)), ref_sparse(kind, data, indices, ids, 4))


@pytest.mark.parametrize("kind", SPARSE)
def test_sparse_empty(mode, kind):
    data = np.ones((3, 2), np.float32)
    empty = np.zeros((0,), np.int32)
    assert mode.evaluate(SPARSE_FN[kind](data, empty, empty)).shape == (0, 2)
    got = mode.evaluate(SPARSE_FN[kind](data, empty, empty, num_segments=2))
    np.testing.assert_array_equal(got, np.zeros((2, 2), np.float32))


def test_unsupported_dtypes_are_refused(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"UnsortedSegmentMax.*'data'.*complex64 is not supported"):
        mode.evaluate(sf.math.unsorted_segment_max(np.ones(2, np.complex64), [0, 1], 2))
    with pytest.raises(errors.InvalidArgumentError, match=r"UnsortedSegmentSqrtN.*'data'.*int32 is not supported"):
        mode.evaluate(sf.math.unsorted_segment_sqrt_n(np.ones(2, np.int32), [0, 1], 2))
    with pytest.raises(errors.InvalidArgumentError, match=r"SegmentMean.*'data'.*bool is not supported"):
        mode.evaluate(sf.math.segment_mean(np.ones(2, np.bool_), [0, 1]))
    with pytest.raises(errors.InvalidArgumentError, match=r"SparseSegmentMean.*'data'.*int32 is not supported"):
        mode.evaluate(sf.math.sparse_segment_mean(np.ones(2, np.int32), [0, 1], [0, 1]))
    with pytest.raises(errors.InvalidArgumentError, match=r"UnsortedSegmentSum.*'segment_ids'.*float32"):
        mode.evaluate(sf.math.unsorted_segment_sum(np.ones(2), np.array([0.0, 1.0], np.float32), 2))
    with pytest.raises(errors.InvalidArgumentError, match=r"UnsortedSegmentSum.*'num_segments'.*float32"):
        mode.evaluate(sf.math.unsorted_segment_sum(np.ones(2), [0, 1], np.float32(2)))


def test_faces_share_one_definition():
    assert math_ops.unsorted_segment_sum is segment_ops.unsorted_segment_sum
    for name in segment_ops.__all__:
        assert getattr(sf.math, name) is getattr(segment_ops, name)
        assert getattr(math_ops, name) is getattr(segment_ops, name)


# ----------------------------------------------------------------------------------------------
# Ties


def gradient_value(mode, f, x0):
    """The gradient of the scalar f at x0: GradientTape eagerly, sf.gradients in a graph."""
    x = sf.constant(x0)
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return tape.gradient(y, x).numpy()
    return mode.evaluate(sf.gradients(f(x), x)[0])


def test_max_min_ties_split_the_gradient(mode):
    data = np.array([[1.0, 5.0], [3.0, 5.0], [3.0, 4.0], [2.0, 2.0], [9.0, 9.0]])
    ids = np.array([0, 0, 0, 1, -1])
    w = np.array([[1.0, 10.0], [100.0, 1000.0]])
    want_max = np.array([[0, 5], [0.5, 5], [0.5, 0], [100, 1000], [0, 0]], np.float64)
    want_min = np.array([[1, 0], [0, 0], [0, 10], [100, 1000], [0, 0]], np.float64)
    for fn, want in ((sf.math.unsorted_segment_max, want_max), (sf.math.unsorted_segment_min, want_min)):
        got = gradient_value(mode, lambda x: sf.reduce_sum(fn(x, ids, 2) * w), data)
        np.testing.assert_array_equal(got, want)
    # The sorted ops split ties the same way.
    for fn, want in ((sf.math.segment_max, want_max[:4]), (sf.math.segment_min, want_min[:4])):
        got = gradient_value(mode, lambda x: sf.reduce_sum(fn(x, ids[:4]) * w), data[:4])
        np.testing.assert_array_equal(got, want)


# ----------------------------------------------------------------------------------------------
# Gradients


def jacobians(mode, f, x0, delta=None):
    """(theoretical, numerical) Jacobians of f at x0: gradient_checker_v2 eagerly, the v1 graph
    checker (placeholder input, Session) in graph mode."""
    if mode.eager:
        kw = {} if delta is None else {"delta": delta}
        theory, numeric = gradient_checker_v2.compute_gradient(f, [x0], **kw)
        return theory[0], numeric[0]
    x = shape_ops.placeholder(sf.as_dtype(x0.dtype), x0.shape)
    y = f(x)
    y_shape = y.shape.as_list() if y.shape.is_fully_defined() else list(mode.session.run(y, {x: x0}).shape)
    return gradient_checker.compute_gradient(x, x0.shape, y, y_shape, x_init_value=x0,
                                             delta=1e-3 if delta is None else delta)


def check_gradient(mode, f, x0, tol=1e-7):
    theory, numeric = jacobians(mode, f, x0)
    assert np.any(theory != 0)
    np.testing.assert_allclose(theory, numeric, rtol=tol, atol=tol)


def check_second_order(mode, f, x0, tol=1e-6):
    """The Jacobian of the gradient of the scalar f (its Hessian) against numerical differences."""
    if mode.eager:
        def grad(x):
            with sf.GradientTape() as tape:
                tape.watch(x)
                y = f(x)
            return ops.convert_to_tensor(tape.gradient(y, x))
        theory, numeric = gradient_checker_v2.compute_gradient(grad, [x0])
        theory, numeric = theory[0], numeric[0]
    else:
        x = shape_ops.placeholder(sf.float64, x0.shape)
        g = ops.convert_to_tensor(sf.gradients(f(x), x)[0])
        theory, numeric = gradient_checker.compute_gradient(x, x0.shape, g, x0.shape, x_init_value=x0)
    assert np.any(theory != 0)
    np.testing.assert_allclose(theory, numeric, rtol=tol, atol=tol)


def distinct(shape, seed=0):
    """Values far apart (no ties within a numerical step), away from 0."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n) + 1.0 + rng.uniform(0, 0.5, n)).reshape(shape) * rng.choice([-1, 1], n).reshape(shape) / n


@pytest.mark.parametrize("kind", UNSORTED)
@pytest.mark.parametrize("ids", [IDS, IDS_2D], ids=["1d", "2d"])
def test_unsorted_gradient(mode, kind, ids):
    x0 = distinct(ids.shape + (2,))
    check_gradient(mode, lambda x: UNSORTED_FN[kind](x, ids, 5), x0)


@pytest.mark.parametrize("kind", SORTED)
def test_sorted_gradient(mode, kind):
    x0 = distinct((6, 2))
    check_gradient(mode, lambda x: SORTED_FN[kind](x, SORTED_IDS), x0)


@pytest.mark.parametrize("kind", SPARSE)
@pytest.mark.parametrize("num_segments", [None, 6])
def test_sparse_gradient(mode, kind, num_segments):
    x0 = distinct((5, 2))
    indices, ids = np.array([0, 0, 4, 2, 1, 4]), np.array([0, 0, 0, 2, 3, 3])
    check_gradient(mode, lambda x: SPARSE_FN[kind](x, indices, ids, num_segments=num_segments), x0)


@pytest.mark.parametrize("ids", [IDS, SORTED_IDS], ids=["unsorted", "sorted"])
@pytest.mark.parametrize("zeros", [[], [0], [0, 3], [3, 4, 5]], ids=["none", "one", "two", "three"])
def test_prod_gradient_with_zeros(mode, ids, zeros):
    # Zeros land in one segment (3): the product of the others, or 0 with two zeros or more.
    rows = [i for i, s in enumerate(ids) if s == 3][:max(len(zeros), 1)]
    x0 = distinct((len(ids), 2)) * 3
    x0[rows[:len(zeros)], 0] = 0.0
    if ids is IDS:
        f = lambda x: sf.math.unsorted_segment_prod(x, ids, 5)  # noqa: E731
    else:
        f = lambda x: sf.math.segment_prod(x, ids)  # noqa: E731
    check_gradient(mode, f, x0)


def test_prod_gradient_complex(mode):
    x0 = distinct((7, 2)) + 1j * distinct((7, 2), seed=1)
    check_gradient(mode, lambda x: sf.math.unsorted_segment_prod(x, IDS, 5), x0)
    check_gradient(mode, lambda x: sf.math.segment_prod(x[:6], SORTED_IDS), x0)


@pytest.mark.parametrize("kind", ["sum", "mean", "sqrt_n"])
def test_complex_gradients(mode, kind):
    x0 = distinct((7, 2)) + 1j * distinct((7, 2), seed=1)
    check_gradient(mode, lambda x: UNSORTED_FN[kind](x, IDS, 5), x0)


W5 = np.arange(1.0, 11.0).reshape(5, 2) / 10


@pytest.mark.parametrize("kind", UNSORTED)
def test_unsorted_second_order(mode, kind):
    ids = np.array([[3, 0], [-1, 3], [1, 2]])  # no empty segment (max/min would hold extremes)
    w = W5[:4, None, :]
    x0 = distinct((3, 2, 2))
    if kind == "prod":
        check_second_order(mode, lambda x: sf.reduce_sum(sf.math.unsorted_segment_prod(x, ids, 4) * w), x0)
        x0[0, 0, 0] = x0[1, 1, 0] = 0.0  # two zeros in segment 3: the Hessian still holds
        check_second_order(mode, lambda x: sf.reduce_sum(sf.math.unsorted_segment_prod(x, ids, 4) * w), x0)
        return
    def f(x):
        y = UNSORTED_FN[kind](x, ids, 4)
        return sf.reduce_sum(y * y * w)
    check_second_order(mode, f, x0)


@pytest.mark.parametrize("kind", SORTED)
def test_sorted_second_order(mode, kind):
    x0 = distinct((6, 2))
    w = W5[:4]
    if kind == "prod":
        x0[3, 1] = 0.0  # one zero
        check_second_order(mode, lambda x: sf.reduce_sum(sf.math.segment_prod(x, SORTED_IDS) * w), x0)
        return
    def f(x):
        y = SORTED_FN[kind](x, SORTED_IDS)
        return sf.reduce_sum(y * y * w)
    check_second_order(mode, f, x0)


@pytest.mark.parametrize("kind", SPARSE)
def test_sparse_second_order(mode, kind):
    x0 = distinct((5, 2))
    indices, ids = np.array([0, 0, 4, 2, 1, 4]), np.array([0, 0, 0, 2, 3, 3])
    def f(x):
        y = SPARSE_FN[kind](x, indices, ids)
        return sf.reduce_sum(y * y * W5[:4])
    check_second_order(mode, f, x0)


def test_sparse_grad_op_is_adjoint_to_third_order(mode):
    # d/dx of sum(w * g(x)) where g is the gradient of a sparse op: exercises SparseSegment*Grad's own
    # gradient (the forward op) and that one's gradient again.
    x0 = distinct((5, 2))
    indices, ids = np.array([0, 0, 4, 2, 1, 4]), np.array([0, 0, 0, 2, 3, 3])
    def f(x):
        g = segment_ops.sparse_segment_grad("mean", x[:4] * x[:4], indices, ids, 5)
        return sf.reduce_sum(g * g * W5)
    check_second_order(mode, f, x0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_gradient_matches_segment_sum(dtype):
    # TF's testGradientMatchesSegmentSum: on sorted, contiguous ids the Jacobians of
    # UnsortedSegmentSum and SegmentSum agree (graph mode, delta=1: both are linear).
    indices = [0, 0, 1, 1, 1, 2, 3, 4, 5]
    n = len(indices)
    num_cols = 2
    shape = [n, num_cols]
    num_segments = max(indices) + 1
    np_x = sample(dtype, shape)
    with ops.Graph().as_default(), sf.Session():
        tf_x = sf.constant(np_x)
        unsorted_s = math_ops.unsorted_segment_sum(data=tf_x, segment_ids=indices, num_segments=num_segments)
        unsorted_t, unsorted_n = gradient_checker.compute_gradient(
            tf_x, shape, unsorted_s, [num_segments, num_cols], x_init_value=np_x, delta=1)
        sorted_s = math_ops.segment_sum(data=tf_x, segment_ids=indices)
        sorted_t, sorted_n = gradient_checker.compute_gradient(
            tf_x, shape, sorted_s, [num_segments, num_cols], x_init_value=np_x, delta=1)
    np.testing.assert_allclose(unsorted_t, sorted_t)
    np.testing.assert_allclose(unsorted_n, sorted_n)
    np.testing.assert_allclose(unsorted_t, unsorted_n, rtol=1e-6, atol=1e-6)


def test_dropped_rows_get_zero_gradient(mode):
    ids = np.array([1, -1, 0, -3])
    for fn in (sf.math.unsorted_segment_sum, sf.math.unsorted_segment_mean, sf.math.unsorted_segment_prod,
               sf.math.unsorted_segment_max, sf.math.unsorted_segment_sqrt_n):
        got = gradient_value(mode, lambda x: sf.reduce_sum(fn(x, ids, 2)), np.ones((4, 2)))
        np.testing.assert_array_equal(got, [[1, 1], [0, 0], [1, 1], [0, 0]])


def test_mean_gradient_values(mode):
    # Hand-derived: segment 0 has 3 rows (1/3 each), segment 1 one row; sqrt_n: 1/sqrt(3), 1.
    ids = [0, 1, 0, -1, 0]
    for fn, a in ((sf.math.unsorted_segment_mean, 1 / 3), (sf.math.unsorted_segment_sqrt_n, 1 / np.sqrt(3))):
        got = gradient_value(mode, lambda x: sf.reduce_sum(fn(x, ids, 3)), np.ones(5))
        np.testing.assert_allclose(got, [a, 1, a, 0, a])


# ----------------------------------------------------------------------------------------------
# num_segments at run time and static shapes


@pytest.mark.parametrize("ndtype", [sf.int32, sf.int64])
@pytest.mark.parametrize("kind", UNSORTED)
def test_num_segments_fed_at_run_time(kind, ndtype):
    data = sample(np.float64, (7, 2))
    with ops.Graph().as_default(), sf.Session() as sess:
        n = shape_ops.placeholder(ndtype, [])
        x = shape_ops.placeholder(sf.float64, [7, 2])
        y = UNSORTED_FN[kind](x, IDS, n)
        assert y.shape.as_list() == [None, 2]
        for rows in (5, 8):
            assert_values(sess.run(y, {n: rows, x: data}), ref_unsorted(kind, data, IDS, rows))
        # The gradient builds without knowing num_segments either.
        g = sf.gradients(y, x)[0]
        assert sess.run(g, {n: 5, x: distinct((7, 2))}).shape == (7, 2)
        with pytest.raises(errors.InvalidArgumentError,
                           match=rf"{UNSORTED_OP[kind]}.*segment_ids\[0\] = 3 is out of range \[0, 2\)"):
            sess.run(y, {n: 2, x: data})
        with pytest.raises(errors.InvalidArgumentError, match=r"num_segments.*-1"):
            sess.run(y, {n: -1, x: data})


def test_static_shapes_in_graph():
    with ops.Graph().as_default():
        assert sf.math.unsorted_segment_sum(np.ones((3, 2, 3)), IDS_2D, 5).shape.as_list() == [5, 3]
        # sorted and sparse ops without num_segments: rows unknown until run, as TF's shape function
        assert sf.math.segment_max(np.ones((6, 2)), SORTED_IDS).shape.as_list() == [None, 2]
        assert sf.math.segment_max(np.ones((0, 2)), np.zeros(0, np.int32)).shape.as_list() == [0, 2]
        ids = shape_ops.placeholder(sf.int32, [6])
        assert sf.math.segment_max(np.ones((6, 2)), ids).shape.as_list() == [None, 2]
        assert sf.math.sparse_segment_sum(np.ones((5, 2)), [0, 1], [0, 2]).shape.as_list() == [None, 2]
        assert sf.math.sparse_segment_sum(np.ones((5, 2)), [0, 1], [0, 2], num_segments=7).shape.as_list() == [7, 2]
        assert sf.math.bincount([1, 5, 2]).shape.as_list() == [6]


def test_num_segments_as_python_numpy_and_tensor():
    data = sample(np.float32, (7, 2))
    want = ref_unsorted("sum", data, IDS, 5)
    for n in (5, np.int32(5), np.int64(5), sf.constant(5), sf.constant(5, dtype=sf.int64)):
        assert_values(sf.math.unsorted_segment_sum(data, IDS, n).numpy(), want)


# ----------------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize("kind", UNSORTED)
def test_unsorted_id_out_of_range(mode, kind):
    data = np.ones((2, 3, 4), np.float32)
    ids = np.array([[0, 1, 2], [3, 4, 7]])
    with pytest.raises(errors.InvalidArgumentError,
                       match=rf"{UNSORTED_OP[kind]}.*segment_ids\[1,2\] = 7 is out of range \[0, 5\)"):
        mode.evaluate(UNSORTED_FN[kind](data, ids, 5))
    with pytest.raises(errors.InvalidArgumentError, match=r"segment_ids\[3\] = 5 is out of range \[0, 5\)"):
        mode.evaluate(UNSORTED_FN[kind](np.ones(4, np.float32), [0, 1, 2, 5], 5))


def test_errors_name_the_node_in_graph():
    with ops.Graph().as_default(), sf.Session() as sess:
        y = sf.math.unsorted_segment_sum(np.ones(3), [0, 9, 1], 4, name="seg")
        with pytest.raises(errors.InvalidArgumentError,
                           match=r"UnsortedSegmentSum 'seg': input 'segment_ids': segment_ids\[1\] = 9 "
                                 r"is out of range \[0, 4\)"):
            sess.run(y)


def test_unsorted_bad_arguments(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"UnsortedSegmentSum.*'num_segments'.*-1"):
        mode.evaluate(sf.math.unsorted_segment_sum(np.ones(3), [0, 1, 1], -1))
    with pytest.raises(errors.InvalidArgumentError, match=r"UnsortedSegmentSum.*'segment_ids'.*not a prefix"):
        mode.evaluate(sf.math.unsorted_segment_sum(np.ones((4, 2)), [0, 1, 1], 3))
    with pytest.raises(errors.InvalidArgumentError, match=r"UnsortedSegmentMax.*'segment_ids'.*not a prefix"):
        mode.evaluate(sf.math.unsorted_segment_max(np.ones((4, 2)), np.zeros((4, 3), np.int32), 3))
    with pytest.raises(errors.InvalidArgumentError, match=r"UnsortedSegmentSum.*'num_segments'.*scalar"):
        mode.evaluate(sf.math.unsorted_segment_sum(np.ones(3), [0, 1, 1], [3]))


@pytest.mark.parametrize("kind", SORTED)
def test_sorted_errors(mode, kind):
    op = {"sum": "SegmentSum", "prod": "SegmentProd", "max": "SegmentMax", "min": "SegmentMin",
          "mean": "SegmentMean"}[kind]
    fn = SORTED_FN[kind]
    data = np.ones((4, 2))
    with pytest.raises(errors.InvalidArgumentError,
                       match=rf"{op}.*'segment_ids'.*segment ids are not increasing: segment_ids\[2\] = 1 follows 2"):
        mode.evaluate(fn(data, [0, 2, 1, 3]))
    with pytest.raises(errors.InvalidArgumentError, match=rf"{op}.*'segment_ids'.*segment_ids\[0\] = -1 is negative"):
        mode.evaluate(fn(data, [-1, 0, 0, 1]))
    with pytest.raises(errors.InvalidArgumentError, match=rf"{op}.*'segment_ids'.*length of data's first dimension"):
        mode.evaluate(fn(data, [0, 0, 1]))
    with pytest.raises(errors.InvalidArgumentError, match=rf"{op}.*'segment_ids'.*1-D"):
        mode.evaluate(fn(data, [[0, 0, 1, 1]]))
    with pytest.raises(errors.InvalidArgumentError, match=rf"{op}.*'data'.*Shape must be at least rank 1 but is rank 0"):
        mode.evaluate(fn(np.float64(1.0), [0]))


def test_sparse_errors(mode):
    data = np.ones((4, 2))
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"SparseSegmentSum.*'indices'.*indices\[1\] = 9 is out of range \[0, 4\)"):
        mode.evaluate(sf.math.sparse_segment_sum(data, [0, 9, 1], [0, 0, 1]))
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"SparseSegmentMean.*segment ids are not increasing: segment_ids\[2\] = 0 follows 1"):
        mode.evaluate(sf.math.sparse_segment_mean(data, [0, 1, 2], [0, 1, 0]))
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"SparseSegmentSqrtNWithNumSegments.*segment_ids\[2\] = 5 is out of range \[0, 3\)"):
        mode.evaluate(sf.math.sparse_segment_sqrt_n(data, [0, 1, 2], [0, 1, 5], num_segments=3))
    with pytest.raises(errors.InvalidArgumentError, match=r"SparseSegmentSum.*'segment_ids'.*shape \(2,\).*indices shape \(3,\)"):
        mode.evaluate(sf.math.sparse_segment_sum(data, [0, 1, 2], [0, 1]))
    with pytest.raises(errors.InvalidArgumentError, match=r"SparseSegmentSum.*segment_ids\[0\] = -2 is negative"):
        mode.evaluate(sf.math.sparse_segment_sum(data, [0, 1], [-2, 0]))


# ----------------------------------------------------------------------------------------------
# bincount


@pytest.mark.parametrize("case", [
    dict(arr=[1, 1, 3, 7, 0]),
    dict(arr=[[1, 1], [3, 7]], minlength=10),
    dict(arr=[1, 1, 3, 7], maxlength=4),
    dict(arr=[1, 1, 3, 7], minlength=3, maxlength=5),
    dict(arr=[1, 1, 3, 7], maxlength=0),
    dict(arr=[], minlength=3),
    dict(arr=[]),
    dict(arr=[2, 0, 2], dtype=np.int64),
    dict(arr=[2, 0, 2], dtype=np.float32),
    dict(arr=[2, 0, 2, 6], weights=np.array([0.5, 1.5, 2.0, 4.0])),
    dict(arr=[[2, 0], [2, 6]], weights=np.array([[1, 2], [3, 4]], np.int64), maxlength=3),
])
def test_bincount_values(mode, case):
    arr = np.asarray(case["arr"], np.int32)
    kwargs = {k: v for k, v in case.items() if k != "arr"}
    got = mode.evaluate(sf.math.bincount(arr, **kwargs))
    assert_values(got, R.bincount(arr, **kwargs))


def test_bincount_fed_at_run_time_and_gradient():
    with ops.Graph().as_default(), sf.Session() as sess:
        arr = shape_ops.placeholder(sf.int32, [None])
        w = shape_ops.placeholder(sf.float64, [None])
        counts = sf.math.bincount(arr, minlength=4, maxlength=6)
        sums = sf.math.bincount(arr, weights=w, maxlength=6)
        feed = {arr: [1, 9, 1, 2], w: [1.0, 2.0, 3.0, 4.0]}
        np.testing.assert_array_equal(sess.run(counts, feed), [0, 2, 1, 0, 0, 0])
        np.testing.assert_array_equal(sess.run(sums, feed), [0, 4, 4, 0, 0, 0])
        assert sess.run(counts, {arr: np.zeros(0, np.int32)}).tolist() == [0, 0, 0, 0]
        g = sf.gradients(sf.reduce_sum(sums * np.arange(1.0, 7.0)), w)[0]
        np.testing.assert_array_equal(sess.run(g, feed), [2, 0, 2, 3])  # the 9 was ignored


def test_bincount_errors(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"Bincount.*'arr'.*arr\[1\] = -2 is negative"):
        mode.evaluate(sf.math.bincount(np.array([1, -2, 3], np.int32)))
    with pytest.raises(errors.InvalidArgumentError, match=r"Bincount.*'weights'.*shape"):
        mode.evaluate(sf.math.bincount(np.array([1, 2, 3], np.int32), weights=[1.0, 2.0]))


# ----------------------------------------------------------------------------------------------
# Large inputs: the kernels' parallel, bucketed and run-length paths


@pytest.mark.parametrize("D", [1, 3])
def test_large_inputs_match_reference(D):
    rng = np.random.default_rng(7)
    n = 40000
    data = rng.normal(size=(n, D)).reshape((n,) if D == 1 else (n, D))
    for S, sort in ((300, False), (200000, False), (300, True), (60000, True)):
        ids = rng.integers(-2, S, n)
        if sort:
            ids = np.sort(ids)
        for kind in ("sum", "max", "mean"):
            got = UNSORTED_FN[kind](data, ids, S).numpy()
            np.testing.assert_allclose(got, ref_unsorted(kind, data, ids, S), rtol=1e-9, atol=1e-9)
    ids = np.sort(rng.integers(0, 300, n))
    out = np.zeros((300,) + data.shape[1:])
    np.add.at(out, ids, data)
    np.testing.assert_allclose(sf.math.segment_sum(data, ids).numpy(), out, rtol=1e-9, atol=1e-9)
    # Long runs of gathered rows, one column too (a kernel revision once read those rows in place).
    indices = rng.integers(0, n, n)
    for S in (300, 60000):
        ids = np.sort(rng.integers(0, S, n))
        want = np.zeros((S + 2,) + data.shape[1:])
        np.add.at(want, ids, data[indices])
        got = sf.math.sparse_segment_sum(data, indices, ids, num_segments=S + 2).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
        counts = np.maximum(np.bincount(ids, minlength=S + 2), 1).reshape((-1,) + (1,) * (data.ndim - 1))
        got = sf.math.sparse_segment_mean(data, indices, ids, num_segments=S + 2).numpy()
        np.testing.assert_allclose(got, want / counts, rtol=1e-9, atol=1e-9)


ALL_FNS = [pytest.param(lambda x, k=k: UNSORTED_FN[k](x, IDS, 5), id=f"unsorted_{k}") for k in UNSORTED] + \
    [pytest.param(lambda x, k=k: SORTED_FN[k](x[:6], SORTED_IDS), id=f"segment_{k}") for k in SORTED] + \
    [pytest.param(lambda x, k=k: SPARSE_FN[k](x, [0, 6, 6, 2], [0, 0, 1, 3]), id=f"sparse_{k}") for k in SPARSE]


@pytest.mark.parametrize("f", ALL_FNS)
def test_gradient_through_a_gather_of_the_output(mode, f):
    # Gathering rows of the output sends an IndexedSlices gradient into the segment op's gradient.
    check_gradient(mode, lambda x: sf.gather(f(x), [3, 0, 3]), distinct((7, 2)))


def test_public_docstrings_give_args_returns_raises():
    for name in segment_ops.__all__:
        doc = getattr(segment_ops, name).__doc__
        for part in ("Args:", "Returns:", "Raises:"):
            assert part in doc, (name, part)
        assert "<Args" not in doc


def test_sparse_negative_num_segments(mode):
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"SparseSegmentSumWithNumSegments.*'num_segments'.*num_segments = -2 must not be negative"):
        mode.evaluate(sf.math.sparse_segment_sum(np.ones((3, 2)), [0, 1], [0, 0], num_segments=-2))


def test_gradients_with_shapes_known_only_at_run_time():
    x0 = distinct((3, 2, 2))
    w = np.arange(1.0, 9.0).reshape(4, 2)
    full = np.array([[3, 0], [-1, 3], [1, 2]])  # no empty segment: max/min stay finite
    want = {}
    for kind in UNSORTED:  # eagerly, with everything known
        xe = sf.constant(x0)
        with sf.GradientTape() as tape:
            tape.watch(xe)
            y = sf.reduce_sum(UNSORTED_FN[kind](xe, full, 4) * w)
        want[kind] = tape.gradient(y, xe).numpy()
    with ops.Graph().as_default(), sf.Session() as sess:
        x = shape_ops.placeholder(sf.float64, None)
        ids = shape_ops.placeholder(sf.int64, None)
        n = shape_ops.placeholder(sf.int32, [])
        for kind in UNSORTED:
            g = sf.gradients(sf.reduce_sum(UNSORTED_FN[kind](x, ids, n) * w), x)[0]
            np.testing.assert_allclose(sess.run(g, {x: x0, ids: full, n: 4}), want[kind], rtol=1e-12)
        sids = shape_ops.placeholder(sf.int32, None)
        for kind in SORTED:
            g = sf.gradients(sf.reduce_sum(SORTED_FN[kind](x, sids) * w), x)[0]
            assert sess.run(g, {x: x0.reshape(6, 2), sids: SORTED_IDS}).shape == (6, 2)
        for kind in SPARSE:
            g = sf.gradients(sf.reduce_sum(SPARSE_FN[kind](x, [0, 0, 5], sids) * w), x)[0]
            assert sess.run(g, {x: x0.reshape(6, 2), sids: [0, 1, 3]}).shape == (6, 2)


# ----------------------------------------------------------------------------------------------
# Property tests through the ops, and gradients in low precision

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

PROPERTY = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(st.data())
def test_property_ops_match_references(draw):
    rng = np.random.default_rng(draw.draw(st.integers(0, 2**32 - 1)))
    n = draw.draw(st.integers(0, 40))
    tail = tuple(draw.draw(st.lists(st.integers(1, 3), max_size=2)))
    S = draw.draw(st.integers(0, 12))
    data = rng.normal(size=(n,) + tail)
    ids = rng.integers(-2, S, n) if S else np.full(n, -1)
    for kind in UNSORTED:
        np.testing.assert_allclose(UNSORTED_FN[kind](data, ids, S).numpy(), ref_unsorted(kind, data, ids, S),
                                   rtol=1e-12, atol=1e-12)
    sids = np.sort(rng.integers(0, max(S, 1), n))
    for kind in SORTED:
        np.testing.assert_allclose(SORTED_FN[kind](data, sids).numpy(), ref_sorted(kind, data, sids),
                                   rtol=1e-12, atol=1e-12)
    if n:
        m = draw.draw(st.integers(0, 30))
        indices = rng.integers(0, n, m)
        sids = np.sort(rng.integers(0, max(S, 1), m))
        for kind in SPARSE:
            got = SPARSE_FN[kind](data, indices, sids, num_segments=max(S, 1)).numpy()
            np.testing.assert_allclose(got, ref_sparse(kind, data, indices, sids, max(S, 1)), rtol=1e-12, atol=1e-12)


@pytest.mark.filterwarnings("ignore:overflow")  # empty max/min segments hold the dtype's extremes
@pytest.mark.parametrize("dtype", [np.float16, BF16, np.float32])
@pytest.mark.parametrize("f", ALL_FNS)
def test_gradients_in_low_precision(dtype, f):
    # The same gradient as in float64, to the dtype's precision.
    x64 = distinct((7, 2))
    shape = f(sf.constant(x64)).numpy().shape
    w = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape) / 4
    grads = []
    for x0 in (x64, x64.astype(dtype)):
        x = sf.constant(x0)
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = sf.reduce_sum(f(x) * w.astype(x0.dtype))
        g = tape.gradient(y, x).numpy()
        assert g.dtype == x0.dtype
        grads.append(g.astype(np.float64))
    np.testing.assert_allclose(grads[1], grads[0], rtol=3e-2, atol=3e-2)


def test_scalar_data_with_scalar_id(mode):
    # 0-d ids are a prefix of 0-d data: the output has num_segments rows of shape ().
    got = mode.evaluate(sf.math.unsorted_segment_sum(np.float64(3.0), np.int32(1), 3))
    np.testing.assert_array_equal(got, [0.0, 3.0, 0.0])

"""Reductions (reduction_ops.py) and their gradients (reduction_grad.py): reduce_sum/mean/max/min/prod/
any/all over axis None/int/list/negative with keepdims, cumsum, argmax/argmin. Values against NumPy,
gradients against numerical Jacobians in eager and graph mode (second order for prod and max), ties,
zeros in products, and errors naming the op and the input."""
import numpy as np
import pytest

import reference as R
import segflow as sf
from segflow.framework import errors
from gradcheck import check_gradients, check_second_order as _second_order

RNG = np.random.default_rng(99)
AXES = [None, 0, 1, -1, 2, [0, 2], [-1, 0], (1,), [], [0, 1, 2]]


def gradient(mode, f, x, v=None):
    """d sum(f(x) * v) / dx as a tensor (tape in eager mode, sf.gradients in graph mode)."""
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return tape.gradient(y, x, output_gradients=None if v is None else sf.constant(v))
    y = f(x)
    return sf.gradients(y, x, grad_ys=None if v is None else sf.constant(v))[0]


def _np_axis(axis):
    if axis is None:
        return None
    return tuple(np.atleast_1d(axis).tolist()) if not isinstance(axis, int) else axis


REDUCE = [
    (sf.reduce_sum, np.sum, [np.float32, np.float64, np.int32, np.int64, np.complex64, np.complex128]),
    (sf.reduce_mean, R.reduce_mean, [np.float32, np.float64, np.int32, np.int64, np.complex128]),
    (sf.reduce_max, np.max, [np.float32, np.float64, np.int32, np.int64]),
    (sf.reduce_min, np.min, [np.float32, np.float64, np.int32, np.int64]),
    (sf.reduce_prod, lambda x, axis, keepdims: np.prod(x, axis=axis, keepdims=keepdims, dtype=x.dtype),  # ints wrap
     [np.float32, np.float64, np.int32, np.int64, np.complex128]),
]


def _data(dtype, shape=(2, 3, 4)):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return RNG.integers(-5, 6, size=shape).astype(dtype)
    x = RNG.uniform(-2, 2, size=shape)
    if dtype.kind == "c":
        x = x + 1j * RNG.uniform(-2, 2, size=shape)
    return x.astype(dtype)


def check_second_order(mode, f, x, tol=1e-8):
    _second_order(mode, f, [x], tol=tol)


@pytest.mark.parametrize("fn,ref,dtype", [(f, r, d) for f, r, ds in REDUCE for d in ds],
                         ids=lambda v: getattr(v, "__name__", str(v)))
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduce_values(mode, fn, ref, dtype, keepdims):
    x = _data(dtype)
    tensors, expects = [], []
    for axis in AXES:
        tensors.append(fn(x, axis=axis, keepdims=keepdims))
        expects.append(ref(x, axis=_np_axis(axis), keepdims=keepdims))
    got = mode.evaluate(tensors)
    for axis, t, g, e in zip(AXES, tensors, got, expects):
        assert g.dtype == dtype, axis
        assert g.shape == np.shape(e), axis
        if t.shape.is_fully_defined():
            assert tuple(t.shape.as_list()) == np.shape(e), axis
        rtol = 1e-5 if dtype in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(g, e, rtol=rtol, atol=rtol, err_msg=f"axis={axis}")


def test_integer_mean_truncates_toward_zero(mode):
    got = mode.evaluate(sf.reduce_mean(np.array([[-1, -2], [1, 2], [-7, 0]], np.int32), axis=1))
    np.testing.assert_array_equal(got, [-1, 1, -3])


def test_float32_sum_accumulates_wide(mode):
    x = np.full(1 << 20, 0.1, np.float32)
    got = mode.evaluate(sf.reduce_sum(x))
    assert got.dtype == np.float32
    assert got == np.float32(np.sum(x, dtype=np.float64))
    np.testing.assert_allclose(mode.evaluate(sf.reduce_mean(x)), 0.1, rtol=1e-7)


def test_any_all(mode):
    x = np.array([[True, False, True], [False, False, True]])
    for axis in AXES[:4] + [[0, 1], []]:
        a = _np_axis(axis) if axis != 2 else None
        for keepdims in (False, True):
            np.testing.assert_array_equal(mode.evaluate(sf.reduce_any(x, axis, keepdims)),
                                          np.any(x, axis=a, keepdims=keepdims))
            np.testing.assert_array_equal(mode.evaluate(sf.reduce_all(x, axis, keepdims)),
                                          np.all(x, axis=a, keepdims=keepdims))
    with pytest.raises(errors.InvalidArgumentError, match=r"Any.*input 'input'.*float32"):
        sf.reduce_any(sf.constant([1.0]))


def test_scalar_and_empty_inputs(mode):
    assert mode.evaluate(sf.reduce_sum(np.float64(3.5))) == 3.5
    assert mode.evaluate(sf.reduce_max(np.int32(-4))) == -4
    np.testing.assert_array_equal(mode.evaluate(sf.reduce_sum(np.zeros((0, 3)), 0)), [0, 0, 0])
    np.testing.assert_array_equal(mode.evaluate(sf.reduce_prod(np.zeros((0, 2)), 0)), [1, 1])
    assert np.isnan(mode.evaluate(sf.reduce_mean(np.zeros((0,)))))
    np.testing.assert_array_equal(mode.evaluate(sf.reduce_any(np.zeros((0,), bool))), False)
    np.testing.assert_array_equal(mode.evaluate(sf.reduce_all(np.zeros((0,), bool))), True)


def test_tf1_argument_names(mode):
    x = np.arange(6.0).reshape(2, 3)
    got = mode.evaluate(sf.reduce_sum(x, reduction_indices=[1], keep_dims=True))
    np.testing.assert_array_equal(got, [[3.0], [12.0]])
    with pytest.raises(ValueError, match="both"):
        sf.reduce_sum(x, axis=0, reduction_indices=0)


def test_axis_fed_at_run_time():
    with sf.Graph().as_default():
        x = sf.placeholder(sf.float64, [2, 3])
        a = sf.placeholder(sf.int32, [None])
        y = sf.reduce_max(x, a)
        k = sf.reduce_sum(x, a, keepdims=True)
        assert k.shape.rank == 2
        x0 = np.arange(6.0).reshape(2, 3)
        with sf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y, {x: x0, a: [1]}), [2.0, 5.0])
            np.testing.assert_array_equal(sess.run(k, {x: x0, a: [0, 1]}), [[15.0]])
            g = sf.gradients(y, x)[0]
            np.testing.assert_array_equal(sess.run(g, {x: x0, a: [-1]}), [[0, 0, 1], [0, 0, 1]])
            with pytest.raises(errors.InvalidArgumentError, match=r"Max.*input 'reduction_indices'.*axis 5"):
                sess.run(y, {x: x0, a: [5]})


@pytest.mark.parametrize("fn,op", [(sf.reduce_sum, "Sum"), (sf.reduce_mean, "Mean"), (sf.reduce_max, "Max"),
                                   (sf.reduce_prod, "Prod")])
@pytest.mark.parametrize("axis", [2, -3, [0, 3]])
def test_bad_axis_names_op_and_input(mode, fn, op, axis):
    with pytest.raises(errors.InvalidArgumentError, match=rf"{op}.*input 'reduction_indices'.*out of range for rank 2"):
        mode.evaluate(fn(np.ones((2, 3)), axis))


def test_float_axis_rejected(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"Sum.*input 'reduction_indices'.*float32"):
        mode.evaluate(sf.reduce_sum(np.ones((2, 3)), sf.constant(1.0)))


def test_wrong_dtype_names_op():
    with pytest.raises(errors.InvalidArgumentError, match=r"Max.*input 'input'.*complex128 is not supported"):
        sf.reduce_max(sf.constant([1j]))


# ----------------------------------------------------------------------------------------------
# Gradients


X234 = RNG.uniform(-2, 2, size=(2, 3, 4))
GRAD_AXES = [None, 0, -1, [0, 2], (1,)]


@pytest.mark.parametrize("fn", [sf.reduce_sum, sf.reduce_mean, sf.reduce_max, sf.reduce_min, sf.reduce_prod],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("axis", GRAD_AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reduce_gradients(mode, fn, axis, keepdims):
    check_gradients(mode, lambda x: fn(x, axis, keepdims=keepdims), [X234])


@pytest.mark.parametrize("fn", [sf.reduce_sum, sf.reduce_mean, sf.reduce_prod], ids=lambda f: f.__name__)
def test_reduce_complex128_gradients(mode, fn):
    z = X234[:, :2, :2] + 1j * RNG.uniform(-2, 2, size=(2, 2, 2))
    check_gradients(mode, lambda x: fn(x, [0, 2]), [z])


def test_reduce_float32_gradients(mode):
    x = X234.astype(np.float32)
    for fn in (sf.reduce_sum, sf.reduce_mean, sf.reduce_prod, sf.reduce_max):
        check_gradients(mode, lambda t: fn(t, 1), [x], tol=1e-3)


@pytest.mark.parametrize("fn,x,axis,expect", [
    (sf.reduce_max, [[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], 1, [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]]),
    (sf.reduce_min, [[1.0, 3.0, 1.0], [2.0, 0.5, 2.0]], 1, [[0.5, 0, 0.5], [0, 1, 0]]),
    (sf.reduce_max, [[1.0, 3.0], [3.0, 0.0]], None, [[0, 0.5], [0.5, 0]]),
    (sf.reduce_min, [[4.0, 4.0], [4.0, 4.0]], 0, [[0.5, 0.5], [0.5, 0.5]]),
])
def test_max_min_gradient_splits_ties_equally(mode, fn, x, axis, expect):
    got = mode.evaluate(gradient(mode, lambda t: fn(t, axis), sf.constant(np.array(x))))
    np.testing.assert_allclose(got, expect, rtol=1e-15)


@pytest.mark.parametrize("rows,label", [
    ([[1.5, -2.0, 0.5], [0.7, 1.2, -0.9]], "no zero"),
    ([[1.5, 0.0, 0.5], [0.0, 1.2, -0.9]], "one zero"),
    ([[0.0, -2.0, 0.0], [0.7, 0.0, 0.0]], "two zeros"),
    ([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0]], "three zeros"),
])
def test_prod_gradient_with_zeros(mode, rows, label):
    x = np.array(rows)
    # Hand-worked: d prod / d x_i = product of the other elements of the row.
    expect = np.array([[np.prod(np.delete(r, i)) for i in range(3)] for r in x])
    got = mode.evaluate(gradient(mode, lambda t: sf.reduce_prod(t, 1), sf.constant(x)))
    np.testing.assert_allclose(got, expect, rtol=1e-15, atol=0)
    check_gradients(mode, lambda t: sf.reduce_prod(t, 1), [x])
    check_gradients(mode, lambda t: sf.reduce_prod(t), [x])


@pytest.mark.parametrize("x", [X234[0], np.array([[1.5, 0.0, 0.5, 2.0], [0.0, 1.2, -0.9, 0.0]])],
                         ids=["nonzero", "zeros"])
def test_prod_second_order(mode, x):
    check_second_order(mode, lambda t: sf.reduce_prod(t, 1), x)
    check_second_order(mode, lambda t: sf.reduce_prod(t, [0, 1]), x)


def test_prod_second_order_complex(mode):
    z = X234[0, :2] + 1j * X234[1, :2]
    check_second_order(mode, lambda t: sf.reduce_prod(t, 1), z)


@pytest.mark.parametrize("fn", [sf.reduce_max, sf.reduce_min, sf.reduce_mean, sf.reduce_sum],
                         ids=lambda f: f.__name__)
def test_second_order_through_reductions(mode, fn):
    check_second_order(mode, lambda t: fn(t * t * t, -1), X234[0])
    check_second_order(mode, lambda t: sf.tanh(fn(t, [0, 1], keepdims=True)) * t, X234[0])


# ----------------------------------------------------------------------------------------------
# cumsum


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.complex128])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_values(mode, dtype, exclusive, reverse):
    x = _data(dtype, (3, 4))
    got = mode.evaluate([sf.cumsum(x, axis, exclusive=exclusive, reverse=reverse) for axis in (0, 1, -1)])
    for axis, g in zip((0, 1, -1), got):
        assert g.dtype == dtype and g.shape == x.shape
        np.testing.assert_allclose(g, R.cumsum(x, axis, exclusive, reverse), rtol=1e-5)


def test_cumsum_hand_worked(mode):
    x = np.array([1, 2, 3, 4])
    got = mode.evaluate([sf.cumsum(x), sf.cumsum(x, exclusive=True), sf.cumsum(x, reverse=True),
                         sf.cumsum(x, exclusive=True, reverse=True)])
    for g, e in zip(got, [[1, 3, 6, 10], [0, 1, 3, 6], [10, 9, 7, 4], [9, 7, 4, 0]]):
        np.testing.assert_array_equal(g, e)
    np.testing.assert_array_equal(mode.evaluate(sf.cumsum(np.zeros((0, 2)), 0, exclusive=True)).shape, (0, 2))


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, -1])
def test_cumsum_gradient(mode, exclusive, reverse, axis):
    check_gradients(mode, lambda t: sf.cumsum(t, axis, exclusive=exclusive, reverse=reverse), [X234[0]])


def test_cumsum_bad_axis(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"Cumsum.*input 'axis'.*out of range"):
        mode.evaluate(sf.cumsum(np.ones((2, 3)), 2))
    with pytest.raises(errors.InvalidArgumentError, match=r"Cumsum.*input 'axis'.*out of range"):
        mode.evaluate(sf.cumsum(np.float64(1.0), 0))


# ----------------------------------------------------------------------------------------------
# argmax / argmin


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_argmax_argmin_values(mode, dtype):
    x = _data(dtype)
    for axis in (0, 1, 2, -1, -3):
        for fn, ref in ((sf.argmax, np.argmax), (sf.argmin, np.argmin)):
            got = mode.evaluate(fn(x, axis))
            assert got.dtype == np.int64
            np.testing.assert_array_equal(got, ref(x, axis=axis))


def test_argmax_ties_first_default_axis_output_type(mode):
    x = np.array([[3, 1, 3], [0, 5, 5]], np.int32)
    np.testing.assert_array_equal(mode.evaluate(sf.argmax(x, 1)), [0, 1])
    np.testing.assert_array_equal(mode.evaluate(sf.argmin(np.array([2.0, 1.0, 1.0]))), 1)
    np.testing.assert_array_equal(mode.evaluate(sf.argmax(x)), [0, 1, 1])  # axis defaults to 0
    got = mode.evaluate(sf.argmax(x, dimension=1, output_type=sf.int32))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [0, 1])


def test_argmax_errors(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"ArgMax.*input 'dimension'.*out of range for rank 2"):
        mode.evaluate(sf.argmax(np.ones((2, 3)), 2))
    with pytest.raises(errors.InvalidArgumentError, match=r"ArgMin.*input 'input'.*empty"):
        mode.evaluate(sf.argmin(np.ones((0, 3)), 0))
    with pytest.raises(errors.InvalidArgumentError, match=r"ArgMax.*input 'input'.*bool"):
        sf.argmax(sf.constant([True, False]))


def test_argmax_has_no_gradient(mode):
    x = sf.constant(X234)
    g = gradient(mode, lambda t: sf.cast(sf.argmax(t, 1), sf.float64) * 1.0, x)
    assert g is None


def test_unknown_rank_graph():
    with sf.Graph().as_default():
        x = sf.placeholder(sf.float64, None)
        y, m, mx = sf.reduce_sum(x), sf.reduce_mean(x, keepdims=True), sf.reduce_max(x, 0)
        grads = [sf.gradients(t, x)[0] for t in (y, m, mx)]
        x0 = np.array([[0.0, 1.0, 2.0], [3.0, 5.0, 4.0]])
        with sf.Session() as sess:
            got = sess.run([y, m, mx] + grads, {x: x0})
    np.testing.assert_array_equal(got[0], 15.0)
    np.testing.assert_array_equal(got[1], [[2.5]])
    np.testing.assert_array_equal(got[2], [3.0, 5.0, 4.0])
    np.testing.assert_array_equal(got[3], np.ones((2, 3)))
    np.testing.assert_allclose(got[4], np.full((2, 3), 1 / 6))
    np.testing.assert_array_equal(got[5], [[0, 0, 0], [1, 1, 1]])


def test_partially_known_shape_inference():
    with sf.Graph().as_default():
        x = sf.placeholder(sf.float32, [None, 3, 4])
        assert sf.reduce_sum(x, 1).shape.as_list() == [None, 4]
        assert sf.reduce_max(x, [0, -1], keepdims=True).shape.as_list() == [1, 3, 1]
        assert sf.reduce_mean(x).shape.as_list() == []
        assert sf.argmax(x, 2).shape.as_list() == [None, 3]
        assert sf.cumsum(x, 1).shape.as_list() == [None, 3, 4]


def test_logsumexp_and_count_nonzero(mode):
    x = np.array([[1.0, 2.0], [3.0, -np.inf]])
    got = mode.evaluate([sf.reduce_logsumexp(x, 1), sf.reduce_logsumexp(x[:1]), sf.reduce_logsumexp(x, keepdims=True),
                         sf.math.count_nonzero(np.array([[1.0, 0.0], [3.0, 4.0]]), 1)])
    np.testing.assert_allclose(got[0], [np.log(np.e + np.e ** 2), 3.0])
    np.testing.assert_allclose(got[1], np.log(np.e + np.e ** 2))
    np.testing.assert_allclose(got[2], [[np.log(np.e + np.e ** 2 + np.e ** 3)]])
    np.testing.assert_array_equal(got[3], [1, 2])
    check_gradients(mode, lambda t: sf.reduce_logsumexp(t, 1), [X234[0]])


def test_cumsum_complex_gradient(mode):
    z = X234[0] + 1j * X234[1]
    check_gradients(mode, lambda t: sf.cumsum(t, 1, exclusive=True), [z])
    check_gradients(mode, lambda t: sf.cumsum(t, 0, reverse=True) * t, [z])


# ----------------------------------------------------------------------------------------------
# Property tests: any shape, any set of axes, against NumPy

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402


@st.composite
def _array_and_axes(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4))
    x = draw(hnp.arrays(np.float64, shape, elements=st.floats(-100, 100, allow_nan=False)))
    rank = len(shape)
    axes = draw(st.one_of(st.none(), st.lists(st.integers(-rank, rank - 1), unique_by=lambda a: a % rank,
                                              max_size=rank) if rank else st.just([])))
    return x, axes, draw(st.booleans())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_array_and_axes())
def test_reductions_match_numpy_property(case):
    x, axes, keepdims = case
    ax = None if axes is None else tuple(axes)
    for fn, ref in ((sf.reduce_sum, np.sum), (sf.reduce_prod, np.prod), (sf.reduce_mean, np.mean)):
        if ref is np.mean and (x.size == 0 or (ax is not None and any(x.shape[a] == 0 for a in ax))):
            continue
        got = fn(x, axes, keepdims=keepdims).numpy()
        np.testing.assert_allclose(got, ref(x, axis=ax, keepdims=keepdims), rtol=1e-12, atol=1e-9)
    if x.size:
        nonempty = ax is None or all(x.shape[a] for a in ax) and x.size
        if nonempty:
            np.testing.assert_array_equal(sf.reduce_max(x, axes, keepdims=keepdims).numpy(),
                                          np.max(x, axis=ax, keepdims=keepdims))


def test_scalar_has_no_axis_to_reduce(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"Sum.*input 'reduction_indices'.*axis 0 is out of range for rank 0"):
        mode.evaluate(sf.reduce_sum(np.float64(2.0), 0))
    assert mode.evaluate(sf.reduce_sum(np.float64(2.0), [])) == 2.0

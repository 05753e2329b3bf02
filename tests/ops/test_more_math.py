"""xlogy, xlog1py, xdivy, mul_no_nan / multiply_no_nan, nextafter, reduce_euclidean_norm and
xw_plus_b: values against NumPy references written here (with the x == 0 and y == 0 rules, inf and
nan, broadcasting, float and complex dtypes), gradients against numerical Jacobians in eager and graph
mode, the masked gradients at x == 0 against hand-derived values, and second order."""
import numpy as np
import pytest

import segflow as sf
from segflow.framework import errors
from segflow.ops import math_ops, nn_ops
from gradcheck import check_gradients, check_second_order

RNG = np.random.default_rng(4321)
FLOAT_COMPLEX = [np.float32, np.float64, np.complex64, np.complex128]


# ----------------------------------------------------------------------------------------------
# NumPy references (TF's kernels: the result is exactly 0 where the masking input is 0)


def _masked(mask, value, dtype):
    with np.errstate(all="ignore"):
        return np.where(mask == 0, np.zeros((), dtype), value).astype(dtype)


def ref_xlogy(x, y):
    with np.errstate(all="ignore"):
        return _masked(np.broadcast_to(x, np.broadcast_shapes(x.shape, y.shape)), x * np.log(y), x.dtype)


def ref_xlog1py(x, y):
    with np.errstate(all="ignore"):
        return _masked(np.broadcast_to(x, np.broadcast_shapes(x.shape, y.shape)), x * np.log1p(y), x.dtype)


def ref_xdivy(x, y):
    with np.errstate(all="ignore"):
        return _masked(np.broadcast_to(x, np.broadcast_shapes(x.shape, y.shape)), x / y, x.dtype)


def ref_mul_no_nan(x, y):
    with np.errstate(all="ignore"):
        return _masked(np.broadcast_to(y, np.broadcast_shapes(x.shape, y.shape)), x * y, x.dtype)


def ref_euclidean_norm(x, axis=None, keepdims=False):
    if x.dtype.kind in "iu":  # TF: sum of squares in x's dtype, sqrt truncated
        s = np.sum(x.astype(np.int64) ** 2, axis=axis, keepdims=keepdims)
        return np.floor(np.sqrt(s.astype(np.float64))).astype(x.dtype)
    wide = np.complex128 if x.dtype.kind == "c" else np.float64
    return np.sqrt(np.sum(x.astype(wide) * np.conj(x.astype(wide)), axis=axis, keepdims=keepdims)).astype(x.dtype)


BINARY = [("xlogy", sf.math.xlogy, ref_xlogy), ("xlog1py", sf.math.xlog1py, ref_xlog1py),
          ("xdivy", sf.math.xdivy, ref_xdivy), ("mul_no_nan", math_ops.mul_no_nan, ref_mul_no_nan),
          ("multiply_no_nan", sf.math.multiply_no_nan, ref_mul_no_nan)]


def _vals(dtype, shape, low=0.2, high=3.0):
    a = RNG.uniform(low, high, size=shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.uniform(-1, 1, size=shape)
    return a.astype(dtype)


def _tol(dtype):
    return 1e-6 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-14


def _grads(mode, f, xs, upstream=None):
    """[d sum(f(*xs) * upstream) / d x for x in xs], with the tape (eager) or sf.gradients (graph)."""
    ts = [sf.constant(x) for x in xs]
    if mode.eager:
        with sf.GradientTape(persistent=True) as tape:
            tape.watch(ts)
            y = f(*ts)
        out = tape.gradient(y, ts, output_gradients=None if upstream is None else sf.constant(upstream))
    else:
        y = f(*ts)
        out = sf.gradients(y, ts, grad_ys=None if upstream is None else sf.constant(upstream))
    return [None if g is None else mode.evaluate(g) for g in out]


# ----------------------------------------------------------------------------------------------
# Values


@pytest.mark.parametrize("name,fn,ref", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("dtype", FLOAT_COMPLEX)
def test_binary_values_with_broadcasting(mode, name, fn, ref, dtype):
    for xs, ys in (((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (4,))):
        x, y = _vals(dtype, xs, -2, 2), _vals(dtype, ys)
        got = mode.evaluate(fn(sf.constant(x), sf.constant(y)))
        assert got.dtype == dtype and got.shape == np.broadcast_shapes(xs, ys)
        np.testing.assert_allclose(got, ref(x, y), rtol=_tol(dtype), atol=_tol(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_x_zero_wins_over_y_zero_inf_nan(mode, dtype):
    inf, nan = np.inf, np.nan
    x = np.array([0, 0, 0, 0, 1, 1, 1, 2, nan, -0.0], dtype)
    y = np.array([0, inf, nan, -1, 0, inf, nan, -1, 2, 0], dtype)
    with np.errstate(all="ignore"):
        expect = {
            "xlogy": [0, 0, 0, 0, -inf, inf, nan, nan, nan, 0],
            "xlog1py": [0, 0, 0, 0, 0, inf, nan, -inf, nan, 0],
            "xdivy": [0, 0, 0, 0, inf, 0, nan, -2, nan, 0],
        }
    for name, fn, ref in BINARY[:3]:
        got = mode.evaluate(fn(sf.constant(x), sf.constant(y)))
        np.testing.assert_array_equal(got, np.array(expect[name], dtype), err_msg=name)
        np.testing.assert_array_equal(got, ref(x, y), err_msg=name)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_mul_no_nan_zero_y_wins_and_is_not_symmetric(mode, dtype):
    inf, nan = np.inf, np.nan
    x = np.array([inf, nan, -inf, 0, 0, 2, 3], dtype)
    y = np.array([0, 0, -0.0, inf, nan, 3, nan], dtype)
    expect = np.array([0, 0, 0, nan, nan, 6, nan], dtype)
    for fn in (math_ops.mul_no_nan, sf.math.multiply_no_nan):
        got = mode.evaluate(fn(sf.constant(x), sf.constant(y)))
        np.testing.assert_array_equal(got, expect)


def test_complex_x_zero_means_both_parts_zero(mode):
    x = np.array([0, 1j, 0, 2], np.complex128)
    y = np.array([0, 0, np.inf, 0], np.complex128)
    got = mode.evaluate(sf.math.xlogy(sf.constant(x), sf.constant(y)))
    assert got[0] == 0 and got[2] == 0
    assert not np.isfinite(got[1]) and not np.isfinite(got[3])
    got = mode.evaluate(sf.math.xdivy(sf.constant(x), sf.constant(y)))
    assert got[0] == 0 and got[2] == 0 and not np.isfinite(got[1])
    got = mode.evaluate(math_ops.mul_no_nan(sf.constant(np.array([np.inf, 1j], np.complex64)),
                                            sf.constant(np.array([0, 1j], np.complex64))))
    np.testing.assert_array_equal(got, np.array([0, -1], np.complex64))


def test_python_numbers_take_the_tensor_dtype(mode):
    got = mode.evaluate(sf.math.xlogy(sf.constant([0.0, 2.0], sf.float64), 4))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, [0, 2 * np.log(4)])
    got = mode.evaluate(sf.math.multiply_no_nan(sf.constant([np.inf, 2.0]), [0, 3]))
    np.testing.assert_array_equal(got, np.array([0, 6], np.float32))


@pytest.mark.parametrize("fn,op", [(sf.math.xlogy, "Xlogy"), (sf.math.xlog1py, "Xlog1py"),
                                   (sf.math.xdivy, "Xdivy"), (math_ops.mul_no_nan, "MulNoNan"),
                                   (sf.math.nextafter, "NextAfter")])
def test_integer_inputs_are_rejected(fn, op):
    with pytest.raises(errors.InvalidArgumentError, match=rf"{op}.*int32 is not supported"):
        fn(sf.constant([1, 2]), sf.constant([1, 2]))


def test_half_precision_dtypes_are_allowed(mode):
    for dt in (sf.float16, sf.bfloat16):
        x = sf.cast(sf.constant([0.0, 1.0, 2.0]), dt)
        y = sf.cast(sf.constant([0.0, 4.0, 8.0]), dt)
        got = mode.evaluate(sf.cast(sf.math.xlogy(x, y), sf.float32))
        np.testing.assert_allclose(got, [0, np.log(4), 2 * np.log(8)], rtol=1e-2)
        assert sf.math.xdivy(x, y).dtype == dt and math_ops.mul_no_nan(x, y).dtype == dt


def test_multiply_no_nan_dtype_mismatch_raises():
    with pytest.raises((TypeError, ValueError)):
        sf.math.multiply_no_nan(sf.constant([1.0], sf.float32), sf.constant([1.0], sf.float64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nextafter(mode, dtype):
    x1 = np.array([[0.0, 1.0, -1.0, 1.0], [np.inf, np.nan, 2.0, 5.0]], dtype)
    x2 = np.array([1.0, 0.0, -np.inf, 1.0], dtype)
    got = mode.evaluate(sf.math.nextafter(sf.constant(x1), sf.constant(x2)))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.nextafter(x1, x2))
    assert got[0, 0] == np.finfo(dtype).smallest_subnormal and got[0, 3] == 1.0
    assert got[0, 1] == np.nextafter(dtype(1), dtype(0)) < 1


def test_nextafter_gradient_is_one_for_x1_and_zero_for_x2(mode):
    # TF's gradient: nextafter moves x1 by one ulp, so d/dx1 = 1 and d/dx2 = 0.
    gx, gy = _grads(mode, sf.math.nextafter, [np.array([1.0, 2.0]), np.array([3.0, 0.0])])
    assert gx.tolist() == [1.0, 1.0] and gy.tolist() == [0.0, 0.0]


# ----------------------------------------------------------------------------------------------
# Gradients of the binary ops


@pytest.mark.parametrize("name,fn,ref", BINARY[:4], ids=[b[0] for b in BINARY[:4]])
def test_binary_gradients_match_numerical_jacobians(mode, name, fn, ref):
    for xs, ys in (((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((), (3,))):
        x = _vals(np.float64, xs, -2, 2)
        x[np.abs(x) < 0.2] = 0.7
        y = _vals(np.float64, ys, 0.5, 2)
        check_gradients(mode, fn, [x, y], tol=1e-7)


@pytest.mark.parametrize("name,fn,ref", BINARY[:4], ids=[b[0] for b in BINARY[:4]])
def test_binary_gradients_float32(mode, name, fn, ref):
    x = _vals(np.float32, (2, 3), 0.5, 2)
    y = _vals(np.float32, (3,), 0.5, 2)
    check_gradients(mode, fn, [x, y], tol=2e-3)


def test_xlogy_gradients_masked_at_x_zero(mode):
    # d/dx xlogy = log(y), d/dy = x / y, each 0 where x == 0 (even at y == 0 or y == inf).
    x = np.array([0.0, 0.0, 0.0, 2.0, -1.0])
    y = np.array([0.0, 1.5, np.inf, 3.0, 0.5])
    g = np.array([1.0, 2.0, 3.0, 0.5, 2.0])
    gx, gy = _grads(mode, sf.math.xlogy, [x, y], g)
    np.testing.assert_array_equal(gx, [0, 0, 0, 0.5 * np.log(3.0), 2 * np.log(0.5)])
    np.testing.assert_array_equal(gy, [0, 0, 0, 0.5 * 2.0 / 3.0, 2 * -1.0 / 0.5])


def test_xlog1py_and_xdivy_gradients_masked_at_x_zero(mode):
    x = np.array([0.0, 0.0, 0.0, 2.0])
    y = np.array([-1.0, 0.0, np.nan, 1.0])
    gx, gy = _grads(mode, sf.math.xlog1py, [x, y])
    np.testing.assert_array_equal(gx, [0, 0, 0, np.log1p(1.0)])
    np.testing.assert_array_equal(gy, [0, 0, 0, 2.0 / 2.0])
    y = np.array([0.0, 2.0, np.inf, 4.0])
    gx, gy = _grads(mode, sf.math.xdivy, [x, y])
    np.testing.assert_array_equal(gx, [0, 0, 0, 1 / 4.0])
    np.testing.assert_array_equal(gy, [0, 0, 0, -2.0 / 16.0])


def test_mul_no_nan_gradients(mode):
    # dx = mul_no_nan(grad, y): 0 where y == 0; dy = mul_no_nan(x, grad): x * grad, 0 where grad == 0.
    x = np.array([np.inf, np.nan, 2.0, 3.0])
    y = np.array([0.0, 0.0, 5.0, 4.0])
    g = np.array([1.0, 1.0, 2.0, 0.0])
    gx, gy = _grads(mode, math_ops.mul_no_nan, [x, y], g)
    np.testing.assert_array_equal(gx, [0, 0, 10, 0])
    np.testing.assert_array_equal(gy, [np.inf, np.nan, 4, 0])


def test_gradients_reduce_over_broadcast_axes(mode):
    x = np.array([[0.0], [2.0]])                 # (2, 1)
    y = np.array([1.0, 2.0, 4.0])                # (3,)
    gx, gy = _grads(mode, sf.math.xlogy, [x, y])
    np.testing.assert_allclose(gx, [[0.0], [np.log(8.0)]])
    np.testing.assert_allclose(gy, 2.0 / y)


def test_complex_gradients_follow_tf_without_conjugation(mode):
    # TF's _XLogyGrad / _XDivyGrad / _MulNoNanGrad multiply by the partials as they are (no conj).
    x = np.array([1 + 1j, 0, 2 - 1j])
    y = np.array([2 - 1j, 1 + 1j, 1j])
    gx, gy = _grads(mode, sf.math.xlogy, [x, y])
    np.testing.assert_allclose(gx, [np.log(y[0]), 0, np.log(y[2])])
    np.testing.assert_allclose(gy, [x[0] / y[0], 0, x[2] / y[2]])
    gx, gy = _grads(mode, math_ops.mul_no_nan, [x, y])
    np.testing.assert_allclose(gx, y)
    np.testing.assert_allclose(gy, x)


def test_xlogy_second_order_nested_tape():
    # f = xlogy(x, y): f_xx = 0, f_xy = 1 / y, f_yy = -x / y^2 where x != 0; TF's masks make the
    # mixed terms 0 where x == 0 too.
    x = sf.constant([1.5, -2.0, 0.0])
    y = sf.constant([2.0, 0.5, 3.0])
    x = sf.cast(x, sf.float64)
    y = sf.cast(y, sf.float64)
    with sf.GradientTape(persistent=True) as outer:
        outer.watch([x, y])
        with sf.GradientTape(persistent=True) as inner:
            inner.watch([x, y])
            f = sf.math.xlogy(x, y)
        fx, fy = inner.gradient(f, [x, y])
    fxx, fxy = outer.gradient(fx, [x, y])
    fyx, fyy = outer.gradient(fy, [x, y])
    xv, yv = x.numpy(), y.numpy()
    np.testing.assert_allclose(fx.numpy(), [np.log(2.0), np.log(0.5), 0])
    assert fxx is None  # fx = xlogy(cast(x != 0), y) reaches x only through NotEqual, as in TF
    np.testing.assert_allclose(fxy.numpy(), [1 / 2.0, 1 / 0.5, 0])
    np.testing.assert_allclose(fyx.numpy(), [1 / 2.0, 1 / 0.5, 0])
    np.testing.assert_allclose(fyy.numpy(), -xv / yv ** 2)


@pytest.mark.parametrize("fn", [sf.math.xlogy, sf.math.xlog1py, sf.math.xdivy, math_ops.mul_no_nan])
def test_second_order_against_numerical_jacobians(mode, fn):
    x = np.array([[0.7, -1.2, 1.9], [1.1, 0.4, -0.8]])
    y = np.array([0.9, 1.7, 2.3])
    check_second_order(mode, fn, [x, y], tol=1e-6)
    check_second_order(mode, lambda b, a: fn(a, b), [y, x], tol=1e-6)


# ----------------------------------------------------------------------------------------------
# reduce_euclidean_norm


X23 = np.array([[1.0, -2.0, 3.0], [0.5, 1.0, -1.0]])


@pytest.mark.parametrize("dtype", FLOAT_COMPLEX)
def test_euclidean_norm_values(mode, dtype):
    x = _vals(dtype, (2, 3, 4), -2, 2)
    for axis in (None, 0, 1, -1, [0, 2], [], (0, 1, 2)):
        for keepdims in (False, True):
            got = mode.evaluate(sf.math.reduce_euclidean_norm(sf.constant(x), axis, keepdims=keepdims))
            ax = tuple(np.atleast_1d(axis)) if axis is not None else None
            expect = ref_euclidean_norm(x, ax, keepdims)
            assert got.dtype == dtype and got.shape == expect.shape, (axis, keepdims)
            np.testing.assert_allclose(got, expect, rtol=_tol(dtype) * 10, atol=_tol(dtype))


def test_euclidean_norm_tf_doc_examples(mode):
    xi = sf.constant([[1, 2, 3], [1, 1, 1]])
    got = mode.evaluate(sf.math.reduce_euclidean_norm(xi))
    assert got.dtype == np.int32 and got == 4       # sqrt(17) = 4.12..., truncated in int32
    y = sf.constant([[1, 2, 3], [1, 1, 1]], dtype=sf.float32)
    np.testing.assert_allclose(mode.evaluate(sf.math.reduce_euclidean_norm(y)), np.sqrt(17), rtol=1e-6)
    np.testing.assert_allclose(mode.evaluate(sf.math.reduce_euclidean_norm(y, 0)), np.sqrt([2, 5, 10]), rtol=1e-6)
    np.testing.assert_allclose(mode.evaluate(sf.math.reduce_euclidean_norm(y, 1, keepdims=True)),
                               np.sqrt([[14], [3]]), rtol=1e-6)
    np.testing.assert_allclose(mode.evaluate(sf.math.reduce_euclidean_norm(y, [0, 1])), np.sqrt(17), rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64])
def test_euclidean_norm_integers_truncate(mode, dtype):
    x = np.array([[3, 4, 0], [1, 1, 1], [2, 2, 3]], dtype)  # row sums of squares 25, 3, 17
    got = mode.evaluate(sf.math.reduce_euclidean_norm(sf.constant(x), 1))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.array([5, 1, 4], dtype))
    np.testing.assert_array_equal(got, ref_euclidean_norm(x, 1))


def test_euclidean_norm_integer_squares_wrap_in_the_dtype(mode):
    # TF sums the squares in the input dtype: int8 [12, 0] -> 144 wraps to -112, whose root is NaN in
    # C++ and converts (x86) to 0 for int8; uint8 [16] -> 256 wraps to 0.
    assert mode.evaluate(sf.math.reduce_euclidean_norm(sf.constant(np.array([12, 0], np.int8)))) == 0
    assert mode.evaluate(sf.math.reduce_euclidean_norm(sf.constant(np.array([16], np.uint8)))) == 0
    assert mode.evaluate(sf.math.reduce_euclidean_norm(sf.constant(np.array([11, 0], np.int8)))) == 11


def test_euclidean_norm_complex_output_is_complex(mode):
    z = np.array([3 + 4j, 0, 1j], np.complex64)
    got = mode.evaluate(sf.math.reduce_euclidean_norm(sf.constant(z)))
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, np.sqrt(26) + 0j, rtol=1e-6)


def test_euclidean_norm_float32_squares_overflow_as_in_tf(mode):
    got = mode.evaluate(sf.math.reduce_euclidean_norm(sf.constant(np.array([1e20, 1.0], np.float32))))
    assert got == np.inf
    got = mode.evaluate(sf.math.reduce_euclidean_norm(sf.constant(np.array([1e20, 1.0], np.float64))))
    np.testing.assert_allclose(got, 1e20)


def test_euclidean_norm_empty_and_scalar(mode):
    got = mode.evaluate(sf.math.reduce_euclidean_norm(sf.constant(np.zeros((0, 3), np.float32)), 0))
    np.testing.assert_array_equal(got, np.zeros(3, np.float32))
    got = mode.evaluate(sf.math.reduce_euclidean_norm(sf.constant(-3.0)))
    assert got == 3.0


def test_euclidean_norm_bad_axis_raises():
    with pytest.raises(errors.InvalidArgumentError, match=r"EuclideanNorm.*axis 2 is out of range"):
        sf.math.reduce_euclidean_norm(sf.constant(X23), 2)


def test_euclidean_norm_gradients(mode):
    x = _vals(np.float64, (2, 3, 2), -2, 2)
    for axis in (None, 0, 1, [0, 2], -1):
        for keepdims in (False, True):
            check_gradients(mode, lambda t, a=axis, k=keepdims: sf.math.reduce_euclidean_norm(t, a, keepdims=k),
                            [x], tol=1e-7)
    check_gradients(mode, lambda t: sf.math.reduce_euclidean_norm(t, 1), [x.astype(np.float32)], tol=2e-3)


def test_euclidean_norm_gradient_is_x_over_norm(mode):
    # grad * x / norm; TF does not guard a zero norm: 0 / 0 = nan, and a zero upstream gradient at a
    # non-zero norm gives x / inf = 0.
    x = np.array([[3.0, 4.0], [0.0, 0.0], [1.0, 1.0]])
    g = np.array([2.0, 1.0, 0.0])
    (gx,) = _grads(mode, lambda t: sf.math.reduce_euclidean_norm(t, 1), [x], g)
    np.testing.assert_allclose(gx[0], [2 * 3 / 5, 2 * 4 / 5])
    assert np.all(np.isnan(gx[1]))
    np.testing.assert_array_equal(gx[2], [0, 0])


def test_euclidean_norm_complex_gradient(mode):
    # TF: x / (norm / grad); with a real upstream 1 that is x / |x|.
    z = np.array([3 + 4j, 1j])
    (gz,) = _grads(mode, lambda t: sf.math.reduce_euclidean_norm(t), [z])
    np.testing.assert_allclose(gz, z / np.sqrt(26))


def test_euclidean_norm_second_order(mode):
    x = _vals(np.float64, (2, 3), 0.5, 2)
    check_second_order(mode, lambda t: sf.math.reduce_euclidean_norm(t, 1), [x], tol=1e-6)
    check_second_order(mode, lambda t: sf.math.reduce_euclidean_norm(t, None, keepdims=True), [x], tol=1e-6)


# ----------------------------------------------------------------------------------------------
# xw_plus_b


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_xw_plus_b_values(mode, dtype):
    x = _vals(dtype, (4, 3), -1, 1)
    w = _vals(dtype, (3, 5), -1, 1)
    b = _vals(dtype, (5,), -1, 1)
    got = mode.evaluate(nn_ops.xw_plus_b(sf.constant(x), sf.constant(w), sf.constant(b)))
    assert got.dtype == dtype
    np.testing.assert_allclose(got, x @ w + b, rtol=_tol(dtype) * 10, atol=_tol(dtype) * 10)
    np.testing.assert_allclose(mode.evaluate(sf.nn.xw_plus_b(x, w, b)), x @ w + b, rtol=1e-5)


def test_xw_plus_b_graph_node_and_errors():
    with sf.Graph().as_default():
        y = sf.nn.xw_plus_b(sf.constant(np.ones((2, 3))), sf.constant(np.ones((3, 4))), sf.constant(np.ones(4)),
                            name="fc")
        assert y.op.type == "BiasAdd" and y.op.name.startswith("fc/")
        assert y.shape.as_list() == [2, 4]
        with pytest.raises((ValueError, errors.InvalidArgumentError)):
            sf.nn.xw_plus_b(sf.constant(np.ones((2, 3))), sf.constant(np.ones((3, 4))), sf.constant(np.ones(3)))


def test_xw_plus_b_gradients(mode):
    x = _vals(np.float64, (4, 3), -1, 1)
    w = _vals(np.float64, (3, 2), -1, 1)
    b = _vals(np.float64, (2,), -1, 1)
    check_gradients(mode, nn_ops.xw_plus_b, [x, w, b], tol=1e-7)
    gx, gw, gb = _grads(mode, nn_ops.xw_plus_b, [x, w, b])
    np.testing.assert_allclose(gx, np.ones((4, 2)) @ w.T)
    np.testing.assert_allclose(gw, x.T @ np.ones((4, 2)))
    np.testing.assert_allclose(gb, [4.0, 4.0])


# ----------------------------------------------------------------------------------------------
# Faces


def test_faces_hold_the_op_families_objects():
    for n in ("xlogy", "xlog1py", "xdivy", "multiply_no_nan", "nextafter", "reduce_euclidean_norm"):
        assert getattr(sf.math, n) is getattr(math_ops, n), n
        assert n in sf.math.__all__ and n in math_ops.__all__
    assert "mul_no_nan" in math_ops.__all__
    assert sf.nn.xw_plus_b is nn_ops.xw_plus_b and sf.compat.v1.nn.xw_plus_b is nn_ops.xw_plus_b


def test_euclidean_norm_half_precision(mode):
    for dt in (sf.float16, sf.bfloat16):
        x = sf.cast(sf.constant([[3.0, 4.0], [1.0, 1.0]]), dt)
        got = mode.evaluate(sf.math.reduce_euclidean_norm(x, 1))
        assert sf.as_dtype(got.dtype) == dt
        np.testing.assert_allclose(got.astype(np.float32), [5, np.sqrt(2)], rtol=1e-2)

"""NextAfter's gradient, NumPy float arrays converted to another float dtype, and the gradient
checker's check of an empty gradient's shape."""
import numpy as np
import pytest

import segflow as sf
from segflow.ops import gradient_checker, gradient_checker_v2, math_ops

from gradcheck import check_gradients


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nextafter_gradient_is_one_and_zero(mode, dtype):
    x1, x2 = sf.constant(np.array([0.1, -2.0], dtype)), sf.constant(np.array(3.1, dtype))
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch([x1, x2])
            y = math_ops.nextafter(x1, x2)
        d1, d2 = tape.gradient(y, [x1, x2])
    else:
        d1, d2 = sf.gradients(math_ops.nextafter(x1, x2), [x1, x2])
    d1, d2 = mode.evaluate([d1, d2])
    assert d1.tolist() == [1.0, 1.0] and d2.tolist() == 0.0 and d2.dtype == dtype


def test_nextafter_gradient_against_numerical_jacobian(mode):
    x2 = np.array([2.0], np.float64)
    check_gradients(mode, lambda x: math_ops.nextafter(x, x2), [np.array([-1.0, 0.5, 3.0])], tol=1e-6)


def test_float_arrays_convert_to_another_float_dtype(mode):
    value = np.array([[0.25, -1.5]], np.float64)
    t = sf.convert_to_tensor(value, dtype=sf.float32)
    assert t.dtype == sf.float32 and mode.evaluate(t).tolist() == [[0.25, -1.5]]
    c = sf.convert_to_tensor(np.array([1, 2], np.int64), dtype=sf.complex64)
    assert mode.evaluate(c).tolist() == [1 + 0j, 2 + 0j]
    with pytest.raises(TypeError, match="NumPy array of dtype float64"):
        sf.convert_to_tensor(value, dtype=sf.int32)


def test_complex_abs_gradient_checks(mode):
    rng = np.random.default_rng(7)
    for dtype in (sf.float32, sf.complex64):
        raw = rng.standard_normal((3, 3)) + 0.1
        if mode.eager:
            value = raw if dtype == sf.float32 else (raw + 0.5j).astype(np.complex64)
            err = gradient_checker_v2.max_error(*gradient_checker_v2.compute_gradient(
                math_ops.abs, [np.asarray(value, dtype.as_numpy_dtype)]))
        else:
            x = sf.convert_to_tensor(raw, dtype=dtype) if dtype == sf.float32 else \
                sf.complex(sf.constant(raw), sf.constant(raw * 0 + 0.5))
            y = math_ops.abs(x)
            with sf.Session():
                err = gradient_checker.compute_gradient_error(x, [3, 3], y, [3, 3])
        assert err < 2e-2


def test_gradient_checker_checks_the_shape_of_an_empty_gradient():
    @sf.RegisterGradient("TransposedGradForTest")
    def _transposed(op, grad):
        return sf.transpose(grad)

    with sf.Graph().as_default() as g:
        x = sf.placeholder(sf.float32)
        with g.gradient_override_map({"Identity": "TransposedGradForTest"}):
            y = sf.identity(x)
        with sf.Session():
            bad = r"Empty gradient has wrong shape: expected \(0, 3\), got \(3, 0\)"
            with pytest.raises(ValueError, match=bad):
                gradient_checker.compute_gradient(x, (0, 3), y, (0, 3))
            with pytest.raises(ValueError, match=bad):
                gradient_checker.compute_gradient_error(x, (0, 3), y, (0, 3))
            z = sf.identity(x)
            theory, numeric = gradient_checker.compute_gradient(x, (0, 3), z, (0, 3))
            assert theory.shape == numeric.shape == (0, 0)

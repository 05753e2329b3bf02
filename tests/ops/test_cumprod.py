"""cumprod (reduce.py's Cumprod op, its gradient in reduce_grad.py): values against a NumPy loop for
every dtype, axis, exclusive and reverse, hand-worked numbers, empty axes, static shapes; gradients
against numerical Jacobians (inclusive, exclusive, reverse, complex, second order) in eager and
graph mode on inputs without zeros; errors naming the op and the input."""
import numpy as np
import pytest

import segflow as sf
from segflow.framework import errors
from segflow.ops import math_ops
from gradcheck import check_gradients, check_second_order

RNG = np.random.default_rng(5)


def ref_cumprod(x, axis=0, exclusive=False, reverse=False):
    """The running product written out: position j holds the product of the elements before it
    (exclusive) or up to it, counted from the end with reverse."""
    moved = np.moveaxis(x, axis, -1)
    out = np.empty_like(moved)
    n = moved.shape[-1]
    order = list(range(n - 1, -1, -1)) if reverse else list(range(n))
    for idx in np.ndindex(moved.shape[:-1]):
        acc = x.dtype.type(1)
        for j in order:
            if exclusive:
                out[idx + (j,)] = acc
                acc = acc * moved[idx + (j,)]
            else:
                acc = acc * moved[idx + (j,)]
                out[idx + (j,)] = acc
    return np.moveaxis(out, -1, axis)


def _data(dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return RNG.integers(-3, 4, size=shape).astype(dtype)
    x = RNG.uniform(0.5, 1.5, size=shape) * RNG.choice([-1, 1], size=shape)
    if dtype.kind == "c":
        x = x + 1j * RNG.uniform(-1, 1, size=shape)
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.complex128])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumprod_values(mode, dtype, exclusive, reverse):
    x = _data(dtype, (3, 4, 2))
    axes = (0, 1, 2, -1, -3)
    got = mode.evaluate([sf.math.cumprod(x, a, exclusive=exclusive, reverse=reverse) for a in axes])
    for a, g in zip(axes, got):
        assert g.dtype == dtype and g.shape == x.shape
        want = ref_cumprod(x, a % 3, exclusive, reverse)
        rtol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(g, want, rtol=rtol, err_msg=f"axis={a}")


def test_cumprod_hand_worked(mode):
    x = np.array([1, 2, 3, 4])
    got = mode.evaluate([sf.math.cumprod(x), sf.math.cumprod(x, exclusive=True), sf.math.cumprod(x, reverse=True),
                         sf.math.cumprod(x, exclusive=True, reverse=True)])
    for g, w in zip(got, [[1, 2, 6, 24], [1, 1, 2, 6], [24, 24, 12, 4], [24, 12, 4, 1]]):
        np.testing.assert_array_equal(g, w)
    m = np.array([[2.0, 3.0], [0.5, -1.0]])
    got = mode.evaluate([sf.math.cumprod(m, 1), sf.math.cumprod(m, 0, exclusive=True),
                         sf.math.cumprod(m, sf.constant(1), reverse=True)])
    np.testing.assert_array_equal(got[0], [[2, 6], [0.5, -0.5]])
    np.testing.assert_array_equal(got[1], [[1, 1], [2, 3]])
    np.testing.assert_array_equal(got[2], [[6, 3], [-0.5, -1]])
    # zeros are fine in values (only the gradient divides by x)
    np.testing.assert_array_equal(mode.evaluate(sf.math.cumprod(np.array([2.0, 0.0, 5.0]))), [2, 0, 0])


def test_cumprod_empty_and_static_shape(mode):
    for exclusive in (False, True):
        for reverse in (False, True):
            out = sf.math.cumprod(np.zeros((0, 2)), 0, exclusive=exclusive, reverse=reverse)
            assert mode.evaluate(out).shape == (0, 2)
            assert mode.evaluate(sf.math.cumprod(np.ones((2, 0)), 1, exclusive=exclusive)).shape == (2, 0)
    if not mode.eager:
        x = sf.placeholder(sf.float32, [None, 3])
        assert sf.math.cumprod(x, 1).shape.as_list() == [None, 3]
        np.testing.assert_allclose(mode.session.run(sf.math.cumprod(x, 1), {x: [[1, 2, 3]]}), [[1, 2, 6]])


def test_cumprod_names():
    assert sf.math.cumprod is math_ops.cumprod
    with sf.Graph().as_default():
        assert sf.math.cumprod(np.ones(3), name="running").op.type == "Cumprod"
        assert sf.math.cumprod(np.ones(3), name="running").op.name.startswith("running")


def test_cumprod_errors(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"Cumprod.*input 'axis'.*out of range"):
        mode.evaluate(sf.math.cumprod(np.ones((2, 3)), 2))
    with pytest.raises(errors.InvalidArgumentError, match=r"Cumprod.*input 'axis'.*out of range"):
        mode.evaluate(sf.math.cumprod(np.ones((2, 3)), -3))
    with pytest.raises(errors.InvalidArgumentError, match=r"Cumprod.*input 'axis'.*out of range"):
        mode.evaluate(sf.math.cumprod(np.float64(1.0), 0))
    with pytest.raises(TypeError, match=r"Cumprod.*input 'x'.*bool"):
        sf.math.cumprod(np.array([True, False]))


X = _data(np.float64, (3, 4))


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumprod_gradient(mode, exclusive, reverse, axis):
    check_gradients(mode, lambda t: sf.math.cumprod(t, axis, exclusive=exclusive, reverse=reverse), [X])


def test_cumprod_gradient_by_hand(mode):
    # y = cumprod([a, b, c]) = [a, ab, abc]; weights [1, 1, 1]: dy/da = 1 + b + bc, dy/db = a + ac, dy/dc = ab
    a, b, c = 2.0, 3.0, -0.5
    x = sf.constant(np.array([a, b, c]))
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = sf.reduce_sum(sf.math.cumprod(x))
        g = tape.gradient(y, x)
    else:
        g = sf.gradients(sf.reduce_sum(sf.math.cumprod(x)), x)[0]
    np.testing.assert_allclose(mode.evaluate(g), [1 + b + b * c, a + a * c, a * b])


def test_cumprod_gradient_complex_and_float32(mode):
    z = _data(np.complex128, (2, 3))
    check_gradients(mode, lambda t: sf.math.cumprod(t, 1), [z])
    check_gradients(mode, lambda t: sf.math.cumprod(t, 0, exclusive=True, reverse=True), [z])
    check_gradients(mode, lambda t: sf.math.cumprod(t, 1, reverse=True), [X.astype(np.float32)], tol=2e-2)


@pytest.mark.parametrize("exclusive,reverse", [(False, False), (True, True)])
def test_cumprod_second_order(mode, exclusive, reverse):
    check_second_order(mode, lambda t: sf.math.cumprod(t, 1, exclusive=exclusive, reverse=reverse), [X], tol=1e-6)

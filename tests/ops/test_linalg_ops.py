"""matmul (linalg_ops.py: MatMul, BatchMatMulV2) and its gradients (linalg_grad.py): values against
NumPy with transpose/adjoint flags and broadcasting batch dimensions, gradients against numerical
Jacobians (real and complex128, first and second order) in eager and graph mode, errors."""
import itertools

import numpy as np
import pytest

import reference as R
import segflow as sf
from segflow.framework import errors
from segflow.ops import array_ops, gradient_checker
from gradcheck import check_gradients, default_delta

RNG = np.random.default_rng(7)


def _mat(shape, dtype):
    x = RNG.uniform(-1, 1, size=shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.uniform(-1, 1, size=shape)
    if np.dtype(dtype).kind in "iu":
        x = RNG.integers(-4, 5, size=shape)
    return x.astype(dtype)


def _kwargs(fa, fb):
    return dict(transpose_a=fa == "T", adjoint_a=fa == "H", transpose_b=fb == "T", adjoint_b=fb == "H")


def _operands(shape_a, shape_b, fa, fb, dtype):
    """a, b whose op(a) has shape shape_a and op(b) shape shape_b."""
    sa = shape_a[:-2] + (shape_a[-1], shape_a[-2]) if fa else shape_a
    sb = shape_b[:-2] + (shape_b[-1], shape_b[-2]) if fb else shape_b
    return _mat(sa, dtype), _mat(sb, dtype)


FLAGS = list(itertools.product(["", "T", "H"], repeat=2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.complex64, np.complex128])
@pytest.mark.parametrize("fa,fb", FLAGS)
def test_matmul_values(mode, dtype, fa, fb):
    a, b = _operands((2, 3), (3, 4), fa, fb, dtype)
    got = mode.evaluate(sf.matmul(a, b, **_kwargs(fa, fb)))
    assert got.dtype == dtype and got.shape == (2, 4)
    np.testing.assert_allclose(got, R.matmul(a, b, **_kwargs(fa, fb)), rtol=1e-5)


BATCH = [((2, 2, 3), (2, 3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (3, 4)), ((4, 1, 2, 3), (1, 5, 3, 2)),
         ((1, 2, 3), (3, 3, 1))]


@pytest.mark.parametrize("shape_a,shape_b", BATCH, ids=str)
@pytest.mark.parametrize("fa,fb", [("", ""), ("T", "H"), ("H", "T")])
def test_batch_matmul_broadcasts(mode, shape_a, shape_b, fa, fb):
    a, b = _operands(shape_a, shape_b, fa, fb, np.complex128)
    t = sf.matmul(a, b, **_kwargs(fa, fb))
    expect = R.matmul(a, b, **_kwargs(fa, fb))
    assert tuple(t.shape.as_list()) == expect.shape
    np.testing.assert_allclose(mode.evaluate(t), expect, rtol=1e-12)


def test_matmul_operator_and_python_values(mode):
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    t = sf.constant(a)
    got = mode.evaluate([t @ t, a.tolist() @ t, t @ [[1.0], [0.0]], sf.matmul([[2, 0], [0, 2]], sf.constant([[1], [2]]))])
    np.testing.assert_array_equal(got[0], a @ a)
    np.testing.assert_array_equal(got[1], a @ a)
    np.testing.assert_array_equal(got[2], [[1.0], [3.0]])
    np.testing.assert_array_equal(got[3], [[2], [4]])
    assert got[3].dtype == np.int32


def test_matmul_unknown_dims_graph():
    with sf.Graph().as_default():
        a = sf.placeholder(sf.float64, [None, 3])
        b = sf.placeholder(sf.float64, [None, None])
        c = sf.matmul(a, b)
        assert c.shape.as_list() == [None, None]
        with sf.Session() as sess:
            a0, b0 = _mat((2, 3), np.float64), _mat((3, 5), np.float64)
            np.testing.assert_allclose(sess.run(c, {a: a0, b: b0}), a0 @ b0)
            with pytest.raises(errors.InvalidArgumentError, match=r"MatMul.*input 'b'.*inner dimensions 3 and 4"):
                sess.run(c, {a: a0, b: _mat((4, 5), np.float64)})


# ----------------------------------------------------------------------------------------------
# Errors


def test_inner_dimension_mismatch(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"MatMul.*input 'b'.*3 and 4"):
        mode.evaluate(sf.matmul(np.ones((2, 3)), np.ones((4, 5))))
    with pytest.raises(errors.InvalidArgumentError, match=r"MatMul.*input 'b'.*2 and 4"):
        mode.evaluate(sf.matmul(np.ones((2, 3)), np.ones((4, 5)), transpose_a=True))
    with pytest.raises(errors.InvalidArgumentError, match=r"BatchMatMulV2.*input 'b'.*3 and 2"):
        mode.evaluate(sf.matmul(np.ones((2, 2, 3)), np.ones((2, 2, 3))))


def test_batch_dims_that_do_not_broadcast(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"BatchMatMulV2.*input 'b'.*batch dimensions"):
        mode.evaluate(sf.matmul(np.ones((2, 2, 3)), np.ones((3, 3, 2))))


def test_vectors_are_rejected(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"MatMul.*input 'a'.*matrix"):
        mode.evaluate(sf.matmul(np.ones(3), np.ones((3, 2))))
    with pytest.raises(errors.InvalidArgumentError, match=r"BatchMatMulV2.*input 'b'.*at least 2-D"):
        mode.evaluate(sf.matmul(np.ones((2, 2, 3)), np.ones(3)))


def test_dtype_errors():
    with pytest.raises(errors.InvalidArgumentError, match=r"MatMul.*input 'b'.*float32.*float64"):
        sf.matmul(sf.constant(np.ones((2, 2))), sf.constant(np.ones((2, 2), np.float32)))
    with pytest.raises(errors.InvalidArgumentError, match=r"MatMul.*input 'a'.*bool is not supported"):
        sf.matmul(sf.constant([[True]]), sf.constant([[False]]))
    with pytest.raises(ValueError, match="transpose and adjoint"):
        sf.matmul(np.ones((2, 2)), np.ones((2, 2)), transpose_a=True, adjoint_a=True)


# ----------------------------------------------------------------------------------------------
# Gradients


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("fa,fb", FLAGS)
def test_matmul_gradients(mode, dtype, fa, fb):
    a, b = _operands((2, 3), (3, 2), fa, fb, dtype)
    check_gradients(mode, lambda x, y: sf.matmul(x, y, **_kwargs(fa, fb)), [a, b])


@pytest.mark.parametrize("shape_a,shape_b", BATCH, ids=str)
@pytest.mark.parametrize("fa,fb", [("", ""), ("H", "T"), ("T", "H")])
def test_batch_matmul_gradients(mode, shape_a, shape_b, fa, fb):
    a, b = _operands(shape_a, shape_b, fa, fb, np.complex128)
    check_gradients(mode, lambda x, y: sf.matmul(x, y, **_kwargs(fa, fb)), [a, b])


def test_batch_matmul_gradients_real(mode):
    a, b = _operands((4, 1, 2, 3), (1, 2, 3, 2), "", "T", np.float64)
    check_gradients(mode, lambda x, y: sf.matmul(x, y, transpose_b=True), [a, b])


def test_matmul_float32_gradients(mode):
    a, b = _mat((2, 3), np.float32), _mat((3, 2), np.float32)
    check_gradients(mode, sf.matmul, [a, b], tol=1e-3)
    check_gradients(mode, lambda x, y: sf.matmul(x, y, transpose_a=True), [a.T.copy(), b], tol=1e-3)


def test_matmul_gradient_hand_worked(mode):
    # d sum(A B) / dA = ones @ B^T; d sum(A B) / dB = A^T @ ones.
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    b = np.array([[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]])
    at, bt = sf.constant(a), sf.constant(b)
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch([at, bt])
            c = sf.matmul(at, bt)
        grads = tape.gradient(c, [at, bt])
    else:
        grads = sf.gradients(sf.matmul(at, bt), [at, bt])
    ga, gb = mode.evaluate(grads)
    np.testing.assert_array_equal(ga, [[21.0, 30.0], [21.0, 30.0]])
    np.testing.assert_array_equal(gb, [[4.0, 4.0, 4.0], [6.0, 6.0, 6.0]])


def _second_order(mode, f, x, other, tol=1e-8):
    """Jacobian of x -> d sum(f(x, other) * v) / dx against numerical differences."""
    if mode.eager:
        v = RNG.uniform(0.5, 1.5, size=f(sf.constant(x), sf.constant(other)).shape).astype(x.dtype)

        def grad_fn(t):
            with sf.GradientTape() as tape:
                tape.watch(t)
                y = f(t, sf.constant(other))
            return tape.gradient(y, t, output_gradients=sf.constant(v))
        check_gradients(mode, grad_fn, [x], tol=tol)
        return
    p = sf.placeholder(x.dtype, x.shape)
    y = f(p, sf.constant(other))
    v = RNG.uniform(0.5, 1.5, size=y.shape.as_list()).astype(x.dtype)
    g = sf.gradients(y, p, grad_ys=sf.constant(v))[0]
    err = gradient_checker.compute_gradient_error(p, x.shape, g, x.shape, x_init_value=x, delta=default_delta([x]))
    assert err < tol, f"second-order gradient error {err}"


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
@pytest.mark.parametrize("fa,fb", [("", ""), ("T", "H"), ("H", "")])
def test_matmul_second_order(mode, dtype, fa, fb):
    # f(A) = op(A) op(B) op(A)-ish products make the gradient depend on A.
    a, b = _operands((3, 3), (3, 3), fa, fb, dtype)
    f = lambda x, y: sf.matmul(sf.matmul(x, y, **_kwargs(fa, fb)), x, **_kwargs(fa, ""))
    _second_order(mode, f, a, b)
    g = lambda x, y: sf.tanh(sf.matmul(y, x, **_kwargs(fb, fa))) if dtype == np.float64 else \
        sf.matmul(y, x, **_kwargs(fb, fa)) * sf.matmul(y, x, **_kwargs(fb, fa))
    _second_order(mode, g, a, b)


def test_batch_matmul_second_order(mode):
    a, b = _mat((2, 2, 3), np.float64), _mat((3, 2), np.float64)
    _second_order(mode, lambda x, y: sf.tanh(sf.matmul(x, y)), a, b)


def test_matmul_unknown_rank_graph():
    with sf.Graph().as_default():
        a = sf.placeholder(sf.float64, None)
        c = sf.matmul(a, a)
        g = sf.gradients(c, a)[0]
        with sf.Session() as sess:
            for shape in ((2, 2), (3, 2, 2)):
                a0 = _mat(shape, np.float64)
                got_c, got_g = sess.run([c, g], {a: a0})
                np.testing.assert_allclose(got_c, a0 @ a0)
                ones = np.ones(shape)  # d sum(A A) / dA = 1 A^T + A^T 1
                np.testing.assert_allclose(got_g, ones @ np.swapaxes(a0, -1, -2) + np.swapaxes(a0, -1, -2) @ ones)


@pytest.mark.parametrize("shape", [(3,), (2, 3)])
def test_diag_and_diag_part(mode, shape):
    d = np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape)
    full = mode.evaluate(array_ops.diag(d))
    want = np.zeros(shape * 2)
    for idx in np.ndindex(*shape):
        want[idx + idx] = d[idx]
    np.testing.assert_array_equal(full, want)
    np.testing.assert_array_equal(mode.evaluate(array_ops.diag_part(want)), d)
    check_gradients(mode, array_ops.diag, [d])
    check_gradients(mode, array_ops.diag_part, [want + 0.5])


def test_diag_part_refuses_unpaired_shapes(mode):
    with pytest.raises((errors.InvalidArgumentError, ValueError), match="d \\+ d|pairs|even"):
        mode.evaluate(array_ops.diag_part(np.zeros((2, 3))))

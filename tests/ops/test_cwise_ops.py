"""Elementwise ops (cwise_ops.py) and their gradients (cwise_grad.py): values against NumPy for every
dtype an op allows, broadcasting, Tensor operators, first- and second-order gradients against numerical
Jacobians in eager and graph mode, and errors that name the op and the input."""
import numpy as np
import pytest

import segflow as sf
from segflow.framework import errors
from segflow.ops import gradient_checker
from gradcheck import check_gradients, check_second_order

RNG = np.random.default_rng(1234)
FLOATS = [np.float32, np.float64]
INTS = [np.int32, np.int64]
COMPLEX = [np.complex64, np.complex128]


# ----------------------------------------------------------------------------------------------
# Gradient-check helpers (eager: gradient_checker_v2; graph: gradient_checker on placeholders)


def _vals(dtype, shape, low=-3, high=3, nonzero=False):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        a = RNG.integers(low, high + 1, size=shape)
        if nonzero:
            a[a == 0] = 1
        return a.astype(dtype)
    if dtype.kind == "b":
        return RNG.integers(0, 2, size=shape).astype(bool)
    a = RNG.uniform(low, high, size=shape)
    if dtype.kind == "c":
        a = a + 1j * RNG.uniform(low, high, size=shape)
    if nonzero:
        a = np.where(np.abs(a) < 0.5, 1.5, a)
    return a.astype(dtype)


def _tol(dtype):
    return {"float32": 1e-5, "complex64": 1e-5}.get(np.dtype(dtype).name, 1e-12)


# ----------------------------------------------------------------------------------------------
# Binary values with broadcasting


BINARY = [
    # fn, reference, dtypes, y must be nonzero
    (sf.add, np.add, FLOATS + INTS + COMPLEX, False),
    (sf.subtract, np.subtract, FLOATS + INTS + COMPLEX, False),
    (sf.multiply, np.multiply, FLOATS + INTS + COMPLEX, False),
    (sf.math.floordiv, np.floor_divide, FLOATS + INTS, True),
    (sf.math.floormod, np.mod, FLOATS + INTS, True),
    (sf.math.mod, np.mod, FLOATS + INTS, True),
    (sf.maximum, np.maximum, FLOATS + INTS, False),
    (sf.minimum, np.minimum, FLOATS + INTS, False),
]


@pytest.mark.parametrize("fn,ref,dtype", [(f, r, d) for f, r, ds, _ in BINARY for d in ds],
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_binary_values_broadcast(mode, fn, ref, dtype):
    nonzero = next(nz for f, _, _, nz in BINARY if f is fn)
    x = _vals(dtype, (2, 3), nonzero=nonzero)
    y = _vals(dtype, (3,), nonzero=nonzero)
    got = mode.evaluate(fn(sf.constant(x), sf.constant(y)))
    assert got.dtype == dtype and got.shape == (2, 3)
    np.testing.assert_allclose(got, ref(x, y), rtol=_tol(dtype))
    got = mode.evaluate(fn(sf.constant(y.reshape(3, 1)), sf.constant(x[:1])))  # (3,1) x (1,3) -> (3,3)
    np.testing.assert_allclose(got, ref(y.reshape(3, 1), x[:1]), rtol=_tol(dtype))


def test_floordiv_and_mod_follow_python_signs(mode):
    x = np.array([-7, 7, -7, 7, 0])
    y = np.array([2, -2, -2, 2, 3])
    for dtype in INTS + FLOATS:
        q = mode.evaluate(sf.math.floordiv(x.astype(dtype), y.astype(dtype)))
        r = mode.evaluate(sf.math.floormod(x.astype(dtype), y.astype(dtype)))
        np.testing.assert_array_equal(q, [-4, -4, 3, 3, 0])
        np.testing.assert_array_equal(r, [1, -1, -1, 1, 0])


def test_float_floordiv_is_floor_of_quotient(mode):
    # TF computes floor(x / y) for floats: 1.0 // 0.1 is 10 (Python's divmod-based // gives 9).
    got = mode.evaluate(sf.math.floordiv(np.array([1.0, -1.0, 7.5]), np.array([0.1, 0.1, 0.0])))
    np.testing.assert_array_equal(got, [10.0, -10.0, np.inf])


def test_integer_division_by_zero_names_op_and_input(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"FloorDiv.*input 'y'.*division by zero"):
        mode.evaluate(sf.math.floordiv(sf.constant([1, 2]), sf.constant([1, 0])))
    with pytest.raises(errors.InvalidArgumentError, match=r"FloorMod.*input 'y'.*division by zero"):
        mode.evaluate(sf.constant([1, 2]) % sf.constant([0, 1]))
    with pytest.raises(errors.InvalidArgumentError, match=r"Pow.*input 'y'.*negative integer powers"):
        mode.evaluate(sf.pow(sf.constant([2, 3]), sf.constant([1, -1])))


@pytest.mark.parametrize("dtype", FLOATS + COMPLEX)
def test_divide_float_and_complex(mode, dtype):
    x, y = _vals(dtype, (2, 3)), _vals(dtype, (1, 3), nonzero=True)
    for fn in (sf.divide, sf.math.truediv, sf.math.realdiv):
        got = mode.evaluate(fn(x, y))
        assert got.dtype == dtype
        np.testing.assert_allclose(got, x / y, rtol=_tol(dtype))


@pytest.mark.parametrize("dtype,out", [(np.int8, np.float32), (np.int16, np.float32), (np.uint8, np.float32),
                                       (np.int32, np.float64), (np.int64, np.float64)])
def test_truediv_casts_integers_to_float(mode, dtype, out):
    x = np.array([[1, 9, 6]], dtype)
    y = np.array([2, 2, 4], dtype)
    got = mode.evaluate(sf.divide(x, y))
    assert got.dtype == out
    np.testing.assert_allclose(got, [[0.5, 4.5, 1.5]])
    got = mode.evaluate(sf.constant(x) / sf.constant(y))
    assert got.dtype == out
    np.testing.assert_allclose(got, [[0.5, 4.5, 1.5]])


def test_truediv_of_mixed_dtypes_raises():
    with pytest.raises(errors.InvalidArgumentError, match=r"RealDiv.*input 'y'"):
        sf.divide(sf.constant([1, 2]), sf.constant([1.0, 2.0]))


@pytest.mark.parametrize("dtype", FLOATS + INTS + COMPLEX)
def test_pow_values(mode, dtype):
    if np.dtype(dtype).kind in "iu":
        x, y = np.array([[2, -3, 0], [1, 5, -1]], dtype), np.array([3, 2, 4], dtype)
        expect = np.array([[8, 9, 0], [1, 25, 1]])
    else:
        x, y = _vals(dtype, (2, 3), 0.5, 2), _vals(dtype, (3,), -2, 2)
        expect = np.power(x.astype(np.complex128 if np.dtype(dtype).kind == "c" else np.float64), y)
    got = mode.evaluate(sf.pow(x, y))
    assert got.dtype == dtype
    np.testing.assert_allclose(got, expect, rtol=_tol(dtype) * 10)


COMPARE = [(sf.equal, np.equal), (sf.not_equal, np.not_equal), (sf.less, np.less),
           (sf.less_equal, np.less_equal), (sf.greater, np.greater), (sf.greater_equal, np.greater_equal)]


@pytest.mark.parametrize("fn,ref", COMPARE, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_comparisons(mode, fn, ref, dtype):
    x = np.array([[1, 2, 3], [3, 2, 1]], dtype)
    y = np.array([2, 2, 2], dtype)
    got = mode.evaluate(fn(x, y))
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, ref(x, y))


def test_equal_complex_and_bool(mode):
    z = np.array([1 + 1j, 2 - 1j])
    np.testing.assert_array_equal(mode.evaluate(sf.equal(z, np.array([1 + 1j, 2 + 1j]))), [True, False])
    b = np.array([True, False])
    np.testing.assert_array_equal(mode.evaluate(sf.not_equal(b, np.array([True, True]))), [False, True])


def test_logical(mode):
    a = np.array([[True, True, False, False]])
    b = np.array([[True], [False]])
    np.testing.assert_array_equal(mode.evaluate(sf.logical_and(a, b)), np.logical_and(a, b))
    np.testing.assert_array_equal(mode.evaluate(sf.logical_or(a, b)), np.logical_or(a, b))
    np.testing.assert_array_equal(mode.evaluate(sf.math.logical_xor(a, b)), np.logical_xor(a, b))
    np.testing.assert_array_equal(mode.evaluate(sf.logical_not(a)), [[False, False, True, True]])
    with pytest.raises(errors.InvalidArgumentError, match=r"LogicalAnd.*input 'x'.*float32"):
        sf.logical_and(sf.constant([1.0]), sf.constant([2.0]))


# ----------------------------------------------------------------------------------------------
# Unary values


UNARY = [
    # fn, reference, dtypes, domain (low, high)
    (sf.negative, np.negative, FLOATS + INTS + COMPLEX, (-3, 3)),
    (sf.abs, np.abs, FLOATS + INTS + COMPLEX, (-3, 3)),
    (sf.square, np.square, FLOATS + INTS + COMPLEX, (-3, 3)),
    (sf.sqrt, np.sqrt, FLOATS + COMPLEX, (0.1, 4)),
    (sf.math.rsqrt, lambda x: 1 / np.sqrt(x), FLOATS + COMPLEX, (0.1, 4)),
    (sf.exp, np.exp, FLOATS + COMPLEX, (-2, 2)),
    (sf.math.log, np.log, FLOATS + COMPLEX, (0.1, 4)),
    (sf.math.log1p, np.log1p, FLOATS + COMPLEX, (-0.5, 3)),
    (sf.sin, np.sin, FLOATS + COMPLEX, (-3, 3)),
    (sf.cos, np.cos, FLOATS + COMPLEX, (-3, 3)),
    (sf.tanh, np.tanh, FLOATS + COMPLEX, (-2, 2)),
    (sf.sigmoid, lambda x: 1 / (1 + np.exp(-x)), FLOATS + COMPLEX, (-3, 3)),
]


@pytest.mark.parametrize("fn,ref,dtype,domain", [(f, r, d, dom) for f, r, ds, dom in UNARY for d in ds],
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_unary_values(mode, fn, ref, dtype, domain):
    x = _vals(dtype, (2, 3), *domain)
    got = mode.evaluate(fn(x))
    expect = ref(x.astype(np.complex128 if np.dtype(dtype).kind == "c" else np.float64)) \
        if np.dtype(dtype).kind != "i" else ref(x)
    assert got.dtype == (np.abs(x).dtype if fn is sf.abs else dtype)
    np.testing.assert_allclose(got, expect, rtol=_tol(dtype) * 10, atol=_tol(dtype))


def test_sign(mode):
    for dtype in FLOATS + INTS:
        got = mode.evaluate(sf.sign(np.array([-2, 0, 3], dtype)))
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, [-1, 0, 1])
    z = np.array([3 + 4j, 0j])
    np.testing.assert_allclose(mode.evaluate(sf.sign(z)), [0.6 + 0.8j, 0])


def test_sigmoid_saturates_without_nan(mode):
    got = mode.evaluate(sf.sigmoid(np.array([-1000.0, 0.0, 1000.0])))
    np.testing.assert_array_equal(got, [0.0, 0.5, 1.0])


@pytest.mark.parametrize("fn,op", [(sf.sqrt, "Sqrt"), (sf.exp, "Exp"), (sf.math.log, "Log"), (sf.tanh, "Tanh"),
                                   (sf.sigmoid, "Sigmoid"), (sf.sin, "Sin")])
def test_float_only_unary_rejects_int(fn, op):
    with pytest.raises(errors.InvalidArgumentError, match=rf"{op}.*input 'x'.*int32 is not supported"):
        fn(sf.constant([1, 2]))


# ----------------------------------------------------------------------------------------------
# where / select, cast, complex parts


def test_where_select_broadcast(mode):
    c = np.array([[True], [False]])
    x = np.arange(6.0).reshape(2, 3)
    y = np.array([-1.0, -2.0, -3.0])
    for fn in (sf.where, sf.math.select, sf.where_v2):
        np.testing.assert_array_equal(mode.evaluate(fn(c, x, y)), np.where(c, x, y))
    np.testing.assert_array_equal(mode.evaluate(sf.where(np.array([[True, False], [False, True]]))),
                                  [[0, 0], [1, 1]])
    with pytest.raises(errors.InvalidArgumentError, match=r"SelectV2.*input 'condition'.*bool"):
        sf.where(sf.constant([1, 0]), sf.constant([1.0, 2.0]), sf.constant([3.0, 4.0]))


@pytest.mark.parametrize("src,dst", [(np.float64, np.int32), (np.float32, np.int64), (np.int32, np.float32),
                                     (np.int64, np.float64), (np.float64, np.float32), (np.int32, np.bool_),
                                     (np.bool_, np.float32), (np.complex128, np.float64),
                                     (np.float32, np.complex64), (np.int32, np.int64)])
def test_cast(mode, src, dst):
    x = np.array([-2.7, 0.0, 1.5, 3.0]) if np.dtype(src).kind == "f" else np.array([-2, 0, 1, 3])
    if src is np.bool_:
        x = np.array([True, False, True, False])
    if src is np.complex128:
        x = np.array([1.5 + 2j, -1 - 1j])
    x = x.astype(src)
    got = mode.evaluate(sf.cast(x, dst))
    assert got.dtype == dst
    expect = x.real.astype(dst) if src is np.complex128 else x.astype(dst)  # float -> int truncates
    np.testing.assert_array_equal(got, expect)


def test_complex_parts(mode):
    z = np.array([[1 + 2j, -3 - 0.5j]], np.complex64)
    for fn, ref in ((sf.math.conj, np.conj), (sf.math.real, np.real), (sf.math.imag, np.imag)):
        got = mode.evaluate(fn(z))
        assert got.dtype == ref(z).dtype
        np.testing.assert_array_equal(got, ref(z))
    r = np.array([1.5, -2.0])
    np.testing.assert_array_equal(mode.evaluate(sf.math.conj(r)), r)
    np.testing.assert_array_equal(mode.evaluate(sf.math.real(r)), r)
    np.testing.assert_array_equal(mode.evaluate(sf.math.imag(r)), [0.0, 0.0])


def test_sign_gradient_is_zero(mode):
    x = sf.constant(X23)
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = sf.sign(x)
        g = tape.gradient(y, x)
    else:
        g = sf.gradients(sf.sign(x), x)[0]
    np.testing.assert_array_equal(mode.evaluate(g), np.zeros((2, 3)))


# ----------------------------------------------------------------------------------------------
# Tensor operators, with Python scalars on either side taking the tensor's dtype


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_operators(mode, dtype):
    xv = np.array([[1, -2, 3], [4, 5, -6]], dtype)
    yv = np.array([2, 3, 4], dtype)
    x, y = sf.constant(xv), sf.constant(yv)
    out_div = np.float64 if np.dtype(dtype).kind == "i" else dtype
    cases = [(x + y, xv + yv, dtype), (x - y, xv - yv, dtype), (x * y, xv * yv, dtype),
             (x / y, xv / yv, out_div), (x // y, xv // yv, dtype), (x % y, xv % yv, dtype),
             (x ** 2, xv ** 2, dtype), (-x, -xv, dtype), (abs(x), np.abs(xv), dtype),
             (2 + x, 2 + xv, dtype), (2 - x, 2 - xv, dtype), (x - 2, xv - 2, dtype), (3 * x, 3 * xv, dtype),
             (x / 2, xv / 2, out_div), (12 / y, 12 / yv, out_div), (7 // y, 7 // yv, dtype), (7 % y, 7 % yv, dtype),
             (2 ** y, 2 ** yv, dtype), (x < y, xv < yv, np.bool_), (x <= 3, xv <= 3, np.bool_),
             (x > y, xv > yv, np.bool_), (1 >= x, 1 >= xv, np.bool_), (1 < x, 1 < xv, np.bool_)]
    got = mode.evaluate([c[0] for c in cases])
    for g, (_, expect, dt) in zip(got, cases):
        assert g.dtype == dt
        np.testing.assert_allclose(g, expect, rtol=1e-6)


def test_operators_bool_and_matmul(mode):
    a, b = sf.constant([True, True, False]), sf.constant([True, False, False])
    got = mode.evaluate([a & b, a | b, ~a, a ^ b, a & True, False | b])
    expect = [[True, False, False], [True, True, False], [False, False, True], [False, True, False],
              [True, True, False], [True, False, False]]
    for g, e in zip(got, expect):
        np.testing.assert_array_equal(g, e)
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(mode.evaluate(sf.constant(m) @ sf.constant(m)), m @ m)
    np.testing.assert_array_equal(mode.evaluate(m.tolist() @ sf.constant(m)), m @ m)


def test_python_scalar_takes_tensor_dtype(mode):
    for dtype in (sf.float64, sf.int64, sf.float32, sf.int32):
        t = sf.constant([1, 2], dtype=dtype)
        for r in (t + 1, 1 + t, t * 2, 2 * t, t - 1, 1 - t, t ** 2, t // 2, t % 2, sf.maximum(t, 1)):
            assert r.dtype == dtype
    assert (sf.constant([1.0], dtype=sf.float64) + 0.1).dtype == sf.float64
    np.testing.assert_allclose(mode.evaluate(sf.constant([1.0], dtype=sf.float64) + 0.1), [1.1], rtol=1e-15)


def test_python_float_with_int_tensor_raises():
    with pytest.raises(TypeError):
        sf.constant([1, 2]) + 1.5


# ----------------------------------------------------------------------------------------------
# Errors


def test_dtype_mismatch_names_op_and_input(mode):
    x32 = sf.constant([1.0], dtype=sf.float32)
    x64 = sf.constant([1.0], dtype=sf.float64)
    with pytest.raises(errors.InvalidArgumentError, match=r"AddV2.*input 'y'.*float64.*float32"):
        sf.add(x32, x64)
    with pytest.raises(errors.InvalidArgumentError, match=r"Mul.*input 'y'.*int32.*float32"):
        sf.multiply(x32, sf.constant([1]))
    with pytest.raises(TypeError):  # the error is also a TypeError, as TF's graph-mode one
        x32 - x64


def test_incompatible_broadcast_raises_at_graph_build():
    with sf.Graph().as_default():
        a = sf.placeholder(sf.float32, [2, 3])
        b = sf.placeholder(sf.float32, [4])
        with pytest.raises(errors.InvalidArgumentError, match=r"AddV2 'add_it'.*input 'y'.*\(4,\).*\(2, 3\)"):
            sf.add(a, b, name="add_it")
        with pytest.raises(errors.InvalidArgumentError, match=r"Less.*input 'y'"):
            sf.less(a, b)
        c = sf.placeholder(sf.float32, [None, 3])
        assert sf.add(a, c).shape.as_list() == [2, 3]


def test_incompatible_broadcast_raises_eagerly():
    with pytest.raises(errors.InvalidArgumentError, match=r"Sub.*input 'y'"):
        sf.subtract(sf.constant(np.zeros((2, 3))), sf.constant(np.zeros(4)))


# ----------------------------------------------------------------------------------------------
# Gradients (float64, both modes)


X23 = RNG.uniform(-1.5, 1.5, size=(2, 3))
Y3 = RNG.uniform(-1.5, 1.5, size=(3,))
POS23 = RNG.uniform(0.5, 2.0, size=(2, 3))
POS3 = RNG.uniform(0.5, 2.0, size=(3,))

GRAD_BINARY = [
    ("add", sf.add, X23, Y3),
    ("subtract", sf.subtract, X23, Y3),
    ("multiply", sf.multiply, X23, Y3),
    ("divide", sf.divide, X23, POS3),
    ("realdiv", sf.math.realdiv, X23, POS3),
    ("pow", sf.pow, POS23, Y3),
    ("maximum", sf.maximum, X23, Y3),
    ("minimum", sf.minimum, X23, Y3),
    ("squared_difference", sf.math.squared_difference, X23, Y3),
    ("floormod", sf.math.floormod, X23 * 3, POS3),
    ("broadcast_both", sf.multiply, X23[:1].reshape(1, 3), Y3.reshape(3, 1)),
    ("scalar", sf.multiply, X23, np.array(1.7)),
]


@pytest.mark.parametrize("name,fn,x,y", GRAD_BINARY, ids=[c[0] for c in GRAD_BINARY])
def test_binary_gradients(mode, name, fn, x, y):
    check_gradients(mode, fn, [x, y])


GRAD_UNARY = [
    ("negative", sf.negative, X23), ("abs", sf.abs, X23), ("square", sf.square, X23), ("sqrt", sf.sqrt, POS23),
    ("rsqrt", sf.math.rsqrt, POS23), ("exp", sf.exp, X23), ("log", sf.math.log, POS23),
    ("log1p", sf.math.log1p, POS23 - 0.4), ("sin", sf.sin, X23), ("cos", sf.cos, X23), ("tanh", sf.tanh, X23),
    ("sigmoid", sf.sigmoid, X23), ("expm1", sf.math.expm1, X23), ("reciprocal", sf.math.reciprocal, POS23),
    ("cast_f32_roundtrip", lambda t: sf.cast(sf.cast(t, sf.float32), sf.float64) * 1.0, X23),
    ("where", lambda t: sf.where(t > 0, t * t, -t), X23),
]


@pytest.mark.parametrize("name,fn,x", GRAD_UNARY, ids=[c[0] for c in GRAD_UNARY])
def test_unary_gradients(mode, name, fn, x):
    if name == "cast_f32_roundtrip":  # float32 in the middle: a coarse step and a loose tolerance
        check_gradients(mode, fn, [x], tol=1e-4, delta=1e-2)
    else:
        check_gradients(mode, fn, [x])


def test_select_gradient_both_branches(mode):
    c = np.array([[True], [False]])
    check_gradients(mode, lambda x, y: sf.where(c, x, y), [X23, Y3])


def test_maximum_minimum_ties_go_to_x(mode):
    x = np.array([1.0, 2.0, 3.0])
    y = np.array([1.0, 3.0, 2.0])
    for fn, gx, gy in ((sf.maximum, [1, 0, 1], [0, 1, 0]), (sf.minimum, [1, 1, 0], [0, 0, 1])):
        if mode.eager:
            xt, yt = sf.constant(x), sf.constant(y)
            with sf.GradientTape(persistent=True) as tape:
                tape.watch([xt, yt])
                z = fn(xt, yt)
            grads = tape.gradient(z, [xt, yt])
        else:
            xt, yt = sf.constant(x), sf.constant(y)
            grads = sf.gradients(fn(xt, yt), [xt, yt])
        got = mode.evaluate(grads)
        np.testing.assert_array_equal(got[0], gx)
        np.testing.assert_array_equal(got[1], gy)


def test_graph_gradient_errors_below_1e_8_float64():
    # gradient_checker (graph) with a small step: the Jacobians agree to ~1e-10.
    with sf.Graph().as_default(), sf.Session().as_default():
        for fn, x0 in ((sf.tanh, X23), (sf.exp, X23), (sf.sigmoid, X23), (sf.math.log, POS23),
                       (sf.sqrt, POS23), (lambda t: t * t * 3.0, X23)):
            x = sf.placeholder(sf.float64, [2, 3])
            err = gradient_checker.compute_gradient_error(x, [2, 3], fn(x), [2, 3], x_init_value=x0, delta=1e-5)
            assert err < 1e-8
        x = sf.placeholder(sf.float64, [2, 3])
        y = sf.placeholder(sf.float64, [3])
        for p, v, other in ((x, POS23, {y: Y3}), (y, Y3, {x: POS23})):
            err = gradient_checker.compute_gradient_error(p, v.shape, sf.pow(x, y), [2, 3], x_init_value=v,
                                                          delta=1e-5, extra_feed_dict=other)
            assert err < 1e-8


def test_float32_gradients_graph_and_eager(mode):
    x = X23.astype(np.float32)
    for fn in (sf.tanh, sf.sigmoid, sf.square, lambda t: t * sf.exp(t)):
        check_gradients(mode, fn, [x], tol=1e-3, delta=1e-2)
    check_gradients(mode, sf.divide, [x, POS3.astype(np.float32)], tol=1e-3, delta=1e-2)


# complex128: gradients conjugate (dL/d conj z), which is what the real/imaginary Jacobians check
Z23 = RNG.uniform(-1, 1, size=(2, 3)) + 1j * RNG.uniform(-1, 1, size=(2, 3))
Z3 = RNG.uniform(0.5, 1.0, size=(3,)) + 1j * RNG.uniform(-1, 1, size=(3,))
GRAD_COMPLEX = [
    ("add", sf.add, [Z23, Z3]), ("multiply", sf.multiply, [Z23, Z3]), ("divide", sf.divide, [Z23, Z3]),
    ("subtract", sf.subtract, [Z23, Z3]),
    ("pow", sf.pow, [Z23 + 2, Z3]), ("square", sf.square, [Z23]), ("exp", sf.exp, [Z23]),
    ("log", sf.math.log, [Z23 + 2]), ("sqrt", sf.sqrt, [Z23 + 2]), ("rsqrt", sf.math.rsqrt, [Z23 + 2]),
    ("sin", sf.sin, [Z23]), ("cos", sf.cos, [Z23]), ("tanh", sf.tanh, [Z23]), ("sigmoid", sf.sigmoid, [Z23]),
    ("log1p", sf.math.log1p, [Z23 + 1]), ("negative", sf.negative, [Z23]), ("conj", sf.math.conj, [Z23]),
    ("real", sf.math.real, [Z23]), ("imag", sf.math.imag, [Z23]), ("abs", sf.abs, [Z23]),
    ("conj_times_z", lambda z: z * sf.math.conj(z), [Z23]),
    ("squared_difference", sf.math.squared_difference, [Z23, Z3]), ("maximum_real_part",
                                                                    lambda z: sf.maximum(sf.math.real(z), 0.1), [Z23]),
]


@pytest.mark.parametrize("name,fn,xs", GRAD_COMPLEX, ids=[c[0] for c in GRAD_COMPLEX])
def test_complex128_gradients(mode, name, fn, xs):
    check_gradients(mode, fn, xs)


SECOND_ORDER = [
    ("tanh", sf.tanh, [X23]), ("sigmoid", sf.sigmoid, [X23]), ("exp", sf.exp, [X23]), ("log", sf.math.log, [POS23]),
    ("sqrt", sf.sqrt, [POS23]), ("rsqrt", sf.math.rsqrt, [POS23]), ("square", sf.square, [X23]),
    ("pow_x", sf.pow, [POS23, Y3]), ("pow_y", lambda y, x: sf.pow(x, y), [Y3, POS23]),
    ("mul", lambda x, y: x * y * x, [X23, Y3]), ("div_x", lambda x, y: x * x / y, [X23, POS3]),
    ("div_y", lambda y, x: x / y, [POS3, X23]), ("sin", sf.sin, [X23]), ("log1p", sf.math.log1p, [POS23]),
    ("complex_mul", lambda z: z * z * sf.math.conj(z), [Z23]),
    ("complex_tanh", sf.tanh, [Z23]), ("complex_sigmoid", sf.sigmoid, [Z23]), ("complex_exp", sf.exp, [Z23]),
    ("complex_log", sf.math.log, [Z23 + 2]), ("complex_div", lambda z, w: z * z / w, [Z23, Z3]),
]


@pytest.mark.parametrize("name,fn,xs", SECOND_ORDER, ids=[c[0] for c in SECOND_ORDER])
def test_second_order_gradients(mode, name, fn, xs):
    check_second_order(mode, fn, xs)


@pytest.mark.parametrize("fn", [sf.equal, sf.less, sf.greater_equal, sf.math.floordiv])
def test_non_differentiable_give_no_gradient(mode, fn):
    x = sf.constant(X23)
    f = lambda t: sf.cast(fn(t, sf.constant(Y3)), sf.float64) * 2.0
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        assert tape.gradient(y, x) is None
    else:
        assert sf.gradients(f(x), x)[0] is None


# ----------------------------------------------------------------------------------------------
# add_n (AddN lives in shape_ops; it is the math face's elementwise sum of a list)


@pytest.mark.parametrize("dtype", FLOATS + INTS + COMPLEX)
def test_add_n_values(mode, dtype):
    xs = [_vals(dtype, (2, 3)) for _ in range(4)]
    for n in (1, 2, 4):
        got = mode.evaluate(sf.add_n([sf.constant(x) for x in xs[:n]]))
        assert got.dtype == dtype and got.shape == (2, 3)
        np.testing.assert_allclose(got, np.sum(xs[:n], axis=0), rtol=_tol(dtype))


def test_add_n_gradient(mode):
    check_gradients(mode, lambda a, b, c: sf.add_n([a, b * b, c]) * a, [X23, X23[::-1].copy(), POS23])


def test_add_n_errors():
    with pytest.raises(errors.InvalidArgumentError, match=r"AddN.*input 'inputs'.*float64.*float32"):
        sf.add_n([sf.constant([1.0]), sf.constant([2.0], dtype=sf.float64)])
    with sf.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match=r"AddN.*input 'inputs'.*shapes differ"):
            sf.add_n([sf.placeholder(sf.float32, [2, 3]), sf.placeholder(sf.float32, [3])])
    with pytest.raises(ValueError, match="non-empty"):
        sf.add_n([])


# ----------------------------------------------------------------------------------------------
# The rest of the family: rounding, predicates, other divisions, more unary math, complex/angle


def test_rounding_and_predicates(mode):
    x = np.array([-1.5, -0.5, 0.5, 2.5, 2.7])
    got = mode.evaluate([sf.math.floor(x), sf.math.ceil(x), sf.math.round(x)])
    np.testing.assert_array_equal(got[0], [-2, -1, 0, 2, 2])
    np.testing.assert_array_equal(got[1], [-1, 0, 1, 3, 3])
    np.testing.assert_array_equal(got[2], [-2, 0, 0, 2, 3])  # half to even
    v = np.array([np.nan, 1.0, -np.inf, np.inf])
    got = mode.evaluate([sf.math.is_nan(v), sf.math.is_inf(v), sf.math.is_finite(v)])
    np.testing.assert_array_equal(got, [[1, 0, 0, 0], [0, 0, 1, 1], [0, 1, 0, 0]])


def test_other_divisions(mode):
    got = mode.evaluate([sf.math.div_no_nan(np.array([1.0, 2.0]), np.array([0.0, 4.0])),
                         sf.math.div(np.array([-7, 7]), np.array([2, 2])),
                         sf.math.div(np.array([-7.0, 7.0]), np.array([2.0, 2.0])),
                         sf.math.truncatediv(np.array([-7, 7]), np.array([2, -2])),
                         sf.math.truncatediv(np.array([-7.0, 7.5]), np.array([2.0, -2.0]))])
    for g, e in zip(got, [[0.0, 0.5], [-4, 3], [-3.5, 3.5], [-3, -3], [-3.0, -3.0]]):
        np.testing.assert_array_equal(g, e)


MORE_UNARY = [
    (sf.math.expm1, np.expm1, (-2, 2)), (sf.math.tan, np.tan, (-1.2, 1.2)), (sf.math.asin, np.arcsin, (-0.9, 0.9)),
    (sf.math.acos, np.arccos, (-0.9, 0.9)), (sf.math.atan, np.arctan, (-3, 3)), (sf.math.sinh, np.sinh, (-2, 2)),
    (sf.math.cosh, np.cosh, (-2, 2)), (sf.math.reciprocal, np.reciprocal, (0.5, 3)),
    (sf.math.softplus, lambda x: np.log1p(np.exp(x)), (-3, 3)),
    (sf.math.erf, lambda x: np.vectorize(__import__("math").erf)(x), (-2, 2)),
]


@pytest.mark.parametrize("fn,ref,domain", MORE_UNARY, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("dtype", FLOATS)
def test_more_unary_values_and_gradients(mode, fn, ref, domain, dtype):
    x = _vals(dtype, (2, 3), *domain)
    got = mode.evaluate(fn(x))
    assert got.dtype == dtype
    np.testing.assert_allclose(got, ref(x.astype(np.float64)), rtol=_tol(dtype) * 10, atol=_tol(dtype))
    if dtype == np.float64:
        check_gradients(mode, fn, [x])


def test_softplus_is_stable(mode):
    got = mode.evaluate(sf.math.softplus(np.array([-1000.0, 0.0, 1000.0])))
    np.testing.assert_allclose(got, [0.0, np.log(2.0), 1000.0])


def test_complex_and_angle(mode):
    re, im = np.array([[1.0, -2.0]]), np.array([[0.5], [-1.0]])
    got = mode.evaluate(sf.math.complex(re, im))
    assert got.dtype == np.complex128
    np.testing.assert_array_equal(got, re + 1j * im)
    assert mode.evaluate(sf.math.complex(np.float32(1), np.float32(2))).dtype == np.complex64
    z = np.array([1j, -1 + 0j, 1 - 1j])
    np.testing.assert_allclose(mode.evaluate(sf.math.angle(z)), np.angle(z))
    np.testing.assert_allclose(mode.evaluate(sf.math.angle(np.array([-1.0, 2.0]))), [np.pi, 0.0])


def test_complex_angle_div_no_nan_gradients(mode):
    check_gradients(mode, sf.math.complex, [X23, Y3])
    check_gradients(mode, sf.math.angle, [Z23])
    check_gradients(mode, sf.math.div_no_nan, [Z23, Z3])
    check_gradients(mode, sf.math.div_no_nan, [X23, POS3])
    check_gradients(mode, sf.math.div, [X23, POS3])


def test_div_no_nan_gradient_is_zero_where_y_is_zero(mode):
    x, y = sf.constant(np.array([1.0, 2.0])), sf.constant(np.array([0.0, 4.0]))
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch([x, y])
            z = sf.math.div_no_nan(x, y)
        grads = tape.gradient(z, [x, y])
    else:
        grads = sf.gradients(sf.math.div_no_nan(x, y), [x, y])
    gx, gy = mode.evaluate(grads)
    np.testing.assert_array_equal(gx, [0.0, 0.25])
    np.testing.assert_array_equal(gy, [0.0, -2.0 / 16.0])


@pytest.mark.parametrize("fn", [sf.add, sf.subtract, sf.multiply, sf.divide, sf.maximum, sf.pow],
                         ids=lambda f: f.__name__)
def test_broadcast_gradients_with_unknown_dims_graph(fn):
    # Static shapes [None, 1, 3] and [None, 1]: the reduction back to each input's shape is decided at run time.
    x0 = RNG.uniform(0.5, 1.5, size=(2, 1, 3))
    y0 = RNG.uniform(0.5, 1.5, size=(4, 1))
    with sf.Graph().as_default(), sf.Session().as_default():
        x = sf.placeholder(sf.float64, [None, 1, 3])
        y = sf.placeholder(sf.float64, [None, 1])
        z = fn(x, y)
        assert z.shape.as_list() == [None, None, 3]
        for p, v, other in ((x, x0, {y: y0}), (y, y0, {x: x0})):
            err = gradient_checker.compute_gradient_error(p, v.shape, z, [2, 4, 3], x_init_value=v, delta=1e-5,
                                                          extra_feed_dict=other)
            assert err < 1e-8


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.complex128, np.bool_, np.float32])
def test_select_dtypes(mode, dtype):
    c = np.array([True, False, True])
    x, y = _vals(dtype, (3,)), _vals(dtype, (3,))
    got = mode.evaluate(sf.where(c, x, y))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.where(c, x, y))


# ----------------------------------------------------------------------------------------------
# Property test: broadcasting binary ops against NumPy, for any pair of broadcastable shapes

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=3),
       st.sampled_from([(sf.add, np.add), (sf.multiply, np.multiply), (sf.maximum, np.maximum),
                        (sf.subtract, np.subtract), (sf.less, np.less)]))
def test_broadcasting_matches_numpy_property(shapes, op):
    fn, ref = op
    x = np.arange(int(np.prod(shapes.input_shapes[0])), dtype=np.float64).reshape(shapes.input_shapes[0]) - 2
    y = np.cos(np.arange(int(np.prod(shapes.input_shapes[1])))).reshape(shapes.input_shapes[1])
    got = fn(x, y)
    assert tuple(got.shape.as_list()) == shapes.result_shape
    np.testing.assert_array_equal(got.numpy(), ref(x, y))
    with sf.Graph().as_default():  # graph-time shape inference agrees
        assert tuple(fn(x, y).shape.as_list()) == shapes.result_shape


def test_tf1_select_vector_condition_picks_rows(mode):
    c = np.array([True, False, True])
    x = np.arange(9.0).reshape(3, 3)
    y = -x
    np.testing.assert_array_equal(mode.evaluate(sf.math.select(c, x, y)), [[0, 1, 2], [-3, -4, -5], [6, 7, 8]])
    np.testing.assert_array_equal(mode.evaluate(sf.where(c, x, y)), np.where(c, x, y))  # v2 broadcasts
    check_gradients(mode, lambda a, b: sf.math.select(c, a, b), [X23[:1].repeat(3, 0), X23[1:].repeat(3, 0)])

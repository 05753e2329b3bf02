"""The eager shortcuts of the operator, gradient and tape paths give what the general paths give.

Each shortcut here (shared Python-scalar operands and gradient constants, the in-place TanhGrad /
SigmoidGrad kernels, a single-tensor `tape.gradient`, the real-tensor `conj`, the default
`unconnected_gradients`, the plain-op runner and its one-output records, the gradient functions
kept from walk to walk) exists for speed only, so each test compares against the general
computation, bit for bit, or checks that what the shortcut skips still happens where it must.
"""
import numpy as np
import pytest

import segflow as sf
from segflow._core import convert
from segflow._core.apply import apply_op
from segflow._ops import elementwise_grad as eg
from segflow._ops import operators

try:
    import ml_dtypes
    BF16 = [ml_dtypes.bfloat16]
except ImportError:  # pragma: no cover
    BF16 = []


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64, np.complex128] + BF16)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5), (1000,)])
def test_tanh_and_sigmoid_grad_kernels_give_the_plain_expressions_bits(dtype, shape):
    rng = np.random.default_rng(0)
    y = rng.uniform(-1, 1, shape)
    dy = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        y = y + 1j * rng.uniform(-1, 1, shape)
        dy = dy - 0.5j
    y, dy = y.astype(dtype), dy.astype(dtype)
    yc = np.conj(y) if np.dtype(dtype).kind == "c" else y
    one = yc.dtype.type(1)
    for kernel, want in ((eg._tanh_grad_kernel, dy * (one - yc * yc)),
                         (eg._sigmoid_grad_kernel, dy * (yc * (one - yc)))):
        got = np.asarray(kernel(y, dy))
        want = np.asarray(want)
        assert got.dtype == want.dtype and got.shape == shape
        assert got.tobytes() == want.tobytes()


def test_tanh_gradient_matches_its_formula_through_the_tape():
    x = sf.constant(np.linspace(-2, 2, 9, dtype=np.float32))
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = sf.tanh(x)
    t = np.tanh(x.numpy())
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 1 - t * t, rtol=1e-6)


def _general_scalar(x, y):
    return sf.convert_to_tensor(y, preferred_dtype=x.dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.complex64])
def test_scalar_operands_are_cached_read_only_and_exact(dtype):
    x = sf.constant(np.arange(1, 6).astype(dtype))
    for y in (1.01, 3, -7, 0.5) if np.dtype(dtype).kind != "i" else (3, -7, 2**20):
        s1 = operators._scalar_like(x, y, False)
        s2 = operators._scalar_like(x, y, False)
        assert s1 is s2                              # made once
        assert not s1.numpy().flags.writeable        # so no kernel can change it for the next user
        general = _general_scalar(x, y)
        assert s1.dtype == general.dtype and s1.numpy().tobytes() == general.numpy().tobytes()
        np.testing.assert_array_equal((x * y).numpy(), x.numpy() * general.numpy())
        np.testing.assert_array_equal((y - x).numpy(), general.numpy() - x.numpy())


def test_zero_keeps_its_sign():
    x = sf.constant(np.array([1.0, 2.0], np.float32))
    assert np.signbit((x * -0.0).numpy()).all()
    assert not np.signbit((x * 0.0).numpy()).any()
    assert np.signbit((x * -0.0).numpy()).all()      # after 0.0: its own cache entry
    assert not np.signbit((x * 0).numpy()).any()


def test_the_scalar_cache_stays_bounded():
    x = sf.constant(np.array([1.0], np.float64))
    for i in range(1, convert._SHARED_SCALARS_MAX * 2 + 10):
        assert (x * float(i)).numpy()[0] == float(i)
    assert len(convert._SHARED_SCALARS) <= convert._SHARED_SCALARS_MAX


def test_gradient_constants_share_the_operators_scalars():
    # one cache serves both: the 2 of a gradient formula and `y * 2.0` are the same tensor
    assert eg._scalar(2, sf.float32) is operators._scalar_like(sf.constant(np.ones(2, np.float32)), 2, False)
    assert eg._scalar(0.5, sf.float64).numpy().dtype == np.float64
    g = sf.Graph()
    with g.as_default():
        assert eg._scalar(2, sf.float32).op.type == "Const"     # a graph gets its own constant


def test_single_tensor_gradient_equals_the_nested_form():
    x = sf.constant(np.array([0.5, -1.5, 2.0], np.float32))
    w = sf.constant(np.array([2.0, 3.0, 4.0], np.float32))

    def grads(wrap):
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = sf.tanh(x * w) * 1.5 + x
        return tape.gradient(wrap(y), wrap(x))

    single = grads(lambda t: t)
    nested = grads(lambda t: [t])
    assert isinstance(single, sf.Tensor) and isinstance(nested, list) and len(nested) == 1
    assert single.numpy().tobytes() == nested[0].numpy().tobytes()
    t = np.tanh(x.numpy() * w.numpy())
    np.testing.assert_allclose(single.numpy(), 1.5 * (1 - t * t) * w.numpy() + 1, rtol=1e-6)


def test_seed_of_ones_is_a_fresh_writable_array():
    x = sf.constant(np.array([1.0, 2.0], np.float64))
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = x + 0.0
    g = tape.gradient(y, x)
    np.testing.assert_array_equal(g.numpy(), [1.0, 1.0])
    assert g.numpy().dtype == np.float64
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = sf.identity(x)
    g2 = tape.gradient(y, x)
    g2.numpy()[0] = 5.0                           # the caller's own array (not shared with the next)
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = sf.identity(x)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [1.0, 1.0])


def test_conj_of_real_eager_tensors_is_the_tensor_and_complex_conjugates():
    r = sf.constant(np.array([1.0, -2.0], np.float32))
    assert sf.math.conj(r) is r
    c = sf.constant(np.array([1 + 2j, -3j], np.complex64))
    np.testing.assert_array_equal(sf.math.conj(c).numpy(), np.conj(c.numpy()))


@pytest.mark.parametrize("value", [sf.UnconnectedGradients.NONE, "none", "NONE", sf.UnconnectedGradients.ZERO, "zero"])
def test_unconnected_gradients_values(value):
    x = sf.constant(np.array([1.0, 2.0], np.float32))
    z = sf.constant(np.array([3.0], np.float32))
    with sf.GradientTape() as tape:
        tape.watch([x, z])
        y = x * 2.0
    g = tape.gradient(y, z, unconnected_gradients=value)
    if str(getattr(value, "value", value)).lower() == "none":
        assert g is None
    else:
        np.testing.assert_array_equal(g.numpy(), [0.0])
    with pytest.raises(ValueError, match="unconnected_gradients"):
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = x * 2.0
        tape.gradient(y, x, unconnected_gradients="some")


# ----------------------------------------------------------------------------- plain-op runner

def _general(opdef, *inputs):
    """The op through the general eager path (`_run_eager`), for comparison."""
    from segflow._core import apply
    return apply._run_eager(opdef, inputs, [t._value for t in inputs], {}, None)


@pytest.mark.parametrize("op_type,arity", [("Mul", 2), ("AddV2", 2), ("Sub", 2), ("RealDiv", 2),
                                           ("Tanh", 1), ("Exp", 1), ("Neg", 1), ("TanhGrad", 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_plain_runner_gives_the_general_paths_bits(op_type, arity, dtype):
    from segflow._core.registry import lookup_op
    opdef = lookup_op(op_type)
    assert opdef._plain is not None          # these are plain ops: the runner is what they take
    rng = np.random.default_rng(1)
    values = [(rng.uniform(0.5, 2, (3, 4)) + (0.25j if np.dtype(dtype).kind == "c" else 0)).astype(dtype)
              for _ in range(arity)]
    inputs = [sf.constant(v) for v in values]
    got = apply_op(op_type, *inputs)
    want = _general(opdef, *inputs)
    assert got.dtype == want.dtype
    assert got.numpy().tobytes() == want.numpy().tobytes()


def test_plain_runner_leaves_errors_and_conversions_to_the_general_path():
    x32 = sf.constant([1.0, 2.0])
    x64 = sf.constant(np.array([1.0, 2.0]))
    with pytest.raises(sf.errors.InvalidArgumentError, match="Mul"):
        x32 * x64                                # dtype mismatch: the general path's error
    with pytest.raises(sf.errors.InvalidArgumentError, match="Tanh"):
        sf.tanh(sf.constant([1, 2]))             # int32 is not allowed for Tanh
    with pytest.raises(sf.errors.InvalidArgumentError, match="AddV2"):
        sf.constant(np.ones((2, 3), np.float32)) + sf.constant(np.ones((4,), np.float32))
    # a NumPy operand and a Python list take the general conversion and give NumPy's values
    a = np.array([3.0, 4.0], np.float32)
    np.testing.assert_array_equal(sf.multiply(x32, a).numpy(), x32.numpy() * a)
    np.testing.assert_array_equal(sf.add(x32, [1.0, 1.0]).numpy(), x32.numpy() + 1)


def test_plain_runner_records_once_per_watching_tape_and_keeps_outputs_alive():
    import gc
    import weakref
    x = sf.constant([0.5, -1.5])
    with sf.GradientTape(persistent=True) as outer:
        outer.watch(x)
        with sf.GradientTape(persistent=True) as inner:
            inner.watch(x)
            t = x * x
            y = sf.tanh(t)
            alive = weakref.ref(t)
            del t                     # only the records hold it now: its id must stay its own,
            gc.collect()              # or a new tensor taking it would be recorded as watched
            assert alive() is not None
            assert id(alive()) in inner._tape.watched and id(alive()) in outer._tape.watched
            c = sf.constant([1.0, 2.0])
            c + c                     # watches nothing: recorded nowhere
        dy = inner.gradient(y, x)
    records = inner._tape.records
    assert [r.type for r in records] == ["Mul", "Tanh"]              # once each, nothing else
    assert [r.type for r in outer._tape.records[:2]] == ["Mul", "Tanh"]
    assert all(a is b for a, b in zip(records, outer._tape.records))  # one entry, both tapes
    t = np.tanh(x.numpy() ** 2)
    np.testing.assert_allclose(dy.numpy(), 2 * x.numpy() * (1 - t * t), rtol=1e-6)
    # second order through the outer tape: d/dx of 2x(1 - tanh(x^2)^2), by central differences
    d2 = outer.gradient(dy, x).numpy()
    f = lambda v: 2 * v * (1 - np.tanh(v * v) ** 2)
    h = 1e-3
    v = x.numpy().astype(np.float64)
    np.testing.assert_allclose(d2, (f(v + h) - f(v - h)) / (2 * h), rtol=1e-3, atol=1e-4)


def test_gradient_functions_registered_later_are_seen_by_the_next_walk():
    from segflow._core import registry
    name = f"FastPathLateGrad{len(registry._OPS)}"     # a new op type each run
    registry.register_op(name, inputs=("x",), attrs={"T": "x"},
                         infer=lambda op, x: [registry.TensorSpec(x.dtype, x.shape)],
                         kernel=lambda x: x * 2)
    x = sf.constant([1.0, 3.0])
    run = lambda: apply_op(name, x)
    with sf.GradientTape() as tape:      # a walk before the registration caches the other types
        tape.watch(x)
        y = sf.tanh(x)
    tape.gradient(y, x)
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = run()
    with pytest.raises(LookupError, match=name):
        tape.gradient(y, x)
    registry.RegisterGradient(name)(lambda op, grad: grad * 2)
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = run()
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 2.0])


def test_add_n_refuses_inputs_of_different_shapes_and_sums_equal_ones():
    with pytest.raises(sf.errors.InvalidArgumentError, match="AddN.*shape"):
        sf.add_n([sf.ones(3), sf.ones(1)])
    with pytest.raises(sf.errors.InvalidArgumentError, match="input 2"):
        sf.add_n([sf.ones((2, 2)), sf.ones((2, 2)), sf.ones((2, 1))])
    vals = [np.arange(6, dtype=np.float32).reshape(2, 3) * k for k in (1, 2, 5)]
    np.testing.assert_array_equal(sf.add_n([sf.constant(v) for v in vals]).numpy(), vals[0] + vals[1] + vals[2])
    with pytest.raises(sf.errors.InvalidArgumentError, match="AddN"):
        sf.add_n([sf.ones(2), sf.ones(2, dtype=sf.float64)])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64, np.complex128] + BF16)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (3, 5)])
def test_in_place_sigmoid_gives_the_plain_expressions_bits(dtype, shape):
    from segflow._ops.elementwise import _sigmoid
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape) * 30          # reaches exp overflow for float16 and float32
    if np.dtype(dtype).kind == "c":
        x = x + 0.5j * rng.standard_normal(shape)
    x = x.astype(dtype)
    with np.errstate(all="ignore"):
        want = np.asarray((1 / (1 + np.exp(-x))).astype(x.dtype, copy=False))
    got = np.asarray(_sigmoid(x))
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_quietly_ignores_float_errors_inside_and_restores_the_callers_state():
    import warnings
    from segflow.kernels.quiet import quietly
    one, zero = np.float32(1), np.zeros(2, np.float32)
    old = np.seterr(all="raise")
    try:
        out = quietly(np.true_divide, one, zero)                  # no FloatingPointError
        np.testing.assert_array_equal(out, [np.inf, np.inf])
        with pytest.raises(FloatingPointError):
            np.true_divide(one, zero)                              # the caller's "raise" again
        np.seterr(all="warn")                                      # a new state: a new quiet one
        quietly(np.true_divide, one, zero)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(RuntimeWarning):
                np.true_divide(one, zero)
            quietly(np.true_divide, one, zero)                     # still quiet, no warning
        with pytest.raises(ZeroDivisionError):                     # errors of fn pass through,
            quietly(lambda: 1 // 0)
        with pytest.raises(RuntimeWarning):                        # and the state is restored
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                np.true_divide(one, zero)
    finally:
        np.seterr(**old)


def test_ops_with_quiet_kernels_give_inf_and_nan_without_warnings():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = sf.constant([1.0, 0.0, -1.0])
        np.testing.assert_array_equal((x / sf.constant([0.0, 0.0, 0.0])).numpy(), [np.inf, np.nan, -np.inf])
        np.testing.assert_array_equal((sf.constant([1e30]) ** 2).numpy(), [np.inf])
        np.testing.assert_array_equal(sf.sigmoid(sf.constant([-1000.0, 1000.0])).numpy(), [0.0, 1.0])
        np.testing.assert_array_equal(sf.math.softplus(sf.constant([1e30, -1e30])).numpy(), np.float32([1e30, 0.0]))


@pytest.mark.parametrize("in_shape,shape", [((), (3, 2)), ((1,), (4,)), ((2, 1), (2, 3)), ((3,), (2, 3)),
                                            ((), ()), ((0,), (5, 0)), ((1, 0), (3, 0)), ((1, 1, 3), (2, 4, 3))])
def test_broadcast_to_copies_what_numpy_broadcasts(in_shape, shape):
    x = np.random.default_rng(4).standard_normal(in_shape).astype(np.float32)
    got = sf.broadcast_to(sf.constant(x), list(shape)).numpy()
    want = np.broadcast_to(x, shape)
    assert got.shape == want.shape and got.dtype == want.dtype and got.flags.c_contiguous
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("in_shape,shape", [((3,), (1,)), ((2, 1), (1,)), ((3,), (2, 4)), ((3,), (-1, 3))])
def test_broadcast_to_refuses_shapes_it_cannot_reach(in_shape, shape):
    with pytest.raises(sf.errors.InvalidArgumentError, match="BroadcastTo"):
        sf.broadcast_to(sf.constant(np.ones(in_shape, np.float32)), list(shape))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("axis,keepdims", [(1, False), ((0, 2), True), (None, False), (-1, True)])
def test_mean_gradient_spreads_one_over_the_count(dtype, axis, keepdims):
    x = sf.constant(np.random.default_rng(5).standard_normal((3, 4, 5)).astype(dtype))
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = sf.reduce_mean(x, axis=axis, keepdims=keepdims)
    g = tape.gradient(y, x).numpy()
    count = 60 if axis is None else int(np.prod([x.shape[a] for a in np.atleast_1d(axis)]))
    assert g.dtype == np.dtype(dtype) and g.shape == (3, 4, 5)
    np.testing.assert_array_equal(g, np.full((3, 4, 5), np.asarray(1, dtype) / np.asarray(count, dtype)))

"""py_func / numpy_function (PyFunc, PyFuncStateless) and py_function (EagerPyFunc): values eagerly
and in a Session, TF's output checks and error classes, the gradient_override_map gradient of a
PyFunc, and py_function's gradients (eager tape, Session, sf.function, second order)."""
import numpy as np
import pytest

import segflow as sf
from segflow.framework import errors, ops
from segflow.ops import script_ops

from gradcheck import check_gradients

v1 = sf.compat.v1
X = np.array([0.5, -1.25, 2.0])


def _session_run(fetch_fn, *arrays):
    """Builds fetch_fn(*placeholders) in a fresh graph and runs it on `arrays`."""
    with sf.Graph().as_default():
        phs = [v1.placeholder(sf.as_dtype(a.dtype), a.shape) for a in arrays]
        fetches = fetch_fn(*phs)
        with v1.Session() as s:
            return s.run(fetches, dict(zip(phs, arrays)))


# ----------------------------------------------------------------------------------------------
# values


@pytest.mark.parametrize("api", ["py_func", "numpy_function"])
def test_numpy_functions_values(mode, api):
    fn = v1.py_func if api == "py_func" else sf.numpy_function
    seen = []

    def f(a, b):
        seen.append((type(a), type(b)))
        return np.sinh(a) * b

    x = sf.constant(X.astype(np.float32))
    y = fn(f, [x, np.float32(2.0)], sf.float32)
    np.testing.assert_allclose(mode.evaluate(y), np.sinh(X.astype(np.float32)) * 2, rtol=1e-6)
    # TF passes a scalar input as a NumPy scalar to the kernel, as a 0-d array eagerly (np.array(x))
    assert seen and all(t == (np.ndarray, np.ndarray if mode.eager else np.float32) for t in seen)


def test_numpy_function_several_outputs(mode):
    x = sf.constant(X)
    a, b = sf.numpy_function(lambda t: (t + 1, (t > 0).astype(np.int32)), [x], [sf.float64, sf.int32])
    got_a, got_b = mode.evaluate([a, b])
    np.testing.assert_array_equal(got_a, X + 1)
    np.testing.assert_array_equal(got_b, [1, 0, 1])
    assert got_b.dtype == np.int32


def test_graph_nodes_have_tf_types_attrs_and_unknown_shapes():
    with sf.Graph().as_default():
        x = v1.placeholder(sf.float32, [3])
        y = v1.py_func(np.square, [x], sf.float32, name="sq")
        z = v1.py_func(np.square, [x], [sf.float32], stateful=False)
        w = sf.numpy_function(np.square, [x], sf.float32, stateful=False)
        e = sf.py_function(sf.square, [x], sf.float32)
        assert (y.op.type, z[0].op.type, w.op.type, e.op.type) == ("PyFunc", "PyFuncStateless", "PyFuncStateless",
                                                                    "EagerPyFunc")
        assert y.op.name == "sq" and isinstance(z, list) and len(z) == 1
        assert y.op.get_attr("token").startswith("pyfunc_") and y.op.get_attr("Tout") == (sf.float32,)
        assert y.op.get_attr("token") != w.op.get_attr("token")
        assert y.shape.rank is None and e.shape.rank is None
        y.set_shape([3])
        assert y.shape.as_list() == [3]
        with v1.Session() as s:
            np.testing.assert_array_equal(s.run(y, {x: [1, 2, 3]}), [1, 4, 9])


def test_a_stateful_py_func_runs_at_every_session_run():
    calls = []

    def count(a):
        calls.append(1)
        return np.int64(len(calls))

    with sf.Graph().as_default():
        y = v1.py_func(count, [sf.constant(1.0)], sf.int64)     # constant input: never folded away
        with v1.Session() as s:
            assert [s.run(y) for _ in range(3)] == [1, 2, 3]


def test_eager_py_func_calls_the_function_at_once_as_tf():
    # TF runs it directly: results converted as they are (Tout not checked), one result unwrapped
    x = sf.constant(X.astype(np.float32))
    y = v1.py_func(lambda a: a.astype(np.float64) * 2, [x], sf.float32)
    assert y.dtype == sf.float64 and isinstance(y, ops.Tensor)
    np.testing.assert_array_equal(y.numpy(), X * 2)
    assert v1.py_func(lambda a: 3, [x], sf.float32).dtype == sf.int32
    both = v1.py_func(lambda a: [a, a], [x], [sf.float32, sf.float32])
    assert isinstance(both, list) and len(both) == 2
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = sf.numpy_function(lambda a: a * a, [x], sf.float32)
    assert tape.gradient(y, x) is None


def test_graph_output_conversion_follows_tf():
    np.testing.assert_array_equal(_session_run(lambda p: v1.py_func(lambda a: 3.0, [p], sf.float64), X), 3.0)
    assert _session_run(lambda p: v1.py_func(lambda a: 3, [p], sf.int64), X) == 3
    got = _session_run(lambda p: v1.py_func(lambda a: b"hi", [p], sf.string), X)
    assert got == b"hi"
    with sf.Graph().as_default():
        words = v1.py_func(lambda w: np.char.upper(w.astype(str)), [sf.constant([b"ab", b"c"])], sf.string)
        nothing_in = v1.py_func(lambda: np.float32(2), [], sf.float32)
        with v1.Session() as s:
            assert s.run(words).tolist() == [b"AB", b"C"] and s.run(nothing_in) == 2.0
    with sf.Graph().as_default():
        op = v1.py_func(lambda a: None, [sf.constant(1.0)], [])
        assert isinstance(op, ops.Operation) and op.type == "PyFunc" and not op.outputs
        with v1.Session() as s:
            assert s.run(op) is None


def test_inputs_are_copies_the_function_may_change():
    with sf.Graph().as_default():
        c = sf.constant(X)
        y = v1.py_func(lambda a: a.__setitem__(0, 99.0) or a, [c], sf.float64)
        with v1.Session() as s:
            got_y, got_c = s.run([y, c])
    assert got_y[0] == 99.0 and got_c[0] == X[0]


# ----------------------------------------------------------------------------------------------
# errors


@pytest.mark.parametrize("ret, message", [
    (lambda a: a.astype(np.float64), r"PyFunc 'bad': 0-th value returned by pyfunc_\d+ is float64, but expects float32"),
    (lambda a: 3.0, r"0-th value returned by pyfunc_\d+ is float64, but expects float32"),
    (lambda a: np.array([1, 2]), r"0-th value returned by pyfunc_\d+ is int64, but expects float32"),
    (lambda a: a > 1, r"0-th value returned by pyfunc_\d+ is bool, but expects float32"),
    (lambda a: [a, a], r"PyFunc 'bad': pyfunc_\d+ returns 2 values, but expects to see 1 values"),
    (lambda a: None, r"pyfunc_\d+ returns 0 values, but expects to see 1 values"),
])
def test_wrong_outputs_name_the_op(ret, message):
    with pytest.raises(errors.InvalidArgumentError, match=message) as info:
        _session_run(lambda p: v1.py_func(ret, [p], sf.float32, name="bad"), X.astype(np.float32))
    assert info.value.op is not None and info.value.op.name == "bad"


def test_wrong_output_counts_for_a_list_tout():
    with pytest.raises(errors.InvalidArgumentError, match=r"returns 1 values, but expects to see 2 values"):
        _session_run(lambda p: v1.py_func(lambda a: a, [p], [sf.float64, sf.float64]), X)
    with pytest.raises(errors.InvalidArgumentError, match=r"returns 1 values, but expects to see 0 values"):
        _session_run(lambda p: v1.py_func(lambda a: a, [p], []), X)
    with pytest.raises(errors.InvalidArgumentError, match=r"EagerPyFunc 'e': pyfunc_\d+ returns 3 values, but expects "
                                                          r"to see 2 values"):
        _session_run(lambda p: sf.py_function(lambda a: (a, a, a), [p], [sf.float64] * 2, name="e"), X)
    with pytest.raises(errors.InvalidArgumentError, match=r"^EagerPyFunc: pyfunc_\d+ returns 1 values"):
        sf.py_function(lambda a: a, [sf.constant(X)], [sf.float64, sf.float64])


def test_py_function_converts_outputs_to_tout():
    # arrays convert (float64 -> float32); a tensor of another dtype does not (TF's convert_to_tensor)
    got = sf.py_function(lambda a: np.array([1.0, 2.0]), [sf.constant(1.0)], sf.float32)
    assert got.dtype == sf.float32 and got.numpy().tolist() == [1.0, 2.0]
    with pytest.raises(errors.InvalidArgumentError, match="EagerPyFunc: ValueError: Tensor conversion requested "
                                                          "dtype float32 for Tensor with dtype float64"):
        sf.py_function(lambda a: sf.cast(a, sf.float64), [sf.constant(1.0)], sf.float32)
    with pytest.raises(errors.InvalidArgumentError, match="EagerPyFunc 'conv': ValueError: Tensor conversion"):
        _session_run(lambda p: sf.py_function(lambda a: sf.cast(a, sf.int64), [p], sf.float64, name="conv"), X)


class _Boom(Exception):
    pass


RAISED = [(ValueError, errors.InvalidArgumentError), (TypeError, errors.InvalidArgumentError),
          (StopIteration, errors.OutOfRangeError), (MemoryError, errors.ResourceExhaustedError),
          (NotImplementedError, errors.UnimplementedError), (KeyError, errors.UnknownError),
          (RuntimeError, errors.UnknownError), (_Boom, errors.UnknownError)]


@pytest.mark.parametrize("api", ["py_func", "py_function"])
@pytest.mark.parametrize("exc, expected", RAISED)
def test_exceptions_become_tf_errors_naming_the_op(api, exc, expected):
    def boom(a):
        raise exc("boom!")

    fn = v1.py_func if api == "py_func" else sf.py_function
    with pytest.raises(expected) as info:
        _session_run(lambda p: fn(boom, [p], sf.float64, name="boomop"), X)
    op_type = "PyFunc" if api == "py_func" else "EagerPyFunc"
    text = str(info.value)
    assert text.startswith(f"{op_type} 'boomop': {exc.__name__}: ")
    assert "boom!" in text and "Traceback" in text and "in boom" in text   # the function's traceback
    assert info.value.op.name == "boomop"


def test_eager_exceptions():
    def boom(a):
        raise ValueError("boom!")

    x = sf.constant(X)
    with pytest.raises(ValueError, match="boom!") as info:     # called directly, as in TF
        sf.numpy_function(boom, [x], sf.float64)
    assert not isinstance(info.value, errors.OpError)
    with pytest.raises(errors.InvalidArgumentError, match="^EagerPyFunc: ValueError: boom!") as info:
        sf.py_function(boom, [x], sf.float64)
    assert isinstance(info.value.__cause__, ValueError)


def test_argument_errors():
    x = sf.constant(X)
    with pytest.raises(ValueError, match="Expected func to be callable"):
        v1.py_func(3, [x], sf.float64)
    with pytest.raises(TypeError, match="Missing required argument: 'Tout'"):
        sf.numpy_function(np.abs, [x])
    with pytest.raises(TypeError, match="Missing required argument: 'Tout'"):
        sf.py_function(sf.abs, [x])
    with pytest.raises(TypeError, match="Don't set the `inp` argument"):
        sf.py_function(inp=[x], Tout=sf.float64)
    with pytest.raises(TypeError, match="inp must be a list or tuple"):
        sf.py_function(sf.abs, x, sf.float64)
    with pytest.raises(TypeError, match="Tout must be a DType"):
        sf.py_function(sf.abs, [x], [sf.float64, [sf.float64]])


def test_decorator_forms(mode):
    @sf.numpy_function(Tout=sf.float64)
    def twice(a):
        return a * 2

    @sf.py_function(Tout=sf.float64)
    def cube(a):
        return a * a * a

    x = sf.constant(X)
    np.testing.assert_allclose(mode.evaluate(twice(x)), X * 2)
    np.testing.assert_allclose(mode.evaluate(cube(x)), X ** 3)
    assert cube.__name__ == "cube"


def test_faces():
    assert script_ops.py_func is v1.py_func and script_ops.numpy_function is sf.numpy_function is v1.numpy_function
    assert script_ops.py_function is script_ops.eager_py_func is sf.py_function is v1.py_function


# ----------------------------------------------------------------------------------------------
# gradients


@ops.RegisterGradient("SegflowTestPySinGrad")
def _py_sin_grad(op, grad):
    assert op.type == "PyFunc"
    return grad * sf.cos(op.inputs[0])


def test_py_func_has_no_gradient_without_an_override(mode):
    x = sf.constant(X)
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = v1.py_func(np.sin, [x], sf.float64)
        assert tape.gradient(y, x) is None
    else:
        y = v1.py_func(np.sin, [x], sf.float64)
        assert sf.gradients(y, x) == [None]
        assert sf.gradients(y * 2.0, x) == [None]


def test_gradient_override_map_gives_a_py_func_its_gradient():
    graph = sf.Graph()
    with graph.as_default():
        m = type("GraphMode", (), {"eager": False, "session": v1.Session(graph=graph)})()

        def f(t):
            with sf.get_default_graph().gradient_override_map({"PyFunc": "SegflowTestPySinGrad"}):
                y = v1.py_func(np.sin, [t], sf.float64)
            y.set_shape(t.shape)
            return y
        check_gradients(m, f, [X])
        # the override does not leak out of its block
        c = sf.constant(X)
        assert sf.gradients(v1.py_func(np.sin, [c], sf.float64), c) == [None]


def _cubic(a, b):
    return sf.py_function(lambda u, v: u * u * v + sf.sin(v), [a, b], sf.float64)


def test_py_function_gradient_against_numbers(mode):
    rng = np.random.default_rng(3)
    check_gradients(mode, _cubic, [rng.normal(size=(2, 3)), rng.normal(size=(2, 3))])


def test_py_function_gradient_values_eager_and_session():
    a, b = X, X[::-1].copy()
    want_a, want_b = 2 * a * b, a * a + np.cos(b)
    x, y = sf.constant(a), sf.constant(b)
    with sf.GradientTape() as tape:
        tape.watch([x, y])
        z = _cubic(x, y)
    ga, gb = tape.gradient(z, [x, y])
    np.testing.assert_allclose(ga.numpy(), want_a, rtol=1e-12)
    np.testing.assert_allclose(gb.numpy(), want_b, rtol=1e-12)
    ga, gb = _session_run(lambda p, q: sf.gradients(_cubic(p, q), [p, q]), a, b)
    np.testing.assert_allclose(ga, want_a, rtol=1e-12)
    np.testing.assert_allclose(gb, want_b, rtol=1e-12)


def test_eager_gradient_reads_the_forward_runs_tape():
    runs = []

    def noisy(u):
        runs.append(1)
        return u * float(len(runs))       # a different function at each run

    x = sf.constant(X)
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = sf.py_function(noisy, [x], sf.float64)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [1.0, 1.0, 1.0])
    assert len(runs) == 1


def test_py_function_gradient_skips_integer_inputs_and_unused_outputs(mode):
    x, n = sf.constant(X), sf.constant(3)

    def f(u, k):
        return u * u, u * sf.cast(k, sf.float64), sf.cast(k, sf.int32)

    if mode.eager:
        with sf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            sq, lin, k = sf.py_function(f, [x, n], [sf.float64, sf.float64, sf.int32])
        g_sq, g_n = tape.gradient(sq, [x, n])
        g_lin = tape.gradient(lin, x)
    else:
        sq, lin, k = sf.py_function(f, [x, n], [sf.float64, sf.float64, sf.int32])
        g_sq, g_n = sf.gradients(sq, [x, n])
        g_lin = sf.gradients(lin, x)[0]
    assert g_n is None
    np.testing.assert_allclose(mode.evaluate(g_sq), 2 * X)
    np.testing.assert_allclose(mode.evaluate(g_lin), [3.0, 3.0, 3.0])


def test_py_function_second_order(mode):
    f = lambda u: sf.py_function(lambda a: a * a * a, [u], sf.float64)   # noqa: E731
    x = sf.constant(X)
    if mode.eager:
        with sf.GradientTape() as outer:
            outer.watch(x)
            with sf.GradientTape() as inner:
                inner.watch(x)
                y = f(x)
            g = inner.gradient(y, x)
        h = outer.gradient(g, x)
    else:
        g = sf.gradients(f(x), x)[0]
        h = sf.gradients(g, x)[0]
    np.testing.assert_allclose(mode.evaluate(g), 3 * X ** 2, rtol=1e-12)
    np.testing.assert_allclose(mode.evaluate(h), 6 * X, rtol=1e-12)


def test_py_function_sparse_gradient_inside(mode):
    # the function's own gradient is an IndexedSlices (gather): dense at the py_function's input
    x = sf.constant(X)
    f = lambda u: sf.py_function(lambda a: sf.gather(a, [0, 0, 2]) * 2.0, [u], sf.float64)   # noqa: E731
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        g = tape.gradient(y, x)
    else:
        g = sf.gradients(f(x), x)[0]
    np.testing.assert_allclose(sf.convert_to_tensor(g).numpy() if mode.eager else mode.evaluate(g), [4.0, 0.0, 2.0])


def test_inside_traced_functions_and_loops():
    @sf.function
    def h(a):
        return sf.numpy_function(np.sinh, [a], sf.float64) + v1.py_func(np.cosh, [a], sf.float64)

    np.testing.assert_allclose(h(sf.constant(X)).numpy(), np.exp(X), rtol=1e-12)
    with sf.Graph().as_default():
        _, r = sf.while_loop(lambda i, a: i < 3,
                             lambda i, a: (i + 1, sf.py_function(lambda u: u * 2.0, [a], sf.float64)),
                             [sf.constant(0), sf.constant(1.5, sf.float64)])
        with v1.Session() as s:
            assert s.run(r) == 12.0

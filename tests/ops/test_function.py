"""sf.function (and TF1's Defun): tracing per signature, captures, variables, gradients through
calls in every mode, against NumPy, hand-derived numbers and numerical Jacobians."""
import warnings

import numpy as np
import pytest

import segflow as sf
from segflow.client.session import Session
from segflow.eager import def_function
from segflow.eager import function as eager_function
from segflow.framework import function as framework_function
from segflow.framework import ops
from segflow.ops import gradient_checker_v2

RNG = np.random.default_rng(11)


def _c(x, dtype=np.float64):
    return sf.constant(np.asarray(x, dtype))


def _dense(g, shape=None):
    """A gradient as a NumPy array (IndexedSlices summed into their dense shape)."""
    if isinstance(g, ops.IndexedSlices):
        shape = g.dense_shape.numpy() if g.dense_shape is not None else shape
        out = np.zeros(shape, g.values.dtype.as_numpy_dtype)
        np.add.at(out, g.indices.numpy(), g.values.numpy())
        return out
    return g.numpy()


def _jacobians_match(f, xs, tol=1e-7):
    theory, numeric = gradient_checker_v2.compute_gradient(f, [np.asarray(x, np.float64) for x in xs], delta=1e-5)
    for t, n in zip(theory, numeric):
        assert np.any(t != 0) or np.all(n == 0)
        np.testing.assert_allclose(t, n, rtol=tol, atol=tol)


# ----------------------------------------------------------------------------------------------
# Tracing: once per signature

def test_traced_once_per_signature_and_values_match_numpy():
    calls = []

    @sf.function
    def f(x, y):
        calls.append(1)
        return x * y + sf.exp(x)

    a, b = RNG.normal(size=3), RNG.normal(size=3)
    for _ in range(3):
        np.testing.assert_allclose(f(_c(a), _c(b)).numpy(), a * b + np.exp(a), rtol=1e-12)
    assert f.experimental_get_tracing_count() == 1
    assert len(calls) == 1                      # the Python body ran once
    c = RNG.normal(size=3)
    np.testing.assert_allclose(f(_c(c), _c(a)).numpy(), c * a + np.exp(c), rtol=1e-12)
    assert f.experimental_get_tracing_count() == 1   # new values, same signature


def test_retraced_on_new_shape_dtype_and_python_value():
    @sf.function
    def f(x, k):
        return x * k

    f(_c([1.0, 2.0]), 2)
    assert f.experimental_get_tracing_count() == 1
    np.testing.assert_allclose(f(_c([1.0, 2.0, 3.0]), 2).numpy(), [2, 4, 6])          # new shape
    assert f.experimental_get_tracing_count() == 2
    out = f(sf.constant([1.0, 2.0], dtype=sf.float32), 2)                              # new dtype
    assert out.dtype == sf.float32
    assert f.experimental_get_tracing_count() == 3
    np.testing.assert_allclose(f(_c([1.0, 2.0]), 3).numpy(), [3, 6])                  # new Python value
    assert f.experimental_get_tracing_count() == 4
    f(_c([5.0, 6.0]), 3)
    f(_c([5.0, 6.0]), 2)
    assert f.experimental_get_tracing_count() == 4                                     # all seen before


def test_numpy_argument_is_traced_as_a_tensor():
    @sf.function
    def f(x):
        return x + 1.0

    np.testing.assert_allclose(f(np.array([1.0, 2.0])).numpy(), [2, 3])
    np.testing.assert_allclose(f(np.array([5.0, 7.0])).numpy(), [6, 8])
    assert f.experimental_get_tracing_count() == 1


def test_input_signature_traces_once_for_every_shape():
    @sf.function(input_signature=[sf.TensorSpec([None], sf.float64)])
    def f(x):
        return sf.reduce_sum(x * x)

    for n in (1, 3, 7):
        x = RNG.normal(size=n)
        np.testing.assert_allclose(f(_c(x)).numpy(), np.sum(x * x), rtol=1e-12)
    assert f.experimental_get_tracing_count() == 1
    assert f.input_signature == [sf.TensorSpec([None], sf.float64)]
    np.testing.assert_allclose(f([1.0, 2.0]).numpy(), 5.0)       # converted to the signature's dtype
    assert f.experimental_get_tracing_count() == 1


def test_input_signature_rejects_mismatches():
    @sf.function(input_signature=[sf.TensorSpec([None, 2], sf.float32)])
    def f(x):
        return x

    with pytest.raises(ValueError, match="input_signature"):
        f(sf.zeros([3, 3]))                        # wrong shape
    with pytest.raises(ValueError, match="input_signature"):
        f(sf.zeros([3, 2], dtype=sf.float64))      # wrong dtype
    with pytest.raises(TypeError):
        f(sf.zeros([3, 2]), sf.zeros([3, 2]))      # too many arguments
    with pytest.raises(TypeError, match="TensorSpec"):
        sf.function(lambda x: x, input_signature=[3])


def test_reduce_retracing_traces_once_per_rank():
    @sf.function(reduce_retracing=True)
    def f(x):
        return x * 2.0

    for n in (1, 2, 5):
        np.testing.assert_allclose(f(_c(np.arange(n))).numpy(), 2 * np.arange(n))
    assert f.experimental_get_tracing_count() == 1
    np.testing.assert_allclose(f(_c(np.ones((2, 3)))).numpy(), 2 * np.ones((2, 3)))
    assert f.experimental_get_tracing_count() == 2
    g = sf.function(lambda x: x + 1.0, experimental_relax_shapes=True)
    g(_c([1.0])), g(_c([1.0, 2.0]))
    assert g.experimental_get_tracing_count() == 1


def test_retrace_warning_after_five_traces():
    @sf.function
    def f(x, k):
        return x + k

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for k in range(5):
            f(_c(1.0), k)                 # five traces: no warning yet
    with pytest.warns(UserWarning, match="traced 6 times"):
        f(_c(1.0), 5)
    assert f.experimental_get_tracing_count() == 6


def test_get_concrete_function_with_args_and_with_tensor_spec():
    @sf.function
    def f(x):
        return x * 3.0

    concrete = f.get_concrete_function(sf.TensorSpec([None], sf.float64))
    assert isinstance(concrete, eager_function.ConcreteFunction)
    np.testing.assert_allclose(concrete(_c([1.0, 2.0])).numpy(), [3, 6])
    np.testing.assert_allclose(concrete(_c([1.0, 2.0, 4.0])).numpy(), [3, 6, 12])
    assert concrete.structured_outputs.shape.as_list() == [None]
    assert f.experimental_get_tracing_count() == 1
    assert f.get_concrete_function(sf.TensorSpec([None], sf.float64)) is concrete    # cached
    c2 = f.get_concrete_function(_c([[1.0]]))                        # from a tensor: its shape
    assert c2.structured_outputs.shape.as_list() == [1, 1]
    assert c2.output_dtypes == sf.float64
    assert f.experimental_get_tracing_count() == 2
    np.testing.assert_allclose(c2(_c([[5.0]])).numpy(), [[15.0]])
    with pytest.raises(TypeError):
        concrete(_c([1.0]), _c([1.0]))
    # with an input_signature, no arguments needed
    g = sf.function(lambda x: x - 1.0, input_signature=[sf.TensorSpec([2], sf.float32)])
    cg = g.get_concrete_function()
    assert [t.shape.as_list() for t in cg.inputs] == [[2]]
    np.testing.assert_allclose(cg(sf.constant([1.0, 3.0])).numpy(), [0, 2])


def test_nested_structures_in_and_out():
    @sf.function
    def f(pair, d, scale):
        a, b = pair
        return {"sum": a + b, "parts": [a * scale, (b * d["w"], None)], "k": scale, "name": "x"}

    a, b, w = RNG.normal(size=2), RNG.normal(size=2), RNG.normal(size=2)
    out = f((_c(a), _c(b)), {"w": _c(w)}, 2.0)
    assert set(out) == {"sum", "parts", "k", "name"}
    np.testing.assert_allclose(out["sum"].numpy(), a + b)
    np.testing.assert_allclose(out["parts"][0].numpy(), 2 * a)
    assert isinstance(out["parts"][1], tuple)
    np.testing.assert_allclose(out["parts"][1][0].numpy(), b * w)
    assert out["parts"][1][1] is None
    assert out["k"] == 2.0 and out["name"] == "x"
    # a list instead of a tuple is another structure: a new trace, same numbers
    out2 = f([_c(a), _c(b)], {"w": _c(w)}, 2.0)
    np.testing.assert_allclose(out2["sum"].numpy(), a + b)
    assert f.experimental_get_tracing_count() == 2
    f((_c(b), _c(a)), {"w": _c(a)}, 2.0)
    assert f.experimental_get_tracing_count() == 2


def test_nested_input_signature_and_keyword_arguments():
    spec = sf.TensorSpec([None], sf.float32)

    @sf.function(input_signature=[(spec, spec), {"scale": sf.TensorSpec([], sf.float32)}])
    def f(pair, opts):
        return (pair[0] - pair[1]) * opts["scale"]

    for n in (1, 3):
        a, b = np.arange(n, dtype=np.float32), np.ones(n, np.float32)
        got = f((sf.constant(a), sf.constant(b)), {"scale": sf.constant(2.0)})
        np.testing.assert_allclose(got.numpy(), (a - b) * 2)
    assert f.experimental_get_tracing_count() == 1
    with pytest.raises(ValueError, match="structure"):
        f(sf.constant([1.0]), {"scale": sf.constant(2.0)})

    @sf.function(input_signature=[spec, spec])
    def g(a, b):
        return a - b

    np.testing.assert_allclose(g(b=sf.constant([1.0]), a=sf.constant([3.0])).numpy(), [2.0])
    np.testing.assert_allclose(g(sf.constant([3.0]), b=sf.constant([1.0])).numpy(), [2.0])
    assert g.experimental_get_tracing_count() == 1


def test_concrete_function_checks_its_arguments():
    c = sf.function(lambda x: x + 1.0).get_concrete_function(sf.TensorSpec([2], sf.float32))
    np.testing.assert_allclose(c(sf.constant([1.0, 2.0])).numpy(), [2.0, 3.0])
    np.testing.assert_allclose(c([1.0, 2.0]).numpy(), [2.0, 3.0])          # converted to the trace's dtype
    with pytest.raises(ValueError, match="shape"):
        c(sf.constant([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="dtype"):
        c(sf.constant([1.0, 2.0], sf.float64))
    np.testing.assert_allclose(c(x=sf.constant([1.0, 2.0])).numpy(), [2.0, 3.0])
    with pytest.raises(TypeError):
        c(y=sf.constant([1.0, 2.0]))
    with pytest.raises(TypeError):
        c()


def test_concrete_function_with_a_python_argument_and_unknown_rank():
    f = sf.function(lambda x, n: sf.reduce_sum(x) * n)
    c = f.get_concrete_function(sf.TensorSpec(None, sf.float32), 3.0)
    np.testing.assert_allclose(c(sf.constant(np.ones((2, 2), np.float32))).numpy(), 12.0)
    np.testing.assert_allclose(c(sf.constant([1.0])).numpy(), 3.0)
    np.testing.assert_allclose(c(sf.constant([1.0]), 3.0).numpy(), 3.0)    # the traced Python value may be given


def test_one_trace_shared_by_threads():
    import threading

    f = sf.function(lambda x: x * x + 1.0)
    out = [None] * 8

    def work(i):
        for _ in range(5):
            out[i] = f(sf.constant([float(i)])).numpy()[0]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == [i * i + 1.0 for i in range(8)]
    assert f.experimental_get_tracing_count() == 1


def test_keyword_arguments_and_no_outputs():
    @sf.function
    def f(x, y=None, power=2):
        return x ** power if y is None else x ** power + y

    np.testing.assert_allclose(f(_c(3.0)).numpy(), 9.0)
    np.testing.assert_allclose(f(_c(3.0), y=_c(1.0)).numpy(), 10.0)
    np.testing.assert_allclose(f(_c(3.0), power=3).numpy(), 27.0)
    assert f.experimental_get_tracing_count() == 3
    assert sf.function(lambda: None)() is None
    assert sf.function(lambda x: (x, 1, "a"))(_c(1.0))[1:] == (1, "a")


def test_function_as_a_method_traces_per_instance():
    class Model:
        def __init__(self, scale):
            self.scale = scale
            self.w = sf.Variable(np.array([1.0, 2.0]))

        @sf.function
        def __call__(self, x):
            return self.w * x * self.scale

    m1, m2 = Model(2.0), Model(3.0)
    x = _c([1.0, 1.0])
    np.testing.assert_allclose(m1(x).numpy(), [2, 4])
    np.testing.assert_allclose(m2(x).numpy(), [3, 6])
    np.testing.assert_allclose(m1(x).numpy(), [2, 4])
    assert type(m1).__call__.__get__(m1, Model) is type(m1).__call__.__get__(m1, Model)
    assert m1.__call__.experimental_get_tracing_count() == 1
    assert m2.__call__.experimental_get_tracing_count() == 1
    assert isinstance(Model.__call__, def_function.Function)
    m1.w.assign([5.0, 5.0])
    np.testing.assert_allclose(m1(x).numpy(), [10, 10])
    with sf.GradientTape() as tape:
        y = sf.reduce_sum(m2(_c([1.0, 4.0])))
    np.testing.assert_allclose(tape.gradient(y, m2.w).numpy(), [3.0, 12.0])


def test_method_traces_do_not_keep_the_instance_alive():
    import gc
    import weakref

    class Layer:
        def __init__(self):
            self.w = sf.Variable(np.array([2.0]))

        @sf.function
        def apply(self, x, scale=1.0):
            return x * self.w * scale

    layer = Layer()
    np.testing.assert_allclose(layer.apply(_c([3.0])).numpy(), [6.0])
    c = layer.apply.get_concrete_function(_c([3.0]))
    np.testing.assert_allclose(c(x=_c([1.0])).numpy(), [2.0])       # named as in the method
    ref = weakref.ref(layer)
    del layer, c
    gc.collect()
    assert ref() is None
    assert not Layer.apply._instances


def test_if_tensor_inside_a_trace_raises_type_error():
    @sf.function
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(TypeError):
        f(_c(1.0))


def test_functions_are_exported_under_their_tf_names():
    assert def_function.function is sf.function
    assert eager_function.defun(lambda x: x + 1.0)(_c(1.0)).numpy() == 2.0
    from segflow.framework import tensor_spec
    assert tensor_spec.TensorSpec is sf.TensorSpec


# ----------------------------------------------------------------------------------------------
# Captures and variables

def test_closure_over_eager_tensors_is_fed_each_call():
    w = _c([1.0, 2.0, 3.0])
    holder = {"b": _c(10.0)}

    @sf.function
    def f(x):
        return x * w + holder["b"]

    x = RNG.normal(size=3)
    np.testing.assert_allclose(f(_c(x)).numpy(), x * [1, 2, 3] + 10)
    concrete = f.get_concrete_function(_c(x))
    assert len(concrete.captured_inputs) == 2
    assert len(concrete.inputs) == 3
    holder["b"] = _c(-1.0)          # captured by value at trace time (TF does the same)
    np.testing.assert_allclose(f(_c(x)).numpy(), x * [1, 2, 3] + 10)
    assert f.experimental_get_tracing_count() == 1


def test_gradient_for_a_captured_eager_tensor_a_tape_watches():
    w = _c([1.0, 2.0, 3.0])

    @sf.function
    def f(x):
        return sf.reduce_sum(x * w * w)

    x = RNG.normal(size=3)
    with sf.GradientTape() as tape:
        tape.watch(w)
        y = f(_c(x))
    np.testing.assert_allclose(tape.gradient(y, w).numpy(), 2 * x * [1, 2, 3], rtol=1e-12)


def test_captured_small_tensor_keeps_its_static_value_for_shape_inference():
    shape = sf.constant([2, 3])

    @sf.function
    def f(x):
        y = sf.reshape(x, shape)
        assert y.shape.as_list() == [2, 3]        # known while tracing
        return y

    np.testing.assert_array_equal(f(_c(np.arange(6.0))).numpy(), np.arange(6.0).reshape(2, 3))


@pytest.mark.filterwarnings("ignore:Converting sparse IndexedSlices")
def test_indexed_slices_output_is_returned_dense():
    emb = sf.Variable(np.arange(8.0).reshape(4, 2))

    @sf.function
    def f(ids):
        with sf.GradientTape() as tape:
            y = sf.reduce_sum(sf.gather(emb, ids) * 2.0)
        return tape.gradient(y, emb)

    g = f(sf.constant([1, 1, 3]))
    assert not isinstance(g, ops.IndexedSlices)
    np.testing.assert_allclose(g.numpy(), [[0, 0], [4, 4], [0, 0], [2, 2]])


def test_variable_read_and_updated_across_calls():
    v = sf.Variable(np.array([1.0, 2.0, 3.0]))
    counter = sf.Variable(0, dtype=sf.int64)

    @sf.function
    def step(delta):
        v.assign_add(delta)
        counter.assign_add(1)
        return v.read_value() * 2.0

    expected = np.array([1.0, 2.0, 3.0])
    for i in range(3):
        d = RNG.normal(size=3)
        expected = expected + d
        np.testing.assert_allclose(step(_c(d)).numpy(), 2 * expected, rtol=1e-12)
        np.testing.assert_allclose(v.numpy(), expected, rtol=1e-12)
        assert counter.numpy() == i + 1
    assert step.experimental_get_tracing_count() == 1
    v.assign([0.0, 0.0, 0.0])           # changed outside: the function sees it
    np.testing.assert_allclose(step(_c([1.0, 1.0, 1.0])).numpy(), [2, 2, 2])


def test_variable_updates_run_even_if_no_output_uses_them():
    v = sf.Variable(np.array([1.0, 2.0]))

    @sf.function
    def f(x):
        v.assign(x)
        v.assign_sub([0.5, 0.5])
        return None

    assert f(_c([3.0, 4.0])) is None
    np.testing.assert_allclose(v.numpy(), [2.5, 3.5])


def test_variable_assign_then_read_sees_the_new_value_in_order():
    v = sf.Variable(np.array([1.0]))

    @sf.function
    def f():
        before = v.read_value()
        with sf.control_dependencies([before]):
            v.assign([7.0])
        with sf.control_dependencies([v.assign_add([1.0])]):
            after = v.read_value()
        return before, after

    b, a = f()
    assert b.numpy()[0] == 1.0 and a.numpy()[0] == 8.0


def test_scatter_updates_and_sparse_read_on_a_captured_variable():
    table = np.arange(12.0).reshape(4, 3)
    v = sf.Variable(table)

    @sf.function
    def f(rows, upd):
        v.scatter_add(ops.IndexedSlices(upd, rows))
        v.scatter_update(ops.IndexedSlices(sf.fill([1, 3], sf.constant(-1.0, sf.float64)), sf.constant([3])))
        return v.sparse_read(rows)

    rows = np.array([0, 2])
    upd = RNG.normal(size=(2, 3))
    got = f(sf.constant(rows), _c(upd))
    expected = table.copy()
    np.add.at(expected, rows, upd)
    expected[3] = -1.0
    np.testing.assert_allclose(got.numpy(), expected[rows], rtol=1e-12)
    np.testing.assert_allclose(v.numpy(), expected, rtol=1e-12)
    got = f(sf.constant(rows), _c(upd))
    np.add.at(expected, rows, upd)
    np.testing.assert_allclose(v.numpy(), expected, rtol=1e-12)
    assert f.experimental_get_tracing_count() == 1


def test_variable_passed_as_an_argument():
    a, b = sf.Variable(np.array([1.0, 2.0])), sf.Variable(np.array([5.0, 5.0]))

    @sf.function
    def bump(var, x):
        var.assign_add(x)
        return var.read_value()

    np.testing.assert_allclose(bump(a, _c([1.0, 1.0])).numpy(), [2, 3])
    np.testing.assert_allclose(bump(b, _c([1.0, 1.0])).numpy(), [6, 6])
    np.testing.assert_allclose(bump(a, _c([1.0, 1.0])).numpy(), [3, 4])
    assert bump.experimental_get_tracing_count() == 2      # one per variable
    np.testing.assert_allclose(a.numpy(), [3, 4])
    np.testing.assert_allclose(b.numpy(), [6, 6])


def test_variable_created_on_the_first_trace_only():
    class Scale:
        def __init__(self):
            self.v = None

        @sf.function
        def __call__(self, x):
            if self.v is None:
                self.v = sf.Variable(sf.ones([x.shape.as_list()[-1]], sf.float64) * 2.0)   # built in the trace
            return x * self.v

    s = Scale()
    np.testing.assert_allclose(s(_c([[1.0, 2.0]])).numpy(), [[2, 4]])
    assert isinstance(s.v, sf.Variable)
    np.testing.assert_allclose(s.v.numpy(), [2.0, 2.0])
    s.v.assign([3.0, 1.0])
    np.testing.assert_allclose(s(_c([[1.0, 2.0]])).numpy(), [[3, 2]])
    assert s.__call__.experimental_get_tracing_count() == 1
    concrete = s.__call__.get_concrete_function(_c([[1.0, 2.0]]))
    assert concrete.variables == [s.v] and concrete.trainable_variables == [s.v]


def test_second_trace_that_creates_variables_raises():
    @sf.function
    def f(x):
        v = sf.Variable(1.0, dtype=sf.float64)
        return x * v

    np.testing.assert_allclose(f(_c(3.0)).numpy(), 3.0)
    with pytest.raises(ValueError, match="variable"):
        f(_c([3.0, 4.0]))


def test_variable_from_callable_initializer_and_from_a_constant():
    made = []

    @sf.function
    def f(x):
        if not made:
            made.append(sf.Variable(lambda: sf.fill([2], 4.0), name="from_callable"))
            made.append(sf.Variable(np.array([1.0, -1.0], np.float32), name="from_constant"))
            made.append(sf.Variable(sf.constant([0.5, 0.5]), name="from_tensor"))
        return x * made[0] + made[1] + made[2]

    x = np.array([1.0, 2.0], np.float32)
    np.testing.assert_allclose(f(sf.constant(x)).numpy(), x * 4 + [1.5, -0.5])
    np.testing.assert_allclose(made[0].numpy(), [4.0, 4.0])
    np.testing.assert_allclose(made[2].numpy(), [0.5, 0.5])
    made[1].assign([0.0, 0.0])
    np.testing.assert_allclose(f(sf.constant(x)).numpy(), x * 4 + 0.5)
    assert all(m.dtype == sf.float32 for m in made)


def test_variable_initial_value_from_an_argument_raises():
    @sf.function
    def f(x):
        return sf.Variable(x * 2.0).read_value()

    with pytest.raises(ValueError, match="argument|callable"):
        f(_c(1.0))


# ----------------------------------------------------------------------------------------------
# Gradients through calls, eagerly

def _chain(x, w):
    y = x * w
    y = sf.sin(y) + x
    y = sf.tanh(y) * w
    return sf.reduce_sum(y * y, axis=-1)


def test_tape_gradient_through_a_call_equals_the_untraced_gradient():
    traced = sf.function(_chain)
    x, w = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    grads = []
    for fn in (_chain, traced):
        xt, wt = _c(x), _c(w)
        with sf.GradientTape() as tape:
            tape.watch([xt, wt])
            y = fn(xt, wt)
        grads.append([g.numpy() for g in tape.gradient(y, [xt, wt])])
    for g_eager, g_traced in zip(*grads):
        np.testing.assert_allclose(g_traced, g_eager, rtol=1e-12)
    # and by hand: y = sum(tanh(sin(xw)+x)^2 w^2)
    u = np.sin(x * w) + x
    t = np.tanh(u)
    dy_du = 2 * t * w * w * (1 - t * t)
    np.testing.assert_allclose(grads[1][0], dy_du * (np.cos(x * w) * w + 1), rtol=1e-12)
    np.testing.assert_allclose(grads[1][1], dy_du * np.cos(x * w) * x + 2 * t * t * w, rtol=1e-12)


def test_numerical_jacobian_through_a_function():
    traced = sf.function(_chain)
    _jacobians_match(traced, [RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))])


def test_unwatched_inputs_record_nothing_and_unconnected_get_none():
    @sf.function
    def f(x, y):
        return x * 2.0, sf.cast(y, sf.int32)

    x, y = _c(1.0), _c(2.0)
    with sf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        a, b = f(x, y)
    np.testing.assert_allclose(tape.gradient(a, x).numpy(), 2.0)
    assert tape.gradient(a, y) is None
    assert tape.gradient(b, x) is None
    with sf.GradientTape() as tape:
        a, _ = f(x, y)
    assert tape.gradient(a, x) is None


def test_gradient_with_output_gradients_and_two_outputs():
    @sf.function
    def f(x):
        return x * x, sf.exp(x)

    x = RNG.normal(size=3)
    xt = _c(x)
    with sf.GradientTape(persistent=True) as tape:
        tape.watch(xt)
        a, b = f(xt)
        s = a + b
    np.testing.assert_allclose(tape.gradient(s, xt).numpy(), 2 * x + np.exp(x), rtol=1e-12)
    np.testing.assert_allclose(tape.gradient(b, xt).numpy(), np.exp(x), rtol=1e-12)   # one output unused
    v = RNG.normal(size=3)
    np.testing.assert_allclose(tape.gradient(a, xt, output_gradients=_c(v)).numpy(), 2 * x * v, rtol=1e-12)


def test_variables_watched_automatically_through_a_call():
    w = sf.Variable(np.array([[1.0, 2.0], [3.0, 4.0]]))
    b = sf.Variable(np.array([0.5, -0.5]))
    frozen = sf.Variable(np.array([2.0, 2.0]), trainable=False)

    @sf.function
    def f(x):
        return sf.reduce_sum(sf.matmul(x, w) * frozen + b)

    x = RNG.normal(size=(3, 2))
    with sf.GradientTape() as tape:
        y = f(_c(x))
    assert [v.name for v in tape.watched_variables()] == [w.name, b.name]
    gw, gb, gf = tape.gradient(y, [w, b, frozen])
    np.testing.assert_allclose(y.numpy(), np.sum((x @ w.numpy()) * 2 + b.numpy()), rtol=1e-12)
    np.testing.assert_allclose(gw.numpy(), x.T @ np.full((3, 2), 2.0), rtol=1e-12)
    np.testing.assert_allclose(gb.numpy(), [3.0, 3.0])
    assert gf is None
    with sf.GradientTape(watch_accessed_variables=False) as tape:
        y = f(_c(x))
    assert tape.gradient(y, w) is None


def test_gradient_sees_the_value_read_not_a_later_update():
    v = sf.Variable(np.array([2.0, 3.0]))

    @sf.function
    def f(x):
        y = sf.reduce_sum(x * v * v)
        with sf.control_dependencies([y]):
            v.assign_add([10.0, 10.0])
        return y

    x = _c([1.0, 1.0])
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    gx, gv = tape.gradient(y, [x, v])
    np.testing.assert_allclose(y.numpy(), 13.0)
    np.testing.assert_allclose(gx.numpy(), [4.0, 9.0])
    np.testing.assert_allclose(gv.numpy(), [4.0, 6.0])      # 2 x v at the read, not after
    np.testing.assert_allclose(v.numpy(), [12.0, 13.0])


def test_indexed_slices_gradient_of_gather_and_embedding_lookup_of_a_captured_variable():
    table = RNG.normal(size=(5, 3))
    emb = sf.Variable(table)

    @sf.function
    def f(ids):
        a = sf.gather(emb, ids)
        b = sf.nn.embedding_lookup(emb, ids)
        return sf.reduce_sum(a * b * 0.5) + sf.reduce_sum(b)

    ids = np.array([0, 3, 3, 1])
    with sf.GradientTape() as tape:
        y = f(sf.constant(ids))
    g = tape.gradient(y, emb)
    assert isinstance(g, ops.IndexedSlices)
    expected = np.zeros_like(table)
    np.add.at(expected, ids, table[ids] + 1.0)
    np.testing.assert_allclose(_dense(g, table.shape), expected, rtol=1e-12)
    np.testing.assert_allclose(y.numpy(), np.sum(table[ids] ** 2) * 0.5 + np.sum(table[ids]), rtol=1e-12)


def test_sparse_read_gradient_is_indexed_slices():
    emb = sf.Variable(np.arange(6.0).reshape(3, 2))

    @sf.function
    def f(ids):
        return sf.reduce_sum(emb.sparse_read(ids) * 3.0)

    with sf.GradientTape() as tape:
        y = f(sf.constant([2, 2, 0]))
    g = tape.gradient(y, emb)
    assert isinstance(g, ops.IndexedSlices)
    np.testing.assert_allclose(_dense(g, (3, 2)), [[3, 3], [0, 0], [6, 6]])


def test_persistent_tape_many_gradients_through_one_call():
    @sf.function
    def f(x):
        return x ** 3.0, sf.reduce_sum(x)

    x = RNG.uniform(0.5, 2.0, size=3)
    xt = _c(x)
    with sf.GradientTape(persistent=True) as tape:
        tape.watch(xt)
        a, s = f(xt)
    for _ in range(2):
        np.testing.assert_allclose(tape.gradient(a, xt).numpy(), 3 * x ** 2, rtol=1e-12)
        np.testing.assert_allclose(tape.gradient(s, xt).numpy(), np.ones(3))
    del tape


def test_second_order_tape_of_tape_through_a_function():
    @sf.function
    def f(x):
        return sf.reduce_sum(sf.sin(x) * x * x)

    x = RNG.normal(size=3)
    xt = _c(x)
    with sf.GradientTape() as outer:
        outer.watch(xt)
        with sf.GradientTape() as inner:
            inner.watch(xt)
            y = f(xt)
        g = inner.gradient(y, xt)
    h = outer.gradient(g, xt)
    np.testing.assert_allclose(g.numpy(), np.cos(x) * x * x + 2 * x * np.sin(x), rtol=1e-12)
    np.testing.assert_allclose(h.numpy(), -np.sin(x) * x * x + 4 * x * np.cos(x) + 2 * np.sin(x), rtol=1e-12)


def test_second_order_numerical_through_a_function():
    @sf.function
    def f(x, w):
        return sf.reduce_sum(sf.tanh(x * w) * x)

    w = RNG.normal(size=3)

    def grad(x):
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = f(x, _c(w))
        return tape.gradient(y, x)

    _jacobians_match(grad, [RNG.normal(size=3)], tol=1e-6)


def test_hessian_of_a_function_that_computes_a_gradient_inside():
    @sf.function
    def grad_of_cube(x):
        with sf.GradientTape() as tape:            # a tape inside the trace
            tape.watch(x)
            y = sf.reduce_sum(x * x * x)
        return tape.gradient(y, x)

    x = RNG.normal(size=3)
    xt = _c(x)
    np.testing.assert_allclose(grad_of_cube(xt).numpy(), 3 * x * x, rtol=1e-12)
    with sf.GradientTape() as tape:
        tape.watch(xt)
        g = grad_of_cube(xt)
    np.testing.assert_allclose(tape.gradient(g, xt).numpy(), 6 * x, rtol=1e-12)
    _jacobians_match(grad_of_cube, [x])


def test_tape_inside_a_function_with_a_variable():
    v = sf.Variable(np.array([1.0, 2.0]))

    @sf.function
    def sgd_step(x):
        with sf.GradientTape() as tape:
            loss = sf.reduce_sum((x * v - 1.0) ** 2)
        g = tape.gradient(loss, v)
        v.assign_sub(0.1 * g)
        return loss

    x = np.array([1.0, 3.0])
    expected_v = np.array([1.0, 2.0])
    for _ in range(3):
        loss = sgd_step(_c(x))
        np.testing.assert_allclose(loss.numpy(), np.sum((x * expected_v - 1) ** 2), rtol=1e-12)
        expected_v = expected_v - 0.1 * 2 * (x * expected_v - 1) * x
    np.testing.assert_allclose(v.numpy(), expected_v, rtol=1e-12)


def test_nested_functions_values_and_gradients():
    @sf.function
    def inner(x):
        return sf.exp(x) * x

    @sf.function
    def outer(x, y):
        return sf.reduce_sum(inner(x) * y + inner(y))

    x, y = RNG.normal(size=3), RNG.normal(size=3)
    xt, yt = _c(x), _c(y)
    with sf.GradientTape() as tape:
        tape.watch([xt, yt])
        out = outer(xt, yt)
    gx, gy = tape.gradient(out, [xt, yt])
    np.testing.assert_allclose(out.numpy(), np.sum(np.exp(x) * x * y + np.exp(y) * y), rtol=1e-12)
    np.testing.assert_allclose(gx.numpy(), (np.exp(x) * x + np.exp(x)) * y, rtol=1e-12)
    np.testing.assert_allclose(gy.numpy(), np.exp(x) * x + np.exp(y) * (y + 1), rtol=1e-12)
    assert inner.experimental_get_tracing_count() == 1
    _jacobians_match(outer, [x, y])


def test_nested_function_updates_a_variable():
    v = sf.Variable(np.array([0.0]))

    @sf.function
    def inc(x):
        v.assign_add(x)
        return v.read_value()

    @sf.function
    def twice(x):
        inc(x)
        return inc(x) * 1.0

    np.testing.assert_allclose(twice(_c([1.5])).numpy(), [3.0])
    np.testing.assert_allclose(v.numpy(), [3.0])


def test_random_op_gradient_uses_the_forward_samples():
    @sf.function
    def f(x):
        u = sf.random.uniform([4], dtype=sf.float64)
        return x * u, u

    x = _c(np.ones(4))
    with sf.GradientTape() as tape:
        tape.watch(x)
        y, u = f(x)
    g = tape.gradient(y, x)
    np.testing.assert_array_equal(g.numpy(), u.numpy())
    np.testing.assert_array_equal(y.numpy(), u.numpy())
    y2, u2 = f(x)
    assert not np.array_equal(u.numpy(), u2.numpy())        # a new sample per call


# ----------------------------------------------------------------------------------------------
# Functions in graphs: PartitionedCall and its gradient

def test_function_called_in_a_graph_with_gradients_and_a_session():
    traced = sf.function(_chain)
    x, w = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3))
    with sf.Graph().as_default() as g:
        xp = sf.compat.v1.placeholder(sf.float64, [2, 3])
        wp = sf.compat.v1.placeholder(sf.float64, [2, 3])
        y = traced(xp, wp)
        assert y.op.type == "PartitionedCall"
        assert y.shape.as_list() == [2]
        gx, gw = sf.gradients(y, [xp, wp])
        ref = _chain(xp, wp)
        rx, rw = sf.gradients(ref, [xp, wp])
        with Session(graph=g) as sess:
            got = sess.run([y, gx, gw, ref, rx, rw], {xp: x, wp: w})
    for a, b in zip(got[:3], got[3:]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_function_in_a_graph_second_order_and_captured_graph_tensor():
    @sf.function
    def f(x):
        return sf.reduce_sum(x * x * x * scale)

    x = RNG.normal(size=3)
    with sf.Graph().as_default() as g:
        scale = sf.constant(2.0, dtype=sf.float64)
        xp = sf.compat.v1.placeholder(sf.float64, [3])
        y = f(xp)
        (dx,) = sf.gradients(y, xp)
        (ddx,) = sf.gradients(dx, xp)
        with Session(graph=g) as sess:
            yv, dxv, ddxv = sess.run([y, dx, ddx], {xp: x})
    np.testing.assert_allclose(yv, 2 * np.sum(x ** 3), rtol=1e-12)
    np.testing.assert_allclose(dxv, 6 * x * x, rtol=1e-12)
    np.testing.assert_allclose(ddxv, 12 * x, rtol=1e-12)


def test_function_in_a_graph_with_a_graph_variable():
    x = RNG.normal(size=(2, 2))
    with sf.Graph().as_default() as g:
        v = sf.compat.v1.Variable(np.array([[1.0, 0.0], [0.0, 2.0]]))

        @sf.function
        def f(a):
            return sf.reduce_sum(sf.matmul(a, v))

        xp = sf.compat.v1.placeholder(sf.float64, [2, 2])
        y = f(xp)
        gv, gx = sf.gradients(y, [v, xp])
        with Session(graph=g) as sess:
            sess.run(sf.compat.v1.global_variables_initializer())
            yv, gvv, gxv = sess.run([y, gv, gx], {xp: x})
    vv = np.array([[1.0, 0.0], [0.0, 2.0]])
    np.testing.assert_allclose(yv, np.sum(x @ vv), rtol=1e-12)
    np.testing.assert_allclose(gvv, x.T @ np.ones((2, 2)), rtol=1e-12)
    np.testing.assert_allclose(gxv, np.ones((2, 2)) @ vv.T, rtol=1e-12)


def test_random_op_gradient_in_a_graph_uses_the_forward_samples():
    @sf.function
    def f(x):
        u = sf.random.uniform([4], dtype=sf.float64)
        return x * u, u

    with sf.Graph().as_default() as g:
        x = sf.compat.v1.placeholder(sf.float64, [4])
        y, u = f(x)
        (dx,) = sf.gradients(y, x)
        with Session(graph=g) as sess:
            for _ in range(2):
                uv, dxv = sess.run([u, dx], {x: np.ones(4)})
                np.testing.assert_array_equal(dxv, uv)


def test_gradient_in_a_graph_sees_the_value_read_not_a_later_update():
    with sf.Graph().as_default() as g:
        v = sf.compat.v1.Variable(np.array([2.0, 3.0]))

        @sf.function
        def f(x):
            y = sf.reduce_sum(x * v * v)
            with sf.control_dependencies([y]):
                v.assign_add([10.0, 10.0])
            return y

        x = sf.compat.v1.placeholder(sf.float64, [2])
        y = f(x)
        gx, gv = sf.gradients(y, [x, v])
        with Session(graph=g) as sess:
            sess.run(sf.compat.v1.global_variables_initializer())
            yv, gxv, gvv = sess.run([y, gx, gv], {x: [1.0, 1.0]})
            np.testing.assert_allclose(yv, 13.0)
            np.testing.assert_allclose(gxv, [4.0, 9.0])
            np.testing.assert_allclose(gvv, [4.0, 6.0])
            np.testing.assert_allclose(sess.run(v), [12.0, 13.0])


def test_function_traced_eagerly_is_traced_again_for_a_graph():
    # A function traced eagerly and then called in a graph: the call is one op; its output matches.
    @sf.function
    def f(x):
        return x + 1.0

    f(_c(1.0))
    with sf.Graph().as_default() as g:
        y = f(sf.constant(1.0, dtype=sf.float64))
        with Session(graph=g) as sess:
            assert sess.run(y) == 2.0
    assert f.experimental_get_tracing_count() == 2       # traced again for the graph


def test_variable_created_in_a_function_traced_in_a_graph_is_a_graph_variable():
    with sf.Graph().as_default() as g:
        made = []

        @sf.function
        def f(x):
            if not made:
                made.append(sf.Variable(2.0, dtype=sf.float64, name="scale"))
            made[0].assign_add(1.0)
            return x * made[0]

        x = sf.compat.v1.placeholder(sf.float64, [2])
        y = f(x)
        (dx,) = sf.gradients(y, x)
        assert made[0] in sf.compat.v1.global_variables()
        with Session(graph=g) as sess:
            sess.run(sf.compat.v1.global_variables_initializer())
            np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.0]}), [3.0, 6.0])
            np.testing.assert_allclose(sess.run(y, {x: [1.0, 2.0]}), [4.0, 8.0])
            assert sess.run(made[0]) == 4.0


def test_eager_variable_in_a_function_called_in_a_graph_is_a_clear_error():
    v = sf.Variable(2.0)
    f = sf.function(lambda x: x * v)
    np.testing.assert_allclose(f(sf.constant(3.0)).numpy(), 6.0)
    with sf.Graph().as_default():
        with pytest.raises(ValueError, match="eager variable"):
            f(sf.constant(3.0))


def test_control_flow_inside_a_function_values_and_gradients():
    v = sf.Variable(3.0, dtype=sf.float64)

    @sf.function
    def f(x):
        y = sf.cond(sf.reduce_sum(x) > 0, lambda: x * v, lambda: -x)
        _, z = sf.while_loop(lambda i, r: i < 3, lambda i, r: (i + 1, r * x), [sf.constant(0), sf.ones_like(x)])
        return sf.reduce_sum(y + z)

    for x in (np.array([1.5, 2.0]), np.array([-1.5, -2.0])):
        xt = _c(x)
        with sf.GradientTape() as tape:
            tape.watch(xt)
            y = f(xt)
        gx, gv = tape.gradient(y, [xt, v])
        pos = x.sum() > 0
        np.testing.assert_allclose(y.numpy(), np.sum((x * 3.0 if pos else -x) + x ** 3), rtol=1e-12)
        np.testing.assert_allclose(gx.numpy(), (3.0 if pos else -1.0) + 3 * x ** 2, rtol=1e-12)
        if pos:
            np.testing.assert_allclose(gv.numpy(), x.sum(), rtol=1e-12)
        else:
            assert gv is None or gv.numpy() == 0.0
    assert f.experimental_get_tracing_count() == 1


def test_tape_inside_a_function_over_a_nested_function():
    inner = sf.function(lambda x: sf.sin(x) * x)

    @sf.function
    def outer(x):
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = sf.reduce_sum(inner(x))
        return tape.gradient(y, x)

    x = RNG.normal(size=3)
    np.testing.assert_allclose(outer(_c(x)).numpy(), np.cos(x) * x + np.sin(x), rtol=1e-12)


def test_graph_mode_tape_around_a_call():
    f = sf.function(lambda x: sf.reduce_sum(sf.exp(x) * x))
    x = RNG.normal(size=3)
    with sf.Graph().as_default() as g:
        xt = sf.constant(x)
        with sf.GradientTape() as tape:
            tape.watch(xt)
            y = f(xt)
        gx = tape.gradient(y, xt)
        with Session(graph=g) as sess:
            np.testing.assert_allclose(sess.run(gx), np.exp(x) * (x + 1), rtol=1e-12)


# ----------------------------------------------------------------------------------------------
# The must-show: an embedding model's training step, traced, bit-identical to eager

def _embedding_model(optimizer_cls, **kw):
    table0 = np.random.default_rng(3).normal(size=(20, 4)).astype(np.float32)
    w0 = np.random.default_rng(4).normal(size=(4, 1)).astype(np.float32)
    emb = sf.Variable(table0, name="emb")
    w = sf.Variable(w0, name="w")
    opt = optimizer_cls(**kw)

    def step(ids, labels):
        with sf.GradientTape() as tape:
            rows = sf.nn.embedding_lookup(emb, ids)                # [batch, 3, 4]
            pooled = sf.reduce_mean(rows, axis=1)
            logits = sf.matmul(pooled, w)
            loss = sf.reduce_mean((logits - labels) ** 2)
        grads = tape.gradient(loss, [emb, w])
        assert isinstance(grads[0], ops.IndexedSlices)
        opt.apply_gradients(zip(grads, [emb, w]))
        return loss

    return emb, w, step


@pytest.mark.parametrize("optimizer", ["Adagrad", "GradientDescent"])
def test_embedding_training_step_traced_is_bit_identical_to_eager(optimizer):
    cls = {"Adagrad": sf.compat.v1.train.AdagradOptimizer,
           "GradientDescent": sf.compat.v1.train.GradientDescentOptimizer}[optimizer]
    data = np.random.default_rng(5)
    batches = [(data.integers(0, 20, size=(8, 3)), data.normal(size=(8, 1)).astype(np.float32)) for _ in range(10)]
    results = []
    for traced in (False, True):
        emb, w, step = _embedding_model(cls, learning_rate=0.1)
        fn = sf.function(step) if traced else step
        losses = []
        for ids, labels in batches:
            loss = fn(sf.constant(ids), sf.constant(labels))
            losses.append(loss.numpy())
        results.append((emb.numpy(), w.numpy(), np.array(losses)))
        if traced:
            assert fn.experimental_get_tracing_count() == 1
    (e0, w0, l0), (e1, w1, l1) = results
    np.testing.assert_array_equal(e1, e0)
    np.testing.assert_array_equal(w1, w0)
    np.testing.assert_array_equal(l1, l0)
    assert np.mean(l0[5:]) < np.mean(l0[:5])
    assert not np.array_equal(e0, np.random.default_rng(3).normal(size=(20, 4)).astype(np.float32))


# ----------------------------------------------------------------------------------------------
# The seeds: one step of a seed program, traced

def test_seed_kmeans_full_batch_update_traced():
    x = RNG.normal(size=(10, 2)).astype(np.float32)
    idx = np.array([0, 1, 0, 2, 1, 0, 2, 2, 0, 1])
    centers = sf.Variable(np.zeros((3, 2), np.float32))

    def update(inp, cluster_idx):
        sums = sf.math.unsorted_segment_sum(inp, cluster_idx, 3)
        counts = sf.math.unsorted_segment_sum(sf.reshape(sf.ones(sf.reshape(sf.shape(inp)[0], [-1])), [-1, 1]),
                                              cluster_idx, 3)
        new = sums / (sf.cast(counts, sums.dtype) + 1e-6)
        centers.assign(sf.nn.l2_normalize(new, axis=1))
        return centers.read_value()

    eager = update(sf.constant(x), sf.constant(idx)).numpy()
    centers.assign(np.zeros((3, 2), np.float32))
    traced = sf.function(update)(sf.constant(x), sf.constant(idx)).numpy()
    np.testing.assert_array_equal(traced, eager)
    sums = np.zeros((3, 2))
    np.add.at(sums, idx, x.astype(np.float64))
    expected = sums / (np.bincount(idx)[:, None] + 1e-6)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(traced, expected, rtol=1e-5)


def test_seed_hessian_vector_product_through_gradients_of_gradients_traced():
    @sf.function
    def hvp(x, v):
        with sf.GradientTape() as outer:
            outer.watch(x)
            with sf.GradientTape() as inner:
                inner.watch(x)
                y = sf.reduce_sum(sf.math.unsorted_segment_sum(x * x * x, sf.constant([0, 1, 0]), 2) ** 2)
            g = inner.gradient(y, x)
            gv = sf.reduce_sum(g * v)
        return outer.gradient(gv, x)

    x, v = RNG.normal(size=3), RNG.normal(size=3)
    # y = (x0^3 + x2^3)^2 + x1^6
    s = x[0] ** 3 + x[2] ** 3
    H = np.zeros((3, 3))
    H[0, 0] = 18 * x[0] ** 4 + 12 * s * x[0]
    H[2, 2] = 18 * x[2] ** 4 + 12 * s * x[2]
    H[0, 2] = H[2, 0] = 18 * x[0] ** 2 * x[2] ** 2
    H[1, 1] = 30 * x[1] ** 4
    np.testing.assert_allclose(hvp(_c(x), _c(v)).numpy(), H @ v, rtol=1e-10)


# ----------------------------------------------------------------------------------------------
# Defun (TF1's framework.function)

def test_defun_values_and_default_gradient_in_a_graph():
    @framework_function.Defun(sf.float32, sf.float32)
    def XSquarePlusOne(x, y):
        return x * x + y

    assert XSquarePlusOne.declared_input_types == (sf.float32, sf.float32)
    with sf.Graph().as_default() as g:
        x = sf.constant([2.0, 3.0])
        y = sf.constant([1.0, 1.0])
        z = XSquarePlusOne(x, y)
        dx, dy = sf.gradients(z, [x, y])
        with Session(graph=g) as sess:
            zv, dxv, dyv = sess.run([z, dx, dy])
    np.testing.assert_allclose(zv, [5.0, 10.0])
    np.testing.assert_allclose(dxv, [4.0, 6.0])
    np.testing.assert_allclose(dyv, [1.0, 1.0])


def test_defun_several_outputs_and_any_shape():
    @framework_function.Defun(sf.float64)
    def Split(x):
        return x * 2.0, x + 1.0

    for shape in ((2,), (3, 2)):
        a = RNG.normal(size=shape)
        p, q = Split(_c(a))
        np.testing.assert_allclose(p.numpy(), 2 * a)
        np.testing.assert_allclose(q.numpy(), a + 1)


# gradients_test's Defun cases: y = x * x + b at x = 2, b = 1

def _x_square_plus_b(x, b):
    return x * x + b


def _check_defun_grads(f, expected):
    """d/dx and d/db of f(x, b) at x = 2, b = 1: in a graph (sf.gradients) and eagerly (a tape)."""
    with sf.Graph().as_default() as g:
        x = sf.constant([2.0], name="x")
        b = sf.constant([1.0], name="b")
        grads = sf.gradients(f(x, b), [x, b])
        with Session(graph=g) as sess:
            np.testing.assert_array_equal(sess.run(grads), expected)
    x, b = sf.constant([2.0]), sf.constant([1.0])
    with sf.GradientTape() as tape:
        tape.watch([x, b])
        y = f(x, b)
    np.testing.assert_array_equal([t.numpy() for t in tape.gradient(y, [x, b])], expected)


def test_defun_gradients_basic_and_composed():
    f = framework_function.Defun(sf.float32, sf.float32)(_x_square_plus_b)
    _check_defun_grads(f, [[4.0], [1.0]])
    with sf.Graph().as_default() as g:
        x = sf.constant([2.0])
        b1, b2 = sf.constant([1.0]), sf.constant([1.0])
        y = f(f(x, b1), b2)          # (x^2 + b1)^2 + b2: d/dx = 2 (x^2 + b1) 2x = 40, d/db1 = 10
        gx, gb1 = sf.gradients(y, [x, b1])
        with Session(graph=g) as sess:
            np.testing.assert_array_equal(sess.run(gx), [40.0])
            np.testing.assert_array_equal(sess.run(gb1), [10.0])


def _perturbed_grad(x, b, g):
    g = g * 2.0                      # perturbed, so the test sees that it ran
    return g * 2.0 * x, g


def _perturbed_python_grad(op, grad):
    grad = grad * 3.0
    return grad * op.inputs[0] * 2.0, grad


@pytest.mark.parametrize("kind, expected", [("grad_func", [[8.0], [2.0]]), ("python_grad_func", [[12.0], [3.0]])])
def test_defun_custom_gradient_is_used(kind, expected):
    if kind == "grad_func":
        custom = framework_function.Defun(sf.float32, sf.float32, sf.float32)(_perturbed_grad)
    else:
        custom = _perturbed_python_grad
    f = framework_function.Defun(sf.float32, sf.float32, **{kind: custom})(_x_square_plus_b)
    _check_defun_grads(f, expected)


def test_defun_grad_func_and_python_grad_func_raise():
    grad_func = framework_function.Defun(sf.float32, sf.float32, sf.float32)(lambda x, b, g: (g, g))
    with pytest.raises(ValueError, match="Gradient defined twice"):
        f = framework_function.Defun(sf.float32, sf.float32, grad_func=grad_func,
                                     python_grad_func=lambda op, g: (g, g))(_x_square_plus_b)
        f.add_to_graph(sf.Graph())


def test_defun_rejects_wrong_input_dtypes():
    f = framework_function.Defun(sf.float32, sf.float32)(_x_square_plus_b)
    with pytest.raises(ValueError):
        f(sf.constant([1.0], sf.float64), sf.constant([1.0], sf.float64))

"""Variables: creation, reads, initialization, tapes and gradients, aliasing, no whole-table copies."""
import tracemalloc

import numpy as np
import pytest

import segflow as sf
from segflow.framework import errors, ops
from segflow.ops import resource_variable_ops, variables
from segflow.ops import state_ops


def _init(mode):
    if not mode.eager:
        mode.session.run(variables.global_variables_initializer())


def _dense(g, shape):
    """A gradient value (array or IndexedSlicesValue) as a dense array."""
    if isinstance(g, ops.IndexedSlicesValue):
        out = np.zeros(shape, g.values.dtype)
        np.add.at(out, g.indices, g.values)
        return out
    return np.asarray(g)


def _grad(mode, loss_fn, var):
    """d loss / d var: a tape eagerly, sf.gradients in a graph. Returns (raw gradient, value)."""
    if mode.eager:
        with sf.GradientTape() as tape:
            loss = loss_fn()
        g = tape.gradient(loss, var)
    else:
        g = sf.gradients(loss_fn(), var)[0]
    return g, mode.evaluate(g)


def _numeric_grad(loss_of_value, x0, delta=1e-6):
    """Central differences of a scalar function of an array."""
    grad = np.zeros_like(x0)
    for i in range(x0.size):
        xp, xm = x0.copy(), x0.copy()
        xp.flat[i] += delta
        xm.flat[i] -= delta
        grad.flat[i] = (loss_of_value(xp) - loss_of_value(xm)) / (2 * delta)
    return grad


# -- creation and attributes


def test_eager_variable_attributes():
    v = sf.Variable([[1.0, 2.0], [3.0, 4.0]], name="v")
    assert v.name == "v:0"
    assert v.dtype == sf.float32
    assert v.shape.as_list() == [2, 2] and v.get_shape().as_list() == [2, 2]
    assert v.trainable
    assert v.handle.dtype == sf.resource
    assert isinstance(v.handle, ops.EagerTensor)
    assert v._gradient_source() is v.handle
    np.testing.assert_array_equal(v.numpy(), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(np.asarray(v), [[1, 2], [3, 4]])
    assert isinstance(v, variables.Variable) and isinstance(v, variables.RefVariable)
    assert variables.ResourceVariable is sf.Variable
    assert v.ref() == v.ref() and v.ref().deref() is v


def test_eager_variable_from_callable_and_dtype():
    v = sf.Variable(lambda: np.arange(3), dtype=sf.float64, trainable=False)
    assert v.dtype == sf.float64 and not v.trainable
    np.testing.assert_array_equal(v.numpy(), [0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="initial_value"):
        sf.Variable()


def test_eager_variable_owns_its_value():
    init = np.zeros(3, np.float32)
    v = sf.Variable(init)
    v.assign_add([1.0, 1.0, 1.0])
    np.testing.assert_array_equal(init, [0, 0, 0])


def test_variable_operators(mode):
    v = sf.Variable([[1.0, 2.0], [3.0, 4.0]], name="w")
    _init(mode)
    m = np.array([[1.0], [2.0]], np.float32)
    got = mode.evaluate([v + 1, 1 - v, -v, v * v, v @ m, v[1:], v[0, 1], v / 2.0])
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    for g, want in zip(got, [x + 1, 1 - x, -x, x * x, x @ m, x[1:], x[0, 1], x / 2]):
        np.testing.assert_allclose(g, want)
    # ops accept variables through the registered tensor conversion
    np.testing.assert_allclose(mode.evaluate(sf.reduce_sum(v)), 10.0)
    np.testing.assert_allclose(mode.evaluate(sf.convert_to_tensor(v)), x)


# -- graph mode: initialization, collections, sessions


def test_graph_uninitialized_read_names_variable():
    with sf.Graph().as_default():
        v = sf.Variable([1.0, 2.0], name="weights")
        with sf.Session() as sess:
            with pytest.raises(errors.FailedPreconditionError, match="uninitialized value weights"):
                sess.run(v)
            with pytest.raises(errors.FailedPreconditionError, match="variable 'weights' is uninitialized"):
                sess.run(v + 1.0)
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])


def test_graph_variable_attributes_and_collections():
    g = sf.Graph()
    with g.as_default():
        v = sf.Variable(np.zeros((2, 3)), name="v")
        w = sf.Variable(1, name="v", trainable=False)
        assert v.name == "v:0" and w.name == "v_1:0"
        assert v.op.name == "v" and v.op.type == "VarHandleOp"
        assert v.graph is g and v.handle.dtype == sf.resource
        assert v.initializer.type == "AssignVariableOp"
        assert v.initial_value.dtype == sf.float64
        assert v.shape.as_list() == [2, 3] and w.dtype == sf.int32
        assert variables.global_variables() == [v, w]
        assert variables.trainable_variables() == [v]
        assert sf.get_collection(sf.GraphKeys.GLOBAL_VARIABLES) == [v, w]
        assert v._as_graph_element().dtype == sf.float64
        assert (v + 1.0).shape.as_list() == [2, 3]
        with sf.Session() as sess:
            assert sorted(sess.run(variables.report_uninitialized_variables()).tolist()) == ["v", "v_1"]
            sess.run(variables.global_variables_initializer())
            assert sess.run(variables.report_uninitialized_variables()).tolist() == []
            np.testing.assert_array_equal(v.eval(), np.zeros((2, 3)))
            assert sess.run(w) == 1
            assert sess.run(v.is_initialized())


def test_graph_sessions_hold_separate_values():
    with sf.Graph().as_default():
        v = sf.Variable([1.0, 2.0])
        inc = v.assign_add([1.0, 1.0])
        init = variables.variables_initializer([v])
        s1, s2 = sf.Session(), sf.Session()
        s1.run(init)
        s2.run(init)
        s1.run(inc.op)
        s1.run(inc.op)
        np.testing.assert_array_equal(s1.run(v), [3.0, 4.0])
        np.testing.assert_array_equal(s2.run(v), [1.0, 2.0])


def test_graph_initial_value_from_another_variable():
    with sf.Graph().as_default():
        a = sf.Variable([1.0, 2.0])
        b = sf.Variable(a.initialized_value() * 2.0)
        with sf.Session() as sess:
            sess.run(b.initializer)
            np.testing.assert_array_equal(sess.run(b), [2.0, 4.0])


def test_variable_in_control_dependencies_context_builds_without_them():
    with sf.Graph().as_default():
        c = sf.constant(1.0)
        with sf.control_dependencies([c]):
            v = sf.Variable(2.0)
        assert v.initializer.control_inputs == []


# -- reads never change after in-place updates


def test_reads_do_not_alias_updates(mode):
    v = sf.Variable(np.arange(6, dtype=np.float64).reshape(3, 2))
    _init(mode)
    before = mode.evaluate(v.read_value())
    kept = before.copy()
    mode.evaluate(state_ops.scatter_add(v, [0, 0], [[1.0, 1.0], [1.0, 1.0]]))
    mode.evaluate(v.assign_sub(np.ones((3, 2))))
    np.testing.assert_array_equal(before, kept)
    np.testing.assert_array_equal(mode.evaluate(v), kept - 1 + [[2, 2], [0, 0], [0, 0]])


def test_eager_read_tensor_unchanged_by_scatter():
    v = sf.Variable(np.zeros((4, 2)))
    r = v.value()
    v.scatter_update(sf.IndexedSlices(sf.constant(np.ones((1, 2))), sf.constant([2])))
    np.testing.assert_array_equal(r.numpy(), np.zeros((4, 2)))
    np.testing.assert_array_equal(v.numpy()[2], [1.0, 1.0])


def test_sparse_read_and_scatter_update_in_place_without_copy():
    v = sf.Variable(np.zeros((1000, 8)))
    table = v._resource.value
    rows = v.sparse_read([3, 3, 7])
    assert rows.shape.as_list() == [3, 8]
    state_ops.scatter_sub(v, [3, 7], np.ones((2, 8)))
    state_ops.scatter_add(v, [3], np.ones((1, 8)))
    assert v._resource.value is table            # no read handed the table out: updated in place
    _ = v.numpy()
    state_ops.scatter_add(v, [1], np.ones((1, 8)))
    assert v._resource.value is not table        # the table was handed out: copied once first


def test_training_step_on_large_table_allocates_no_table_copy():
    n, d = 50_000, 16                             # 6.4 MB of float64
    v = sf.Variable(np.zeros((n, d)))
    ids = np.array([5, 17, 5, 40_000])

    def step():
        with sf.GradientTape() as tape:
            loss = sf.reduce_sum(sf.gather(v, ids) ** 2)
        g = tape.gradient(loss, v)
        assert isinstance(g, sf.IndexedSlices)
        state_ops.scatter_sub(v, g.indices, 0.1 * g.values)

    step()
    tracemalloc.start()
    step()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < n * d * 8 // 10, peak


# -- tapes and gradients


def test_tape_watches_trainable_variables_only():
    v = sf.Variable([1.0, 2.0])
    frozen = sf.Variable([3.0, 4.0], trainable=False)
    with sf.GradientTape() as tape:
        y = sf.reduce_sum(v * frozen)
    assert tape.watched_variables() == (v,)
    gv, gf = tape.gradient(y, [v, frozen])
    np.testing.assert_array_equal(gv.numpy(), [3.0, 4.0])
    assert gf is None
    with sf.GradientTape(watch_accessed_variables=False) as tape:
        y = sf.reduce_sum(v * v)
    assert tape.gradient(y, v) is None
    with sf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(frozen)
        y = sf.reduce_sum(frozen * frozen)
    np.testing.assert_array_equal(tape.gradient(y, frozen).numpy(), [6.0, 8.0])


def test_dense_read_gradient(mode):
    x0 = np.array([[0.5, -1.0], [2.0, 0.25]])
    v = sf.Variable(x0)
    _init(mode)
    _, got = _grad(mode, lambda: sf.reduce_sum(sf.sin(v) * v), v)
    np.testing.assert_allclose(got, _numeric_grad(lambda x: np.sum(np.sin(x) * x), x0), rtol=1e-6)


def test_sparse_read_gradient_is_indexed_slices(mode):
    x0 = np.array([[0.5, -1.0], [2.0, 0.25], [1.5, 3.0]])
    ids = np.array([[2, 0], [2, 2]])
    v = sf.Variable(x0)
    _init(mode)
    raw, got = _grad(mode, lambda: sf.reduce_sum(sf.sin(v.sparse_read(ids))), v)
    assert isinstance(raw, sf.IndexedSlices)
    np.testing.assert_array_equal(got.indices, [2, 0, 2, 2])
    np.testing.assert_array_equal(got.dense_shape, [3, 2])
    want = _numeric_grad(lambda x: np.sum(np.sin(x[ids])), x0)
    np.testing.assert_allclose(_dense(got, x0.shape), want, rtol=1e-6)


def test_gather_of_variable_uses_sparse_read(mode):
    v = sf.Variable(np.arange(8.0).reshape(4, 2))
    _init(mode)
    out = sf.gather(v, [3, 1])
    if not mode.eager:
        assert out.op.type == "ResourceGather"
    np.testing.assert_array_equal(mode.evaluate(out), [[6, 7], [2, 3]])


def test_mixed_dense_and_sparse_reads_gradient(mode):
    x0 = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    v = sf.Variable(x0)
    _init(mode)
    raw, got = _grad(mode, lambda: sf.reduce_sum(v.sparse_read([1, 1]) * 3.0) + sf.reduce_sum(v * v), v)
    want = 2 * x0
    want[1] += 6.0
    np.testing.assert_allclose(_dense(got, x0.shape), want)


def test_sparse_read_out_of_range(mode):
    v = sf.Variable(np.zeros((3, 2)))
    _init(mode)
    with pytest.raises(errors.InvalidArgumentError, match=r"ResourceGather.*indices\[1\] = 3 is not in \[0, 3\)"):
        mode.evaluate(v.sparse_read([0, 3]))


def test_unconnected_variable_gradient_zero():
    v = sf.Variable([1.0, 2.0])
    w = sf.Variable([5.0])
    with sf.GradientTape() as tape:
        y = sf.reduce_sum(v)
    gw = tape.gradient(y, w, unconnected_gradients="zero")
    np.testing.assert_array_equal(gw.numpy(), [0.0])


def test_resource_handle_helpers():
    v = sf.Variable(np.zeros((2, 5)))
    np.testing.assert_array_equal(resource_variable_ops.variable_shape(v.handle).numpy(), [2, 5])
    assert resource_variable_ops.is_resource_variable(v)


def test_assign_source_tensor_unchanged_by_later_updates():
    src = sf.constant(np.zeros((3, 2)))
    v = sf.Variable(np.ones((3, 2)))
    v.assign(src)
    v.assign_add(np.ones((3, 2)))
    state_ops.scatter_add(v, [0], np.ones((1, 2)))
    np.testing.assert_array_equal(src.numpy(), np.zeros((3, 2)))
    np.testing.assert_array_equal(v.numpy(), [[2, 2], [1, 1], [1, 1]])


def test_graph_initializer_constant_not_corrupted_by_updates():
    with sf.Graph().as_default():
        v = sf.Variable(np.zeros((3, 2)))
        upd = state_ops.scatter_add(v, [1], np.ones((1, 2)))
        with sf.Session() as sess:
            for _ in range(2):
                sess.run(v.initializer)
                np.testing.assert_array_equal(sess.run(upd), [[0, 0], [1, 1], [0, 0]])
                np.testing.assert_array_equal(sess.run(v.initial_value), np.zeros((3, 2)))


def test_graph_initialized_value_does_not_reinitialize():
    with sf.Graph().as_default():
        a = sf.Variable([1.0, 2.0])
        doubled = a.initialized_value() * 2.0
        inc = a.assign_add([1.0, 1.0])
        with sf.Session() as sess:
            np.testing.assert_array_equal(sess.run(doubled), [2.0, 4.0])    # uninitialized: the initial value
            sess.run(a.initializer)
            sess.run(inc.op)
            np.testing.assert_array_equal(sess.run(doubled), [4.0, 6.0])    # initialized: the current value
            np.testing.assert_array_equal(sess.run(a), [2.0, 3.0])


def test_layered_names_in_graph():
    with sf.Graph().as_default():
        with sf.name_scope("layer"):
            v = sf.Variable(1.0, name="w")
            w = sf.Variable(1.0, name="w")
        assert v.name == "layer/w:0" and w.name == "layer/w_1:0"
        assert v.initializer.name == "layer/w/Assign"


def test_eager_variable_from_numpy_makes_one_private_copy():
    init = np.zeros((4000, 64), np.float32)
    tracemalloc.start()
    v = sf.Variable(init)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 1.5 * init.nbytes, peak          # one copy, not two
    assert not np.shares_memory(v._resource.value, init)
    t = sf.constant(np.ones(3))
    w = sf.Variable(t)
    w.assign_add([1.0, 1.0, 1.0])
    np.testing.assert_array_equal(t.numpy(), np.ones(3))
    with pytest.raises(RuntimeError, match="eager"):
        w.initial_value


def test_initialize_resources_runs_the_initializers():
    from segflow.ops import resources
    with sf.Graph().as_default():
        v = sf.Variable([1.0, 2.0], name="v")
        w = sf.Variable(3.0, name="w")
        sf.Variable(4.0, name="untouched")
        with sf.compat.v1.Session() as sess:
            sess.run(resources.initialize_resources([v, w]))
            np.testing.assert_allclose(sess.run(v), [1.0, 2.0])
            assert float(sess.run(w)) == 3.0
            left = [x.decode() if isinstance(x, bytes) else x
                    for x in sess.run(sf.compat.v1.report_uninitialized_variables())]
            assert left == ["untouched"]

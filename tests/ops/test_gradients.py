"""Symbolic gradients(), hessians(), aggregation and custom_gradient, against hand-derived numbers."""
import numpy as np
import pytest

import segflow as sf
from segflow.framework import ops
from segflow.ops import gradients
from segflow.ops import gradients_util

X = np.array([1.0, 2.0], np.float32)


@pytest.fixture
def graph():
    g = ops.Graph()
    with g.as_default():
        yield g


def _run(fetches, feed=None):
    with sf.Session() as sess:
        return sess.run(fetches, feed)


def test_gradients_in_eager_mode_point_to_gradient_tape():
    with pytest.raises(RuntimeError, match="eager execution.*GradientTape"):
        sf.gradients(sf.constant(1.0), sf.constant(1.0))


def test_ys_list_with_grad_ys_and_unconnected_x(graph):
    x = sf.placeholder(sf.float32, [2], name="x")
    u = sf.constant([1.0, 1.0], name="u")
    y1 = x * sf.constant([3.0, 4.0])
    y2 = sf.reduce_sum(x * x)
    gx, gu = sf.gradients([y1, y2], [x, u], grad_ys=[sf.constant([1.0, 2.0]), sf.constant(3.0)])
    assert gu is None
    # [1, 2] * [3, 4] + 3 * 2x
    np.testing.assert_array_equal(_run(gx, {x: X}), [9.0, 20.0])
    gx, gu = sf.gradients([y1, y2], [x, u], unconnected_gradients="zero")
    vx, vu = _run([gx, gu], {x: X})
    np.testing.assert_array_equal(vx, [5.0, 8.0])
    np.testing.assert_array_equal(vu, [0.0, 0.0])


def test_grad_ys_count_must_match(graph):
    x = sf.placeholder(sf.float32, [2])
    with pytest.raises(ValueError, match="2 grad_ys for 1 ys"):
        sf.gradients(x * 2.0, x, grad_ys=[sf.constant(X), sf.constant(X)])


def test_gradient_with_respect_to_intermediate(graph):
    x = sf.placeholder(sf.float32, [2])
    h = x * 2.0
    k = h * h + x
    gh, = sf.gradients(k, h)
    np.testing.assert_array_equal(_run(gh, {x: X}), 2 * (2 * X))


def test_stop_gradients_blocks_flow_through_a_tensor(graph):
    x = sf.placeholder(sf.float32, [2])
    a = x * 2.0
    y = (a * a) * 3.0 + a
    gx, ga = sf.gradients(y, [x, a], stop_gradients=[a])
    assert gx is None
    np.testing.assert_array_equal(_run(ga, {x: X}), 6 * (2 * X) + 1)
    gx, = sf.gradients(y, x)
    np.testing.assert_array_equal(_run(gx, {x: X}), 2 * (6 * 2 * X + 1))


def test_stop_gradients_on_an_x_still_gives_its_gradient(graph):
    # TF: gradients(a + b, [a, b], stop_gradients=[a, b]) is [1, 1].
    x = sf.placeholder(sf.float32, [2])
    b = x * 5.0
    g = sf.gradients(x * x + x * 3.0 + b, [x, b], stop_gradients=[x, b])
    gx, gb = _run(g, {x: X})
    np.testing.assert_array_equal(gx, 2 * X + 3)     # not through b
    np.testing.assert_array_equal(gb, [1.0, 1.0])


def test_tree_aggregation_gives_the_same_values(graph):
    x = sf.placeholder(sf.float32, [2])
    y = x * x + x * 3.0 + sf.sin(x) + x * x * x
    g_add, = sf.gradients(y, x)
    g_tree, = sf.gradients(y, x, aggregation_method=sf.AggregationMethod.EXPERIMENTAL_TREE)
    v_add, v_tree = _run([g_add, g_tree], {x: X})
    expected = 2 * X + 3 + np.cos(X) + 3 * X * X
    np.testing.assert_allclose(v_add, expected, rtol=1e-6)
    np.testing.assert_allclose(v_tree, expected, rtol=1e-6)
    with pytest.raises(ValueError, match="aggregation_method"):
        sf.gradients(y, x, aggregation_method=7)


def test_colocate_and_gate_gradients_are_accepted(graph):
    x = sf.placeholder(sf.float32, [2])
    with ops.device("/gpu:3"):
        y = sf.multiply(x, x, name="sq")
    with ops.device("/cpu:0"):
        g, = sf.gradients(y, x, colocate_gradients_with_ops=True, gate_gradients=True)
        g2, = sf.gradients(y, x)
    np.testing.assert_array_equal(_run(g, {x: X}), 2 * X)
    np.testing.assert_array_equal(_run(g2, {x: X}), 2 * X)
    placed = {op.name: op.device for op in graph.get_operations() if "sq_grad" in op.name}
    assert placed and all(d == ("/gpu:3" if n.startswith("gradients/") else "/cpu:0") for n, d in placed.items())


def test_gradient_of_integer_y_raises(graph):
    x = sf.placeholder(sf.float32, [2])
    xi = sf.placeholder(sf.int32, [2])
    y = sf.multiply(xi, 2, name="twice")
    with pytest.raises(TypeError, match="twice:0 has dtype int32"):
        sf.gradients(y, xi)
    with pytest.raises(TypeError, match="integer"):
        sf.gradients(sf.cast(x, sf.int32), x)


def test_gradient_ops_live_under_gradients_scope(graph):
    x = sf.placeholder(sf.float32, [2])
    y = sf.multiply(x, x, name="sq")
    before = {op.name for op in graph.get_operations()}
    g1, = sf.gradients(y, x)
    g2, = sf.gradients(y, x, name="mygrads")
    new = [op.name for op in graph.get_operations() if op.name not in before]
    assert new and all(n.startswith(("gradients/", "mygrads/")) for n in new), new
    assert any(n.startswith("gradients/sq_grad/") for n in new)
    assert any(n.startswith("mygrads/sq_grad/") for n in new)
    assert g1.name.startswith("gradients/") and g2.name.startswith("mygrads/")
    g3, = sf.gradients(y, x)
    assert g3.name.startswith("gradients_1/")


def test_gradient_of_variable_in_graph(graph):
    v = sf.Variable([1.0, 3.0])
    y = sf.reduce_sum(v * v)
    g, = sf.gradients(y, v)
    with sf.Session() as sess:
        sess.run(sf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(ops.convert_to_tensor(g)), [2.0, 6.0])


def test_sparse_aggregation_in_graph(graph):
    params = sf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    y_sparse = sf.reduce_sum(sf.gather(params, [2, 0])) + sf.reduce_sum(sf.gather(params, [2]) * 2.0)
    y_mixed = sf.reduce_sum(sf.gather(params, [1])) + sf.reduce_sum(params * 3.0)
    gs, = sf.gradients(y_sparse, params)
    gm, = sf.gradients(y_mixed, params)
    assert isinstance(gs, ops.IndexedSlices) and not isinstance(gm, ops.IndexedSlices)
    vs, vm = _run([gs, gm])
    assert sorted(vs.indices.tolist()) == [0, 2, 2]
    dense = np.zeros((3, 2))
    np.add.at(dense, vs.indices, vs.values)
    np.testing.assert_array_equal(dense, [[1, 1], [0, 0], [3, 3]])
    np.testing.assert_array_equal(vm, [[3, 3], [4, 4], [3, 3]])


def test_aggregate_directly():
    # The shared routine: dense sums, all-sparse concatenates, mixed densifies.
    a, b = sf.constant([1.0, 2.0]), sf.constant([10.0, 20.0])
    assert gradients_util.aggregate([]) is None
    assert gradients_util.aggregate([None, a]) is a
    np.testing.assert_array_equal(gradients_util.aggregate([a, b, a]).numpy(), [12.0, 24.0])
    tree = gradients_util.aggregate([a, b, a], gradients_util.AggregationMethod.EXPERIMENTAL_TREE)
    np.testing.assert_array_equal(tree.numpy(), [12.0, 24.0])
    shape = sf.constant([3, 2], dtype=sf.int64)
    s1 = ops.IndexedSlices(sf.constant([[1.0, 1.0]]), sf.constant([2]), shape)
    s2 = ops.IndexedSlices(sf.constant([[5.0, 5.0]]), sf.constant([0], dtype=sf.int64), shape)
    s = gradients_util.aggregate([s1, s2])
    assert isinstance(s, ops.IndexedSlices)
    np.testing.assert_array_equal(s.indices.numpy(), [2, 0])
    np.testing.assert_array_equal(s.values.numpy(), [[1, 1], [5, 5]])
    d = gradients_util.aggregate([s1, sf.constant(np.ones((3, 2), np.float32))])
    np.testing.assert_array_equal(d.numpy(), [[1, 1], [1, 1], [2, 2]])


def test_hessians_of_cubes(graph):
    x = sf.placeholder(sf.float32, [2])
    h, = gradients.hessians(sf.reduce_sum(x * x * x), x)
    np.testing.assert_array_equal(_run(h, {x: X}), np.diag(6 * X))


def test_hessians_of_a_scalar_product(graph):
    # f = x0 x1^2: H = [[0, 2 x1], [2 x1, 2 x0]]. The reduce_sum of a scalar goes through
    # BroadcastTo to shape [] (a 0-d result must stay 0-d).
    x = sf.placeholder(sf.float32, [2])
    h, = gradients.hessians(sf.reduce_sum(x[0] * x[1] * x[1]), x)
    np.testing.assert_array_equal(_run(h, {x: X}), [[0.0, 4.0], [4.0, 2.0]])


def test_hessians_of_quadratic_form(graph):
    a = np.array([[1.0, 2.0], [3.0, 5.0]], np.float32)
    x = sf.placeholder(sf.float32, [2])
    y = sf.reduce_sum(x * sf.reshape(sf.matmul(sf.constant(a), sf.reshape(x, [2, 1])), [2]))
    h, = gradients.hessians(y, x)
    np.testing.assert_array_equal(_run(h, {x: X}), a + a.T)


def test_zero_dimensional_kernel_results_stay_zero_dimensional(mode):
    # NumPy's ascontiguousarray turns a 0-d array into shape (1,): ops must not.
    v = sf.constant([1.0, 2.0])
    s = sf.constant(5.0)
    results = {
        "broadcast_to": sf.broadcast_to(s, []),
        "transpose": sf.transpose(s, []),
        "gather_nd": sf.gather_nd(v, [1]),
        "unstack": sf.unstack(v)[1],
        "slice": sf.slice(s, [], []),
        "ellipsis_index": v[..., 1],
    }
    values = mode.evaluate(results)
    for name, value in values.items():
        assert np.shape(value) == (), name
    assert float(values["gather_nd"]) == 2.0 and float(values["unstack"]) == 2.0
    assert float(values["ellipsis_index"]) == 2.0


def test_add_n_of_three_scalars(mode):
    assert float(mode.evaluate(sf.add_n([sf.constant(1.0), sf.constant(2.0), sf.constant(4.0)]))) == 7.0


# ----------------------------------------------------------------------------------------------
# custom_gradient


@sf.custom_gradient
def _scaled_product(x, y):
    def grad(dy):
        return dy * 10.0, dy * 100.0        # deliberately not the true gradient
    return x * y, grad


@sf.custom_gradient
def _square(x):
    def grad(dy):
        return dy * 2.0 * x                 # the true gradient, built from ops
    return x * x, grad


@sf.custom_gradient
def _two_outputs(x):
    def grad(da, db):
        return da * 2.0 + db * 3.0
    return (x * 1.0, x * 1.0), grad


def _grads(mode, f, xs, x_values):
    """d f(*xs) / d xs, in the mode's way (xs are placeholders in a graph)."""
    if mode.eager:
        xs = [sf.constant(v) for v in x_values]
        with sf.GradientTape() as tape:
            tape.watch(xs)
            y = f(*xs)
        return mode.evaluate(tape.gradient(y, xs))
    phs = [sf.placeholder(sf.float32, np.shape(v)) for v in x_values]
    return mode.session.run(sf.gradients(f(*phs), phs), dict(zip(phs, x_values)))


def test_custom_gradient_multiple_inputs(mode):
    gx, gy = _grads(mode, _scaled_product, None, [np.float32(3.0), np.float32(4.0)])
    assert (float(gx), float(gy)) == (10.0, 100.0)


def test_custom_gradient_several_outputs(mode):
    def f(x):
        a, b = _two_outputs(x)
        return a * 5.0 + b
    gx, = _grads(mode, f, None, [np.float32(3.0)])
    assert float(gx) == 13.0      # 5 * 2 + 1 * 3


def test_custom_gradient_inside_a_larger_computation(mode):
    def f(x):
        return sf.sin(_square(x * 2.0)) + 1.0
    gx, = _grads(mode, f, None, [np.float32(3.0)])
    # d/dx sin((2x)^2) = cos(4x^2) * 8x
    np.testing.assert_allclose(float(gx), np.cos(36.0) * 24.0, rtol=1e-5)


def test_custom_gradient_value(mode):
    np.testing.assert_array_equal(mode.evaluate(_scaled_product(sf.constant(3.0), sf.constant(4.0))), 12.0)


def test_custom_gradient_second_order_eager():
    x = sf.constant(3.0)
    with sf.GradientTape() as outer:
        outer.watch(x)
        with sf.GradientTape() as inner:
            inner.watch(x)
            y = _square(x)
        d1 = inner.gradient(y, x)
    d2 = outer.gradient(d1, x)
    assert (float(d1), float(d2)) == (6.0, 2.0)


def test_custom_gradient_second_order_graph(graph):
    x = sf.placeholder(sf.float32, [])
    d1, = sf.gradients(_square(x), x)
    d2, = sf.gradients(d1, x)
    assert _run([d1, d2], {x: 3.0}) == [6.0, 2.0]


def test_custom_gradient_wrong_count_names_the_problem():
    @sf.custom_gradient
    def bad(x, y):
        return x * y, lambda dy: dy
    x, y = sf.constant(1.0), sf.constant(2.0)
    with sf.GradientTape() as tape:
        tape.watch([x, y])
        z = bad(x, y)
    with pytest.raises(ValueError, match="expected to return 2 gradients, but returned 1"):
        tape.gradient(z, [x, y])


def test_multi_output_op_with_one_output_used_in_graph(graph):
    x = sf.placeholder(sf.float32, [2, 2])
    top, _ = sf.split(x, 2, axis=0)
    _, second = sf.unstack(x)
    g_split, = sf.gradients(top * 3.0, x)
    g_unstack, = sf.gradients(second * second, x)
    xv = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    vs, vu = _run([g_split, g_unstack], {x: xv})
    np.testing.assert_array_equal(vs, [[3.0, 3.0], [0.0, 0.0]])
    np.testing.assert_array_equal(vu, [[0.0, 0.0], [6.0, 8.0]])


def test_indexed_slices_y_stands_for_its_dense_form(graph):
    p = sf.placeholder(sf.float32, [3])
    s = ops.IndexedSlices(p * sf.constant([1.0, 2.0, 3.0]), sf.constant([2, 0, 2]), sf.constant([4]))
    g_ones, = sf.gradients(s, p)                       # d sum(dense(s)) / dp = [1, 2, 3]
    g_weighted, = sf.gradients(s, p, grad_ys=[sf.constant([10.0, 20.0, 30.0, 40.0])])
    v1, v2 = _run([g_ones, g_weighted], {p: [5.0, 6.0, 7.0]})
    np.testing.assert_array_equal(v1, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(v2, [30.0, 20.0, 90.0])   # [1, 2, 3] * gy[[2, 0, 2]]


def test_unconnected_variable_gets_zeros_of_its_value(graph):
    v = sf.Variable([1.0, 2.0])
    x = sf.placeholder(sf.float32, [])
    gx, gv = sf.gradients(x * 2.0, [x, v], unconnected_gradients="zero")
    assert gv.dtype == sf.float32
    with sf.Session() as s:
        s.run(sf.global_variables_initializer())
        vx, vv = s.run([gx, gv], {x: 1.0})
    assert float(vx) == 2.0
    np.testing.assert_array_equal(vv, [0.0, 0.0])
    assert sf.gradients(x * 2.0, v)[0] is None


def test_get_dependent_variables_finds_trainable_variables_on_differentiable_paths():
    from segflow.ops import custom_gradient as cg
    with sf.Graph().as_default():
        var = sf.Variable(100.0)
        frozen = sf.Variable(1.0, trainable=False)
        x = sf.constant(2.0)
        assert cg.get_dependent_variables([x], [sf.identity(x) + 5.0]) == []
        assert cg.get_dependent_variables([x], [sf.identity(x) + 5.0 + var]) == [var]
        assert cg.get_dependent_variables([x], [var + frozen]) == [var]                  # not the frozen one
        assert cg.get_dependent_variables([x], [x + sf.ones_like(var)]) == []            # OnesLike: no gradient
        y = var * 3.0
        assert cg.get_dependent_variables([y], [sf.identity(y)]) == []                   # cut at the input

"""custom_gradient with variables and on methods, recompute_grad, grad_pass_through, and where
gradients() puts its ops (`_original_op`, colocation of the sum of several gradients); checked
against hand-derived numbers and numerical Jacobians."""
import numpy as np
import pytest

import segflow as sf
from segflow.layers import core as core_layers
from segflow.ops import custom_gradient, gradient_checker_v2, variable_scope, variables


# -- custom_gradient on methods and with variables


def test_custom_gradient_on_a_method_binds_self(mode):
    class Model:
        scale = 10.0

        @sf.custom_gradient
        def multiply(self, x1, x2):
            def grad(dy):
                return dy * x2 * self.scale, dy * x1 * self.scale
            return x1 * x2, grad

    m = Model()
    x1, x2 = sf.constant(3.0), sf.constant(5.0)
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch([x1, x2])
            y = m.multiply(x1, x2)
        grads = tape.gradient(y, [x1, x2])
    else:
        y = m.multiply(x1, x2)
        grads = sf.gradients(y, [x1, x2])
    assert mode.evaluate(y) == 15.0
    assert [float(g) for g in mode.evaluate(grads)] == [50.0, 30.0]


def test_custom_gradient_gives_gradients_for_the_variables_it_uses_graph():
    @sf.custom_gradient
    def f(x):
        out = core_layers.dense(x, 3, use_bias=False)

        def grad(dy, variables=None):
            assert len(variables) == 1
            return sf.gradients(out, x, grad_ys=dy)[0], [sf.ones((4, 3)) * 2.0]
        return out, grad

    with sf.Graph().as_default():
        x = sf.ones((2, 4))
        with variable_scope.variable_scope("f", use_resource=True) as vs:
            y = f(x)
            all_vars = vs.global_variables()
        assert [v.name for v in all_vars] == ["f/dense/kernel:0"]
        gx, gw = sf.gradients(y, [x, all_vars[0]])
        with sf.Session() as sess:
            sess.run(variables.global_variables_initializer())
            kernel = sess.run(all_vars[0])
            gx_val, gw_val = sess.run([gx, gw])
    assert gw_val.tolist() == (np.ones((4, 3)) * 2).tolist()
    np.testing.assert_allclose(gx_val, np.ones((2, 3)) @ kernel.T, rtol=1e-6)


def test_custom_gradient_with_variables_eager():
    layer = core_layers.Dense(4, use_bias=False)

    @sf.custom_gradient
    def f(x):
        out = layer(x)

        def grad(dy, variables=None):
            assert len(variables) == 1
            return sf.ones((3, 2)), [sf.ones((2, 4)) * 3.0]
        return out, grad

    x = sf.ones((3, 2)) + 2.0
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    w, = layer.variables
    dx, dw = tape.gradient(y, [x, w])
    assert float(sf.reduce_sum(dx)) == 6.0 and float(sf.reduce_sum(dw)) == 24.0
    np.testing.assert_allclose(y.numpy(), x.numpy() @ w.numpy(), rtol=1e-6)


def test_custom_gradient_needs_a_variables_argument_when_it_uses_variables():
    v = sf.Variable(2.0)

    @sf.custom_gradient
    def f(x):
        return x * v, lambda dy: dy

    with pytest.raises(TypeError, match="variables"):
        f(sf.constant(1.0))


# -- recompute_grad


def _tanh_prod(x):
    return sf.reduce_prod(sf.tanh(x) ** 2)


def _grad_of(f):
    def g(x):
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = f(x)
        return tape.gradient(y, x, unconnected_gradients="zero")
    return g


def test_recompute_grad_matches_numerical_jacobians_up_to_third_order():
    f = custom_gradient.recompute_grad(_tanh_prod)
    x = np.array([0.7, -0.3], np.float64)
    for fn in (f, _grad_of(f), _grad_of(_grad_of(f))):
        theory, numeric = gradient_checker_v2.compute_gradient(fn, [x], delta=1e-5)
        np.testing.assert_allclose(theory[0], numeric[0], rtol=1e-5, atol=1e-7)
        assert np.any(theory[0] != 0)
    assert float(f(sf.constant(x))) == pytest.approx(np.prod(np.tanh(x) ** 2))


def test_recompute_grad_reuses_the_variables_of_the_calls_scope():
    def fn(x):
        with variable_scope.variable_scope("inner"):
            w = variable_scope.get_variable("w", shape=[3], initializer=sf.constant_initializer(2.0))
        return x * w * w

    with sf.Graph().as_default():
        x = sf.constant([1.0, 2.0, 3.0])
        with variable_scope.variable_scope("outer", reuse=sf.AUTO_REUSE):
            re = custom_gradient.recompute_grad(fn)
            y_re, y = re(x), fn(x)
        w, = variables.trainable_variables()
        assert w.name == "outer/inner/w:0"
        g_re, g = sf.gradients(y_re, [x, w]), sf.gradients(y, [x, w])
        with sf.Session() as sess:
            sess.run(variables.global_variables_initializer())
            (gx_re, gw_re), (gx, gw) = sess.run([g_re, g])
        assert len(variables.trainable_variables()) == 1
    assert gx_re.tolist() == gx.tolist() == [4.0, 4.0, 4.0]          # w * w
    assert gw_re.tolist() == gw.tolist() == [4.0, 8.0, 12.0]         # 2 x w


def test_recompute_grad_gives_gradients_for_variables_read_inside_eager():
    w = sf.Variable([2.0, 2.0, 3.0])
    x = sf.constant([1.0, 2.0, 3.0])
    re = custom_gradient.recompute_grad(lambda t: t * w * w)
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = re(x)
    gx, gw = tape.gradient(y, [x, w])
    assert gx.numpy().tolist() == [4.0, 4.0, 9.0] and gw.numpy().tolist() == [4.0, 8.0, 18.0]


def test_recompute_grad_runs_the_forward_pass_unrecorded():
    x = sf.constant([1.0, 2.0])
    f = custom_gradient.recompute_grad(lambda t: sf.exp(t))
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = f(x)
    assert len(tape._tape.records) == 1       # only the call itself
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), np.exp([1.0, 2.0]), rtol=1e-6)


# -- grad_pass_through


def test_grad_pass_through_forwards_the_gradient_through_an_assign():
    x, z = sf.Variable(1.0, name="x"), sf.Variable(3.0, name="z")
    with sf.GradientTape() as tape:
        y = x.assign(z ** 2)
    assert tape.gradient(y, z) is None
    with sf.GradientTape() as tape:
        y = custom_gradient.grad_pass_through(x.assign)(z ** 2)
    assert float(tape.gradient(y, z)) == 6.0
    assert float(x.numpy()) == 9.0
    with sf.GradientTape() as tape:
        y = custom_gradient.grad_pass_through(lambda v: x * v)(z)
    assert tape.gradient(y, x) is None


def test_grad_pass_through_in_a_graph():
    with sf.Graph().as_default():
        z = sf.constant(3.0)
        y = custom_gradient.grad_pass_through(sf.round)(z * z)
        g = sf.gradients(y, z)[0]
        with sf.Session() as sess:
            assert sess.run([y, g]) == [9.0, 6.0]


# -- where gradients() puts its ops


def test_gradient_ops_record_their_forward_op():
    with sf.Graph().as_default():
        inp = sf.constant(1.0, shape=[3, 4])
        w = sf.constant(1.0, shape=[4, 2])
        xw = sf.matmul(inp, w, name="xw")
        h = sf.nn.bias_add(xw, sf.constant([1.0, 2.0]))
        gw = sf.gradients(h, w)[0]
        assert gw.op.type == "MatMul" and gw.op._original_op is xw.op
        assert gw.op.get_attr("transpose_a") and not gw.op.get_attr("transpose_b")
        assert xw.op._original_op is None
        with sf.Session() as sess:
            assert sess.run(gw).tolist() == [[3.0, 3.0]] * 4


def test_sum_of_gradients_is_colocated_as_tf_places_it():
    with sf.Graph().as_default() as g:
        with g.device("/device:GPU:1"):
            w = sf.constant(1.0, shape=[1, 1])
        x, y = sf.constant(1.0, shape=[1, 2]), sf.constant(2.0, shape=[1, 2])
        wx, wy = sf.matmul(w, x), sf.matmul(w, y)
        z = wx + wy
        gw = sf.gradients(z, [w], colocate_gradients_with_ops=True)[0]
        # one device: the sum sits with the first consumer's gradient, itself with that consumer
        assert gw.op.type == "AddN" and gw.op.colocation_groups() == wx.op.colocation_groups()
        assert sf.gradients(z, [w])[0].op.colocation_groups() != wx.op.colocation_groups()
        with sf.Session() as sess:
            assert sess.run(gw).tolist() == [[6.0]]
    with sf.Graph().as_default() as g:
        w = sf.constant(1.0, shape=[1, 1])
        x, y = sf.constant(1.0, shape=[1, 2]), sf.constant(2.0, shape=[1, 2])
        with g.device("/task:1"):
            wx = sf.matmul(w, x)
        with g.device("/task:2"):
            wy = sf.matmul(w, y)
        gw = sf.gradients(wx + wy, [w], colocate_gradients_with_ops=True)[0]
        # two devices: the partial sums meet beside the op whose output they are for
        assert gw.op.colocation_groups() == w.op.colocation_groups()
        with sf.Session() as sess:
            assert sess.run(gw).tolist() == [[6.0]]

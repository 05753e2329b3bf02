"""The core contract: the registry example, graph and eager execution, errors."""
import warnings

import numpy as np
import pytest

import segflow as sf
from segflow.client import session
from segflow.framework import errors, ops
from segflow.ops import array_ops, math_ops
from segflow.framework import op_def
from segflow.ops import gradients

A = [[1, 2], [3, 4]]
B = [[6, 7, 8], [9, 10, 11]]


def test_matmul_registry_example_graph():
    # The numbers are hand-derived: d sum(AB) / dA = ones @ B^T; with c*stop(c), c @ B^T.
    with ops.Graph().as_default():
        a = sf.constant(A, dtype=sf.float32)
        b = sf.constant(B, dtype=sf.float32)
        c = math_ops.matmul(a, b)
        matmul_grad = ops._gradient_registry.lookup("MatMul")
        g1, = gradients.gradients(c, a)
        g2, _ = matmul_grad(c.op, array_ops.ones_like(c))
        cc = c * array_ops.stop_gradient(c)
        g3, = gradients.gradients(cc, a)
        g4, _ = matmul_grad(c.op, c)
        with session.Session() as sess:
            c_v, g1_v, g2_v, g3_v, g4_v = sess.run([c, g1, g2, g3, g4])
    np.testing.assert_array_equal(c_v, np.array(A) @ np.array(B))
    np.testing.assert_array_equal(g1_v, [[21, 30], [21, 30]])
    np.testing.assert_array_equal(g2_v, [[21, 30], [21, 30]])
    np.testing.assert_array_equal(g3_v, [[573, 816], [1295, 1844]])
    np.testing.assert_array_equal(g4_v, [[573, 816], [1295, 1844]])


def test_matmul_registry_example_eager():
    a = sf.constant(A, dtype=sf.float32)
    b = sf.constant(B, dtype=sf.float32)
    with sf.GradientTape(persistent=True) as tape:
        tape.watch(a)
        c = sf.matmul(a, b)
        cc = c * sf.stop_gradient(c)
    np.testing.assert_array_equal(tape.gradient(c, a).numpy(), [[21, 30], [21, 30]])
    np.testing.assert_array_equal(tape.gradient(cc, a).numpy(), [[573, 816], [1295, 1844]])


def test_eager_is_default_and_graph_mode_switches():
    assert sf.executing_eagerly()
    with ops.Graph().as_default():
        assert not sf.executing_eagerly()
        t = sf.constant(1.0) + 2.0
        assert isinstance(t, ops.Tensor) and not isinstance(t, ops.EagerTensor)
    assert sf.executing_eagerly()
    assert float(sf.constant(1.0) + 2.0) == 3.0


def test_session_feeds_placeholder_and_caches_plan():
    with ops.Graph().as_default() as g:
        x = sf.placeholder(sf.float32, [None, 2])
        y = sf.reduce_sum(x * 2.0, axis=1)
        with sf.Session() as sess:
            r1 = sess.run(y, {x: [[1, 2], [3, 4]]})
            r2 = sess.run({"y": y, "both": (y, x)}, feed_dict={x: np.ones((1, 2))})
            assert len(sess._plans) == 2
            sess.run(y, {x: [[0, 0]]})
            assert len(sess._plans) == 2
    np.testing.assert_array_equal(r1, [6, 14])
    np.testing.assert_array_equal(r2["y"], [4])
    np.testing.assert_array_equal(r2["both"][1], np.ones((1, 2)))


def test_feed_errors_name_the_tensor():
    with ops.Graph().as_default():
        x = sf.placeholder(sf.float32, [None, 2], name="inp")
        y = x + 1.0
        with sf.Session() as sess:
            with pytest.raises(ValueError, match=r"shape \(3,\).*inp:0"):
                sess.run(y, {x: [1.0, 2.0, 3.0]})
            with pytest.raises(errors.InvalidArgumentError, match="inp"):
                sess.run(y)
            with pytest.raises(TypeError, match="feed_dict key"):
                sess.run(y, {"nonexistent:0": 1.0})


def test_dtype_mismatch_names_op_and_input(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"AddV2.*input 'y'.*float64.*float32"):
        sf.add(sf.constant([1.0], dtype=sf.float32), sf.constant([1.0], dtype=sf.float64))


def test_incompatible_shapes_raise_at_build_time():
    with ops.Graph().as_default():
        a = sf.placeholder(sf.float32, [2, 3])
        b = sf.placeholder(sf.float32, [4, 5])
        with pytest.raises(errors.InvalidArgumentError, match=r"MatMul.*input 'b'.*3 and 4"):
            sf.matmul(a, b)


def test_missing_gradient_names_op():
    sf.register_op("SegflowTestNoGrad", inputs=("x",), attrs={"T": "x"},
                   infer=lambda op, x: [sf.TensorSpec(x.dtype, x.shape)], kernel=lambda x: x * 3)
    with ops.Graph().as_default():
        x = sf.placeholder(sf.float32, [2])
        y = sf.apply_op("SegflowTestNoGrad", x, name="triple")
        with pytest.raises(LookupError, match=r"No gradient defined for operation 'triple' \(op type: SegflowTestNoGrad\)"):
            sf.gradients(y, x)


def test_unknown_op_raises_not_found():
    with pytest.raises(errors.NotFoundError, match="NoSuchOp"):
        sf.apply_op("NoSuchOp", 1.0)


def test_duplicate_gradient_registration_names_first():
    @ops.RegisterGradient("SegflowTestDup")
    def _g(op, grad):
        return grad
    with pytest.raises(KeyError, match="SegflowTestDup.*Previous registration"):
        ops.RegisterGradient("SegflowTestDup")(_g)


def test_user_op_with_registered_gradient_both_modes(mode):
    # A user-defined op from a Python kernel: y = x ** 3, dy/dx = 3 x^2.
    if "SegflowTestCube" not in op_def.list_ops():
        sf.register_op("SegflowTestCube", inputs=("x",), attrs={"T": "x"},
                       infer=lambda op, x: [sf.TensorSpec(x.dtype, x.shape)], kernel=lambda x: x ** 3)

        @ops.RegisterGradient("SegflowTestCube")
        def _cube_grad(op, grad):
            x = op.inputs[0]
            return grad * 3.0 * x * x
    x0 = np.array([1.0, -2.0, 0.5])
    if mode.eager:
        x = sf.constant(x0)
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = sf.apply_op("SegflowTestCube", x)
        g = tape.gradient(y, x)
    else:
        x = sf.constant(x0)
        y = sf.apply_op("SegflowTestCube", x)
        g = sf.gradients(y, x)[0]
    y_v, g_v = mode.evaluate([y, g])
    np.testing.assert_allclose(y_v, x0 ** 3)
    np.testing.assert_allclose(g_v, 3 * x0 ** 2)


def test_hessian_vector_product_via_gradients_of_gradients():
    # f(x) = sum(x^3) -> H = diag(6x); H v = 6 x v.
    x0 = np.array([1.0, 2.0, -1.0])
    v0 = np.array([0.5, -1.0, 2.0])
    with ops.Graph().as_default():
        x = sf.constant(x0)
        v = sf.constant(v0)
        g = sf.gradients(sf.reduce_sum(x * x * x), x)[0]
        hv = sf.gradients(sf.reduce_sum(g * sf.stop_gradient(v)), x)[0]
        with sf.Session() as sess:
            np.testing.assert_allclose(sess.run(hv), 6 * x0 * v0)
    x = sf.constant(x0)
    with sf.GradientTape() as outer:
        outer.watch(x)
        with sf.GradientTape() as inner:
            inner.watch(x)
            y = sf.reduce_sum(x * x * x)
        g = inner.gradient(y, x)
        gv = sf.reduce_sum(g * v0)
    np.testing.assert_allclose(outer.gradient(gv, x).numpy(), 6 * x0 * v0)


def test_custom_gradient_both_modes(mode):
    @sf.custom_gradient
    def clip_grad(x):
        def grad(dy):
            return dy * 0.5
        return x * 3.0, grad
    x = sf.constant([1.0, 2.0])
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = clip_grad(x)
        g = tape.gradient(y, x)
    else:
        y = clip_grad(x)
        g = sf.gradients(y, x)[0]
    y_v, g_v = mode.evaluate([y, g])
    np.testing.assert_allclose(y_v, [3.0, 6.0])
    np.testing.assert_allclose(g_v, [0.5, 0.5])


def test_gradient_override_map_replaces_gradient_and_warns():
    @ops.RegisterGradient("SegflowTestTimesTen")
    def _ten(op, grad):
        return grad * 10.0

    with ops.Graph().as_default() as g:
        x = sf.constant([1.0, 2.0])
        with g.gradient_override_map({"Identity": "SegflowTestTimesTen"}):
            y = sf.identity(x)
        z = sf.identity(x)
        gy, gz = sf.gradients(y, x)[0], sf.gradients(z, x)[0]
        with sf.Session() as sess:
            np.testing.assert_array_equal(sess.run(gy), [10.0, 10.0])
            np.testing.assert_array_equal(sess.run(gz), [1.0, 1.0])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with g.gradient_override_map({"NoSuchOpType": "SegflowTestTimesTen"}):
                pass
        texts = [str(w.message) for w in caught]
        assert any("'NoSuchOpType' is not a registered op type" in t for t in texts), texts
        assert any("'NoSuchOpType'" in t and "never used" in t for t in texts), texts
        with pytest.warns(UserWarning, match="never used"):
            with g.gradient_override_map({"Tanh": "SegflowTestTimesTen"}):
                sf.identity(x)


def test_tensor_eval_and_operation_run_use_default_session():
    with ops.Graph().as_default():
        x = sf.constant([1.0, 2.0]) * 3.0
        with sf.Session().as_default():
            np.testing.assert_array_equal(x.eval(), [3.0, 6.0])
            assert x.op.run() is None


def test_name_scope_and_unique_names():
    with ops.Graph().as_default() as g:
        with sf.name_scope("layer"):
            a = sf.constant(1.0, name="c")
            b = sf.constant(1.0, name="c")
        assert a.op.name == "layer/c" and b.op.name == "layer/c_1"
        assert g.get_tensor_by_name("layer/c_1:0") is b
        with sf.device("/cpu:0"):
            d = a + b
        assert d.op.device == "/cpu:0"
        with sf.colocate_with(a):
            e = a * b
        assert e.op.colocation_groups() == [b"loc:@layer/c"]
        with sf.control_dependencies([d]):
            f = sf.identity(e)
        assert f.op.control_inputs == [d.op]


def test_static_check_failures_while_building_a_graph_are_value_errors_too():
    # TF raises ValueError from shape functions at graph construction; segflow's error is both.
    with sf.Graph().as_default():
        with pytest.raises(ValueError, match="squeeze"):
            sf.squeeze(sf.zeros([1, 2, 1]), axis=[1])
        with pytest.raises(errors.InvalidArgumentError, match="Tile"):
            sf.tile(sf.zeros([4, 1]), [1, 2, 3])
    with pytest.raises(errors.InvalidArgumentError) as info:       # eagerly: not a ValueError
        sf.squeeze(sf.zeros([1, 2, 1]), axis=[1])
    assert not isinstance(info.value, ValueError)

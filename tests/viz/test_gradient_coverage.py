"""sf.gradient_coverage: empty for differentiable paths; names the op type, the node and the
registration line for an op without a gradient; respects gradient_override_map,
NotDifferentiable, stop_gradient and the chosen sources; sees into traced functions. Each answer is
checked against what gradients() actually does."""
import warnings

import numpy as np
import pytest

import segflow as sf
from segflow.framework import ops

from vizhelp import build_model

v1 = sf.compat.v1


def _same(op, x):
    return [sf.TensorSpec(x.dtype, x.shape)]


for _name in ("VizCovNoGrad", "VizCovTwoOut", "VizCovStop"):
    if _name not in sf._core.registry.list_ops():
        sf.register_op(_name, inputs=("x",), attrs={"T": "x"}, infer=_same, kernel=lambda x: x * 2)
if "VizCovPair" not in sf._core.registry.list_ops():
    sf.register_op("VizCovPair", inputs=("x", "y"), attrs={"T": "x"}, num_outputs=2,
                   infer=lambda op, x, y: [sf.TensorSpec(x.dtype, x.shape)] * 2,
                   kernel=lambda x, y: (x + y, x - y))
    ops.NotDifferentiable("VizCovStop")


def _gradients_fail(ys, xs):
    try:
        sf.gradients(ys, xs)
    except LookupError:
        return True
    return False


def test_differentiable_model_is_covered():
    g, loss, _ = build_model()
    with g.as_default():
        assert sf.gradient_coverage(loss) == []
        assert sf.gradient_coverage([loss], sources=v1.trainable_variables()) == []


def test_op_without_gradient_is_named_with_its_registration():
    g = sf.Graph()
    with g.as_default():
        x = v1.placeholder(sf.float32, [3], name="x")
        w = v1.Variable([1.0, 2.0, 3.0], name="w")
        with sf.name_scope("net"):
            h = sf.apply_op("VizCovNoGrad", x * w, name="double")
            y = sf.reduce_sum(sf.sin(h))
        found = sf.gradient_coverage(y)
        assert [(m.op_type, m.node_name) for m in found] == [("VizCovNoGrad", "net/double")]
        reg = found[0].registration
        assert reg.startswith('@sf.RegisterGradient("VizCovNoGrad")\ndef _viz_cov_no_grad_grad(op, grad):')
        assert "one gradient per input of VizCovNoGrad (x)" in reg
        assert "VizCovNoGrad 'net/double' has no gradient" in str(found[0])
        assert _gradients_fail(y, [w])
        # the registration it names compiles and, filled in, makes the path differentiable
        code = reg.replace("return ...", "return grad * 2.0")
        scope = {"sf": sf}
        if "VizCovNoGrad" not in sf._core.registry._gradient_registry:
            exec(compile(code, "<registration>", "exec"), scope)
        assert sf.gradient_coverage(y) == []
        (gw,) = sf.gradients(y, [w])
        with v1.Session() as s:
            s.run(v1.global_variables_initializer())
            xv = np.array([0.5, -1.0, 2.0], np.float32)
            got = s.run(gw, {x: xv})
        wv = np.array([1.0, 2.0, 3.0])
        np.testing.assert_allclose(got, np.cos(2 * xv * wv) * 2 * xv, rtol=1e-5)


def test_sources_limit_the_paths():
    g = sf.Graph()
    with g.as_default():
        a = v1.placeholder(sf.float32, [2], name="a")
        b = v1.placeholder(sf.float32, [2], name="b")
        y = sf.reduce_sum(sf.apply_op("VizCovTwoOut", a, name="noisy") + b * b)
        assert [m.node_name for m in sf.gradient_coverage(y)] == ["noisy"]
        assert [m.node_name for m in sf.gradient_coverage(y, sources=[a])] == ["noisy"]
        assert sf.gradient_coverage(y, sources=[b]) == []
        assert sf.gradient_coverage(y, sources=["b"]) == []           # by name
        assert not _gradients_fail(y, [b]) and _gradients_fail(y, [a])


def test_every_missing_op_listed_in_walk_order():
    g = sf.Graph()
    with g.as_default():
        x = v1.placeholder(sf.float32, [2], name="x")
        h = sf.apply_op("VizCovTwoOut", x, name="first")
        p, q = sf.apply_op("VizCovPair", h, x, name="pair")
        y = sf.reduce_sum(p * q)
        found = sf.gradient_coverage(y)
        assert [(m.op_type, m.node_name) for m in found] == [("VizCovPair", "pair"), ("VizCovTwoOut", "first")]
        assert "def _viz_cov_pair_grad(op, *grads):" in found[0].registration   # two outputs
        assert "(x, y)" in found[0].registration


def test_not_differentiable_and_stop_gradient_end_the_path():
    g = sf.Graph()
    with g.as_default():
        x = v1.placeholder(sf.float32, [2], name="x")
        behind = sf.apply_op("VizCovTwoOut", x, name="behind")
        y = sf.reduce_sum(sf.apply_op("VizCovStop", behind) + x)
        assert sf.gradient_coverage(y) == []
        assert not _gradients_fail(y, [x])
        z = sf.reduce_sum(sf.stop_gradient(sf.apply_op("VizCovTwoOut", x, name="stopped")) * x)
        assert sf.gradient_coverage(z) == []
        assert not _gradients_fail(z, [x])
        # integer tensors carry no gradient either
        n = sf.cast(sf.apply_op("VizCovTwoOut", x, name="to_int"), sf.int32)
        assert sf.gradient_coverage(sf.reduce_sum(sf.cast(n, sf.float32) * x)) == []


def test_gradient_override_map_is_respected():
    g = sf.Graph()
    with g.as_default():
        x = v1.placeholder(sf.float32, [3], name="x")
        with g.gradient_override_map({"VizCovTwoOut": "Identity"}):
            y = sf.apply_op("VizCovTwoOut", x, name="as_identity")
        assert sf.gradient_coverage(y) == []
        assert not _gradients_fail(y, [x])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with g.gradient_override_map({"Sin": "VizCovUnregistered"}):
                z = sf.sin(x, name="sin_override")
        found = sf.gradient_coverage(z)
        assert [(m.op_type, m.node_name) for m in found] == [("VizCovUnregistered", "sin_override")]
        assert found[0].registration.startswith('@sf.RegisterGradient("VizCovUnregistered")')
        assert _gradients_fail(z, [x])


def test_python_function_is_traced():
    x = np.ones(3, np.float32)
    assert sf.gradient_coverage(lambda a: sf.reduce_sum(sf.exp(a) * a), args=(x,)) == []
    found = sf.gradient_coverage(lambda a: sf.apply_op("VizCovTwoOut", a * a, name="inside"), args=x)
    assert [(m.op_type, m.node_name) for m in found] == [("VizCovTwoOut", "inside")]


def test_traced_function_called_in_a_graph_is_looked_into():
    @sf.function
    def inner(a):
        return sf.apply_op("VizCovTwoOut", a, name="deep") * 2.0

    g = sf.Graph()
    with g.as_default():
        x = v1.placeholder(sf.float32, [3], name="x")
        y = sf.reduce_sum(inner(x))
        found = sf.gradient_coverage(y)
        assert [(m.op_type, m.node_name) for m in found] == [("VizCovTwoOut", "deep")]
        assert _gradients_fail(y, [x])


def test_bad_arguments():
    with pytest.raises(TypeError, match="graph tensors"):
        sf.gradient_coverage(sf.constant([1.0]))
    with pytest.raises(TypeError, match="args="):
        sf.gradient_coverage(lambda a: a, [np.ones(2)])
    g = sf.Graph()
    with g.as_default():
        x = v1.placeholder(sf.float32, [2])
        with pytest.raises(TypeError, match="example arguments"):
            sf.gradient_coverage(x * 2.0, args=(1.0,))

"""TF1's dense layer (`segflow.layers.core`): variables named by scope, values against NumPy,
reuse, gradients against numerical Jacobians."""
import numpy as np
import pytest

import segflow as sf
from segflow.layers import core as core_layers
from segflow.ops import variable_scope, variables


def test_dense_in_a_graph_makes_named_variables_and_computes_x_w_plus_b():
    with sf.Graph().as_default():
        x = sf.constant(np.arange(8, dtype=np.float32).reshape(2, 4))
        y = core_layers.dense(x, 3, activation=sf.nn.relu, bias_initializer=sf.constant_initializer(0.5))
        y2 = core_layers.dense(x, 2, use_bias=False, name="proj")
        names = [v.name for v in variables.global_variables()]
        assert names == ["dense/kernel:0", "dense/bias:0", "proj/kernel:0"]
        assert y.shape.as_list() == [2, 3] and y2.shape.as_list() == [2, 2]
        assert y.op.name.startswith("dense/")
        with sf.Session() as sess:
            sess.run(variables.global_variables_initializer())
            k, b, k2, got, got2 = sess.run(variables.global_variables() + [y, y2])
    np.testing.assert_allclose(got, np.maximum(np.arange(8).reshape(2, 4) @ k + b, 0), rtol=1e-5)
    np.testing.assert_allclose(got2, np.arange(8).reshape(2, 4) @ k2, rtol=1e-5)
    assert b.tolist() == [0.5] * 3 and k.shape == (4, 3)


def test_dense_layers_get_unique_scopes_and_reuse_shares_variables():
    with sf.Graph().as_default():
        x = sf.ones((2, 4))
        with variable_scope.variable_scope("f"):
            core_layers.dense(x, 3)
            core_layers.dense(x, 3)
            core_layers.dense(x, 3, name="shared")
            core_layers.dense(x, 3, name="shared", reuse=True)
        assert [v.name for v in variables.global_variables()] == [
            "f/dense/kernel:0", "f/dense/bias:0", "f/dense_1/kernel:0", "f/dense_1/bias:0",
            "f/shared/kernel:0", "f/shared/bias:0"]
        with pytest.raises(ValueError, match="already exists"):
            with variable_scope.variable_scope("f"):
                core_layers.dense(x, 3, name="shared")


def test_dense_layer_object_eager():
    layer = core_layers.Dense(2, kernel_initializer=sf.ones_initializer())
    x = sf.constant([[1.0, 2.0, 3.0]])
    y = layer(x)
    assert y.numpy().tolist() == [[6.0, 6.0]]
    assert layer.kernel.shape.as_list() == [3, 2] and layer.bias.shape.as_list() == [2]
    assert layer.trainable_variables == [layer.kernel, layer.bias] == layer.variables
    layer(x)
    assert len(layer.variables) == 2            # built once
    with sf.GradientTape() as tape:
        out = sf.reduce_sum(layer(x))
    gk, gb = tape.gradient(out, [layer.kernel, layer.bias])
    assert gk.numpy().tolist() == [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]] and gb.numpy().tolist() == [1.0, 1.0]
    other = core_layers.Dense(2)
    other(x)
    assert other.kernel is not layer.kernel


def test_dense_on_rank_three_inputs_multiplies_the_last_axis():
    layer = core_layers.Dense(2, kernel_initializer=sf.constant_initializer([[1.0, 0.0], [0.0, 2.0]]),
                              use_bias=False)
    x = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    y = layer(sf.constant(x))
    assert y.shape.as_list() == [2, 3, 2]
    np.testing.assert_allclose(y.numpy(), x @ np.array([[1.0, 0.0], [0.0, 2.0]]))


def test_dense_needs_a_known_last_dimension():
    with sf.Graph().as_default():
        with pytest.raises(ValueError, match="last dimension"):
            core_layers.dense(sf.placeholder(sf.float32, [2, None]), 3)

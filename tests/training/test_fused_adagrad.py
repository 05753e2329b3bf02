"""ResourceApplyAdagrad, the fused dense Adagrad step: the bits of the unfused ops it replaces,
eagerly and in a Session; a bad gradient changes nothing; 0 / 0 gives nan quietly."""
import warnings

import numpy as np
import pytest

import segflow as sf
from segflow._training import training_ops


def _unfused(var, acc, lr, grad):
    acc = acc + grad * grad
    with np.errstate(all="ignore"):
        return var - (lr * grad) / np.sqrt(acc), acc


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_fused_step_gives_the_unfused_bits_eagerly(dtype):
    rng = np.random.default_rng(0)
    var0 = rng.standard_normal((4, 3)).astype(dtype)
    acc0 = rng.uniform(0.1, 1, (4, 3)).astype(dtype)
    v, a = sf.Variable(var0), sf.Variable(acc0)
    lr = np.asarray(0.3, dtype)
    want_v, want_a = var0, acc0
    for step in range(3):
        g = rng.standard_normal((4, 3)).astype(dtype)
        training_ops.resource_apply_adagrad(v, a, sf.constant(lr), sf.constant(g))
        want_v, want_a = _unfused(want_v, want_a, lr, g)
        assert v.numpy().tobytes() == want_v.tobytes() and a.numpy().tobytes() == want_a.tobytes()


def test_fused_step_runs_in_a_session():
    var0 = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
    acc0 = np.full((2, 2), 0.1, np.float32)
    g = np.array([[0.1, -0.2], [0.3, 0.0]], np.float32)
    with sf.Graph().as_default():
        v = sf.compat.v1.Variable(var0)
        a = sf.compat.v1.Variable(acc0)
        op = training_ops.resource_apply_adagrad(v, a, sf.constant(np.float32(0.5)), sf.constant(g))
        assert op is not None and op.type == "ResourceApplyAdagrad"
        with sf.compat.v1.Session() as sess:
            sess.run(sf.compat.v1.global_variables_initializer())
            sess.run(op)
            got_v, got_a = sess.run([v, a])
    want_v, want_a = _unfused(var0, acc0, np.float32(0.5), g)
    assert got_v.tobytes() == want_v.tobytes() and got_a.tobytes() == want_a.tobytes()


def test_a_gradient_of_another_shape_changes_neither_variable():
    v, a = sf.Variable(np.ones((2, 3), np.float32)), sf.Variable(np.full((2, 3), 0.1, np.float32))
    with pytest.raises(sf.errors.InvalidArgumentError, match="grad"):
        training_ops.resource_apply_adagrad(v, a, sf.constant(np.float32(0.1)), sf.constant(np.ones((3, 2), np.float32)))
    np.testing.assert_array_equal(v.numpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(a.numpy(), np.full((2, 3), 0.1, np.float32))


def test_zero_accumulator_and_gradient_give_nan_without_a_warning():
    v, a = sf.Variable(np.ones(2, np.float32)), sf.Variable(np.zeros(2, np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        training_ops.resource_apply_adagrad(v, a, sf.constant(np.float32(0.1)), sf.constant(np.array([0.0, 1.0], np.float32)))
    got = v.numpy()
    assert np.isnan(got[0]) and got[1] == np.float32(1) - np.float32(0.1)

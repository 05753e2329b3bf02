"""nn_ops: relu, relu6, leaky_relu, softmax, log_softmax, cross entropies, bias_add, l2_normalize,
l2_loss, sigmoid cross entropy; sf.nn and nn_impl faces. Values against NumPy, gradients (first and
second order) against numerical Jacobians in both modes."""
import numpy as np
import pytest

import reference as R
import segflow as sf
from segflow.framework import errors
from segflow.ops import nn_impl
from segflow.ops import nn_ops
from gradcheck import check_gradients

RNG = np.random.default_rng(0)
LOGITS = RNG.normal(size=(3, 4))


def grad_of(f, w):
    """x -> d sum(w * f(x)) / dx, by tape (eager) or sf.gradients (graph); checking its Jacobian
    checks the second derivative of f."""
    def g(x):
        if sf.executing_eagerly():
            with sf.GradientTape() as tape:
                tape.watch(x)
                y = sf.reduce_sum(f(x) * w)
            return tape.gradient(y, x)
        return sf.gradients(sf.reduce_sum(f(x) * w), x)[0]
    return g


# -- relu family
def check_gradient(mode, f, *xs, tol=1e-6):
    check_gradients(mode, f, xs, tol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_relu_relu6(mode, dtype):
    x = np.array([[-3, 0, 2], [5, 7, -1]], dtype)
    r, r6 = mode.evaluate([sf.nn.relu(x), sf.nn.relu6(x)])
    assert r.dtype == dtype and r6.dtype == dtype
    np.testing.assert_array_equal(r, np.maximum(x, 0))
    np.testing.assert_array_equal(r6, np.clip(x, 0, 6))


def test_leaky_relu(mode):
    x = np.array([-2.0, 0.5, 3.0])
    np.testing.assert_allclose(mode.evaluate(sf.nn.leaky_relu(x, alpha=0.1)), [-0.2, 0.5, 3.0])


def test_relu_gradients(mode):
    # Keep away from the kinks (0 and 6) so central differences are exact.
    x = np.array([[-1.3, 0.4, 2.2], [7.1, 5.5, -0.2]])
    check_gradient(mode, sf.nn.relu, x)
    check_gradient(mode, sf.nn.relu6, x)
    check_gradient(mode, lambda t: sf.nn.leaky_relu(t, 0.3), x)


def test_relu_gradient_by_hand(mode):
    x = sf.constant([-1.0, 0.0, 2.0, 6.0, 7.0])
    if mode.eager:
        with sf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            r, r6 = sf.nn.relu(x), sf.nn.relu6(x)
        g, g6 = tape.gradient(r, x), tape.gradient(r6, x)
    else:
        g, g6 = sf.gradients(sf.nn.relu(x), x)[0], sf.gradients(sf.nn.relu6(x), x)[0]
    g, g6 = mode.evaluate([g, g6])
    np.testing.assert_array_equal(g, [0, 0, 1, 1, 1])
    np.testing.assert_array_equal(g6, [0, 0, 1, 0, 0])


def test_relu_rejects_bool(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"Relu.*input 'features'.*bool"):
        mode.evaluate(sf.nn.relu([True, False]))


# -- softmax, log_softmax
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_log_softmax(mode, axis):
    x = RNG.normal(size=(3, 4)) * 3
    s, ls = mode.evaluate([sf.nn.softmax(x, axis=axis), sf.nn.log_softmax(x, axis=axis)])
    np.testing.assert_allclose(s, R.softmax(x, axis), rtol=1e-12)
    np.testing.assert_allclose(ls, R.log_softmax(x, axis), rtol=1e-12)


def test_softmax_3d_middle_axis_and_dim_alias(mode):
    x = RNG.normal(size=(2, 3, 4))
    np.testing.assert_allclose(mode.evaluate(sf.nn.softmax(x, dim=1)), R.softmax(x, 1), rtol=1e-12)


def test_softmax_is_stable_for_large_logits(mode):
    x = np.array([[1000.0, 1000.0, -1000.0]], np.float32)
    s, ls = mode.evaluate([sf.nn.softmax(x), sf.nn.log_softmax(x)])
    np.testing.assert_allclose(s, [[0.5, 0.5, 0.0]])
    np.testing.assert_allclose(ls[0, :2], [np.log(0.5)] * 2, rtol=1e-6)
    assert np.isfinite(ls).all()


def test_empty_batch(mode):
    e = np.zeros((0, 3))
    s, loss = mode.evaluate([sf.nn.softmax(e), sf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=np.zeros((0,), np.int32), logits=e)])
    assert s.shape == (0, 3) and loss.shape == (0,)


def test_softmax_errors(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"Softmax.*input 'logits'.*rank >= 1"):
        mode.evaluate(sf.nn.softmax(sf.constant(1.0)))
    with pytest.raises(errors.InvalidArgumentError, match=r"Softmax.*input 'logits'.*int32"):
        mode.evaluate(sf.nn.softmax([1, 2]))


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_gradient_first_and_second_order(mode, axis):
    w = RNG.normal(size=(3, 4))
    f = lambda t: sf.nn.softmax(t, axis=axis)     # noqa: E731
    check_gradient(mode, lambda t: f(t) * w, LOGITS)
    check_gradient(mode, grad_of(f, w), LOGITS)


def test_log_softmax_gradient_first_and_second_order(mode):
    w = RNG.normal(size=(3, 4))
    check_gradient(mode, lambda t: sf.nn.log_softmax(t) * w, LOGITS)
    check_gradient(mode, grad_of(sf.nn.log_softmax, w), LOGITS)


# -- sparse softmax cross entropy
@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
def test_sparse_xent_values(mode, label_dtype):
    labels = np.array([3, 0, 1], label_dtype)
    got = mode.evaluate(sf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=LOGITS))
    np.testing.assert_allclose(got, R.sparse_softmax_cross_entropy_with_logits(labels, LOGITS), rtol=1e-12)


def test_sparse_xent_higher_rank(mode):
    logits = RNG.normal(size=(2, 3, 5))
    labels = RNG.integers(0, 5, size=(2, 3))
    got = mode.evaluate(sf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    np.testing.assert_allclose(got, R.sparse_softmax_cross_entropy_with_logits(labels, logits), rtol=1e-12)


def test_sparse_xent_hand_worked(mode):
    # uniform logits over 4 classes: loss = log 4 whatever the label
    got = mode.evaluate(sf.nn.sparse_softmax_cross_entropy_with_logits(labels=[2], logits=[[0.0, 0.0, 0.0, 0.0]]))
    np.testing.assert_allclose(got, [np.log(4.0)], rtol=1e-6)


def test_sparse_xent_label_out_of_range(mode):
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"SparseSoftmaxCrossEntropyWithLogits.*input 'labels'.*labels\[1\] = 4 is out of range \[0, 4\)"):
        mode.evaluate(sf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 4, 1], logits=LOGITS))
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"SparseSoftmaxCrossEntropyWithLogits.*input 'labels'.*= -1"):
        mode.evaluate(sf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, -1, 1], logits=LOGITS))


def test_sparse_xent_label_out_of_range_at_run_time():
    with sf.Graph().as_default():
        labels = sf.placeholder(sf.int32, [None])
        loss = sf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=sf.constant(LOGITS), name="xent")
        with sf.Session() as sess:
            np.testing.assert_allclose(sess.run(loss, {labels: [1, 1, 1]}),
                                       R.sparse_softmax_cross_entropy_with_logits(np.array([1, 1, 1]), LOGITS))
            with pytest.raises(errors.InvalidArgumentError, match=r"'xent'.*input 'labels'.*labels\[2\] = 7"):
                sess.run(loss, {labels: [1, 1, 7]})


def test_sparse_xent_shape_errors(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"SparseSoftmaxCrossEntropyWithLogits.*input 'labels'.*shape"):
        mode.evaluate(sf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 1], logits=LOGITS))
    with pytest.raises(ValueError, match="named arguments"):
        sf.nn.sparse_softmax_cross_entropy_with_logits([0, 1, 2], LOGITS)


def test_sparse_xent_gradient_first_and_second_order(mode):
    labels = np.array([3, 0, 1])
    w = RNG.normal(size=3)
    f = lambda t: sf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=t)   # noqa: E731
    check_gradient(mode, lambda t: f(t) * w, LOGITS)
    check_gradient(mode, grad_of(f, w), LOGITS)


def test_sparse_xent_gradient_is_softmax_minus_onehot(mode):
    labels = np.array([3, 0, 1])
    x = sf.constant(LOGITS)
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(x)
            loss = sf.reduce_sum(sf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=x))
        g = tape.gradient(loss, x)
    else:
        loss = sf.reduce_sum(sf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=x))
        g = sf.gradients(loss, x)[0]
    np.testing.assert_allclose(mode.evaluate(g), R.softmax(LOGITS) - np.eye(4)[labels], rtol=1e-12)


# -- dense softmax cross entropy
def test_xent_values(mode):
    labels = R.softmax(RNG.normal(size=(3, 4)))
    want = R.softmax_cross_entropy_with_logits(labels, LOGITS)
    got1, got2 = mode.evaluate([sf.compat.v1.nn.softmax_cross_entropy_with_logits(labels=labels, logits=LOGITS),
                                sf.nn.softmax_cross_entropy_with_logits_v2(labels, LOGITS)])
    np.testing.assert_allclose(got1, want, rtol=1e-12)
    np.testing.assert_allclose(got2, want, rtol=1e-12)


@pytest.mark.parametrize("axis", [0, 1])
def test_xent_axis(mode, axis):
    logits = RNG.normal(size=(2, 3, 4))
    labels = R.softmax(RNG.normal(size=(2, 3, 4)), axis)
    want = R.softmax_cross_entropy_with_logits(labels, logits, axis)
    got = mode.evaluate(sf.nn.softmax_cross_entropy_with_logits_v2(labels, logits, axis=axis))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_xent_shape_error(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"SoftmaxCrossEntropyWithLogits.*input 'labels'"):
        mode.evaluate(sf.nn.softmax_cross_entropy_with_logits_v2(np.ones((3, 3)) / 3, LOGITS))


def test_xent_gradients(mode):
    labels = R.softmax(RNG.normal(size=(3, 4)))
    w = RNG.normal(size=3)
    check_gradient(mode, lambda t: sf.nn.softmax_cross_entropy_with_logits_v2(labels, t) * w, LOGITS)
    check_gradient(mode, lambda z: sf.nn.softmax_cross_entropy_with_logits_v2(z, LOGITS) * w, labels)
    check_gradient(mode, grad_of(lambda t: sf.nn.softmax_cross_entropy_with_logits_v2(labels, t), w), LOGITS)


def test_xent_v1_stops_gradient_to_labels(mode):
    labels = sf.constant(R.softmax(RNG.normal(size=(3, 4))))
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(labels)
            loss = sf.compat.v1.nn.softmax_cross_entropy_with_logits(labels=labels, logits=LOGITS)
        g = tape.gradient(loss, labels)
    else:
        g = sf.gradients(sf.compat.v1.nn.softmax_cross_entropy_with_logits(labels=labels, logits=LOGITS), labels)[0]
    assert g is None


def test_tf2_nn_spellings():
    # TF2's tf.nn: the v2 cross entropy (labels get a gradient) and "div" embedding partitions;
    # compat.v1.nn keeps TF1's
    assert sf.nn.softmax_cross_entropy_with_logits is nn_ops.softmax_cross_entropy_with_logits_v2
    labels = sf.constant([[0.2, 0.8]])
    logits = sf.constant([[1.0, 2.0]])
    with sf.GradientTape() as tape:
        tape.watch(labels)
        loss = sf.reduce_sum(sf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    # d/d labels of -sum(labels * log_softmax(logits)) = -log_softmax(logits)
    np.testing.assert_allclose(tape.gradient(loss, labels).numpy(),
                               -(np.array([[1.0, 2.0]]) - np.log(np.exp(1.0) + np.exp(2.0))), rtol=1e-6)
    shards = [sf.constant([[0.0], [1.0]]), sf.constant([[2.0]])]      # rows 0, 1 | 2 ("div")
    assert sf.nn.embedding_lookup(shards, [1, 2]).numpy().ravel().tolist() == [1.0, 2.0]
    # "mod": id 1 -> shard 1 row 0, id 2 -> shard 0 row 1
    assert sf.compat.v1.nn.embedding_lookup(shards, [1, 2]).numpy().ravel().tolist() == [2.0, 1.0]
    # TF2's max_norm is the third positional argument
    np.testing.assert_allclose(sf.nn.embedding_lookup(sf.constant([[3.0, 4.0]]), [0], 1.0).numpy(), [[0.6, 0.8]])


# -- bias_add
def test_bias_add(mode):
    x = RNG.normal(size=(2, 3, 4))
    b = np.arange(4.0)
    np.testing.assert_allclose(mode.evaluate(sf.nn.bias_add(x, b)), x + b)
    bc = np.arange(3.0)
    np.testing.assert_allclose(mode.evaluate(sf.nn.bias_add(x, bc, data_format="NCHW")), x + bc[:, None])


def test_bias_add_errors(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"BiasAdd.*input 'bias'.*3 entries.*4 channels"):
        mode.evaluate(sf.nn.bias_add(np.zeros((2, 4)), np.zeros(3)))
    with pytest.raises(errors.InvalidArgumentError, match=r"BiasAdd.*input 'bias'.*1-D"):
        mode.evaluate(sf.nn.bias_add(np.zeros((2, 4)), np.zeros((1, 4))))


@pytest.mark.parametrize("data_format", [None, "NCHW"])
def test_bias_add_gradient(mode, data_format):
    x = RNG.normal(size=(2, 3, 2))
    b = RNG.normal(size=3 if data_format else 2)
    w = RNG.normal(size=(2, 3, 2))
    check_gradient(mode, lambda t, c: sf.nn.bias_add(t, c, data_format=data_format) * w, x, b)


# -- composites
def test_l2_normalize(mode):
    x = np.array([[3.0, 4.0], [0.0, 0.0], [1.0, -1.0]])
    got = mode.evaluate(sf.nn.l2_normalize(x, axis=1))
    np.testing.assert_allclose(got, [[0.6, 0.8], [0.0, 0.0], [2 ** -0.5, -(2 ** -0.5)]])
    # TF1's dim= spelling through the nn_impl face, and axis=None (all axes)
    np.testing.assert_allclose(mode.evaluate(nn_impl.l2_normalize(x, dim=1)), got)
    np.testing.assert_allclose(mode.evaluate(sf.nn.l2_normalize(x)), x / np.sqrt((x ** 2).sum()))
    np.testing.assert_allclose(mode.evaluate(sf.nn.l2_normalize(x, 0)), x / np.sqrt((x ** 2).sum(0)))


def test_l2_normalize_gradient_first_and_second_order(mode):
    # Fixed values (not the file's shared generator): the check must not depend on which tests ran first.
    x = np.array([[0.9, -1.3], [0.4, 0.7], [-1.1, 0.2]])
    w = np.array([[0.5, -0.8], [1.2, 0.3], [-0.6, 0.9]])
    check_gradient(mode, lambda t: nn_impl.l2_normalize(t, dim=1) * w, x)
    check_gradient(mode, grad_of(lambda t: sf.nn.l2_normalize(t, axis=0), w), x, tol=1e-5)


def test_l2_loss_and_sigmoid_xent(mode):
    x = np.array([[1.0, -2.0], [0.5, 3.0]])
    z = np.array([[1.0, 0.0], [0.3, 1.0]])
    l2, sx = mode.evaluate([sf.nn.l2_loss(x), sf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x)])
    np.testing.assert_allclose(l2, 0.5 * (x ** 2).sum())
    p = 1 / (1 + np.exp(-x))
    np.testing.assert_allclose(sx, -z * np.log(p) - (1 - z) * np.log(1 - p), rtol=1e-12)


def test_sigmoid_xent_gradient(mode):
    z = np.array([[1.0, 0.0], [0.3, 1.0]])
    check_gradient(mode, lambda t: sf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=t),
                   np.array([[1.2, -2.0], [0.5, -0.3]]))


# -- faces
def test_nn_namespace():
    from segflow.ops import embedding_ops
    for n in ("relu", "relu6", "softmax", "log_softmax", "sparse_softmax_cross_entropy_with_logits",
              "l2_normalize", "sigmoid", "bias_add"):
        assert getattr(sf.nn, n) is getattr(nn_ops, n)
    assert sf.nn.sigmoid is sf.sigmoid
    assert sf.nn.embedding_lookup is embedding_ops.embedding_lookup_v2
    assert sf.compat.v1.nn.embedding_lookup is embedding_ops.embedding_lookup

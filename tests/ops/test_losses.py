"""compat.v1.losses: each loss against a NumPy reference under every reduction and weights shape,
gradients against numerical Jacobians, the weights rules and errors, and the loss collections."""
import numpy as np
import pytest

import segflow as sf
from segflow.ops import gradient_checker_v2
from segflow.ops.losses import losses as losses_face
from tests.gradcheck import check_gradients

L = sf.compat.v1.losses
R = L.Reduction
RNG = np.random.default_rng(3)
N, C = 4, 3
LABELS01 = (RNG.uniform(size=(N, C)) > 0.5).astype(np.float32)
PRED01 = RNG.uniform(0.05, 0.95, size=(N, C)).astype(np.float32)
LOGITS = RNG.normal(size=(N, C)).astype(np.float32)
ONEHOT = np.eye(C, dtype=np.float32)[[0, 2, 1, 2]]


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _log_softmax(x):
    s = x - x.max(-1, keepdims=True)
    return s - np.log(np.exp(s).sum(-1, keepdims=True))


def _unit(x):
    return x / np.linalg.norm(x, axis=1, keepdims=True)


# name -> (call(labels, predictions, **kw), labels, predictions, elementwise NumPy reference)
CASES = {
    "mean_squared_error": (L.mean_squared_error, LABELS01, PRED01, lambda y, p: (p - y) ** 2),
    "absolute_difference": (L.absolute_difference, LABELS01, PRED01, lambda y, p: np.abs(p - y)),
    "log_loss": (L.log_loss, LABELS01, PRED01,
                 lambda y, p: -y * np.log(p + 1e-7) - (1 - y) * np.log(1 - p + 1e-7)),
    "huber_loss": (lambda y, p, **kw: L.huber_loss(y, p, delta=0.5, **kw), LABELS01, 3 * PRED01,
                   lambda y, p: np.where(np.abs(p - y) <= 0.5, 0.5 * (p - y) ** 2, 0.5 * (np.abs(p - y) - 0.25))),
    "hinge_loss": (L.hinge_loss, LABELS01, LOGITS, lambda y, z: np.maximum(0, 1 - (2 * y - 1) * z)),
    "sigmoid_cross_entropy": (lambda y, z, **kw: L.sigmoid_cross_entropy(y, z, label_smoothing=0.2, **kw),
                              LABELS01, LOGITS,
                              lambda y, z: -(y * 0.8 + 0.1) * np.log(_sigmoid(z))
                              - (1 - (y * 0.8 + 0.1)) * np.log(1 - _sigmoid(z))),
    "softmax_cross_entropy": (lambda y, z, **kw: L.softmax_cross_entropy(y, z, label_smoothing=0.3, **kw),
                              ONEHOT, LOGITS,
                              lambda y, z: -((y * 0.7 + 0.1) * _log_softmax(z)).sum(-1)),
    "sparse_softmax_cross_entropy": (L.sparse_softmax_cross_entropy, ONEHOT.argmax(1), LOGITS,
                                     lambda y, z: -_log_softmax(z)[np.arange(N), y.astype(int)]),
    "cosine_distance": (lambda y, p, **kw: L.cosine_distance(y, p, axis=1, **kw), _unit(PRED01[::-1].copy()),
                        _unit(PRED01), lambda y, p: 1 - (y * p).sum(1, keepdims=True)),
}


def ref_weighted(losses, weights, reduction):
    w = np.broadcast_to(np.asarray(weights, np.float64), losses.shape)
    weighted = losses * w
    if reduction == R.NONE:
        return weighted
    total = weighted.sum()
    div = {R.SUM: 1.0, R.MEAN: w.sum(), R.SUM_OVER_BATCH_SIZE: losses.size,
           R.SUM_BY_NONZERO_WEIGHTS: np.count_nonzero(w)}[reduction]
    return total / div if div else 0.0


PER_ROW = ("softmax_cross_entropy", "sparse_softmax_cross_entropy", "cosine_distance")


def _weights_for(name, kind):
    per_element = name not in PER_ROW
    if kind == "scalar":
        return 2.0
    if kind == "zero":
        return 0.0
    if kind == "rows":
        return np.array([[1.0], [0.0], [2.0], [0.5]], np.float32) if per_element or name == "cosine_distance" \
            else np.array([1.0, 0.0, 2.0, 0.5], np.float32)
    return (RNG.uniform(size=(N, C)) * (RNG.uniform(size=(N, C)) > 0.3)).astype(np.float32)


@pytest.mark.parametrize("name,weights", [(n, k) for n in sorted(CASES) for k in ("scalar", "zero", "rows", "full")
                                          if not (k == "full" and n in PER_ROW)])
@pytest.mark.parametrize("reduction", [R.NONE, R.SUM, R.MEAN, R.SUM_OVER_BATCH_SIZE, R.SUM_BY_NONZERO_WEIGHTS])
def test_loss_values(mode, name, weights, reduction):
    fn, labels, preds, ref = CASES[name]
    w = _weights_for(name, weights)
    elementwise = ref(labels.astype(np.float64), preds.astype(np.float64))
    w_ref = w if np.ndim(w) != 1 else w.reshape(-1)
    got = mode.evaluate(fn(labels, preds, weights=w, reduction=reduction))
    want = ref_weighted(elementwise, w_ref, reduction)
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


def test_default_reduction_and_dtypes(mode):
    assert R.all() == ("none", "weighted_sum", "weighted_mean", "weighted_sum_over_batch_size",
                       "weighted_sum_by_nonzero_weights", "weighted_sum_by_nonzero_weights")
    w = np.array([[1.0], [0.0], [2.0], [0.0]])
    got = mode.evaluate(L.mean_squared_error(LABELS01, PRED01, weights=w))
    want = ((PRED01 - LABELS01) ** 2 * w).sum() / 6
    np.testing.assert_allclose(got, want, rtol=1e-5)
    # the regression losses compute in float32; compute_weighted_loss returns the losses' dtype
    assert L.mean_squared_error(np.array([1.0, 2.0]), np.array([1.0, 4.0])).dtype == sf.float32
    assert mode.evaluate(L.mean_squared_error(np.array([1, 2]), np.array([1, 4]))) == 2.0
    out = L.compute_weighted_loss(np.array([1.0, 2.0]), weights=[0.5, 0.0])
    assert out.dtype == sf.float64 and mode.evaluate(out) == 0.5
    assert mode.evaluate(L.compute_weighted_loss(np.array([1, 2]))) == 1     # 1.5, cast back to int


def test_mean_pairwise_squared_error(mode):
    labels = RNG.normal(size=(3, 4)).astype(np.float32)
    preds = RNG.normal(size=(3, 4)).astype(np.float32)
    w = np.array([1.0, 0.0, 2.0], np.float32).reshape(3, 1)
    d = (preds - labels).astype(np.float64)
    per_row = np.array([np.mean([(r[i] - r[j]) ** 2 for i in range(4) for j in range(4) if i != j]) for r in d])
    np.testing.assert_allclose(mode.evaluate(L.mean_pairwise_squared_error(labels, preds, weights=w)),
                               (per_row * w[:, 0]).sum(), rtol=1e-5)
    np.testing.assert_allclose(mode.evaluate(L.mean_pairwise_squared_error(labels, preds)), per_row.sum(), rtol=1e-5)


@pytest.mark.parametrize("name", ["mean_squared_error", "log_loss", "huber_loss", "sigmoid_cross_entropy",
                                  "softmax_cross_entropy", "sparse_softmax_cross_entropy", "cosine_distance"])
def test_loss_gradients(mode, name):
    fn, labels, preds, _ = CASES[name]
    w = np.array([[1.0], [0.0], [2.0], [0.5]], np.float32)
    if name in ("softmax_cross_entropy", "sparse_softmax_cross_entropy"):
        w = w.reshape(-1)
    f = lambda p: fn(labels, p, weights=w)  # noqa: E731
    if mode.eager:     # float32 math: gradcheck's bit-for-bit comparison with sf.function does not apply
        theory, numeric = gradient_checker_v2.compute_gradient(f, [preds], delta=1e-3)
        assert np.any(theory[0] != 0)
        np.testing.assert_allclose(theory[0], numeric[0], rtol=2e-3, atol=2e-3)
    else:
        check_gradients(mode, f, [preds], tol=2e-3, delta=1e-3)


def test_weights_rules_and_errors():
    with pytest.raises(ValueError, match=r"weights can not be broadcast to values. values.rank=2. weights.rank=1"):
        L.mean_squared_error(LABELS01, PRED01, weights=np.ones(N))
    with pytest.raises(ValueError, match="Mismatch at dim 1"):
        L.mean_squared_error(LABELS01, PRED01, weights=np.ones((N, 2)))
    with pytest.raises(ValueError, match="Invalid Reduction Key foo"):
        L.mean_squared_error(LABELS01, PRED01, reduction="foo")
    with pytest.raises(ValueError, match="Argument `labels` must not be None"):
        L.mean_squared_error(None, PRED01)
    with pytest.raises(ValueError, match="Argument `onehot_labels` must not be None"):
        L.softmax_cross_entropy(None, LOGITS)
    with pytest.raises(ValueError, match="incompatible"):
        L.mean_squared_error(LABELS01, PRED01[:2])
    with pytest.raises(ValueError, match="You must specify argument `axis`"):
        L.cosine_distance(LABELS01, PRED01)
    # sparse labels and weights of shape [N, 1] are squeezed to [N]
    a = L.sparse_softmax_cross_entropy(ONEHOT.argmax(1)[:, None], LOGITS, weights=np.array([[1.], [0.], [2.], [1.]]))
    b = L.sparse_softmax_cross_entropy(ONEHOT.argmax(1), LOGITS, weights=np.array([1., 0., 2., 1.]))
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-7)


def test_collections_and_total_loss():
    assert L.mean_squared_error is losses_face.mean_squared_error and L.Reduction is losses_face.Reduction
    L.mean_squared_error(LABELS01, PRED01)          # eagerly: computed, not collected
    assert L.get_losses() == []
    with sf.Graph().as_default():
        with sf.compat.v1.variable_scope("s"):
            c = sf.compat.v1.get_variable("c", initializer=3.0, regularizer=lambda t: 0.5 * t * t)
        assert L.get_regularization_loss().shape.rank == 0
        mse = L.mean_squared_error([[1.], [2.]], [[2.], [4.]], weights=[[1.], [0.]])
        l1 = L.absolute_difference([1., 2.], [2., 5.], scope="abs")
        L.absolute_difference([1.], [3.], loss_collection=None)
        L.add_loss(sf.constant(0.25))
        assert L.get_losses()[:2] == [mse, l1] and len(L.get_losses()) == 3
        assert [t.name for t in L.get_losses(scope="abs")] == [l1.name]
        assert mse.name == "mean_squared_error/value:0"
        assert len(L.get_regularization_losses()) == 1
        reg = L.get_regularization_loss()
        total = L.get_total_loss()
        no_reg = L.get_total_loss(add_regularization_losses=False)
        assert reg.name.startswith("total_regularization_loss") and total.name.startswith("total_loss")
        with sf.compat.v1.Session() as sess:
            sess.run(c.initializer)
            np.testing.assert_allclose(sess.run([reg, total, no_reg]), [4.5, 4.5 + 1.0 + 2.0 + 0.25, 3.25])
    with sf.Graph().as_default():
        with pytest.raises(ValueError, match="No losses"):
            L.get_total_loss()
        with sf.compat.v1.Session() as sess:
            assert sess.run(L.get_regularization_loss()) == 0.0

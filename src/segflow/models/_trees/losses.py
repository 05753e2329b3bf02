"""Losses of the boosted trees: gradients and hessians with respect to the raw scores.

Raw scores are [K, N] (K = 1 for regression and binary classification). Each loss gives the
constant baseline score, per-row gradients and hessians, the mean loss and the link.
"""
import numpy as np

__all__ = ["LOSSES", "SquaredError", "Logistic", "Softmax"]

_EPS = 1e-16


def _wmean(v, w):
    return float(np.average(v, weights=w)) if w is not None else float(np.mean(v))


class SquaredError:
    """(y - raw)^2 / 2: gradient raw - y, hessian 1; baseline the (weighted) mean."""
    name = "squared_error"

    @staticmethod
    def baseline(y, w, k):
        return np.array([_wmean(y, w)])

    @staticmethod
    def grad_hess(y, raw):
        return raw - y[None, :], np.ones_like(raw)

    @staticmethod
    def loss(y, raw, w):
        return 0.5 * _wmean((raw[0] - y) ** 2, w)


def _sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))  # no overflow for large |z|


class Logistic:
    """Binary log-loss with raw = log-odds: gradient p - y, hessian p (1 - p)."""
    name = "log_loss"

    @staticmethod
    def baseline(y, w, k):
        p = np.clip(_wmean(y, w), 1e-12, 1 - 1e-12)
        return np.array([np.log(p / (1 - p))])

    @staticmethod
    def grad_hess(y, raw):
        p = _sigmoid(raw)
        return p - y[None, :], np.maximum(p * (1 - p), _EPS)

    @staticmethod
    def loss(y, raw, w):
        z = raw[0]
        # log(1 + e^z) - y z, computed stably
        return _wmean(np.logaddexp(0.0, z) - y * z, w)

    @staticmethod
    def proba(raw):
        p = _sigmoid(raw[0])
        return np.stack([1 - p, p], axis=1)


def _softmax(raw):
    z = raw - raw.max(axis=0, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=0, keepdims=True)


class Softmax:
    """Multiclass log-loss, one raw score per class: gradient p_k - [y = k], hessian p_k (1 - p_k)
    (the diagonal of the full hessian, as LightGBM and scikit-learn use)."""
    name = "log_loss"

    @staticmethod
    def baseline(y, w, k):
        counts = np.bincount(y.astype(np.int64), weights=w, minlength=k).astype(np.float64)
        p = np.clip(counts / counts.sum(), 1e-12, 1.0)
        logp = np.log(p)
        return logp - logp.mean()

    @staticmethod
    def grad_hess(y, raw):
        p = _softmax(raw)
        onehot = np.zeros_like(p)
        onehot[y.astype(np.int64), np.arange(p.shape[1])] = 1.0
        return p - onehot, np.maximum(p * (1 - p), _EPS)

    @staticmethod
    def loss(y, raw, w):
        z = raw - raw.max(axis=0, keepdims=True)
        lse = np.log(np.exp(z).sum(axis=0))
        return _wmean(lse - z[y.astype(np.int64), np.arange(raw.shape[1])], w)

    @staticmethod
    def proba(raw):
        return _softmax(raw).T


LOSSES = {"squared_error": SquaredError, "log_loss_binary": Logistic, "log_loss_multiclass": Softmax}

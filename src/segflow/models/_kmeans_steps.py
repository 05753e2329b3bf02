"""The array steps of segflow.models.KMeans, each made of segflow ops run eagerly on NumPy arrays
(borrowed, not copied): squared distances by matmul with the ||x||^2 expansion, assignment by
argmin, center sums and counts by unsorted_segment_sum, and the seedings (k-means++ with greedy
local trials, as scikit-learn's; random rows).

    labels, d = assign(X, centers)                     # nearest center, ||c||^2 - 2 x.c per row
    sums, counts = update(X, labels, k, weights)       # per-cluster sums of rows and weights
    step = ChunkedStep(X, k, weights, n_threads)       # both, fused over row blocks of X
    labels, d, sums, counts = step(centers)

ChunkedStep works on blocks of rows that fit in cache, each block with single-threaded BLAS and
kernels, blocks spread over `n_threads` Python threads (BLAS and the Numba kernels release the
GIL); the blocks' sums are added in block order, so results do not depend on the thread count.
"""
import contextlib
import os
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from segflow._core.apply import apply_op
from segflow._core.mode import eager_mode, executing_eagerly
from segflow._ops import reduce as ro
from segflow._ops.segment import unsorted_segment_sum

__all__ = ["assign", "update", "relocate_empty", "kmeans_plus_plus", "random_rows", "row_norms_sq",
           "pairwise_sq", "ChunkedStep", "single_threaded"]

try:  # threadpoolctl (a scikit-learn dependency) limits BLAS threads; without it BLAS keeps its own.
    from threadpoolctl import ThreadpoolController
except ImportError:  # pragma: no cover
    ThreadpoolController = None

_controller = []  # the one ThreadpoolController, made at first use (it scans the loaded libraries)

CHUNK_ROWS = 8192


def row_norms_sq(X):
    """||x_i||^2 for every row."""
    return np.einsum("ij,ij->i", X, X)


def matmul_t(a, b):
    """a @ b.T for 2-D NumPy arrays of one dtype: the MatMul op through apply_op, which borrows
    NumPy inputs (sf.linalg.matmul converts, and so copies, them first)."""
    return apply_op("MatMul", a, b, transpose_b=True).numpy()


def pairwise_sq(X, xsq, C):
    """[n, k] squared distances ||x - c||^2 (clipped at 0) from the expansion."""
    d = matmul_t(X, C * -2.0)
    d += xsq[:, None]
    d += row_norms_sq(C)[None, :]
    return np.maximum(d, 0, out=d)


def _to_rows_sq(X, xsq, rows):
    """[len(rows), n] squared distances from rows X[rows] to every row of X. (A few rows times X.T
    is a faster product than X times a few rows transposed.)"""
    d = matmul_t(X[rows] * -2.0, X)
    d += xsq[None, :]
    d += xsq[rows][:, None]
    return np.maximum(d, 0, out=d)


def assign(X, centers):
    """(labels int64 [n], partial [n]): each row's nearest center and ||c||^2 - 2 x.c for it (add
    ||x||^2 for the squared distance)."""
    # -2 folds into the small matrix, so the [n, k] product needs one more pass only (the + ||c||^2).
    d = matmul_t(X, centers * -2.0)
    d += row_norms_sq(centers)[None, :]
    labels = ro.argmin(d, axis=1).numpy()
    return labels, np.take_along_axis(d, labels[:, None], 1)[:, 0]


def update(X, labels, k, weights=None):
    """(sums [k, d], counts [k]): the (weighted) sums of each cluster's rows and its (weighted) size."""
    if weights is None:
        sums = unsorted_segment_sum(X, labels, k).numpy()
        counts = unsorted_segment_sum(np.ones(X.shape[0], X.dtype), labels, k).numpy()
    else:
        sums = unsorted_segment_sum(X * weights[:, None], labels, k).numpy()
        counts = unsorted_segment_sum(weights, labels, k).numpy()
    return sums, counts


def relocate_empty(X, xsq, labels, partial, sums, counts, weights):
    """Gives every empty cluster the row farthest from its center (scikit-learn's rule), moving
    that row's weight out of its old cluster. Changes sums and counts in place."""
    empty = np.flatnonzero(counts == 0)
    if empty.size == 0:
        return
    dist = partial + xsq
    far = np.argsort(dist, kind="stable")[::-1][:empty.size]
    for cluster, row in zip(empty, far):
        w = 1.0 if weights is None else weights[row]
        old = labels[row]
        sums[old] -= w * X[row]
        counts[old] -= w
        sums[cluster] = w * X[row]
        counts[cluster] = w


def random_rows(X, k, rng, weights=None):
    """k distinct rows of X, with probability proportional to their weights."""
    p = None if weights is None else weights / weights.sum()
    return X[rng.choice(X.shape[0], size=k, replace=False, p=p)].copy()


def kmeans_plus_plus(X, xsq, k, rng, weights=None, n_local_trials=None):
    """k rows of X by k-means++: each next center is the best (lowest total potential) of
    `n_local_trials` (default 2 + log k) candidates drawn proportionally to the weighted squared
    distance to the nearest center chosen so far."""
    n = X.shape[0]
    if n_local_trials is None:
        n_local_trials = 2 + int(np.log(k))
    w = np.ones(n, X.dtype) if weights is None else weights
    first = rng.choice(n, p=w / w.sum()) if weights is not None else rng.randint(n)
    centers = np.empty((k, X.shape[1]), X.dtype)
    centers[0] = X[first]
    closest = _to_rows_sq(X, xsq, np.array([first]))[0]
    potential = float(closest @ w)
    for c in range(1, k):
        cdf = np.cumsum(closest * w if weights is not None else closest, dtype=np.float64)
        draws = rng.uniform(size=n_local_trials) * potential
        candidates = np.minimum(np.searchsorted(cdf, draws), n - 1)
        dist = _to_rows_sq(X, xsq, candidates)      # [trials, n]
        np.minimum(closest[None, :], dist, out=dist)
        pots = dist @ w
        best = int(np.argmin(pots))
        potential, closest = float(pots[best]), dist[best]
        centers[c] = X[candidates[best]]
    return centers


@contextlib.contextmanager
def single_threaded():
    """BLAS (when threadpoolctl is installed) and this thread's Numba kernels on one thread;
    restored on exit."""
    saved = numba.get_num_threads()
    numba.set_num_threads(1)
    if ThreadpoolController is not None:
        if not _controller:
            _controller.append(ThreadpoolController())
        limits = _controller[0].limit(limits=1, user_api="blas")
    else:
        limits = contextlib.nullcontext()
    try:
        with limits:
            yield
    finally:
        numba.set_num_threads(saved)


class ChunkedStep:
    """One assignment (and optionally update) pass over X in row blocks:
    `step(centers, update=True, partial=True) -> (labels, partial, sums, counts)`; sums/counts
    are None without update, partial (||c||^2 - 2 x.c of the nearest c) None without partial.
    Call it inside `single_threaded()`."""

    def __init__(self, X, k, weights=None, n_threads=None, chunk_rows=CHUNK_ROWS):
        self.X, self.k, self.weights = X, k, weights
        n = X.shape[0]
        self.slices = [slice(i, min(i + chunk_rows, n)) for i in range(0, n, chunk_rows)] or [slice(0, 0)]
        if n_threads is None:
            n_threads = os.cpu_count() or 1
        self.n_threads = max(1, min(int(n_threads), len(self.slices)))
        self.ones = np.ones(min(chunk_rows, n), X.dtype)
        self.labels = np.empty(n, np.int64)
        self.partial = np.empty(n, X.dtype)
        self._pool = None

    def close(self):
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def _block(self, sl, centers_m2, csq, update, partial):
        if executing_eagerly():  # entering eager_mode costs more than a small block's ops
            return self._block_ops(sl, centers_m2, csq, update, partial)
        with eager_mode():
            return self._block_ops(sl, centers_m2, csq, update, partial)

    def _block_ops(self, sl, centers_m2, csq, update, partial):
        if self.n_threads > 1:
            numba.set_num_threads(1)  # per thread in Numba: this worker's kernels run serially
        Xc = self.X[sl]
        d = matmul_t(Xc, centers_m2)
        d += csq
        labels = ro.argmin(d, axis=1).numpy()
        self.labels[sl] = labels
        if partial:
            self.partial[sl] = np.take_along_axis(d, labels[:, None], 1)[:, 0]
        if not update:
            return None
        if self.weights is None:
            return (unsorted_segment_sum(Xc, labels, self.k).numpy(),
                    unsorted_segment_sum(self.ones[:Xc.shape[0]], labels, self.k).numpy())
        w = self.weights[sl]
        return (unsorted_segment_sum(Xc * w[:, None], labels, self.k).numpy(),
                unsorted_segment_sum(w, labels, self.k).numpy())

    def __call__(self, centers, update=True, partial=True):
        """(labels, partial or None, sums or None, counts or None) for `centers`."""
        centers_m2 = centers * -2.0  # -2 folds into the small matrix
        csq = row_norms_sq(centers)[None, :]
        if self.n_threads > 1:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.n_threads)
            parts = list(self._pool.map(lambda sl: self._block(sl, centers_m2, csq, update, partial),
                                        self.slices))
        else:
            parts = [self._block(sl, centers_m2, csq, update, partial) for sl in self.slices]
        d = self.partial.copy() if partial else None
        if not update:
            return self.labels.copy(), d, None, None
        sums = np.zeros((self.k, self.X.shape[1]), np.float64)
        counts = np.zeros(self.k, np.float64)
        for s, c in parts:  # block order: the same bits for any thread count
            sums += s
            counts += c
        return self.labels.copy(), d, sums, counts

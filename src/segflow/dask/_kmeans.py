"""segflow.models.KMeans.fit on a dask array: Lloyd's iterations with the statistics reduced on the
workers; only the centers travel.

    km = KMeans(n_clusters=16, random_state=0).fit(X)      # X: a dask array [n, d], rows chunked

X (l2-normalized first for the cosine metric) is persisted once. Each iteration sends the k
centers to one task per row chunk; the task runs the in-memory estimator's step on its chunk
(_kmeans_steps.ChunkedStep: distances by matmul, argmin, unsorted_segment_sum) with the kernels and
BLAS on its share of the worker's threads, keeps its labels on the worker, and returns the chunk's
per-cluster sums, counts, inertia and the number of labels that changed; those small results are
added in a tree of tasks (`split_every` per task) and only their total reaches the client. An empty
cluster takes the row farthest from its center (each chunk offers its farthest rows), as in memory.

The rules are the in-memory estimator's (seeds, tol as a fraction of the mean feature variance,
strict convergence when no label changes, n_init runs), so with the same initial centers the
result agrees with the in-memory fit within float tolerance (sums are added in another order).
Initialization: an array or a callable as in memory; "k-means++" and "random" run on a uniform
sample of `sample_rows(n, k)` rows drawn on the client (all rows when n is at most that, in which
case the centers are the in-memory fit's exactly). Deliberate differences: `labels_` is a lazy dask
array (int32, chunked like X, persisted) rather than a NumPy array, and mini-batch k-means is not
offered on dask arrays (ValueError). `predict`/`transform` of a dask array are lazy dask arrays.
"""
import operator

import numpy as np

from segflow._core.mode import eager_mode
from segflow.dask._threads import run_task
from segflow.models import _kmeans_steps as steps

__all__ = ["is_dask", "fit", "predict", "transform", "sample_rows"]

SPLIT_EVERY = 8
SAMPLE_ROWS = 1 << 16     # k-means++ / random initialization draws from at most this many rows (or 64 k)


def is_dask(x):
    """True for a dask array (duck-typed: dask is never imported here)."""
    return hasattr(x, "dask") and hasattr(x, "chunks") and hasattr(x, "to_delayed")


def sample_rows(n, k):
    """The rows k-means++ / random initialization draws from: all of them up to SAMPLE_ROWS (or 64 k)."""
    return min(n, max(SAMPLE_ROWS, 64 * k))


# ----------------------------------------------------------------------------------- tasks

def _step(X, w, centers, prev, k, cosine, update):
    """One chunk's assignment (and update): (labels, partial, (sums, counts, inertia, changed))."""
    with eager_mode():
        step = steps.ChunkedStep(X, k, w, n_threads=1)
        labels, partial, sums, counts = step(centers, update=update)
    if cosine:
        per_row = 1.0 - (steps.row_norms_sq(centers)[labels] - partial) / 2.0
    else:
        per_row = np.maximum(partial + steps.row_norms_sq(X), 0)
    inertia = float(per_row.sum() if w is None else per_row @ w)
    changed = -1 if prev is None else int(np.count_nonzero(labels != prev))
    return labels, partial, (sums, counts, inertia, changed)


def _add_stats(*parts):
    """The total of several chunks' (sums, counts, inertia, changed), in the order given."""
    sums, counts, inertia, changed = parts[0]
    sums, counts = sums.copy() if sums is not None else None, counts.copy() if counts is not None else None
    for s, c, i, ch in parts[1:]:
        if sums is not None:
            sums += s
            counts += c
        inertia += i
        changed = -1 if changed < 0 or ch < 0 else changed + ch
    return sums, counts, inertia, changed


def _farthest(X, w, result, row0, m):
    """The m rows of a chunk farthest from their centers: (dist, global row, row, label, weight)."""
    labels, partial, _ = result
    dist = partial + steps.row_norms_sq(X)
    order = np.argsort(dist, kind="stable")[::-1][:m]
    weight = np.ones(order.size) if w is None else w[order]
    return dist[order], order + row0, X[order], labels[order], weight


def _stats_of(results, dask):
    """Adds the chunks' statistics in a tree of tasks and fetches the total."""
    level = [dask.delayed(operator.getitem, pure=True)(r, 2) for r in results]
    while len(level) > 1:
        level = [dask.delayed(_add_stats, pure=True)(*level[i:i + SPLIT_EVERY])
                 for i in range(0, len(level), SPLIT_EVERY)]
    return dask.compute(level[0])[0]


def _run_steps(blocks, weights, centers, prev, k, cosine, update, dask):
    tasks = [dask.delayed(run_task, pure=True)(_step, xb, wb, centers, pb, k, cosine, update, blas=True)
             for xb, wb, pb in zip(blocks, weights, prev)]
    return list(dask.persist(*tasks))


# ----------------------------------------------------------------------------------- fit

def _as_rows(X, sample_weight):
    import dask.array as da

    if X.ndim != 2:
        raise ValueError(f"Expected 2D array, got array of shape {X.shape}")
    if np.dtype(X.dtype) not in (np.float32, np.float64):
        X = X.astype(np.float64)
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    w = None
    if sample_weight is not None:
        w = sample_weight if is_dask(sample_weight) else da.from_array(
            np.broadcast_to(np.asarray(sample_weight, X.dtype), (X.shape[0],)), chunks=(X.chunks[0],))
        w = w.astype(X.dtype)
        if w.shape != (X.shape[0],):
            raise ValueError(f"sample_weight.shape == {w.shape}, expected {(X.shape[0],)}!")
        if w.chunks[0] != X.chunks[0]:
            w = w.rechunk((X.chunks[0],))
    return X, w


def _normalize_rows(b):
    return b / np.maximum(np.sqrt(steps.row_norms_sq(b)), 1e-12)[:, None]


def _summary(Xw, w, dask, da):
    """(finite, sum of columns, sum of squared norms, all weights 1, any weight negative)."""
    parts = [da.isfinite(Xw).all(), Xw.sum(axis=0, dtype=np.float64), (Xw * Xw).sum(dtype=np.float64)]
    if w is not None:
        parts += [(w == 1).all(), (w < 0).any()]
    out = dask.compute(*parts)
    return out + ((True, False) if w is None else ())


def _tol(est, Xw, n, colsum, sqsum, da):
    """tol * mean feature variance (the in-memory estimator's _mean_variance, from the summary)."""
    if not est.tol:
        return 0.0
    mean = colsum / n
    mean_sq = float(mean @ mean)
    var = (float(sqsum) / n - mean_sq) / Xw.shape[1]
    if var <= 1e-6 * mean_sq / Xw.shape[1]:
        var = float(Xw.var(axis=0).mean().compute())
    return var * est.tol


def _init_centers(est, X, Xw, w, n, rng):
    """The estimator's own initialization (KMeans._init_centers), seeded from a sample of at most
    sample_rows(n, k) rows fetched from the workers (all of them when n is that small)."""
    if not isinstance(est.init, str):       # given centers or a callable: as in memory (dask init computed)
        return est._init_centers(X, None, None, rng, None)
    m = sample_rows(n, est.n_clusters)
    if m >= n:
        Xs = np.ascontiguousarray(Xw.compute())
        ws = None if w is None else w.compute()
    else:
        rows = np.sort(rng.choice(n, size=m, replace=False))
        Xs = np.ascontiguousarray(Xw[rows].compute())
        ws = None if w is None else w[rows].compute()
    return est._init_centers(X, Xs, steps.row_norms_sq(Xs), rng, ws)


def _relocate(blocks, weights, results, starts, sums, counts, dask):
    """The in-memory rule for empty clusters: each takes the farthest row (ties: the later row)."""
    empty = np.flatnonzero(counts == 0)
    cand = dask.compute(*[dask.delayed(_farthest, pure=True)(xb, wb, r, int(r0), empty.size)
                          for xb, wb, r, r0 in zip(blocks, weights, results, starts)])
    dist = np.concatenate([c[0] for c in cand])
    index = np.concatenate([c[1] for c in cand])
    rows = np.concatenate([c[2] for c in cand])
    labels = np.concatenate([c[3] for c in cand])
    wts = np.concatenate([c[4] for c in cand])
    pick = np.lexsort((index, dist))[::-1][:empty.size]
    for cluster, j in zip(empty, pick):
        sums[labels[j]] -= wts[j] * rows[j]
        counts[labels[j]] -= wts[j]
        sums[cluster] = wts[j] * rows[j]
        counts[cluster] = wts[j]


def _lloyd(est, blocks, weights, starts, centers, tol, dtype, dask):
    k, cosine = est.n_clusters, est.distance_metric == "cosine"
    prev = [None] * len(blocks)
    strict, n_iter, results = False, 0, None
    for n_iter in range(1, est.max_iter + 1):
        results = _run_steps(blocks, weights, centers, prev, k, cosine, True, dask)
        sums, counts, inertia, changed = _stats_of(results, dask)
        if (counts == 0).any():
            _relocate(blocks, weights, results, starts, sums, counts, dask)
        new = sums / np.maximum(counts, np.finfo(dtype).tiny)[:, None]
        if cosine:
            new = est._normalize(new)
        new = new.astype(dtype, copy=False)
        shift = float(((new - centers) ** 2).sum())
        if est.verbose:
            print(f"Iteration {n_iter - 1}, inertia {inertia}.")
        centers = new
        if changed == 0:
            strict = True
            break
        if shift <= tol:
            break
        prev = [dask.delayed(operator.getitem, pure=True)(r, 0) for r in results]
    if not strict:
        results = _run_steps(blocks, weights, centers, [None] * len(blocks), k, cosine, False, dask)
        inertia = _stats_of(results, dask)[2]
    return centers, results, inertia, n_iter


def fit(est, X, sample_weight, rng):
    """KMeans.fit for a dask array X [n, d] (est: the estimator, rng: its RandomState); returns est."""
    import dask
    import dask.array as da

    if est.use_mini_batch:
        raise ValueError("use_mini_batch=True is not supported for dask arrays; use Lloyd's iterations")
    X, w = _as_rows(X, sample_weight)
    n, d = int(X.shape[0]), int(X.shape[1])
    n_init = est._check_params(n)
    est.n_features_in_ = d
    Xw = X.map_blocks(_normalize_rows, dtype=X.dtype) if est.distance_metric == "cosine" else X
    Xw = Xw.persist()
    finite, colsum, sqsum, unit, negative = _summary(Xw, w, dask, da)
    if not finite:
        raise ValueError("Input contains NaN or infinity.")
    if negative:
        raise ValueError("sample_weight must not be negative")
    if unit:
        w = None
    elif w is not None:
        w = w.persist()
    tol = _tol(est, Xw, n, colsum, sqsum, da)
    blocks = list(Xw.to_delayed().ravel())
    weights = [None] * len(blocks) if w is None else list(w.to_delayed().ravel())
    starts = np.cumsum((0,) + Xw.chunks[0][:-1])
    seeds = rng.randint(np.iinfo(np.int32).max, size=n_init)
    best = None
    for seed in seeds:
        run_rng = np.random.RandomState(seed)
        centers = _init_centers(est, X, Xw, w, n, run_rng)
        if est.verbose:
            print("Initialization complete")
        result = _lloyd(est, blocks, weights, starts, centers, tol, np.dtype(X.dtype), dask)
        if best is None or result[2] < best[2]:
            best = result
    centers, results, inertia, n_iter = best
    est.cluster_centers_ = centers
    est.labels_ = da.concatenate([
        da.from_delayed(dask.delayed(operator.getitem, pure=True)(r, 0), shape=(c,), dtype=np.int64)
        for r, c in zip(results, Xw.chunks[0])]).astype(np.int32).persist()
    est.inertia_ = float(inertia)
    est.n_iter_ = int(n_iter)
    return est


def _check_new(est, X):
    est._check_fitted()
    if X.ndim != 2 or X.shape[1] != est.n_features_in_:
        raise ValueError(f"X has shape {X.shape}, but KMeans is expecting {est.n_features_in_} features as input.")
    if np.dtype(X.dtype) not in (np.float32, np.float64):
        X = X.astype(np.float64)
    return X.rechunk({1: -1}) if len(X.chunks[1]) > 1 else X


def _predict_block(b, est):
    return run_task(est.predict, b, blas=True)


def _transform_block(b, est):
    return run_task(est.transform, b, blas=True)


def predict(est, X):
    """The lazy int32 labels of a dask array X (each chunk by the in-memory predict)."""
    X = _check_new(est, X)
    return X.map_blocks(_predict_block, est, dtype=np.int32, drop_axis=1)


def transform(est, X):
    """The lazy [n, n_clusters] distances of a dask array X (each chunk by the in-memory transform)."""
    X = _check_new(est, X)
    return X.map_blocks(_transform_block, est, dtype=X.dtype, chunks=(X.chunks[0], (est.n_clusters,)))

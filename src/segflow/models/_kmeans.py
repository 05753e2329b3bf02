"""segflow.models.KMeans: k-means with scikit-learn's estimator API, run on segflow's ops.

    from segflow.models import KMeans
    km = KMeans(n_clusters=16, random_state=0).fit(X)      # X: NumPy array or segflow tensor
    km.cluster_centers_, km.labels_, km.inertia_, km.n_iter_
    km.predict(X_new); km.transform(X_new); km.score(X_new)  # score = -inertia

Each Lloyd iteration is eager segflow ops on the NumPy data (borrowed, not copied): one matmul
for the distances (the ||x||^2 expansion, as scikit-learn computes them), argmin, and
unsorted_segment_sum of the rows and of ones for the new centers, over row blocks that fit in
cache (_kmeans_steps.ChunkedStep). Eager ops on NumPy arrays were faster than a Session running
clustering_ops.KMeans's training_op (one step on 2e5 x 32 blobs: benchmarks/RESULTS_models.md),
so the estimator runs eagerly, even inside a graph context. Empty clusters take the row farthest from its center, as in
scikit-learn (TF's clustering_ops.KMeans instead zeroes them). scikit-learn is optional: with it
the estimator is a BaseEstimator (get_params, clone, check_estimator); without it the same
methods work on NumPy arrays.
"""
import numbers
import sys

import numpy as np

from segflow._core.mode import eager_mode
from segflow.dask import _kmeans as dask_kmeans  # dask arrays (scale-out); imports dask only when used
from segflow.models import _kmeans_steps as steps

try:  # scikit-learn is optional: it supplies the estimator base classes and input validation.
    from sklearn.base import BaseEstimator, ClusterMixin, TransformerMixin
    from sklearn.utils.validation import check_is_fitted, validate_data, _check_sample_weight
except ImportError:  # pragma: no cover - exercised only without scikit-learn
    BaseEstimator = ClusterMixin = TransformerMixin = object
    validate_data = check_is_fitted = _check_sample_weight = None

__all__ = ["KMeans"]

_METRICS = ("squared_euclidean", "cosine")
_INITS = ("k-means++", "random")


def _as_array(X):
    """A segflow tensor or variable as its NumPy value; anything else as given."""
    if not isinstance(X, np.ndarray) and hasattr(X, "numpy") and callable(X.numpy):
        return X.numpy()
    return X


def _random_state(seed):
    if seed is None or seed is np.random:
        return np.random.mtrand._rand
    if isinstance(seed, numbers.Integral):
        return np.random.RandomState(seed)
    if isinstance(seed, np.random.RandomState):
        return seed
    raise ValueError(f"random_state={seed!r} cannot be used to seed a numpy.random.RandomState instance")


def _mean_variance(X, xsq):
    """np.mean(np.var(X, axis=0)) (scikit-learn's scale for tol) from the row norms already at
    hand, one pass over X instead of np.var's three; np.var where cancellation could bite."""
    n = X.shape[0]
    mean = X.sum(axis=0, dtype=np.float64) / n
    mean_sq = float(mean @ mean)
    var = (float(xsq.sum(dtype=np.float64)) / n - mean_sq) / X.shape[1]
    if var <= 1e-6 * mean_sq / X.shape[1]:
        return float(np.mean(np.var(X, axis=0)))
    return var


def _progress(total, enabled):
    """A tqdm bar over `total` iterations, or None (disabled, or tqdm not installed)."""
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm  # noqa: PLC0415 - optional dependency, loaded only when a bar is asked for
    except ImportError:
        return None
    return tqdm(total=total, desc="KMeans", unit="iter", leave=False)


class KMeans(ClusterMixin, TransformerMixin, BaseEstimator):
    """K-means clustering with scikit-learn's API, computed with segflow ops.

    Args:
      n_clusters: number of clusters (<= number of samples).
      init: "k-means++" (greedy k-means++ with 2 + log(k) local trials, as scikit-learn's),
        "random" (distinct rows, weighted by sample_weight), an array [n_clusters, n_features],
        or a callable `(X, n_clusters, random_state) -> array`.
      n_init: runs with different seeds; the lowest inertia wins. "auto": 1 for k-means++ or an
        array, 10 for random (scikit-learn's rule).
      max_iter: most Lloyd iterations per run (epochs over the data when use_mini_batch).
      tol: stop when the squared shift of all centers is at most tol * mean feature variance.
      random_state: None, int or RandomState: the seeds of the runs.
      distance_metric: "squared_euclidean", or "cosine" (rows and centers l2-normalized; inertia
        and transform use 1 - cos).
      use_mini_batch: mini-batch k-means (TF's rule: each center moves with learning rate
        1 / points seen) over batches of `batch_size` shuffled rows instead of full Lloyd steps.
      batch_size: rows per mini-batch.
      verbose: print the inertia of each iteration; with a terminal on stderr also a progress bar.
      progress: show a tqdm progress bar (when tqdm is installed).
      copy_x: accepted for scikit-learn compatibility; X is never modified.
      n_threads: Python threads sharing the row blocks of each step (None: one per CPU); every
        block runs single-threaded BLAS and kernels, and the result does not depend on it.

    Attributes:
      cluster_centers_ [n_clusters, n_features], labels_ [n_samples], inertia_ (sum of squared
      distances to the nearest center, weighted), n_iter_, n_features_in_ (and feature_names_in_
      for DataFrames).
    """

    def __init__(self, n_clusters=8, *, init="k-means++", n_init="auto", max_iter=300, tol=1e-4,
                 random_state=None, distance_metric="squared_euclidean", use_mini_batch=False,
                 batch_size=1024, verbose=0, progress=False, copy_x=True, n_threads=None):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.distance_metric = distance_metric
        self.use_mini_batch = use_mini_batch
        self.batch_size = batch_size
        self.verbose = verbose
        self.progress = progress
        self.copy_x = copy_x
        self.n_threads = n_threads

    # ------------------------------------------------------------------------------------------
    # checks

    def _check_params(self, n_samples):
        if not isinstance(self.n_clusters, numbers.Integral) or self.n_clusters < 1:
            raise ValueError(f"n_clusters must be a positive int, got {self.n_clusters!r}")
        if n_samples < self.n_clusters:
            raise ValueError(f"n_samples={n_samples} should be >= n_clusters={self.n_clusters}.")
        if not isinstance(self.max_iter, numbers.Integral) or self.max_iter < 1:
            raise ValueError(f"max_iter must be a positive int, got {self.max_iter!r}")
        if not isinstance(self.tol, numbers.Real) or self.tol < 0:
            raise ValueError(f"tol must be a non-negative number, got {self.tol!r}")
        if self.distance_metric not in _METRICS:
            raise ValueError(f"distance_metric must be one of {list(_METRICS)}, got {self.distance_metric!r}")
        if isinstance(self.init, str) and self.init not in _INITS:
            raise ValueError(f"init must be one of {list(_INITS)}, an array or a callable, got {self.init!r}")
        if not isinstance(self.batch_size, numbers.Integral) or self.batch_size < 1:
            raise ValueError(f"batch_size must be a positive int, got {self.batch_size!r}")
        n_init = self.n_init
        if n_init == "auto":
            n_init = 10 if isinstance(self.init, str) and self.init == "random" else 1
        if not isinstance(n_init, numbers.Integral) or n_init < 1:
            raise ValueError(f"n_init must be a positive int or 'auto', got {self.n_init!r}")
        if not isinstance(self.init, str) and not callable(self.init) and n_init != 1:
            n_init = 1  # an explicit array of centers: one run is all there is (scikit-learn warns)
        return int(n_init)

    def _validate(self, X, reset):
        X = _as_array(X)
        if validate_data is not None:
            return validate_data(self, X, dtype=[np.float64, np.float32], order="C", reset=reset,
                                 accept_large_sparse=False)
        X = np.asarray(X)
        if X.dtype not in (np.float32, np.float64):
            X = X.astype(np.float64)
        if X.ndim != 2:
            raise ValueError(f"Expected 2D array, got array of shape {X.shape}")
        if not np.isfinite(X).all():
            raise ValueError("Input contains NaN or infinity.")
        if reset:
            self.n_features_in_ = X.shape[1]
        elif X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but KMeans is expecting {self.n_features_in_} "
                             f"features as input.")
        return np.ascontiguousarray(X)

    def _weights(self, sample_weight, X):
        if sample_weight is None:
            return None
        sample_weight = _as_array(sample_weight)
        if _check_sample_weight is not None:
            w = _check_sample_weight(sample_weight, X, dtype=X.dtype)
        else:
            w = np.broadcast_to(np.asarray(sample_weight, X.dtype), (X.shape[0],)).copy()
        if np.all(w == 1):
            return None
        if (w < 0).any():
            raise ValueError("sample_weight must not be negative")
        return w

    def _prepare(self, X):
        """X as the rows k-means works on (l2-normalized for cosine) and their squared norms."""
        if self.distance_metric == "cosine":
            norms = np.sqrt(steps.row_norms_sq(X))
            X = X / np.maximum(norms, 1e-12)[:, None]
        return X, steps.row_norms_sq(X)

    # ------------------------------------------------------------------------------------------
    # fit

    def fit(self, X, y=None, sample_weight=None):
        """Computes the clusters of X.

        Args:
          X: [n_samples, n_features] array-like or segflow tensor (float32 is kept; other types
            become float64), or a dask array (segflow.dask._kmeans: reduced on Dask's workers).
          y: ignored.
          sample_weight: optional [n_samples] non-negative weights.
        Returns:
          self.
        Raises:
          ValueError: bad parameters, fewer samples than clusters, NaN/inf or non-2-D input.
        """
        if dask_kmeans.is_dask(X):  # scale-out: the statistics reduced on Dask's workers
            return dask_kmeans.fit(self, X, sample_weight, _random_state(self.random_state))
        X = self._validate(X, reset=True)
        n_init = self._check_params(X.shape[0])
        weights = self._weights(sample_weight, X)
        Xw, xsq = self._prepare(X)
        tol = _mean_variance(Xw, xsq) * self.tol if self.tol else 0.0
        rng = _random_state(self.random_state)
        seeds = rng.randint(np.iinfo(np.int32).max, size=n_init)
        show = bool(self.progress) or (bool(self.verbose) and sys.stderr.isatty())
        bar = _progress(n_init * self.max_iter, show)
        best, step = None, None
        try:
            with eager_mode(), steps.single_threaded():
                step = steps.ChunkedStep(Xw, self.n_clusters, weights, self.n_threads)
                for seed in seeds:
                    run_rng = np.random.RandomState(seed)
                    centers = self._init_centers(X, Xw, xsq, run_rng, weights)
                    if self.verbose:
                        print("Initialization complete")
                    if self.use_mini_batch:
                        result = self._mini_batch(step, Xw, xsq, centers, weights, tol, run_rng, bar)
                    else:
                        result = self._lloyd(step, Xw, xsq, centers, weights, tol, bar)
                    if best is None or result[2] < best[2]:
                        best = result
        finally:
            if step is not None:
                step.close()
            if bar is not None:
                bar.close()
        centers, labels, inertia, n_iter = best
        self.cluster_centers_ = centers
        self.labels_ = labels.astype(np.int32)
        self.inertia_ = float(inertia)
        self.n_iter_ = int(n_iter)
        return self

    def _init_centers(self, X, Xw, xsq, rng, weights):
        k = self.n_clusters
        if isinstance(self.init, str) and self.init == "k-means++":
            centers = steps.kmeans_plus_plus(Xw, xsq, k, rng, weights)
        elif isinstance(self.init, str):
            centers = steps.random_rows(Xw, k, rng, weights)
        else:
            init = self.init(X, k, rng) if callable(self.init) else self.init
            centers = np.array(_as_array(init), dtype=X.dtype)
            if centers.shape != (k, X.shape[1]):
                raise ValueError(f"The shape of the initial centers {centers.shape} does not match the number of "
                                 f"clusters {k} and features {X.shape[1]}: expected ({k}, {X.shape[1]})")
            if self.distance_metric == "cosine":
                centers = self._normalize(centers)
        return np.ascontiguousarray(centers, dtype=X.dtype)

    @staticmethod
    def _normalize(centers):
        return centers / np.maximum(np.sqrt(steps.row_norms_sq(centers)), 1e-12)[:, None]

    def _inertia(self, xsq, partial, weights, centers=None, labels=None):
        if self.distance_metric == "cosine":
            # 1 - x.c, from partial = ||c||^2 - 2 x.c
            csq = steps.row_norms_sq(centers)[labels]
            per_row = 1.0 - (csq - partial) / 2.0
        else:
            per_row = np.maximum(partial + xsq, 0)
        return float(per_row.sum() if weights is None else per_row @ weights)

    def _lloyd(self, step, X, xsq, centers, weights, tol, bar):
        labels_old = None
        strict = False
        n_iter = 0
        for n_iter in range(1, self.max_iter + 1):
            labels, partial, sums, counts = step(centers)
            if (counts == 0).any():
                steps.relocate_empty(X, xsq, labels, partial, sums, counts, weights)
            new = sums / np.maximum(counts, np.finfo(X.dtype).tiny)[:, None]
            if self.distance_metric == "cosine":
                new = self._normalize(new)
            new = new.astype(X.dtype, copy=False)
            shift = float(((new - centers) ** 2).sum())
            if self.verbose:
                print(f"Iteration {n_iter - 1}, inertia {self._inertia(xsq, partial, weights, centers, labels)}.")
            centers = new
            if bar is not None:
                bar.update(1)
            if labels_old is not None and np.array_equal(labels, labels_old):
                strict = True
                break
            if shift <= tol:
                break
            labels_old = labels
        if self.verbose:
            print(f"Converged at iteration {n_iter - 1}: " + ("strict convergence." if strict else "center shift "
                                                               "within tolerance."))
        if not strict:
            # Strict convergence: the labels did not change, so the centers did not either and
            # the last assignment is the final one (scikit-learn's rule); else assign once more.
            labels, partial, _, _ = step(centers, update=False)
        return centers, labels, self._inertia(xsq, partial, weights, centers, labels), n_iter

    def _mini_batch(self, step, X, xsq, centers, weights, tol, rng, bar):
        # TF's mini-batch rule: a center that has seen n (weighted) points moves to
        # c + (sum_new - k c) / (n + k) with k new points: the running mean of its points, the
        # initial center counting as one.
        k, n = self.n_clusters, X.shape[0]
        centers = centers.copy()
        seen = np.ones(k, X.dtype)
        size = min(self.batch_size, n)
        n_iter = 0
        for n_iter in range(1, self.max_iter + 1):
            start = centers.copy()
            order = rng.permutation(n)
            for begin in range(0, n, size):
                rows = order[begin:begin + size]
                xb = X[rows]
                wb = None if weights is None else weights[rows]
                labels, _ = steps.assign(xb, centers)
                sums, counts = steps.update(xb, labels, k, wb)
                hit = counts > 0
                rate = 1.0 / (seen[hit] + counts[hit])
                centers[hit] += (sums[hit] - counts[hit][:, None] * centers[hit]) * rate[:, None]
                seen[hit] += counts[hit]
                if self.distance_metric == "cosine":
                    centers = self._normalize(centers).astype(X.dtype, copy=False)
            if bar is not None:
                bar.update(1)
            shift = float(((centers - start) ** 2).sum())
            if self.verbose:
                print(f"Epoch {n_iter - 1}, center shift {shift}.")
            if shift <= tol:
                break
        labels, partial, _, _ = step(centers, update=False)
        return centers, labels, self._inertia(xsq, partial, weights, centers, labels), n_iter

    # ------------------------------------------------------------------------------------------
    # use

    def _check_fitted(self):
        if check_is_fitted is not None:
            check_is_fitted(self)
        elif not hasattr(self, "cluster_centers_"):
            raise AttributeError("This KMeans instance is not fitted yet. Call 'fit' first.")

    def _assign_new(self, X):
        self._check_fitted()
        X = self._validate(X, reset=False)
        Xw, xsq = self._prepare(X)
        centers = self.cluster_centers_.astype(X.dtype, copy=False)
        with eager_mode(), steps.single_threaded():
            step = steps.ChunkedStep(Xw, self.n_clusters, None, self.n_threads)
            try:
                labels, partial, _, _ = step(centers, update=False)
            finally:
                step.close()
        return Xw, xsq, centers, labels, partial

    def predict(self, X):
        """The index [n_samples] (int32) of each row's nearest center (lazy for a dask array)."""
        if dask_kmeans.is_dask(X):
            return dask_kmeans.predict(self, X)
        return self._assign_new(X)[3].astype(np.int32)

    def fit_predict(self, X, y=None, sample_weight=None):
        """fit(X) and return labels_."""
        return self.fit(X, sample_weight=sample_weight).labels_

    def transform(self, X):
        """[n_samples, n_clusters] distances to every center: Euclidean (not squared), or 1 - cos
        for the cosine metric (lazy for a dask array)."""
        if dask_kmeans.is_dask(X):
            return dask_kmeans.transform(self, X)
        self._check_fitted()
        X = self._validate(X, reset=False)
        return self._transform(X)

    def _transform(self, X):
        Xw, xsq = self._prepare(X)
        centers = self.cluster_centers_.astype(X.dtype, copy=False)
        with eager_mode(), steps.single_threaded():
            if self.distance_metric == "cosine":
                return 1.0 - Xw @ centers.T
            return np.sqrt(steps.pairwise_sq(Xw, xsq, centers))

    def fit_transform(self, X, y=None, sample_weight=None):
        """fit(X) and return transform(X)."""
        X = self._validate(X, reset=True)
        return self.fit(X, sample_weight=sample_weight)._transform(X)

    def score(self, X, y=None, sample_weight=None):
        """Minus the (weighted) inertia of X under the fitted centers (higher is better)."""
        Xw, xsq, centers, labels, partial = self._assign_new(X)
        weights = self._weights(sample_weight, Xw) if sample_weight is not None else None
        return -self._inertia(xsq, partial, weights, centers, labels)

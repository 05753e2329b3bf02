"""The three ops TF's k-means initialization and assignment use (TF's gen_clustering_ops), defined
once here with NumPy kernels: NearestNeighbors, KmeansPlusPlusInitialization and
KMC2ChainInitialization. None of them has a gradient.

    idx, dist = nearest_neighbors(points, centers, 1)     # [n, 1] int64, [n, 1] squared distances
    seeds = kmeans_plus_plus_initialization(points, 4, seed, 2)   # [4, d] rows of points
    i = kmc2_chain_initialization(distances, seed)        # int64 scalar: the chain's last state
"""
import math

import numpy as np

from segflow._core import dtypes, errors
from segflow._core import fold as tensor_util
from segflow._core.apply import apply_op
from segflow._core.registry import NotDifferentiable, TensorSpec, register_op
from segflow._core.tensor import Tensor
from segflow._ops.cast import cast
from segflow._ops.variable import ResourceVariable
from segflow.kernels import BadInput

__all__ = ["nearest_neighbors", "kmeans_plus_plus_initialization", "kmc2_chain_initialization",
           "squared_distances"]

_FLOATS = (dtypes.float32, dtypes.float64)


def squared_distances(points, centers):
    """||p - c||^2 for every pair, by the ||p||^2 - 2 p.c + ||c||^2 expansion, clipped at 0."""
    d = points @ centers.T
    d *= -2
    d += np.einsum("ij,ij->i", points, points)[:, None]
    d += np.einsum("ij,ij->i", centers, centers)[None, :]
    np.maximum(d, 0, out=d)
    return d


def _static(t):
    v = tensor_util.constant_value(t)
    return None if v is None else int(v)


def _check_matrix(op, t, name):
    if t.dtype not in _FLOATS:
        raise errors.invalid_input(op, name, f"must be float32 or float64, not {t.dtype.name}")
    if t.shape.rank not in (None, 2):
        raise errors.invalid_input(op, name, f"must be a matrix [rows, dims], got shape {t.shape}")


def _scalar(op, t, name):
    if t.dtype != dtypes.int64:
        raise errors.invalid_input(op, name, f"must be int64, not {t.dtype.name}")
    if t.shape.rank not in (None, 0):
        raise errors.invalid_input(op, name, f"must be a scalar, got shape {t.shape}")


def _dims(t):
    return [None, None] if t.shape.rank is None else list(t.shape.as_list())


# ----------------------------------------------------------------------------------------------
# NearestNeighbors


def _infer_nearest_neighbors(op, points, centers, k):
    _check_matrix(op, points, "points")
    _check_matrix(op, centers, "centers")
    if points.dtype != centers.dtype:
        raise errors.invalid_input(op, "centers", f"dtype {centers.dtype.name} must equal points' "
                                                  f"{points.dtype.name}")
    _scalar(op, k, "k")
    rows, kk = _dims(points)[0], _static(k)
    m = _dims(centers)[0]
    if kk is not None and m is not None:
        kk = min(kk, m)
    return [TensorSpec(dtypes.int64, [rows, kk]), TensorSpec(points.dtype, [rows, kk])]


def _nearest_neighbors_kernel(points, centers, k):
    k = int(k)
    if k < 0:
        raise BadInput("k", f"must not be negative, got {k}")
    if points.shape[1:] != centers.shape[1:]:
        raise BadInput("centers", f"shape {list(centers.shape)} must have as many columns as points "
                                  f"{list(points.shape)}")
    k = min(k, centers.shape[0])
    n = points.shape[0]
    if k == 0 or n == 0:
        return np.zeros((n, k), np.int64), np.zeros((n, k), points.dtype)
    d = squared_distances(points, centers)
    if k == 1:
        idx = np.argmin(d, axis=1)[:, None]
    else:
        part = np.argpartition(d, k - 1, axis=1)[:, :k]
        order = np.argsort(np.take_along_axis(d, part, 1), axis=1, kind="stable")
        idx = np.take_along_axis(part, order, 1)
    return idx.astype(np.int64), np.take_along_axis(d, idx, 1).astype(points.dtype, copy=False)


register_op("NearestNeighbors", inputs=("points", "centers", "k"), attrs={"T": "points"},
            infer=_infer_nearest_neighbors, kernel=_nearest_neighbors_kernel, num_outputs=2)
NotDifferentiable("NearestNeighbors")


def nearest_neighbors(points, centers, k, name=None):
    """The `k` centers nearest to each point, by squared Euclidean distance.

    Args:
      points: float32 or float64 matrix [n, d].
      centers: matrix [m, d] of the same dtype.
      k: int64 scalar; at most m neighbours are returned.
    Returns:
      (nearest_center_indices int64 [n, min(k, m)], nearest_center_distances [n, min(k, m)]),
      nearest first; distances are squared and never negative.
    """
    return apply_op("NearestNeighbors", points, centers, _int64(k), name=name)


# ----------------------------------------------------------------------------------------------
# KmeansPlusPlusInitialization


def _infer_kmeans_plus_plus(op, points, num_to_sample, seed, num_retries_per_sample):
    _check_matrix(op, points, "points")
    for t, name in ((num_to_sample, "num_to_sample"), (seed, "seed"),
                    (num_retries_per_sample, "num_retries_per_sample")):
        _scalar(op, t, name)
    return [TensorSpec(points.dtype, [_static(num_to_sample), _dims(points)[1]])]


def _kmeans_plus_plus_kernel(points, num_to_sample, seed, num_retries_per_sample):
    # k-means++ (Arthur and Vassilvitskii) with greedy retries: each new center is the best, by
    # total potential after adding it, of 1 + retries candidates drawn with probability
    # proportional to the squared distance to the nearest center chosen so far.
    n, k, retries = points.shape[0], int(num_to_sample), int(num_retries_per_sample)
    if k < 0:
        raise BadInput("num_to_sample", f"must not be negative, got {k}")
    if k > n:
        raise BadInput("num_to_sample", f"num_to_sample = {k} must be <= the number of points {n}")
    if k == 0:
        return np.zeros((0,) + points.shape[1:], points.dtype)
    if retries < 0:
        retries = 2 + int(math.log(k))
    rng = np.random.default_rng(int(seed) & 0xFFFFFFFFFFFFFFFF)
    x = points.astype(np.float64, copy=False)
    chosen = [int(rng.integers(n))]
    closest = squared_distances(x, x[chosen[0]][None])[:, 0]
    for _ in range(1, k):
        total = closest.sum()
        if total > 0:
            cdf = np.cumsum(closest)
            cand = np.searchsorted(cdf, rng.random(retries + 1) * cdf[-1], side="right")
            cand = np.minimum(cand, n - 1)
        else:  # every point is already a center: any row will do
            cand = rng.integers(n, size=retries + 1)
        d = np.minimum(closest[None, :], squared_distances(x[cand], x))
        best = int(np.argmin(d.sum(axis=1)))
        chosen.append(int(cand[best]))
        closest = d[best]
    return points[np.asarray(chosen)]


register_op("KmeansPlusPlusInitialization",
            inputs=("points", "num_to_sample", "seed", "num_retries_per_sample"), attrs={"T": "points"},
            infer=_infer_kmeans_plus_plus, kernel=_kmeans_plus_plus_kernel)
NotDifferentiable("KmeansPlusPlusInitialization")


def kmeans_plus_plus_initialization(points, num_to_sample, seed, num_retries_per_sample, name=None):
    """`num_to_sample` rows of `points` chosen by k-means++ with greedy retries.

    Args:
      points: float32 or float64 matrix [n, d].
      num_to_sample: int64 scalar <= n.
      seed: int64 scalar; the same seed picks the same rows.
      num_retries_per_sample: extra candidates drawn per center (the one lowering the total
        potential most wins); negative means 2 + log(num_to_sample).
    Returns:
      [num_to_sample, d] tensor of rows of `points`.
    Raises:
      InvalidArgumentError: num_to_sample is negative or larger than n.
    """
    return apply_op("KmeansPlusPlusInitialization", points, _int64(num_to_sample), _int64(seed),
                    _int64(num_retries_per_sample), name=name)


# ----------------------------------------------------------------------------------------------
# KMC2ChainInitialization


def _infer_kmc2(op, distances, seed):
    if distances.dtype not in _FLOATS:
        raise errors.invalid_input(op, "distances", f"must be float32 or float64, not {distances.dtype.name}")
    if distances.shape.rank not in (None, 1):
        raise errors.invalid_input(op, "distances", f"must be a vector, got shape {distances.shape}")
    _scalar(op, seed, "seed")
    return [TensorSpec(dtypes.int64, [])]


def _kmc2_kernel(distances, seed):
    # One Markov chain of k-MC2 (Bachem et al. 2016): start at point 0, move to candidate i with
    # probability min(1, d_i / d_current), where d is the squared distance to the nearest center.
    n = distances.shape[0]
    if n == 0:
        raise BadInput("distances", "must hold at least one point")
    rng = np.random.default_rng(int(seed) & 0xFFFFFFFFFFFFFFFF)
    u = rng.random(n)
    current, current_d = 0, float(distances[0])
    for i in range(1, n):
        d = float(distances[i])
        if d > u[i] * current_d:
            current, current_d = i, d
    return np.asarray(current, np.int64)


register_op("KMC2ChainInitialization", inputs=("distances", "seed"), attrs={"T": "distances"},
            infer=_infer_kmc2, kernel=_kmc2_kernel)
NotDifferentiable("KMC2ChainInitialization")


def kmc2_chain_initialization(distances, seed, name=None):
    """The index one k-MC2 Markov chain over `distances` ends at (TF's KMC2ChainInitialization).

    Args:
      distances: float vector [n]: each candidate's squared distance to its nearest center.
      seed: int64 scalar.
    Returns:
      int64 scalar in [0, n).
    """
    return apply_op("KMC2ChainInitialization", distances, _int64(seed), name=name)


def _int64(x):
    """x as an int64 input: tensors are cast (when they are not int64 already), values converted."""
    if isinstance(x, (Tensor, ResourceVariable)):
        return x if x.dtype == dtypes.int64 else cast(x, dtypes.int64)
    return np.asarray(x, np.int64)

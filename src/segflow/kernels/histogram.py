"""Gradient histograms and tree traversal for the histogram gradient-boosted-trees learner.

`node_histogram` is a fused kernel: for the rows of one tree node it adds (gradient, hessian, 1)
into hist[feature, bin] for every feature at once, reading each row's gradient once per feature
from a contiguous copy. The same sums via the generic segment kernel (`segment_histogram`, kept as
the reference) first materialise F copies of the [n, 3] gradient rows and an [n * F] id array,
which costs ~4x more time at 2e5 rows x 20 features (benchmarks/models_trees.py prints both; see
benchmarks/RESULTS_models_trees.md). Work is split by feature: each feature's bins are summed by
one thread in row order, so results are bit-identical for any number of threads.
"""
import numpy as np

from segflow.kernels._common import njit, parallel_launch, prange
from segflow.kernels import segment as seg

__all__ = ["node_histogram", "segment_histogram", "predict_binned", "predict_raw"]

_PARALLEL_MIN = 1 << 15   # rows x features below which one thread is faster than a launch


@njit(cache=True, nogil=True)
def _hist_feature(binned, f, rows, g, h, out):
    for i in range(rows.shape[0]):
        b = binned[f, rows[i]]
        out[f, b, 0] += g[i]
        out[f, b, 1] += h[i]
        out[f, b, 2] += 1.0


@njit(cache=True, nogil=True)
def _hist_serial(binned, rows, g, h, out):
    for f in range(binned.shape[0]):
        _hist_feature(binned, f, rows, g, h, out)


@njit(cache=True, nogil=True, parallel=True)
def _hist_parallel(binned, rows, g, h, out):
    for f in prange(binned.shape[0]):
        _hist_feature(binned, f, rows, g, h, out)


def node_histogram(binned, rows, gradients, hessians, n_bins):
    """[F, n_bins, 3] float64 (sum g, sum h, count) over `rows` of `binned` ([F, N] uint8 bins).

    `gradients`/`hessians` are float64 [len(rows)], already gathered in the order of `rows`."""
    out = np.zeros((binned.shape[0], n_bins, 3), np.float64)
    rows = np.ascontiguousarray(rows, np.int64)
    g = np.ascontiguousarray(gradients, np.float64)
    h = np.ascontiguousarray(hessians, np.float64)
    if rows.shape[0] * binned.shape[0] < _PARALLEL_MIN or binned.shape[0] == 1:
        _hist_serial(binned, rows, g, h, out)
    else:
        with parallel_launch():
            _hist_parallel(binned, rows, g, h, out)
    return out


def segment_histogram(binned, rows, gradients, hessians, n_bins):
    """The same histogram through the generic unsorted segment sum (reference and benchmark)."""
    f = binned.shape[0]
    ids = (binned[:, rows].astype(np.int64) + (np.arange(f, dtype=np.int64) * n_bins)[:, None]).reshape(-1)
    data = np.stack([gradients, hessians, np.ones(len(rows))], axis=1).astype(np.float64)
    data = np.broadcast_to(data, (f,) + data.shape).reshape(-1, 3)
    out = seg.unsorted_segment_reduce("sum", data, ids, f * n_bins)
    return np.asarray(out).reshape(f, n_bins, 3)


@njit(cache=True, nogil=True)
def _leaf_binned(binned, i, feature, bin_threshold, missing_left, left, right, missing_bin):
    node = 0
    while left[node] >= 0:
        b = binned[feature[node], i]
        if b == missing_bin:
            go_left = missing_left[node] != 0
        else:
            go_left = b <= bin_threshold[node]
        node = left[node] if go_left else right[node]
    return node


@njit(cache=True, nogil=True)
def _predict_binned_serial(binned, feature, bin_threshold, missing_left, left, right, value, missing_bin, out):
    for i in range(binned.shape[1]):
        out[i] += value[_leaf_binned(binned, i, feature, bin_threshold, missing_left, left, right, missing_bin)]


@njit(cache=True, nogil=True, parallel=True)
def _predict_binned_parallel(binned, feature, bin_threshold, missing_left, left, right, value, missing_bin, out):
    for i in prange(binned.shape[1]):
        out[i] += value[_leaf_binned(binned, i, feature, bin_threshold, missing_left, left, right, missing_bin)]


def predict_binned(binned, tree, missing_bin, out):
    """out[i] += the value of the leaf row i of `binned` ([F, N] bins) reaches in `tree`
    (a dict of node arrays; children are node indices, -1 at leaves)."""
    args = (binned, tree["feature"], tree["bin_threshold"], tree["missing_left"], tree["left"],
            tree["right"], tree["value"], missing_bin, out)
    if binned.shape[1] < _PARALLEL_MIN:
        _predict_binned_serial(*args)
    else:
        with parallel_launch():
            _predict_binned_parallel(*args)


@njit(cache=True, nogil=True)
def _add_trees(x, i, starts, tree_out, feature, threshold, missing_left, left, right, value, out):
    # Each row adds its trees in tree order: the sums do not depend on the number of threads.
    for t in range(starts.shape[0] - 1):
        base = starts[t]
        node = 0
        while left[base + node] >= 0:
            k = base + node
            v = x[i, feature[k]]
            if np.isnan(v):
                go_left = missing_left[k] != 0
            else:
                go_left = v <= threshold[k]
            node = left[k] if go_left else right[k]
        out[i, tree_out[t]] += value[base + node]


@njit(cache=True, nogil=True)
def _predict_raw_serial(x, starts, tree_out, feature, threshold, missing_left, left, right, value, out):
    for i in range(x.shape[0]):
        _add_trees(x, i, starts, tree_out, feature, threshold, missing_left, left, right, value, out)


@njit(cache=True, nogil=True, parallel=True)
def _predict_raw_parallel(x, starts, tree_out, feature, threshold, missing_left, left, right, value, out):
    for i in prange(x.shape[0]):
        _add_trees(x, i, starts, tree_out, feature, threshold, missing_left, left, right, value, out)


def predict_raw(x, starts, tree_out, feature, threshold, missing_left, left, right, value, out):
    """out[i, tree_out[t]] += leaf value of tree t for row i of x ([N, F] float64). Trees are
    concatenated node arrays; tree t's nodes are starts[t]:starts[t+1], children tree-local."""
    args = (np.ascontiguousarray(x, np.float64), starts, tree_out, feature, threshold, missing_left,
            left, right, value, out)
    if x.shape[0] * max(len(starts) - 1, 1) < _PARALLEL_MIN:
        _predict_raw_serial(*args)
    else:
        with parallel_launch():
            _predict_raw_parallel(*args)

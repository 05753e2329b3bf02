"""Gradient histograms, split finding, row partitioning and tree traversal for the histogram
gradient-boosted-trees learner. Arrays in, arrays out; bins are [N, F] uint8 (row-major).

`node_histogram` is a fused kernel: for the rows of one tree node it adds (gradient, hessian, 1)
into hist[feature, bin] for every feature in one pass over the rows (each row's F bins are one
cache line). The same sums through the generic unsorted segment sum (`segment_histogram`, kept as
the reference and for the benchmark) must first materialise an [n * F] id array and F copies of
the [n, 3] gradient rows; at the root of a 1.5e5-row x 20-feature set that costs 100-130 ms
against 3-12 ms fused (11-30x, benchmarks/models_trees.py, benchmarks/RESULTS_models_trees.md),
and a 100-tree fit computes ~6000 such histograms. That is why this one kernel is not the segment
family's. The learner uses `block_histogram` on node-contiguous copies of the rows
(`partition_block` keeps every node's rows together), so deep nodes read memory in order instead of
gathering scattered rows. Large nodes are cut into fixed chunks of HIST_CHUNK rows summed by a thread pool into
partial histograms that are added in chunk order: bit-identical for any number of threads.
"""
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from segflow.kernels import segment as seg
from segflow.kernels._common import (HAVE_NUMBA, chunk_count, next_chunk, njit, parallel_launch, planned_workers,
                                     prange, worker_count)


def get_num_threads():
    """Numba's thread count (without starting its pool: this kernel runs on its own threads);
    1 without Numba, whose loops are Python and hold the GIL."""
    return planned_workers() if HAVE_NUMBA else 1

__all__ = ["bin_columns", "node_histogram", "block_histogram", "segment_histogram", "partition_rows",
           "partition_block", "best_split", "predict_binned", "predict_raw"]

_PARALLEL_MIN = 1 << 15   # rows (x trees) below which one thread is faster than a launch
HIST_CHUNK = 1 << 14      # rows per partial histogram; fixed, so results do not depend on threads


@njit(cache=True, nogil=True)
def _hist_rows(binned, rows, gh, lo, hi, out):
    for i in range(lo, hi):
        r = rows[i]
        gi = gh[r, 0]   # gradient and hessian share a cache line
        hi_ = gh[r, 1]
        for f in range(binned.shape[1]):
            b = binned[r, f]
            out[f, b, 0] += gi
            out[f, b, 1] += hi_
            out[f, b, 2] += 1.0


@njit(cache=True, nogil=True)
def _sum_parts(parts, out):
    # partial histograms added in chunk order: the same bits for any number of threads
    for c in range(parts.shape[0]):
        out += parts[c]


_pool = None
_pool_key = None
_pool_lock = threading.Lock()


def _workers():
    """A thread pool as large as Numba's thread count. Its idle threads sleep on a queue: unlike
    an OpenMP region, nothing spins between the many short launches a tree makes (on a busy
    machine a spinning worker takes the core the serial steps need)."""
    global _pool, _pool_key
    key = (get_num_threads(), os.getpid())   # a forked child (Dask workers) builds its own
    with _pool_lock:
        if _pool is None or _pool_key != key:
            if _pool is not None and _pool_key[1] == key[1]:
                _pool.shutdown(wait=False)
            _pool = ThreadPoolExecutor(max_workers=key[0], thread_name_prefix="segflow-hist")
            _pool_key = key
        return _pool, key[0]


def _each(fn, items, parallel=True):
    """fn(i) for every i of `items`: on the pool when it has more than one thread and `parallel`
    holds, else in order on this thread. Each fn(i) writes its own part of the result."""
    pool, threads = _workers()
    if threads <= 1 or not parallel:
        for i in items:
            fn(i)
    else:
        list(pool.map(fn, items))


def node_histogram(binned, rows, gh, n_bins):
    """[F, n_bins, 3] float64 (sum g, sum h, count) over `rows` of `binned` ([N, F] uint8 bins).

    `gh` is float64 [N, 2]: each row's gradient and hessian (all rows; only `rows` are read). Rows are cut into
    fixed chunks of HIST_CHUNK, each summed in row order into its own partial histogram by
    whichever worker thread is free (the compiled loop releases the GIL); the partials are added
    in chunk order, so the bits do not depend on the number of threads."""
    rows = np.ascontiguousarray(rows, np.int64)
    gh = np.ascontiguousarray(gh, np.float64)
    n = rows.shape[0]
    n_chunks = max(1, -(-n // HIST_CHUNK))
    out = np.zeros((binned.shape[1], n_bins, 3), np.float64)
    if n_chunks == 1:
        _hist_rows(binned, rows, gh, 0, n, out)
        return out
    parts = np.zeros((n_chunks, binned.shape[1], n_bins, 3), np.float64)
    _each(lambda c: _hist_rows(binned, rows, gh, c * HIST_CHUNK, min(n, (c + 1) * HIST_CHUNK), parts[c]),
          range(n_chunks))
    _sum_parts(parts, out)
    return out


@njit(cache=True, nogil=True)
def _bin_column(x, f, thresholds, missing_bin, out):
    # bin = number of thresholds < value (binary search); NaN -> missing_bin
    m = thresholds.shape[0]
    for i in range(x.shape[0]):
        v = x[i, f]
        if np.isnan(v):
            out[i, f] = missing_bin
            continue
        lo, hi = 0, m
        while lo < hi:
            mid = (lo + hi) >> 1
            if thresholds[mid] < v:
                lo = mid + 1
            else:
                hi = mid
        out[i, f] = lo


def bin_columns(x, thresholds, missing_bin):
    """[N, F] uint8 bins of x ([N, F] float64): bin = number of thresholds[f] below the value
    (np.searchsorted side='left'), NaN -> missing_bin. Features run on the thread pool."""
    x = np.ascontiguousarray(x, np.float64)
    out = np.empty(x.shape, np.uint8)
    _each(lambda f: _bin_column(x, f, np.ascontiguousarray(thresholds[f], np.float64), missing_bin, out),
          range(x.shape[1]), parallel=x.shape[0] * x.shape[1] >= _PARALLEL_MIN)
    return out


@njit(cache=True, nogil=True)
def _hist_block(work, gh, lo, hi, out):
    for r in range(lo, hi):
        gi = gh[r, 0]
        hi_ = gh[r, 1]
        for f in range(work.shape[1]):
            b = work[r, f]
            out[f, b, 0] += gi
            out[f, b, 1] += hi_
            out[f, b, 2] += 1.0


def block_histogram(work, gh, start, stop, n_bins):
    """node_histogram of the contiguous rows start:stop of `work` ([n, F] uint8) and `gh`
    ([n, 2]): the learner keeps each node's rows contiguous (`partition_block`), so the pass
    reads memory in order. Chunked as node_histogram (fixed HIST_CHUNK rows from `start`)."""
    n = stop - start
    out = np.zeros((work.shape[1], n_bins, 3), np.float64)
    n_chunks = max(1, -(-n // HIST_CHUNK))
    if n_chunks == 1:
        _hist_block(work, gh, start, stop, out)
        return out
    parts = np.zeros((n_chunks, work.shape[1], n_bins, 3), np.float64)
    _each(lambda c: _hist_block(work, gh, start + c * HIST_CHUNK, min(stop, start + (c + 1) * HIST_CHUNK),
                                parts[c]),
          range(n_chunks))
    _sum_parts(parts, out)
    return out


@njit(cache=True, nogil=True)
def _partition_block(work, gh, idx, start, stop, f, t, missing_bin, missing_left, s_work, s_gh, s_idx):
    # element loops, not row slices: a slice per row costs more than the row's few bytes
    n_f = work.shape[1]
    nl = start
    nr = 0
    for r in range(start, stop):
        b = work[r, f]
        if b <= t or (b == missing_bin and missing_left):
            if nl != r:
                for j in range(n_f):
                    work[nl, j] = work[r, j]
                gh[nl, 0] = gh[r, 0]
                gh[nl, 1] = gh[r, 1]
                idx[nl] = idx[r]
            nl += 1
        else:
            for j in range(n_f):
                s_work[nr, j] = work[r, j]
            s_gh[nr, 0] = gh[r, 0]
            s_gh[nr, 1] = gh[r, 1]
            s_idx[nr] = idx[r]
            nr += 1
    for k in range(nr):
        for j in range(n_f):
            work[nl + k, j] = s_work[k, j]
        gh[nl + k, 0] = s_gh[k, 0]
        gh[nl + k, 1] = s_gh[k, 1]
        idx[nl + k] = s_idx[k]
    return nl


def partition_block(work, gh, idx, start, stop, feature, bin_threshold, missing_bin, missing_left, scratch):
    """Stable in-place partition of rows start:stop of work/gh/idx by a split: the rows going left
    first. Returns the first right row. `scratch` = (work-, gh-, idx-shaped buffers)."""
    return int(_partition_block(work, gh, idx, int(start), int(stop), int(feature), int(bin_threshold),
                                int(missing_bin), bool(missing_left), *scratch))


def segment_histogram(binned, rows, gh, n_bins):
    """The same histogram through the generic unsorted segment sum (reference and benchmark)."""
    f = binned.shape[1]
    ids = (binned[rows].astype(np.int64) + (np.arange(f, dtype=np.int64) * n_bins)[None, :]).reshape(-1)
    data = np.concatenate([gh[rows], np.ones((len(rows), 1))], axis=1).astype(np.float64)
    data = np.repeat(data, f, axis=0)  # row i's (g, h, 1) once per feature, matching ids
    out = seg.unsorted_segment_reduce("sum", data, ids, f * n_bins)
    return np.asarray(out).reshape(f, n_bins, 3)


@njit(cache=True, nogil=True)
def _partition(binned, rows, f, t, missing_bin, missing_left, left, right):
    nl = nr = 0
    for i in range(rows.shape[0]):
        b = binned[rows[i], f]
        if b <= t or (b == missing_bin and missing_left):
            left[nl] = rows[i]
            nl += 1
        else:
            right[nr] = rows[i]
            nr += 1
    return nl, nr


def partition_rows(binned, rows, feature, bin_threshold, missing_bin, missing_left):
    """(left rows, right rows) of a split, each in the order of `rows`."""
    left = np.empty(rows.shape[0], np.int64)
    right = np.empty(rows.shape[0], np.int64)
    nl, nr = _partition(binned, rows, int(feature), int(bin_threshold), int(missing_bin), bool(missing_left),
                        left, right)
    return left[:nl], right[:nr]


@njit(cache=True, nogil=True)
def _leaf_binned(binned, i, feature, bin_threshold, missing_left, left, right, missing_bin):
    node = 0
    while left[node] >= 0:
        b = binned[i, feature[node]]
        if b == missing_bin:
            go_left = missing_left[node] != 0
        else:
            go_left = b <= bin_threshold[node]
        node = left[node] if go_left else right[node]
    return node


@njit(cache=True, nogil=True)
def _predict_binned_rows(lo, hi, binned, feature, bin_threshold, missing_left, left, right, value, missing_bin, out):
    for i in range(lo, hi):
        out[i] += value[_leaf_binned(binned, i, feature, bin_threshold, missing_left, left, right, missing_bin)]


def predict_binned(binned, tree, missing_bin, out):
    """out[i] += the value of the leaf row i of `binned` ([N, F] bins) reaches in `tree`
    (a dict of node arrays; children are node indices, -1 at leaves)."""
    args = (binned, tree["feature"], tree["bin_threshold"], tree["missing_left"], tree["left"],
            tree["right"], tree["value"], missing_bin, out)
    n = binned.shape[0]
    # fixed row chunks on the sleeping pool (no OpenMP spin between a tree's launches)
    _each(lambda lo: _predict_binned_rows(lo, min(n, lo + HIST_CHUNK), *args), range(0, n, HIST_CHUNK),
          parallel=n >= _PARALLEL_MIN)


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
def _predict_raw_parallel(x, starts, tree_out, feature, threshold, missing_left, left, right, value, out,
                          nchunks, workers):
    n = x.shape[0]
    counter = np.zeros(1, np.int64)
    for w in prange(workers):           # chunks pulled from a counter (kernels/_common.py)
        c = next_chunk(counter)
        while c < nchunks:
            for i in range(n * c // nchunks, n * (c + 1) // nchunks):
                _add_trees(x, i, starts, tree_out, feature, threshold, missing_left, left, right, value, out)
            c = next_chunk(counter)


def predict_raw(x, starts, tree_out, feature, threshold, missing_left, left, right, value, out):
    """out[i, tree_out[t]] += leaf value of tree t for row i of x ([N, F] float64). Trees are
    concatenated node arrays; tree t's nodes are starts[t]:starts[t+1], children tree-local."""
    args = (np.ascontiguousarray(x, np.float64), starts, tree_out, feature, threshold, missing_left,
            left, right, value, out)
    if x.shape[0] * max(len(starts) - 1, 1) < _PARALLEL_MIN:
        _predict_raw_serial(*args)
    else:
        workers = worker_count()
        with parallel_launch():
            _predict_raw_parallel(*args, chunk_count(x.shape[0], 1024), workers)


@njit(cache=True, nogil=True)
def _soft(g, alpha):
    if g > alpha:
        return g - alpha
    if g < -alpha:
        return g + alpha
    return 0.0


@njit(cache=True, nogil=True)
def _score(g, h, alpha, lam):
    d = h + lam
    if d <= 0.0:
        return 0.0
    t = _soft(g, alpha)
    return t * t / d


@njit(cache=True, nogil=True)
def best_split(hist, totals, n_bins, missing_bin, feature_mask, min_samples_leaf, min_child_weight,
               alpha, lam):
    """The best split of a node from its histogram ([F, missing_bin + 1, 3]): returns (gain,
    feature, bin t, missing_left option, left g, left h, left count); feature -1 when none is
    valid. Bins <= t go left; option 1 also sends the missing bin left (tried only when the node
    has missing values). Ties keep the first in (feature, t, option) order."""
    parent = _score(totals[0], totals[1], alpha, lam)
    best = -np.inf
    bf, bt, bo = -1, 0, 0
    bl0 = bl1 = bl2 = 0.0
    for f in range(hist.shape[0]):
        if not feature_mask[f]:
            continue
        mg, mh, mc = hist[f, missing_bin, 0], hist[f, missing_bin, 1], hist[f, missing_bin, 2]
        lg = lh = lc = 0.0
        for t in range(n_bins[f]):
            lg += hist[f, t, 0]
            lh += hist[f, t, 1]
            lc += hist[f, t, 2]
            for opt in range(2 if mc > 0 else 1):
                g0 = lg + mg * opt
                h0 = lh + mh * opt
                c0 = lc + mc * opt
                c1 = totals[2] - c0
                h1 = totals[1] - h0
                if c0 < min_samples_leaf or c1 < min_samples_leaf or h0 < min_child_weight or h1 < min_child_weight:
                    continue
                gain = 0.5 * (_score(g0, h0, alpha, lam) + _score(totals[0] - g0, h1, alpha, lam) - parent)
                if gain > best:
                    best, bf, bt, bo = gain, f, t, opt
                    bl0, bl1, bl2 = g0, h0, c0
    return best, bf, bt, bo, bl0, bl1, bl2

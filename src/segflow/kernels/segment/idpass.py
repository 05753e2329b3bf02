"""The compiled passes over segment ids alone: the check (`check_span` / `check_ids`: how many ids
are out of range, how many descents, the largest, in one read) and the rows per segment
(`count_span` / `count_ids`), serial or over fixed chunks pulled by `workers` threads (see
loops.py: results never depend on the thread count).
"""
import numpy as np

from segflow.kernels._common import next_chunk, njit, prange


@njit(cache=True, nogil=True)
def check_span(ids, lo, hi, a, b):
    """Over ids[a:b]: (count outside [lo, hi), count of descents ids[i] < ids[i-1], max or -2**62).
    Loops run over views from 0 (no wraparound checks), so they vectorise."""
    xs = ids[a:b]
    nbad = 0
    top = -(1 << 62)
    for i in range(xs.shape[0]):
        v = xs[i]
        nbad += (v < lo) | (v >= hi)
        top = max(top, v)
    ys = ids[max(a, 1) - 1:b]
    ndesc = 0
    for i in range(1, ys.shape[0]):
        ndesc += ys[i] < ys[i - 1]
    return nbad, ndesc, top


@njit(cache=True, nogil=True, parallel=True)
def check_ids(ids, lo, hi, nchunks, workers):
    """`check_span` over `nchunks` chunks in parallel: one (nbad, ndesc, max) row per chunk."""
    n = ids.shape[0]
    stats = np.zeros((nchunks, 3), np.int64)
    counter = np.zeros(1, np.int64)
    for w in prange(workers):
        c = next_chunk(counter)
        while c < nchunks:
            nbad, ndesc, top = check_span(ids, lo, hi, n * c // nchunks, n * (c + 1) // nchunks)
            stats[c, 0] = nbad
            stats[c, 1] = ndesc
            stats[c, 2] = top
            c = next_chunk(counter)
    return stats


@njit(cache=True, nogil=True)
def count_span(ids, a, b, counts):
    """counts[s] += 1 for each id s >= 0 in ids[a:b] (ids already checked)."""
    xs = ids[a:b]
    for i in range(xs.shape[0]):
        s = xs[i]
        if s >= 0:
            counts[s] += 1


@njit(cache=True, nogil=True, parallel=True)
def count_ids(ids, S, nparts, workers):
    """Rows per id in [0, S), negatives dropped (ids already checked), int64, in parallel."""
    n = ids.shape[0]
    parts = np.zeros((nparts, S), np.int64)
    counter = np.zeros(1, np.int64)
    for w in prange(workers):
        c = next_chunk(counter)
        while c < nparts:
            count_span(ids, n * c // nparts, n * (c + 1) // nparts, parts[c])
            c = next_chunk(counter)
    out = parts[0].copy()
    for c in range(1, nparts):
        out += parts[c]
    return out


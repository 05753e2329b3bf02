"""Unique values of 1-D integer arrays in order of first appearance, by hashing (TF's Unique).

`unique_int(x, out_idx)` returns (y, idx, count): the distinct values of `x` in the order they first
appear, the position in y of every element of x, and how often each value occurs. One serial pass
over x with an open-addressing hash table (linear probing, a table of at least twice len(x)
slots), so it costs O(n), not a sort, and the result never depends on threads. Only int32/int64
inputs take this path (callers keep a sort-based path for other dtypes and for a missing Numba).
"""
import numpy as np

from segflow.kernels._common import CACHED_BYTES, HAVE_NUMBA, PREFETCH_AHEAD, BadInput, njit, prefetch

__all__ = ["unique_int", "HAVE_NUMBA"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True, inline="always")
def _slot(v, shift):
    return np.int64((np.uint64(np.int64(v)) * _GOLDEN) >> shift)


@njit(cache=True, nogil=True, inline="always")
def _find_or_add(where, y, v, h, mask, k):
    """(position of v in y, new k): probes from slot h; a new key goes to y[k]."""
    while True:
        p = where[h]
        if p < 0:
            where[h] = k
            y[k] = v
            return k, k + 1
        if y[p] == v:
            return p, k
        h = (h + 1) & mask


@njit(cache=True, nogil=True)
def _unique_hash(x, idx, bits):
    n = x.shape[0]
    cap = 1 << bits
    mask = cap - 1
    shift = np.uint64(64 - bits)
    # slot h holds the position in y of its key (-1: empty); keys are compared in y, which is
    # filled in order: 4 bytes a slot keeps the table small (fewer cache misses and page faults)
    where = np.full(cap, -1, np.int32)
    y = np.empty(n, x.dtype)
    count = np.zeros(n, np.int32)
    k = 0
    if cap * 4 <= CACHED_BYTES:
        for i in range(n):
            v = x[i]
            p, k = _find_or_add(where, y, v, _slot(v, shift), mask, k)
            idx[i] = p
            count[p] += 1
    else:
        # A table past L2: the slot of the key PREFETCH_AHEAD on is prefetched, and a repeat of the key
        # before (sorted or grouped ids) skips the probe. In L2 neither pays (a probe costs about
        # what the repeat test's mispredictions cost on skewed random ids).
        prev_v = x[0]
        prev_p = -1
        for i in range(n):
            if i + PREFETCH_AHEAD < n:
                prefetch(where, _slot(x[i + PREFETCH_AHEAD], shift))
            v = x[i]
            if prev_p >= 0 and v == prev_v:
                idx[i] = prev_p
                count[prev_p] += 1
                continue
            p, k = _find_or_add(where, y, v, _slot(v, shift), mask, k)
            idx[i] = p
            count[p] += 1
            prev_v = v
            prev_p = p
    return y[:k].copy(), count[:k].copy()


def unique_int(x, out_idx=np.int32):
    """(y, idx, count) of 1-D int32/int64 `x`: distinct values in order of first appearance, the
    position in y of each element (dtype `out_idx`), and each value's count (dtype `out_idx`)."""
    x = np.ascontiguousarray(x)
    out_idx = np.dtype(out_idx)
    n = x.shape[0]
    if n >= 2**31 - 1:
        raise BadInput("x", f"has {n} elements; unique handles fewer than 2**31")
    idx = np.empty(n, out_idx)
    bits = max(4, int(2 * n - 1).bit_length())     # 2**bits >= 2n: load factor <= 1/2
    y, count = _unique_hash(x, idx, bits)
    return y, idx, count.astype(out_idx, copy=False)

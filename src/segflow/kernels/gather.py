"""Row gather: out[i] = table[rows[i]] for a C-contiguous table, rows copied by parallel threads.

`take_rows(table, rows)` is `np.take(table, rows, axis=0)` for validated 1-D row ids. Large gathers
(1e5 rows of a 1e6 x 64 float32 table) are memory-bound random row copies; one thread reaches
about half the copy bandwidth, so the rows are split over the Numba threads (the result is a copy,
identical whatever the thread count). Rows are copied as raw words (uint64/uint32/uint8 views), so
every non-object dtype takes the same compiled loop (rows of 64 bytes a copy of it with the width
fixed); outputs larger than the last-level cache are written with streaming stores. Small gathers, non-contiguous tables and object arrays use np.take.
"""
import numpy as np

from segflow.kernels._common import (HAVE_NUMBA, chunk_count, next_chunk, njit, parallel_launch, prange,
                                     prefetch_lines, row_lines, store_fence, stream_store, streaming_pays,
                                     worker_count)

__all__ = ["take_rows"]

# Below this many output bytes np.take is faster: a parallel launch wakes a sleeping worker (0.1-0.2
# ms on the 2-core VM). Random rows of 256 B from a 1e6-row table, median ms, one call after
# another, np.take / this kernel on 1 thread / on 2: 1 MB 0.06 / 0.08 / 0.17, 4 MB 0.17-0.19 /
# 0.19-0.23 / 0.25-0.31, 6 MB 0.71 / 0.47 / 0.44, 16 MB 3.27 / 1.76 / 1.56.
_PARALLEL_MIN_BYTES = 4 << 20
_CHUNK_BYTES = 1 << 18             # output bytes per chunk the threads pull
# Rows ahead whose first lines are prefetched. 1e5 random rows of 256 bytes, 2 threads, the kernel
# alone, ordinary / streaming stores, ms: 4 rows 2.44-2.55 / 2.70-2.74, 8: 2.02-2.24 / 1.95-2.03,
# 16: 1.90-1.99 / 1.80-1.82, 32: 1.99-2.01 / 1.91-1.92 (the copy floor of those bytes ~1.77).
_ROWS_AHEAD = 16
# Row ids the loop reads as they are (int32 ids were widened to int64 first: for 1e6 ids into a
# 1e4 x 16 float32 table, 0.3 ms of the 4.7 ms gather)
_ROW_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


@njit(cache=True, nogil=True, parallel=True)
def _take_rows_nb(table, rows, out, nchunks, workers, stream):
    """out[i] = table[rows[i]]; each chunk prefetches the first cache lines (up to 8) of the row
    _ROWS_AHEAD rows ahead, and writes with streaming stores if `stream` (an output larger than
    the cache: see kernels/_common.py)."""
    n = rows.shape[0]
    d = table.shape[1]
    flat = table.reshape(-1)
    lines = row_lines(d * table.itemsize)
    counter = np.zeros(1, np.int64)
    for w in prange(workers):
        c = next_chunk(counter)
        while c < nchunks:
            a = n * c // nchunks
            b = n * (c + 1) // nchunks
            for i in range(a, b):
                if i + _ROWS_AHEAD < b:
                    prefetch_lines(flat, rows[i + _ROWS_AHEAD] * d, lines)
                r = rows[i]
                if stream:
                    for j in range(d):
                        stream_store(out, i, j, table[r, j])
                else:
                    for j in range(d):
                        out[i, j] = table[r, j]
            if stream:
                store_fence()
            c = next_chunk(counter)


# The loop above for rows of 8 words (64 bytes: 16 float32 or 8 float64, one cache line), with the
# width and the prefetched lines as constants, so that a row's copy compiles to a few vector moves:
# 1e6 rows from a table in cache, 2 threads, interleaved, 0.80-0.96x the time of the loop above.
# It is written out again on purpose: sharing one body through an inlined helper made the general
# loop 5-13% slower (and 1.5x with a called one) on rows of other widths.
@njit(cache=True, nogil=True, parallel=True)
def _take_rows_64b_nb(table, rows, out, nchunks, workers, stream):
    n = rows.shape[0]
    flat = table.reshape(-1)
    counter = np.zeros(1, np.int64)
    for w in prange(workers):
        c = next_chunk(counter)
        while c < nchunks:
            a = n * c // nchunks
            b = n * (c + 1) // nchunks
            for i in range(a, b):
                if i + _ROWS_AHEAD < b:
                    prefetch_lines(flat, rows[i + _ROWS_AHEAD] * 8, 1)
                r = rows[i]
                if stream:
                    for j in range(8):
                        stream_store(out, i, j, table[r, j])
                else:
                    for j in range(8):
                        out[i, j] = table[r, j]
            if stream:
                store_fence()
            c = next_chunk(counter)


def _word(row_bytes):
    for dt in (np.uint64, np.uint32, np.uint8):
        if row_bytes % np.dtype(dt).itemsize == 0:
            return np.dtype(dt)


def take_rows(table, rows):
    """table[rows] along axis 0 (rows: 1-D ints, already checked to be in range)."""
    n = rows.shape[0]
    row_bytes = table.itemsize * (table.size // table.shape[0]) if table.ndim and table.shape[0] else 0
    if (not HAVE_NUMBA or table.dtype.hasobject or table.ndim == 0 or not table.flags.c_contiguous
            or row_bytes == 0 or n == 0 or n * row_bytes < _PARALLEL_MIN_BYTES):
        return np.take(table, rows, axis=0)
    word = _word(row_bytes)
    src = table.reshape(table.shape[0], -1).view(word).reshape(table.shape[0], row_bytes // word.itemsize)
    out = np.empty((n,) + table.shape[1:], table.dtype)
    dst = out.reshape(n, -1).view(word).reshape(n, row_bytes // word.itemsize)
    if rows.dtype not in _ROW_DTYPES or not rows.flags.c_contiguous:
        rows = np.ascontiguousarray(rows, dtype=np.int64)
    workers = worker_count()
    kernel = _take_rows_64b_nb if src.shape[1] == 8 else _take_rows_nb
    with parallel_launch():
        kernel(src, rows, dst,
                      chunk_count(n * row_bytes, _CHUNK_BYTES), workers, streaming_pays(n * row_bytes))
    return out

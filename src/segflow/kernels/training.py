"""Optimizer update kernels: in place on NumPy arrays (a variable's value and its slots).

`lazy_adam_rows(W, M, V, rows, g, lr, beta1, beta2, epsilon)`: LazyAdam's sparse step on the rows
named, with exactly the arithmetic (operations, order, dtype) of the unfused ops

    m_rows = beta1 * M[rows] + (1 - beta1) * g
    v_rows = beta2 * V[rows] + (1 - beta2) * g * g
    M[rows] = m_rows; V[rows] = v_rows                       (scatter_update: the last duplicate wins)
    W[rows] -= lr * m_rows / (sqrt(v_rows) + epsilon)        (scatter_sub: every duplicate applies)

Unique rows (what the optimizers pass after summing duplicates) of float32/float64 tables take one
parallel compiled pass that reads and writes each row once (the same loop on the calling thread when
the rows make one chunk, under 128K elements: waking the pool for one chunk costs more than the
work); otherwise the NumPy expressions above. Callers validate the rows first.

`adagrad_rows(W, A, rows, g, lr)`: Adagrad's sparse step on the rows named, with the arithmetic of

    a_rows = A[rows] + g * g;  A[rows] = a_rows;  W[rows] -= lr * g / sqrt(a_rows)

(one parallel compiled pass for unique rows of float32/float64 tables, else those expressions).

`adam_decay(M, V, beta1, beta2)` (M *= beta1; V *= beta2) and `adam_step(W, M, V, lr, epsilon)`
(W -= lr * M / (sqrt(V) + epsilon)): the whole-table parts of Adam's dense-faithful sparse step, in
place, element by element with the same arithmetic as the NumPy expressions (parallel compiled
loops for float32/float64; NumPy over blocks of rows otherwise: no table-sized temporaries).
"""
import numpy as np

from segflow.kernels import scatter
from segflow.kernels._common import (HAVE_NUMBA, chunk_count, next_chunk, njit, parallel_launch, prange,
                                     ROW_AHEAD, prefetch_lines, row_lines, worker_count)

__all__ = ["lazy_adam_rows", "adagrad_rows", "adam_decay", "adam_step"]


@njit(cache=True, nogil=True)
def _all_distinct(rows, nrows):
    seen = np.zeros(nrows, np.uint8)
    for i in range(rows.shape[0]):
        r = rows[i]
        if seen[r]:
            return False
        seen[r] = 1
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def _lazy_adam_span(W, M, V, rows, g, lr, b1, b2, eps, c1, c2, a, b):
    """LazyAdam on rows[a:b]. The rows of W, M and V ROW_AHEAD ahead are prefetched: 95,000
    distinct rows of a 1e6 x 64 float32 table, 0.77-0.80x the time without (Adagrad 0.72-0.74x)."""
    d = W.shape[1]
    fw, fm, fv = W.reshape(-1), M.reshape(-1), V.reshape(-1)
    lines = row_lines(d * W.itemsize)
    for i in range(a, b):
        if i + ROW_AHEAD < b:
            q = rows[i + ROW_AHEAD] * d
            prefetch_lines(fw, q, lines)
            prefetch_lines(fm, q, lines)
            prefetch_lines(fv, q, lines)
        r = rows[i]
        for j in range(d):
            gi = g[i, j]
            m = b1 * M[r, j] + c1 * gi
            v = b2 * V[r, j] + c2 * gi * gi
            M[r, j] = m
            V[r, j] = v
            W[r, j] -= lr * m / (np.sqrt(v) + eps)


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def _lazy_adam_nb(W, M, V, rows, g, lr, b1, b2, eps, c1, c2, nchunks, workers):
    n = rows.shape[0]
    counter = np.zeros(1, np.int64)
    for w in prange(workers):
        c = next_chunk(counter)
        while c < nchunks:
            _lazy_adam_span(W, M, V, rows, g, lr, b1, b2, eps, c1, c2, n * c // nchunks, n * (c + 1) // nchunks)
            c = next_chunk(counter)


def lazy_adam_rows(W, M, V, rows, g, lr, beta1, beta2, epsilon):
    """In place on the 2-D C-contiguous arrays W (var), M, V (slots): LazyAdam on `rows` (1-D, in
    range) with gradient rows `g` ([len(rows), W.shape[1]], W's dtype); scalars of W's dtype."""
    if rows.size == 0:
        return
    t = W.dtype.type
    lr, b1, b2, eps = t(lr), t(beta1), t(beta2), t(epsilon)
    one = t(1)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if HAVE_NUMBA and W.dtype in (np.float32, np.float64) and _all_distinct(rows, W.shape[0]):
        _rows_pass(_lazy_adam_span, _lazy_adam_nb, rows.size, W.shape[1],
                   (W, M, V, rows, np.ascontiguousarray(g), lr, b1, b2, eps, one - b1, one - b2))
        return
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):     # inf/nan as the unfused ops
        m_rows = b1 * np.take(M, rows, axis=0) + (one - b1) * g
        v_rows = b2 * np.take(V, rows, axis=0) + (one - b2) * g * g
        step = lr * m_rows / (np.sqrt(v_rows) + eps)
    scatter.scatter_rows(M, rows, m_rows, "update")
    scatter.scatter_rows(V, rows, v_rows, "update")
    scatter.scatter_rows(W, rows, step, "sub")


@njit(cache=True, nogil=True, error_model="numpy")
def _adagrad_span(W, A, rows, g, lr, a, b):
    """Adagrad on rows[a:b]; the rows of W and A ROW_AHEAD ahead are prefetched, as in
    _lazy_adam_span."""
    d = W.shape[1]
    fw, fa = W.reshape(-1), A.reshape(-1)
    lines = row_lines(d * W.itemsize)
    for i in range(a, b):
        if i + ROW_AHEAD < b:
            prefetch_lines(fw, rows[i + ROW_AHEAD] * d, lines)
            prefetch_lines(fa, rows[i + ROW_AHEAD] * d, lines)
        r = rows[i]
        for j in range(d):
            gi = g[i, j]
            acc = A[r, j] + gi * gi
            A[r, j] = acc
            W[r, j] -= lr * gi / np.sqrt(acc)


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def _adagrad_nb(W, A, rows, g, lr, nchunks, workers):
    n = rows.shape[0]
    counter = np.zeros(1, np.int64)
    for w in prange(workers):
        c = next_chunk(counter)
        while c < nchunks:
            _adagrad_span(W, A, rows, g, lr, n * c // nchunks, n * (c + 1) // nchunks)
            c = next_chunk(counter)


def adagrad_rows(W, A, rows, g, lr):
    """In place on the 2-D C-contiguous arrays W (var) and A (accumulator): Adagrad on `rows` (1-D, in
    range) with gradient rows `g` ([len(rows), W.shape[1]], W's dtype); `lr` a scalar of W's dtype."""
    if rows.size == 0:
        return
    lr = W.dtype.type(lr)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if HAVE_NUMBA and W.dtype in (np.float32, np.float64) and _all_distinct(rows, W.shape[0]):
        _rows_pass(_adagrad_span, _adagrad_nb, rows.size, W.shape[1], (W, A, rows, np.ascontiguousarray(g), lr))
        return
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):     # inf/nan as the unfused ops
        a_rows = np.take(A, rows, axis=0) + g * g
        step = lr * g / np.sqrt(a_rows)
    scatter.scatter_rows(A, rows, a_rows, "update")
    scatter.scatter_rows(W, rows, step, "sub")


_BLOCK_BYTES = 4 << 20


# Below this many elements the row passes run their compiled span on the calling thread: waking a
# sleeping worker costs 0.1-0.2 ms on the 2-core VM. lazy_adam_rows on rows of 64 float32, median
# ms, one call after another, 2 threads / 1: 4096 rows 0.30 / 0.15, 10000 rows 0.61 / 0.56, 1e5
# rows 6.3 / 11.6. (The dense passes have no one-thread compiled span; their alternative, the
# NumPy blocks, is 1.45x slower than two threads from 5e5 elements, so they keep `_chunks`.)
_PARALLEL_ELEMENTS = 1 << 20


def _chunks(n, d):
    """Chunks of rows the threads pull for n rows of width d (about 64K elements each)."""
    return chunk_count(n * max(d, 1), 1 << 16)


def _rows_pass(span, parallel, n, d, args):
    """`span(*args, 0, n)` on the calling thread below _PARALLEL_ELEMENTS (waking the pool would
    cost more than the second thread saves), else `parallel(*args, nchunks, workers)`."""
    nchunks = _chunks(n, d)
    if nchunks == 1 or n * max(d, 1) < _PARALLEL_ELEMENTS:
        span(*args, 0, n)
        return
    workers = worker_count()
    with parallel_launch():
        parallel(*args, nchunks, workers)


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def _adam_decay_nb(M, V, b1, b2, nchunks, workers):
    n = M.shape[0]
    d = M.shape[1]
    counter = np.zeros(1, np.int64)
    for w in prange(workers):
        c = next_chunk(counter)
        while c < nchunks:
            for i in range(n * c // nchunks, n * (c + 1) // nchunks):
                for j in range(d):
                    M[i, j] = M[i, j] * b1
                    V[i, j] = V[i, j] * b2
            c = next_chunk(counter)


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def _adam_step_nb(W, M, V, lr, eps, nchunks, workers):
    n = W.shape[0]
    d = W.shape[1]
    counter = np.zeros(1, np.int64)
    for w in prange(workers):
        c = next_chunk(counter)
        while c < nchunks:
            for i in range(n * c // nchunks, n * (c + 1) // nchunks):
                for j in range(d):
                    W[i, j] -= lr * M[i, j] / (np.sqrt(V[i, j]) + eps)
            c = next_chunk(counter)


def _compiled_chunks(*arrays):
    """The chunks the parallel loop cuts the arrays into, or 0 for the NumPy blocks (same
    arithmetic, no launch): tables of one chunk, other dtypes, non-contiguous arrays."""
    a = arrays[0]
    if not (HAVE_NUMBA and a.dtype in (np.float32, np.float64) and all(x.flags.c_contiguous for x in arrays)):
        return 0
    nchunks = _chunks(a.shape[0], a.shape[1])
    return nchunks if nchunks > 1 else 0


def adam_decay(M, V, beta1, beta2):
    """In place on 2-D M, V of one dtype: M *= beta1; V *= beta2 (scalars of that dtype)."""
    t = M.dtype.type
    b1, b2 = t(beta1), t(beta2)
    nchunks = _compiled_chunks(M, V)
    if nchunks:
        workers = worker_count()
        with parallel_launch():
            _adam_decay_nb(M, V, b1, b2, nchunks, workers)
        return
    block = max(1, _BLOCK_BYTES // max(1, M.shape[1] * M.itemsize))
    for a in range(0, M.shape[0], block):
        M[a:a + block] *= b1
        V[a:a + block] *= b2


def adam_step(W, M, V, lr, epsilon):
    """In place on 2-D W, M, V of one dtype: W -= lr * M / (sqrt(V) + epsilon)."""
    t = W.dtype.type
    lr, eps = t(lr), t(epsilon)
    nchunks = _compiled_chunks(W, M, V)
    if nchunks:
        workers = worker_count()
        with parallel_launch():
            _adam_step_nb(W, M, V, lr, eps, nchunks, workers)
        return
    block = max(1, _BLOCK_BYTES // max(1, W.shape[1] * W.itemsize))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):    # inf/nan as the unfused ops
        for a in range(0, W.shape[0], block):
            step = lr * M[a:a + block]
            denom = np.sqrt(V[a:a + block])
            denom += eps
            step /= denom
            W[a:a + block] -= step

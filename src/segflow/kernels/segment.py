"""Segment reductions: unsorted, sorted and sparse segment ops, segment counts, bincount.

NumPy arrays in, a NumPy array out. Semantics are TensorFlow's (see each function).

How the work is done (chosen by shape and by what a cheap first pass over the ids finds):

- `_check_span` / `_check_ids` read the ids once (vectorised; parallel when large): how many are
  out of range, how many descents, the largest. Bad positions are looked up on the error path only.
- Non-decreasing ids (the sorted ops, the sparse ops, and unsorted ops fed sorted ids) take
  `_runs_block`: a run-length reduction that writes each output row once, in the output dtype,
  gaps getting the fill value. Long runs are found by galloping and summed with four
  accumulators; short runs with D == 1 use a branch-free loop (each row stores its run's running
  result). `_runs` gives threads blocks of rows cut at run starts, so every segment is reduced by
  one thread in row order: bit-identical whatever the thread count.
- Random ids with small S*D take `_scatter_private`: a fixed number of row chunks (set by the
  shape, never by the thread count), each with private accumulators, combined in chunk order.
- Random ids with large S*D take `_scatter_bucketed`: a stable parallel partition of the rows into
  buckets of 2**shift segments, then one thread per bucket reduces its rows in row order in
  accumulators that fit in cache and writes them once. D == 1 moves values, D > 1 row numbers.
- Inputs below `_SMALL` elements call the serial loops directly (`_check_span`, `_runs_block`,
  `_private_span`, `_count_span`): a parallel launch costs more than they do.

Compiled loops see data of three dtypes (float32, float64, int64) and ids int32/int64, which keeps
specializations (and cold compile time) few: float16/bfloat16 are widened to float32 and smaller
integers to int64 before the loop, uint64 is viewed as int64 (sums and products wrap alike) or
sign-flipped for max/min, complex sums run on the (re, im) float pairs, and complex products take
`_numpy_reduce`. float32 sums accumulate in float64 (`accumulate="wide"`, the default) as they
are read, never converting the data first. The kind is a run-time argument of the loops.
Nothing is compiled at import. Without Numba, `_numpy_reduce` computes the same results.
"""
import functools
import math

import numpy as np

from segflow.kernels._common import (HAVE_NUMBA, BadInput, accumulator_dtype, index_text, njit,
                                     parallel_launch, prange)

try:
    import ml_dtypes
    _BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    ml_dtypes = None
    _BFLOAT16 = None

# Reduction codes passed to the compiled loops. MEAN and SQRT_N accumulate like SUM and are
# scaled by the row count when a segment is finished (`scale` 1 or 2).
SUM, PROD, MAX, MIN = 0, 1, 2, 3
_KINDS = {"sum": (SUM, 0), "prod": (PROD, 0), "max": (MAX, 0), "min": (MIN, 0),
          "mean": (SUM, 1), "sqrt_n": (SUM, 2)}
_UNSORTED_KINDS = ("sum", "prod", "max", "min", "mean", "sqrt_n")
_SORTED_KINDS = ("sum", "prod", "max", "min", "mean")
_SPARSE_KINDS = ("sum", "mean", "sqrt_n")

_SMALL = 1 << 15          # below this many elements, run on one thread with one chunk
_PRIVATE_MAX_BYTES = 2 << 20   # per-chunk accumulators of random-id scatters stay under this
_BUCKET_BYTES = 1 << 20        # accumulators of one bucket (about one core's L2)
_MAX_PARTS = 8                 # fixed row chunks of the private scatter (thread-independent)
_BUCKET_MIN_THREADS_1D = 4     # D == 1 buckets beat a serial scatter only with this many threads


# ----------------------------------------------------------------------------- compiled pieces

if HAVE_NUMBA:
    import numba
    from numba import types
    from numba.extending import overload

    def _finish(scale, v, count):
        """v, or v / count (scale 1), or v / sqrt(count) (scale 2); v when count == 0."""

    @overload(_finish)
    def _finish_impl(scale, v, count):
        if isinstance(v, types.Integer):  # mean and sqrt_n are refused for integers
            return lambda scale, v, count: v

        def impl(scale, v, count):
            if scale == 0 or count == 0:
                return v
            if scale == 1:
                return v / count
            return v / np.sqrt(np.float64(count))
        return impl

    def _threads(num_threads):
        return max(1, int(numba.get_num_threads() if num_threads is None else num_threads))

    class _thread_limit:
        """Runs the enclosed kernels on at most `n` Numba threads (results never depend on it).
        Every parallel kernel here launches inside one, so it also holds `parallel_launch()`
        (serialises launches on a threading layer that is not thread-safe)."""

        def __init__(self, n):
            self.n = min(n, numba.config.NUMBA_NUM_THREADS)

        def __enter__(self):
            self.launch = parallel_launch()
            self.launch.__enter__()
            try:
                self.old = numba.get_num_threads()
                if self.n != self.old:
                    numba.set_num_threads(self.n)
            except BaseException:
                self.launch.__exit__(None, None, None)
                raise

        def __exit__(self, *exc):
            try:
                if self.n != self.old:
                    numba.set_num_threads(self.old)
            finally:
                self.launch.__exit__(*exc)
else:  # pragma: no cover
    import contextlib

    def _threads(num_threads):
        return 1

    def _thread_limit(n):
        return contextlib.nullcontext()


@njit(cache=True, nogil=True, inline="always")
def _combine(op, a, b):
    """a (+|*|max|min) b for real a, b; max and min propagate NaN."""
    if op == SUM:
        return a + b
    if op == PROD:
        return a * b
    if op == MAX:
        return b if (b > a) | (b != b) else a
    return b if (b < a) | (b != b) else a


@njit(cache=True, nogil=True)
def _check_span(ids, lo, hi, a, b):
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
def _check_ids(ids, lo, hi, nchunks):
    """`_check_span` over `nchunks` chunks in parallel: one (nbad, ndesc, max) row per chunk."""
    n = ids.shape[0]
    stats = np.zeros((nchunks, 3), np.int64)
    for c in prange(nchunks):
        nbad, ndesc, top = _check_span(ids, lo, hi, n * c // nchunks, n * (c + 1) // nchunks)
        stats[c, 0] = nbad
        stats[c, 1] = ndesc
        stats[c, 2] = top
    return stats


@njit(cache=True, nogil=True)
def _run_start(ids, i):
    """The first position of the run of equal (non-decreasing) ids that holds position i."""
    lo = 0
    hi = i
    v = ids[i]
    while lo < hi:
        mid = (lo + hi) // 2
        if ids[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _run_end(xs, i):
    """The first position after i whose id differs from xs[i] (xs non-decreasing): a short
    linear look, then galloping and bisection, so long runs cost O(log length)."""
    m = xs.shape[0]
    s = xs[i]
    j = i + 1
    limit = min(i + 8, m)
    while j < limit and xs[j] == s:
        j += 1
    if j < limit or j == m:
        return j
    lo = j  # xs[lo - 1] == s
    step = 8
    hi = lo + step
    while hi < m and xs[hi] == s:
        lo = hi + 1
        step *= 2
        hi = lo + step
    hi = min(hi, m)
    while lo < hi:
        mid = (lo + hi) // 2
        if xs[mid] == s:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _reduce_span(op, v, col, i, j):
    """v combined with col[i:j]; sums use four accumulators (a fixed order: no thread effect)."""
    if op != SUM or j - i < 16:
        for k in range(i, j):
            v = _combine(op, v, col[k])
        return v
    zero = v - v
    s0 = v
    s1 = zero
    s2 = zero
    s3 = zero
    k = i
    while k + 4 <= j:
        s0 += col[k]
        s1 += col[k + 1]
        s2 += col[k + 2]
        s3 += col[k + 3]
        k += 4
    while k < j:
        s0 += col[k]
        k += 1
    return (s0 + s1) + (s2 + s3)


@njit(cache=True, nogil=True, inline="always")
def _combine_rows(op, acc, s, data, r):
    """acc[s, k] = acc[s, k] (op) data[r, k] for every k: one plain loop per op, inlined into
    the caller (a call, or a branch on op inside the loop, keeps these from vectorising)."""
    D = acc.shape[1]
    if op == SUM:
        for k in range(D):
            acc[s, k] += data[r, k]
    elif op == PROD:
        for k in range(D):
            acc[s, k] *= data[r, k]
    elif op == MAX:
        for k in range(D):
            a = acc[s, k]
            b = data[r, k]
            acc[s, k] = b if (b > a) | (b != b) else a
    else:
        for k in range(D):
            a = acc[s, k]
            b = data[r, k]
            acc[s, k] = b if (b < a) | (b != b) else a


@njit(cache=True, nogil=True)
def _runs_block(op, scale, data, order, ids, init, fill, out, a, b, last):
    """The rows a..b-1 (cut at run starts) of `_runs`: writes segments ids[a-1]+1 .. ids[b-1],
    and up to the last segment if `last`."""
    S = out.shape[0]
    D = out.shape[1]
    gathered = order.shape[0] > 0
    init0 = init[0]
    fill0 = fill[0]
    prev = -1
    if a > 0 and ids[a - 1] > prev:
        prev = ids[a - 1]
    xs = ids[a:b]
    m = xs.shape[0]
    perm = order[a:b]
    rows = data if gathered else data[a:b]
    if D == 1 and ids.shape[0] < 16 * S:
        # Short runs: a data-dependent branch per run would be mispredicted, so each row stores
        # its run's running result (the run's last store is the answer) over pre-filled rows.
        top = xs[m - 1] if m > 0 else prev
        for g in range(prev + 1, S if last else top + 1):
            out[g, 0] = fill0
        v = init0
        count = 0
        before = -(1 << 62)
        for i in range(m):
            s = xs[i]
            new = s != before
            v = _combine(op, init0 if new else v, rows[perm[i] if gathered else i, 0])
            count = (0 if new else count) + 1
            if s >= 0:
                out[s, 0] = _finish(scale, v, count)
            before = s
        return
    acc = np.empty((1, D), init.dtype)
    col = rows[:, 0] if D == 1 else rows[:0, 0]
    i = 0
    while i < m:
        s = xs[i]
        j = _run_end(xs, i)
        if s >= 0:
            for g in range(prev + 1, s):
                for k in range(D):
                    out[g, k] = fill0
            if D == 1 and not gathered:
                out[s, 0] = _finish(scale, _reduce_span(op, init0, col, i, j), j - i)
            elif D == 1:
                v = init0
                for r in range(i, j):
                    v = _combine(op, v, rows[perm[r], 0])
                out[s, 0] = _finish(scale, v, j - i)
            else:
                for k in range(D):
                    acc[0, k] = init0
                for r in range(i, j):
                    _combine_rows(op, acc, 0, rows, perm[r] if gathered else r)
                for k in range(D):
                    out[s, k] = _finish(scale, acc[0, k], j - i)
            prev = s
        i = j
    if last:
        for g in range(prev + 1, S):
            for k in range(D):
                out[g, k] = fill0


@njit(cache=True, nogil=True, parallel=True)
def _runs(op, scale, data, order, ids, init, fill, out, nt):
    """out[s] = reduce of the rows with id s, ids non-decreasing (negative ids lead and are
    dropped), rows data[order[i]] if order is non-empty else data[i]; empty segments get fill.
    Threads take blocks of rows cut at run starts, so each segment is one thread's work."""
    n = ids.shape[0]
    bounds = np.zeros(nt + 1, np.int64)
    bounds[nt] = n
    for t in range(1, nt):
        bounds[t] = _run_start(ids, n * t // nt) if n > 0 else 0
    for t in prange(nt):
        _runs_block(op, scale, data, order, ids, init, fill, out, bounds[t], bounds[t + 1],
                    t == nt - 1)


@njit(cache=True, nogil=True)
def _private_span(op, scale, data, ids, a, b, part, count):
    """part[ids[i]] (op)= data[i] for i in a..b-1 with ids[i] >= 0; counts rows if scale."""
    xs = ids[a:b]
    D = part.shape[1]
    if D == 1:
        col = data[a:b, 0]
        acc = part[:, 0]
        if op == SUM:
            for i in range(xs.shape[0]):
                s = xs[i]
                if s >= 0:
                    acc[s] += col[i]
        else:
            for i in range(xs.shape[0]):
                s = xs[i]
                if s >= 0:
                    acc[s] = _combine(op, acc[s], col[i])
    else:
        rows = data[a:b]
        for i in range(xs.shape[0]):
            s = xs[i]
            if s >= 0:
                _combine_rows(op, part, s, rows, i)
    if scale != 0:
        for i in range(xs.shape[0]):
            s = xs[i]
            if s >= 0:
                count[s] += 1


@njit(cache=True, nogil=True)
def _private_finish(op, scale, parts, counts, out, s0, s1):
    """out[s] = the chunks' partial results for s combined in chunk order, s in s0..s1-1,
    folded into parts[0] a chunk at a time over flat (1, m) views so that the loops vectorise."""
    nparts = parts.shape[0]
    D = out.shape[1]
    m = (s1 - s0) * D
    first = parts[0].reshape(-1)[s0 * D:s1 * D].reshape(1, m)
    for c in range(1, nparts):
        _combine_rows(op, first, 0, parts[c].reshape(-1)[s0 * D:s1 * D].reshape(1, m), 0)
    flat = out.reshape(-1)[s0 * D:s1 * D]
    if scale == 0:
        for k in range(m):
            flat[k] = first[0, k]
        return
    for s in range(s1 - s0):
        count = 0
        for c in range(nparts):
            count += counts[c, s0 + s]
        for k in range(D):
            flat[s * D + k] = _finish(scale, first[0, s * D + k], count)


@njit(cache=True, nogil=True, parallel=True)
def _scatter_private(op, scale, data, ids, parts, counts, out, nt):
    """out[s] = reduce of the rows with id s (checked ids, negatives dropped): each of the
    len(parts) fixed row chunks accumulates in its own parts[c] (pre-filled with the start
    value; counts[c] when scale), then the chunks are combined in chunk order."""
    n = ids.shape[0]
    S = out.shape[0]
    nparts = parts.shape[0]
    for c in prange(nparts):
        _private_span(op, scale, data, ids, n * c // nparts, n * (c + 1) // nparts, parts[c],
                      counts[c])
    for t in prange(nt):
        _private_finish(op, scale, parts, counts, out, S * t // nt, S * (t + 1) // nt)


@njit(cache=True, nogil=True, parallel=True)
def _scatter_bucketed(op, scale, data, ids, init, out, shift, nchunks):
    """out[s] = reduce of the rows with id s (checked ids, negatives dropped): rows are
    partitioned, stably, into buckets of 2**shift segments; each bucket is reduced in row order
    by one thread in accumulators that fit in cache and written once."""
    n = ids.shape[0]
    S = out.shape[0]
    D = out.shape[1]
    width = 1 << shift
    nb = ((S - 1) >> shift) + 1 if S > 0 else 0
    hist = np.zeros((nchunks, nb + 1), np.int64)
    for c in prange(nchunks):
        h = hist[c]
        xs = ids[n * c // nchunks:n * (c + 1) // nchunks]
        for i in range(xs.shape[0]):
            s = xs[i]
            if s >= 0:
                h[s >> shift] += 1
    # chunk c's rows of bucket b go to offsets[c, b] onwards: bucket-major, chunk order within
    offsets = np.empty((nchunks, nb + 1), np.int64)
    bstart = np.empty(nb + 1, np.int64)
    pos = 0
    for bk in range(nb):
        bstart[bk] = pos
        for c in range(nchunks):
            offsets[c, bk] = pos
            pos += hist[c, bk]
    bstart[nb] = pos
    local = np.empty(pos, np.int32)
    values = np.empty(pos if D == 1 else 0, data.dtype)
    where = np.empty(0 if D == 1 else pos, np.int64)
    for c in prange(nchunks):
        cur = offsets[c]
        a = n * c // nchunks
        xs = ids[a:n * (c + 1) // nchunks]
        col = data[a:a + xs.shape[0], 0] if D == 1 else data[0:0, 0]
        for i in range(xs.shape[0]):
            s = xs[i]
            if s >= 0:
                bk = s >> shift
                p = cur[bk]
                cur[bk] = p + 1
                local[p] = s & (width - 1)
                if D == 1:
                    values[p] = col[i]
                else:
                    where[p] = a + i
    for bk in prange(nb):
        base = bk << shift
        w = min(width, S - base)
        acc = np.full((w, D), init[0])
        counts = np.zeros(w if scale != 0 else 0, np.int64)
        p0 = bstart[bk]
        ls = local[p0:bstart[bk + 1]]
        if D == 1:
            vs = values[p0:bstart[bk + 1]]
            col = acc[:, 0]
            if op == SUM:
                for p in range(ls.shape[0]):
                    col[ls[p]] += vs[p]
            else:
                for p in range(ls.shape[0]):
                    l = ls[p]
                    col[l] = _combine(op, col[l], vs[p])
        else:
            ws = where[p0:bstart[bk + 1]]
            for p in range(ls.shape[0]):
                _combine_rows(op, acc, ls[p], data, ws[p])
        if scale != 0:
            for p in range(ls.shape[0]):
                counts[ls[p]] += 1
        for l in range(w):
            count = counts[l] if scale != 0 else 0
            for k in range(D):
                out[base + l, k] = _finish(scale, acc[l, k], count)


@njit(cache=True, nogil=True)
def _count_span(ids, a, b, counts):
    """counts[s] += 1 for each id s >= 0 in ids[a:b] (ids already checked)."""
    xs = ids[a:b]
    for i in range(xs.shape[0]):
        s = xs[i]
        if s >= 0:
            counts[s] += 1


@njit(cache=True, nogil=True, parallel=True)
def _count_ids(ids, S, nparts):
    """Rows per id in [0, S), negatives dropped (ids already checked), int64, in parallel."""
    n = ids.shape[0]
    parts = np.zeros((nparts, S), np.int64)
    for c in prange(nparts):
        _count_span(ids, n * c // nparts, n * (c + 1) // nparts, parts[c])
    out = parts[0].copy()
    for c in range(1, nparts):
        out += parts[c]
    return out


# ----------------------------------------------------------------------------- NumPy fallback

_UFUNCS = {SUM: np.add, PROD: np.multiply, MAX: np.maximum, MIN: np.minimum}


def _numpy_check_ids(ids, lo, hi):
    """`_check_span` over all the flat ids, in NumPy."""
    ids = ids.reshape(-1)
    if ids.size == 0:
        return 0, 0, -(1 << 62)
    nbad = np.count_nonzero((ids < lo) | (ids >= hi))
    return int(nbad), int(np.count_nonzero(ids[1:] < ids[:-1])), int(ids.max())


def _numpy_reduce(op, scale, data, ids, num_segments, init, fill, acc_dtype, order=None):
    """The reference path used without Numba: rows data[order[i]] (or data[i]) with id ids[i]
    (checked: < num_segments; negatives dropped) reduced per segment; empty segments get fill."""
    rows = data if order is None else data[order]
    keep = ids >= 0
    rows, ids = rows[keep], ids[keep]
    out = np.full((num_segments,) + data.shape[1:], init, acc_dtype)
    _UFUNCS[op].at(out, ids, rows)
    counts = np.bincount(ids, minlength=num_segments).reshape((-1,) + (1,) * (data.ndim - 1))
    if scale:
        nonzero = np.maximum(counts, 1)
        out = out / (nonzero if scale == 1 else np.sqrt(nonzero))
    out = np.where(counts > 0, out, np.asarray(fill, out.dtype))
    return out


# ----------------------------------------------------------------------------- Python glue

_NO_LOWER = -(1 << 63)           # lower bound for unsorted ids: negatives are allowed (dropped)
_SIGN = np.int64(-(1 << 63))     # uint64 ^ sign bit, viewed as int64, keeps the order


class _Plan:
    """How data of one dtype is reduced by one kind.

    op, scale: the loop's reduction and finishing; cd: the dtype the loops read; acc: the dtype
    they accumulate in; mode: "" (cast to cd), "pairs" (complex sums as float (re, im) pairs),
    "bias" (uint64 max/min as sign-flipped int64), or "numpy" (complex prod: `_numpy_reduce`).
    """
    __slots__ = ("op", "scale", "dtype", "cd", "acc", "mode")

    def __init__(self, kind, allowed, dtype, accumulate="wide"):
        if kind not in allowed:
            raise ValueError(f"kind must be one of {', '.join(allowed)}, not {kind!r}")
        if accumulate not in ("wide", "native"):
            raise ValueError(f"accumulate must be 'wide' or 'native', not {accumulate!r}")
        self.op, self.scale = op, scale = _KINDS[kind]
        self.dtype = dtype
        self.mode = ""
        if dtype.kind == "c":
            if op in (MAX, MIN):
                raise BadInput("data", f"max and min are not defined for complex dtype {dtype}")
            if op == PROD:
                self.cd, self.mode = np.dtype(np.complex128), "numpy"
            else:
                self.cd = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
                self.mode = "pairs"
        elif scale and not _is_float_like(dtype):
            raise BadInput("data", f"mean and sqrt_n need a floating or complex dtype, not {dtype}")
        elif dtype in (np.float16, np.float32) or dtype == _BFLOAT16:
            self.cd = np.dtype(np.float32)
        elif dtype == np.float64:
            self.cd = dtype
        elif dtype.kind in "iu":
            self.cd = np.dtype(np.int64)
            if dtype == np.uint64 and op in (MAX, MIN):
                self.mode = "bias"
        else:
            raise BadInput("data", f"dtype {dtype} is not supported by segment reductions")
        wide = op not in (MAX, MIN) and accumulate == "wide"
        self.acc = accumulator_dtype(self.cd) if wide else self.cd

    def rows(self, data, n, D):
        """data as a C-contiguous (n, D) array of cd ((n, 2D) for complex pairs)."""
        data = np.ascontiguousarray(data).reshape(n, D)
        if self.mode == "pairs":
            return data.view(self.cd)
        if self.mode == "bias":
            return data.view(np.int64) ^ _SIGN
        if data.dtype == np.uint64:
            return data.view(np.int64)  # sums and products wrap the same in int64
        return data.astype(self.cd, copy=False)

    def value(self, v):
        """A fill or start value of the original dtype, as the loops see it."""
        if self.mode == "bias":
            return int(np.uint64(v).view(np.int64) ^ _SIGN)
        return v

    def restore(self, out, shape):
        """The loops' (S, D) result as an array of the original dtype and `shape`."""
        if self.mode == "pairs":
            out = out.view(self.dtype)
        elif self.mode == "bias":
            out = (out ^ _SIGN).view(np.uint64)
        elif self.dtype == np.uint64:
            out = out.view(np.uint64)
        elif out.dtype != self.dtype:
            out = out.astype(self.dtype)
        return out.reshape(shape)

    def start_and_fill(self, sorted_rule):
        """(init, fill): the value each segment's reduction starts from, and what empty ones
        hold. TF's unsorted max/min start from (and leave empty segments at) the lowest/highest
        finite value; its sorted ops leave gaps at 0 (1 for prod)."""
        op = self.op
        if op == PROD:
            return 1, 1
        if op in (MAX, MIN):
            low, high = _extremes(self.dtype)
            if not sorted_rule:
                value = self.value(low if op == MAX else high)
                return value, value
            if _is_float_like(self.dtype):
                return (-np.inf if op == MAX else np.inf), 0
            return self.value(low if op == MAX else high), self.value(0)
        return 0, 0


@functools.lru_cache(maxsize=512)
def _plan(kind, allowed, dtype, accumulate="wide"):
    """The (immutable, shared) _Plan for reducing `dtype` by `kind`."""
    return _Plan(kind, allowed, dtype, accumulate)


def _as_ids(ids, name="segment_ids"):
    ids = np.asarray(ids)
    if ids.dtype not in (np.int32, np.int64):
        if ids.dtype.kind not in "iu" and not (ids.size == 0 and ids.dtype.kind == "f"):
            raise BadInput(name, f"must be int32 or int64, not {ids.dtype}")
        ids = ids.astype(np.int64)
    # (np.ascontiguousarray would turn 0-d ids, valid for 0-d data, into shape (1,).)
    return ids if ids.flags.c_contiguous else np.ascontiguousarray(ids)


def _as_count(value, name):
    value = np.asarray(value)
    if value.ndim != 0 or value.dtype.kind not in "iu":
        raise BadInput(name, f"must be an integer scalar, got {value!r}")
    value = int(value)
    if value < 0:
        raise BadInput(name, f"{name} = {value} must not be negative")
    return value


def _empty_result(shape, dtype, name):
    """The result when `shape` holds no element (checked ids, any number of segments): allocated
    directly, with no per-segment scratch (counts, accumulators) of num_segments entries."""
    try:
        return np.zeros(shape, dtype)
    except ValueError:      # the non-zero dims times the item size exceed what NumPy can describe
        raise BadInput(name, f"the output shape {list(shape)} is empty, but its non-zero dimensions multiply to "
                             "more than 2**63 - 1 bytes, which an array cannot describe") from None


def _is_float_like(dtype):
    return dtype.kind in "fc" or dtype == _BFLOAT16


def _extremes(dtype):
    """(lowest finite, highest finite) of `dtype`."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
    else:
        info = ml_dtypes.finfo(dtype) if dtype == _BFLOAT16 else np.finfo(dtype)
    return info.min, info.max


def _stats(ids, lo, hi, nt):
    """(number of ids outside [lo, hi), number of descents, max id) over the flat ids."""
    if not HAVE_NUMBA:
        return _numpy_check_ids(ids, lo, hi)
    if ids.size < _SMALL or nt == 1:
        return _check_span(ids, lo, hi, 0, ids.size)
    with _thread_limit(nt):
        stats = _check_ids(ids, lo, hi, nt)
    return int(stats[:, 0].sum()), int(stats[:, 1].sum()), int(stats[:, 2].max())


def _raise_out_of_range(name, ids, lo, hi):
    flat = ids.reshape(-1)
    pos = int(np.flatnonzero((flat < lo) | (flat >= hi))[0])
    raise BadInput(name, f"{name}[{index_text(pos, ids.shape)}] = {flat[pos]}"
                         f" is out of range [0, {hi})")


def _check_sorted(ids, num_segments, nt, derived):
    """Ids must be non-decreasing and in [0, num_segments). With `derived` (num_segments taken
    from the last id) a descent is the error to report; otherwise the first bad position is."""
    nbad, ndesc, _ = _stats(ids, 0, num_segments, nt)
    if not (nbad or ndesc):
        return
    descent = int(np.flatnonzero(ids[1:] < ids[:-1])[0]) + 1 if ndesc else ids.size
    bad = int(np.flatnonzero((ids < 0) | (ids >= num_segments))[0]) if nbad else ids.size
    if ndesc and (derived or descent <= bad):
        raise BadInput("segment_ids", f"segment ids are not increasing: segment_ids[{descent}] ="
                                      f" {ids[descent]} follows {ids[descent - 1]}")
    if ids[bad] < 0:
        raise BadInput("segment_ids", f"segment_ids[{bad}] = {ids[bad]} is negative")
    _raise_out_of_range("segment_ids", ids, 0, num_segments)


def _reduce(plan, rows, ids, num_segments, init, fill, nt, sorted_ids, order=None):
    """Reduce the (n, D) rows by checked ids into a (num_segments, D) array of plan.cd.
    Small inputs run the serial loops directly: a parallel launch costs more than they do."""
    n, D = rows.shape[0] if order is None else ids.size, rows.shape[1]
    if not HAVE_NUMBA or plan.mode == "numpy":
        out = _numpy_reduce(plan.op, plan.scale, rows, ids, num_segments, init, fill, plan.acc,
                            order)
        return out.astype(plan.cd, copy=False)
    op, scale = plan.op, plan.scale
    out = np.empty((num_segments, D), plan.cd)
    init = np.array([init], plan.acc)
    if n * max(D, 1) < _SMALL:
        nt = 1
    if sorted_ids:
        order = np.empty(0, np.int64) if order is None else order
        fill = np.array([fill], plan.cd)
        if nt == 1:
            _runs_block(op, scale, rows, order, ids, init, fill, out, 0, ids.size, True)
        else:
            with _thread_limit(nt):
                _runs(op, scale, rows, order, ids, init, fill, out, nt)
        return out
    nparts = int(min(_MAX_PARTS, max(1, n // (4 * num_segments + 1))))
    private = num_segments * D * plan.acc.itemsize <= _PRIVATE_MAX_BYTES and nparts > 1
    if n * max(D, 1) < _SMALL or nt < (_BUCKET_MIN_THREADS_1D if D == 1 else 2) and not private:
        # One thread (or, for D == 1, too few for the three passes of the partition to pay):
        # a serial scatter reduces each segment in row order, exactly like the buckets do.
        if plan.acc == plan.cd and not scale:  # straight into the output
            out[:] = init[0]
            _private_span(op, scale, rows, ids, 0, n, out, np.zeros(0, np.int64))
        else:
            part = np.full((1, num_segments, D), init[0], plan.acc)
            counts = np.zeros((1, num_segments if scale else 0), np.int64)
            _private_span(op, scale, rows, ids, 0, n, part[0], counts[0])
            if scale:
                _private_finish(op, scale, part, counts, out, 0, num_segments)
            else:
                out[...] = part[0]
    elif private:
        # Accumulators come from NumPy (huge pages where the OS offers them), not Numba's heap.
        parts = np.full((nparts, num_segments, D), init[0], plan.acc)
        counts = np.zeros((nparts, num_segments if scale else 0), np.int64)
        with _thread_limit(nt):
            _scatter_private(op, scale, rows, ids, parts, counts, out, nt)
    else:
        row_bytes = max(D, 1) * plan.acc.itemsize
        shift = max(0, (_BUCKET_BYTES // row_bytes).bit_length() - 1)
        with _thread_limit(nt):
            _scatter_bucketed(op, scale, rows, ids, init, out, shift, nt)
    return out


def unsorted_segment_reduce(kind, data, segment_ids, num_segments, num_threads=None,
                            accumulate="wide"):
    """TF's UnsortedSegment{Sum,Prod,Max,Min} and unsorted_segment_{mean,sqrt_n}.

    `segment_ids` (int32/int64) has a shape that is a prefix of `data.shape`; the result has shape
    `(num_segments,) + data.shape[segment_ids.ndim:]` and `data`'s dtype. Negative ids are
    dropped; an id >= num_segments raises BadInput. Empty segments hold 0 (sum, mean, sqrt_n),
    1 (prod), the lowest (max) or highest (min) finite value of the dtype. mean = sum / count,
    sqrt_n = sum / sqrt(count). `accumulate="native"` sums float32 in float32 (for benchmarks).
    """
    data = np.asarray(data)
    ids = _as_ids(segment_ids)
    num_segments = _as_count(num_segments, "num_segments")
    plan = _plan(kind, _UNSORTED_KINDS, data.dtype, accumulate)
    if data.shape[:ids.ndim] != ids.shape:
        raise BadInput("segment_ids", f"shape {ids.shape} is not a prefix of data shape"
                                      f" {data.shape}")
    shape = (num_segments,) + data.shape[ids.ndim:]
    nt = _threads(num_threads)
    flat = ids.reshape(-1)
    nbad, ndesc, _ = _stats(flat, _NO_LOWER, num_segments, nt)
    if nbad:
        _raise_out_of_range("segment_ids", ids, _NO_LOWER, num_segments)
    if math.prod(shape) == 0:
        return _empty_result(shape, data.dtype, "num_segments")
    init, fill = plan.start_and_fill(sorted_rule=False)
    rows = plan.rows(data, flat.size, math.prod(shape[1:]))
    out = _reduce(plan, rows, flat, num_segments, init, fill, nt, sorted_ids=ndesc == 0)
    return plan.restore(out, shape)


def unsorted_segment_counts(segment_ids, num_segments, num_threads=None):
    """Rows per segment (int64, shape (num_segments,)); negative ids are dropped."""
    ids = _as_ids(segment_ids)
    num_segments = _as_count(num_segments, "num_segments")
    nt = _threads(num_threads)
    flat = ids.reshape(-1)
    nbad, _, _ = _stats(flat, _NO_LOWER, num_segments, nt)
    if nbad:
        _raise_out_of_range("segment_ids", ids, _NO_LOWER, num_segments)
    return _counts(flat, num_segments, nt)


def _counts(flat, num_segments, nt):
    if not HAVE_NUMBA:
        return np.bincount(flat[flat >= 0], minlength=num_segments).astype(np.int64)
    nparts = int(min(nt, max(1, flat.size // (4 * num_segments + (1 << 14)))))
    if nparts == 1:
        counts = np.zeros(num_segments, np.int64)
        _count_span(flat, 0, flat.size, counts)
        return counts
    with _thread_limit(nt):
        return _count_ids(flat, num_segments, nparts)


def sorted_segment_reduce(kind, data, segment_ids, num_threads=None, accumulate="wide"):
    """TF's Segment{Sum,Prod,Max,Min,Mean}: `segment_ids` is 1-D, as long as data's first
    dimension, non-decreasing and non-negative; the result has last id + 1 rows (0 if empty).
    Empty segments (gaps) hold 0, except prod: 1."""
    data = np.asarray(data)
    ids = _as_ids(segment_ids)
    plan = _plan(kind, _SORTED_KINDS, data.dtype, accumulate)
    if data.ndim == 0:
        raise BadInput("data", "must be at least 1-D")
    if ids.ndim != 1 or ids.shape[0] != data.shape[0]:
        raise BadInput("segment_ids", f"shape {ids.shape} must be 1-D with the length of data's"
                                      f" first dimension (data shape {data.shape})")
    num_segments = max(int(ids[-1]) + 1, 0) if ids.size else 0
    nt = _threads(num_threads)
    _check_sorted(ids, num_segments, nt, derived=True)
    if num_segments == 0 or math.prod(data.shape[1:]) == 0:
        return _empty_result((num_segments,) + data.shape[1:], data.dtype, "segment_ids")
    init, fill = plan.start_and_fill(sorted_rule=True)
    rows = plan.rows(data, ids.size, math.prod(data.shape[1:]))
    out = _reduce(plan, rows, ids, num_segments, init, fill, nt, sorted_ids=True)
    return plan.restore(out, (num_segments,) + data.shape[1:])


def sparse_segment_reduce(kind, data, indices, segment_ids, num_segments=None, num_threads=None):
    """TF's SparseSegment{Sum,Mean,SqrtN}[WithNumSegments]: row j of the result reduces
    data[indices[i]] over the i with segment_ids[i] == j. indices and segment_ids are 1-D of one
    length; indices in [0, data.shape[0]); segment_ids non-decreasing, non-negative and below
    num_segments when given. Rows: num_segments, else last id + 1. Empty segments hold 0."""
    data = np.asarray(data)
    indices = _as_ids(indices, "indices")
    ids = _as_ids(segment_ids)
    plan = _plan(kind, _SPARSE_KINDS, data.dtype)
    if data.ndim == 0:
        raise BadInput("data", "must be at least 1-D")
    if indices.ndim != 1:
        raise BadInput("indices", f"must be 1-D, not of shape {indices.shape}")
    if ids.shape != indices.shape:
        raise BadInput("segment_ids", f"shape {ids.shape} must equal indices shape"
                                      f" {indices.shape}")
    nt = _threads(num_threads)
    n_rows = data.shape[0]
    if _stats(indices, 0, n_rows, nt)[0]:
        _raise_out_of_range("indices", indices, 0, n_rows)
    if num_segments is None:
        rows_out = max(int(ids[-1]) + 1, 0) if ids.size else 0
        _check_sorted(ids, rows_out, nt, derived=True)
    else:
        rows_out = _as_count(num_segments, "num_segments")
        _check_sorted(ids, rows_out, nt, derived=False)
    if rows_out == 0 or math.prod(data.shape[1:]) == 0:
        return _empty_result((rows_out,) + data.shape[1:], data.dtype,
                             "segment_ids" if num_segments is None else "num_segments")
    rows = plan.rows(data, n_rows, math.prod(data.shape[1:]))
    if not indices.size:  # `order` must be non-empty to be used as one
        rows, indices = rows[:0], None
    out = _reduce(plan, rows, ids, rows_out, 0, 0, nt, sorted_ids=True, order=indices)
    return plan.restore(out, (rows_out,) + data.shape[1:])


def sparse_segment_grad(kind, grad, indices, segment_ids, output_dim0, num_threads=None):
    """The gradient of sparse_segment_reduce(kind, ...) with respect to data: shape
    (output_dim0,) + grad.shape[1:], out[indices[i]] += grad[segment_ids[i]] * scale_i with
    scale_i 1 (sum), 1/count (mean) or 1/sqrt(count) (sqrt_n) of segment segment_ids[i]."""
    grad = np.asarray(grad)
    indices = _as_ids(indices, "indices")
    ids = _as_ids(segment_ids)
    plan = _plan(kind, _SPARSE_KINDS, grad.dtype)
    output_dim0 = _as_count(output_dim0, "output_dim0")
    if grad.ndim == 0:
        raise BadInput("grad", "must be at least 1-D")
    if indices.ndim != 1 or ids.shape != indices.shape:
        raise BadInput("segment_ids", f"shape {ids.shape} must be 1-D and equal to indices shape"
                                      f" {indices.shape}")
    nt = _threads(num_threads)
    nseg = grad.shape[0]
    if _stats(ids, 0, nseg, nt)[0]:
        _raise_out_of_range("segment_ids", ids, 0, nseg)
    if _stats(indices, 0, output_dim0, nt)[0]:
        _raise_out_of_range("indices", indices, 0, output_dim0)
    rows = grad[ids]
    if plan.scale:
        counts = np.maximum(_counts(ids, nseg, nt), 1).astype(np.float64)
        factor = 1.0 / (counts if plan.scale == 1 else np.sqrt(counts))
        rows = (rows * factor[ids].reshape((-1,) + (1,) * (grad.ndim - 1))).astype(grad.dtype)
    return unsorted_segment_reduce("sum", rows, indices, output_dim0, num_threads=num_threads)


def bincount(arr, weights=None, minlength=0, maxlength=None, dtype=np.int32, num_threads=None):
    """TF's bincount: counts (or sums of `weights`) of each non-negative value of `arr`; length
    max(max(arr) + 1, minlength), capped at maxlength (larger values are ignored). Output dtype
    is weights' dtype with weights, else `dtype`."""
    arr = _as_ids(arr, "arr")
    flat = arr.reshape(-1)
    nt = _threads(num_threads)
    nbad, _, top = _stats(flat, 0, np.iinfo(np.int64).max, nt)   # values up to 2**63 - 1 are fine
    negative = np.flatnonzero(flat < 0) if nbad else ()
    if len(negative):
        pos = int(negative[0])
        raise BadInput("arr", f"arr[{index_text(pos, arr.shape)}] = {flat[pos]} is negative;"
                              " bincount needs non-negative values")
    length = max(top + 1, _as_count(minlength, "minlength"))
    if maxlength is not None:
        length = min(length, _as_count(maxlength, "maxlength"))
        if top >= length:
            flat = np.where(flat < length, flat, -1).astype(flat.dtype)
    if weights is None:
        return _counts(flat, length, nt).astype(dtype, copy=False)
    weights = np.asarray(weights)
    if weights.shape != arr.shape:
        raise BadInput("weights", f"shape {weights.shape} must equal arr shape {arr.shape}")
    return unsorted_segment_reduce("sum", weights.reshape(-1), flat, length,
                                   num_threads=num_threads)


def unsorted_sum(data, segment_ids, num_segments, num_threads=None, accumulate="wide"):
    """TF's UnsortedSegmentSum; see unsorted_segment_reduce."""
    return unsorted_segment_reduce("sum", data, segment_ids, num_segments, num_threads, accumulate)


def unsorted_prod(data, segment_ids, num_segments, num_threads=None, accumulate="wide"):
    """TF's UnsortedSegmentProd; see unsorted_segment_reduce."""
    return unsorted_segment_reduce("prod", data, segment_ids, num_segments, num_threads,
                                   accumulate)


def unsorted_max(data, segment_ids, num_segments, num_threads=None):
    """TF's UnsortedSegmentMax; see unsorted_segment_reduce."""
    return unsorted_segment_reduce("max", data, segment_ids, num_segments, num_threads)


def unsorted_min(data, segment_ids, num_segments, num_threads=None):
    """TF's UnsortedSegmentMin; see unsorted_segment_reduce."""
    return unsorted_segment_reduce("min", data, segment_ids, num_segments, num_threads)


def unsorted_mean(data, segment_ids, num_segments, num_threads=None, accumulate="wide"):
    """TF's unsorted_segment_mean; see unsorted_segment_reduce."""
    return unsorted_segment_reduce("mean", data, segment_ids, num_segments, num_threads,
                                   accumulate)


def unsorted_sqrt_n(data, segment_ids, num_segments, num_threads=None, accumulate="wide"):
    """TF's unsorted_segment_sqrt_n; see unsorted_segment_reduce."""
    return unsorted_segment_reduce("sqrt_n", data, segment_ids, num_segments, num_threads,
                                   accumulate)


def sorted_sum(data, segment_ids, num_threads=None, accumulate="wide"):
    """TF's SegmentSum; see sorted_segment_reduce."""
    return sorted_segment_reduce("sum", data, segment_ids, num_threads, accumulate)


def sorted_prod(data, segment_ids, num_threads=None, accumulate="wide"):
    """TF's SegmentProd; see sorted_segment_reduce."""
    return sorted_segment_reduce("prod", data, segment_ids, num_threads, accumulate)


def sorted_max(data, segment_ids, num_threads=None):
    """TF's SegmentMax; see sorted_segment_reduce."""
    return sorted_segment_reduce("max", data, segment_ids, num_threads)


def sorted_min(data, segment_ids, num_threads=None):
    """TF's SegmentMin; see sorted_segment_reduce."""
    return sorted_segment_reduce("min", data, segment_ids, num_threads)


def sorted_mean(data, segment_ids, num_threads=None, accumulate="wide"):
    """TF's SegmentMean; see sorted_segment_reduce."""
    return sorted_segment_reduce("mean", data, segment_ids, num_threads, accumulate)

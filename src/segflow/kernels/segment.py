"""Segment reductions: unsorted, sorted and sparse segment ops, segment counts, bincount.

NumPy arrays in, a NumPy array out. Semantics are TensorFlow's (see each function).

How the work is done (chosen by shape and by what a cheap first pass over the ids finds):

- `_check_ids` reads the ids once (parallel, vectorised): how many are out of range, whether they
  are non-decreasing, their maximum. Positions of bad ids are looked up only on the error path.
- Non-decreasing ids (the sorted ops, the sparse ops, and unsorted ops fed sorted ids) take
  `_runs`: a run-length reduction that accumulates each run of equal ids in registers or a row
  buffer and writes each output row exactly once (gaps get the fill value), in the output dtype.
  Threads take blocks of rows whose edges are moved to run starts, so every segment is reduced by
  one thread in row order: bit-identical whatever the thread count. D == 1 has its own scalar loop.
- Random ids whose per-segment accumulators are small (S*D*acc bytes fits in cache) take
  `_scatter_private`: a fixed number of row chunks (set by the shape, not by the thread count),
  each with private accumulators, combined in chunk order. D == 1 has its own scalar loop.
- Random ids with large S*D take `_scatter_bucketed`: a stable parallel partition of the rows by
  segment range (buckets of 2**shift segments whose accumulators fit in L2), then each bucket is
  reduced by one thread in row order and written once. D == 1 moves values, D > 1 moves row numbers.

Compiled loops see few dtypes (data float32/float64/int64/uint64/complex128; ids int32/int64):
float16/bfloat16 are widened to float32 and small integers to int64 before the loop, and sums of
float32 accumulate in float64 (`accumulate="wide"`, the default) without converting the data.
The reduction kind is a run-time argument, not a compile-time one, to keep specializations few.
Nothing is compiled at import. Without Numba, `_numpy_reduce` computes the same results.
"""
import math

import numpy as np

from segflow.kernels._common import (HAVE_NUMBA, BadInput, accumulator_dtype, index_text, njit,
                                     prange)

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
_BUCKET_BYTES = 256 << 10      # accumulators of one bucket (fit in L2 with room to spare)
_MAX_PARTS = 8                 # fixed row chunks of the private scatter (thread-independent)


# ----------------------------------------------------------------------------- compiled pieces

if HAVE_NUMBA:
    import numba
    from numba import types
    from numba.extending import overload

    def _combine(op, a, b):
        """a (+|*|max|min) b; max/min propagate NaN. Typed per dtype by the overload below."""

    def _finish(scale, v, count):
        """v, or v / count (scale 1), or v / sqrt(count) (scale 2); v when count == 0."""

    @overload(_combine)
    def _combine_impl(op, a, b):
        if isinstance(b, types.Complex):  # max/min are refused for complex before any loop
            def impl(op, a, b):
                if op == PROD:
                    return a * b
                return a + b
            return impl

        def impl(op, a, b):
            if op == SUM:
                return a + b
            if op == PROD:
                return a * b
            if op == MAX:
                return b if (b > a) | (b != b) else a
            return b if (b < a) | (b != b) else a
        return impl

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
        """Runs the enclosed kernels on at most `n` Numba threads (results never depend on it)."""

        def __init__(self, n):
            self.n = min(n, numba.config.NUMBA_NUM_THREADS)

        def __enter__(self):
            self.old = numba.get_num_threads()
            if self.n != self.old:
                numba.set_num_threads(self.n)

        def __exit__(self, *exc):
            if self.n != self.old:
                numba.set_num_threads(self.old)
else:  # pragma: no cover
    import contextlib

    def _threads(num_threads):
        return 1

    def _thread_limit(n):
        return contextlib.nullcontext()


@njit(cache=True, nogil=True, parallel=True)
def _check_ids(ids, lo, hi, nchunks):
    """Per chunk: count of ids outside [lo, hi), count of descents ids[i] < ids[i-1], max id."""
    n = ids.shape[0]
    stats = np.zeros((nchunks, 3), np.int64)
    for c in prange(nchunks):
        a = n * c // nchunks
        b = n * (c + 1) // nchunks
        xs = ids[a:b]  # loops over views index from 0: no wraparound checks, so they vectorise
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


@njit(cache=True, nogil=True)
def _combine_rows(op, acc, s, data, r):
    """acc[s, k] = acc[s, k] (op) data[r, k] for every k (indices, not row views: no refcounts)."""
    if op == SUM:
        for k in range(acc.shape[1]):
            acc[s, k] += data[r, k]
    else:
        for k in range(acc.shape[1]):
            acc[s, k] = _combine(op, acc[s, k], data[r, k])


@njit(cache=True, nogil=True, parallel=True)
def _runs(op, scale, data, order, ids, init, fill, out, nt):
    """out[s] = reduce of the rows with id s, ids non-decreasing (negative ids lead and are
    dropped), rows data[order[i]] if order is non-empty else data[i]; empty segments get fill.
    Threads take blocks of rows cut at run starts, so each segment is one thread's work."""
    n = ids.shape[0]
    S = out.shape[0]
    D = out.shape[1]
    bounds = np.zeros(nt + 1, np.int64)
    bounds[nt] = n
    for t in range(1, nt):
        bounds[t] = _run_start(ids, n * t // nt) if n > 0 else 0
    gathered = order.shape[0] > 0
    init0 = init[0]
    fill0 = fill[0]
    for t in prange(nt):
        a = bounds[t]
        b = bounds[t + 1]
        prev = -1
        if a > 0 and ids[a - 1] > prev:
            prev = ids[a - 1]
        xs = ids[a:b]
        rows = data[a:b] if not gathered else data
        col = rows[:, 0]
        perm = order[a:b]
        acc = np.empty((1, D), init.dtype)
        i = 0
        while i < xs.shape[0]:
            s = xs[i]
            j = _run_end(xs, i)
            if s >= 0:
                for g in range(prev + 1, s):
                    for k in range(D):
                        out[g, k] = fill0
                if D == 1:
                    if gathered:
                        v = init0
                        for r in range(i, j):
                            v = _combine(op, v, data[perm[r], 0])
                    else:
                        v = _reduce_span(op, init0, col, i, j)
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
        if t == nt - 1:
            for g in range(prev + 1, S):
                for k in range(D):
                    out[g, k] = fill0


@njit(cache=True, nogil=True, parallel=True)
def _scatter_private(op, scale, data, ids, init, out, nparts, nt):
    """out[s] = reduce of the rows with id s (ids < S, negatives dropped): `nparts` fixed row
    chunks accumulate privately, then the chunks are combined in chunk order."""
    n = ids.shape[0]
    S = out.shape[0]
    D = out.shape[1]
    init0 = init[0]
    parts = np.full((nparts, S, D), init0)
    counts = np.zeros((nparts, S if scale != 0 else 0), np.int64)
    for c in prange(nparts):
        a = n * c // nparts
        b = n * (c + 1) // nparts
        xs = ids[a:b]
        rows = data[a:b]
        p = parts[c]
        if D == 1:
            col = rows[:, 0]
            acc = p[:, 0]
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
            for i in range(xs.shape[0]):
                s = xs[i]
                if s >= 0:
                    _combine_rows(op, p, s, rows, i)
        if scale != 0:
            cnt = counts[c]
            for i in range(xs.shape[0]):
                s = xs[i]
                if s >= 0:
                    cnt[s] += 1
    for t in prange(nt):
        s0 = S * t // nt
        for s in range(s0, S * (t + 1) // nt):
            count = 0
            if scale != 0:
                for c in range(nparts):
                    count += counts[c, s]
            for k in range(D):
                v = parts[0, s, k]
                for c in range(1, nparts):
                    v = _combine(op, v, parts[c, s, k])
                out[s, k] = _finish(scale, v, count)


@njit(cache=True, nogil=True, parallel=True)
def _scatter_bucketed(op, scale, data, ids, init, out, shift, nchunks):
    """out[s] = reduce of the rows with id s (ids < S, negatives dropped): rows are partitioned,
    stably, into buckets of 2**shift segments; each bucket is reduced in row order by one thread
    in accumulators that fit in cache and written once."""
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
    init0 = init[0]
    for bk in prange(nb):
        base = bk << shift
        w = min(width, S - base)
        acc = np.full((w, D), init0)
        counts = np.zeros(w if scale != 0 else 0, np.int64)
        p0 = bstart[bk]
        p1 = bstart[bk + 1]
        ls = local[p0:p1]
        if D == 1:
            vs = values[p0:p1]
            col = acc[:, 0]
            if op == SUM:
                for p in range(ls.shape[0]):
                    col[ls[p]] += vs[p]
            else:
                for p in range(ls.shape[0]):
                    l = ls[p]
                    col[l] = _combine(op, col[l], vs[p])
        else:
            ws = where[p0:p1]
            for p in range(ls.shape[0]):
                _combine_rows(op, acc, ls[p], data, ws[p])
        if scale != 0:
            for p in range(ls.shape[0]):
                counts[ls[p]] += 1
        for l in range(w):
            count = counts[l] if scale != 0 else 0
            for k in range(D):
                out[base + l, k] = _finish(scale, acc[l, k], count)


@njit(cache=True, nogil=True, parallel=True)
def _count_ids(ids, S, nparts):
    """Rows per id in [0, S), negatives dropped (ids already checked), int64."""
    n = ids.shape[0]
    parts = np.zeros((nparts, S), np.int64)
    for c in prange(nparts):
        p = parts[c]
        xs = ids[n * c // nparts:n * (c + 1) // nparts]
        for i in range(xs.shape[0]):
            s = xs[i]
            if s >= 0:
                p[s] += 1
    out = parts[0].copy()
    for c in range(1, nparts):
        out += parts[c]
    return out


# ----------------------------------------------------------------------------- NumPy fallback

_UFUNCS = {SUM: np.add, PROD: np.multiply, MAX: np.maximum, MIN: np.minimum}


def _numpy_check_ids(ids, lo, hi, nchunks=1):
    """`_check_ids` in NumPy (one chunk)."""
    ids = ids.reshape(-1)
    if ids.size == 0:
        return np.array([[0, 0, -(1 << 62)]], np.int64)
    nbad = np.count_nonzero((ids < lo) | (ids >= hi))
    ndesc = np.count_nonzero(ids[1:] < ids[:-1])
    return np.array([[nbad, ndesc, ids.max()]], np.int64)


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

def _kind(kind, allowed):
    if kind not in allowed:
        raise ValueError(f"kind must be one of {', '.join(allowed)}, not {kind!r}")
    return _KINDS[kind]


def _as_ids(ids, name="segment_ids"):
    ids = np.asarray(ids)
    if ids.dtype not in (np.int32, np.int64):
        if ids.dtype.kind not in "iu" and not (ids.size == 0 and ids.dtype.kind == "f"):
            raise BadInput(name, f"must be int32 or int64, not {ids.dtype}")
        ids = ids.astype(np.int64)
    return np.ascontiguousarray(ids)


def _as_count(value, name):
    value = np.asarray(value)
    if value.ndim != 0 or value.dtype.kind not in "iu":
        raise BadInput(name, f"must be an integer scalar, got {value!r}")
    value = int(value)
    if value < 0:
        raise BadInput(name, f"{name} = {value} must not be negative")
    return value


def _is_float_like(dtype):
    return dtype.kind in "fc" or dtype == _BFLOAT16


def _compute_dtype(dtype, op, scale):
    """The dtype the compiled loops read and write for data of `dtype`."""
    if dtype.kind == "c":
        if op in (MAX, MIN):
            raise BadInput("data", f"max and min are not defined for complex dtype {dtype}")
        return np.dtype(np.complex128)
    if scale and not _is_float_like(dtype):
        raise BadInput("data", f"mean and sqrt_n need a floating or complex dtype, not {dtype}")
    if dtype in (np.float16, np.float32) or dtype == _BFLOAT16:
        return np.dtype(np.float32)
    if dtype == np.float64:
        return dtype
    if dtype == np.uint64:
        return np.dtype(np.uint64) if op in (MAX, MIN) else np.dtype(np.int64)
    if dtype.kind in "iu":
        return np.dtype(np.int64)
    raise BadInput("data", f"dtype {dtype} is not supported by segment reductions")


def _finfo(dtype):
    return ml_dtypes.finfo(dtype) if dtype == _BFLOAT16 else np.finfo(dtype)


def _extremes(dtype):
    """(lowest finite, highest finite) of `dtype`."""
    info = np.iinfo(dtype) if dtype.kind in "iu" else _finfo(dtype)
    return info.min, info.max


def _plan(kind, allowed, data, accumulate):
    """(op, scale, compute dtype, accumulator dtype) for reducing `data` by `kind`."""
    op, scale = _kind(kind, allowed)
    cd = _compute_dtype(data.dtype, op, scale)
    if accumulate not in ("wide", "native"):
        raise ValueError(f"accumulate must be 'wide' or 'native', not {accumulate!r}")
    acc = cd if op in (MAX, MIN) or accumulate == "native" else accumulator_dtype(cd)
    return op, scale, cd, acc


def _rows(data, n, D, cd):
    """data as a C-contiguous (n, D) array of the compute dtype (uint64 viewed as int64)."""
    if data.dtype == np.uint64 and cd == np.int64:
        data = data.view(np.int64)
    elif data.dtype != cd:
        data = data.astype(cd)
    return np.ascontiguousarray(data).reshape(n, D)


def _stats(ids, lo, hi, nt):
    """(number of ids outside [lo, hi), number of descents, max id) over the flat ids."""
    if HAVE_NUMBA:
        nchunks = nt if ids.size >= _SMALL else 1
        stats = _check_ids(ids, lo, hi, nchunks)
    else:
        stats = _numpy_check_ids(ids, lo, hi)
    return int(stats[:, 0].sum()), int(stats[:, 1].sum()), int(stats[:, 2].max())


def _first_out_of_range(ids, lo, hi):
    flat = ids.reshape(-1)
    return int(np.flatnonzero((flat < lo) | (flat >= hi))[0])


def _raise_out_of_range(name, ids, lo, hi, shown_hi):
    pos = _first_out_of_range(ids, lo, hi)
    raise BadInput(name, f"{name}[{index_text(pos, ids.shape)}] = {ids.reshape(-1)[pos]}"
                         f" is out of range [0, {shown_hi})")


def _raise_not_increasing(ids):
    i = int(np.flatnonzero(ids[1:] < ids[:-1])[0]) + 1
    raise BadInput("segment_ids", f"segment ids are not increasing: segment_ids[{i}] = {ids[i]}"
                                  f" follows {ids[i - 1]}")


def _fill_values(op, scale, dtype, cd, sorted_rule):
    """(init, fill): the value each segment's reduction starts from, and what empty ones hold."""
    if op == PROD:
        return 1, 1
    if op in (MAX, MIN):
        low, high = _extremes(dtype)
        if not sorted_rule:  # TF's unsorted ops start from the lowest/highest finite value
            value = low if op == MAX else high
            return value, value
        if _is_float_like(cd):
            return (-np.inf if op == MAX else np.inf), 0
        return (low if op == MAX else high), 0
    return 0, 0


def _scalar_array(value, dtype):
    return np.array([value], dtype)


def _run_reduce(op, scale, rows, ids, num_segments, init, fill, cd, acc, nt, order=None):
    """Reduce the (n, D) rows by non-decreasing checked ids with `_runs` (or the fallback)."""
    D = rows.shape[1]
    if not HAVE_NUMBA:
        return _numpy_reduce(op, scale, rows, ids, num_segments, init, fill, acc, order).astype(
            cd, copy=False)
    out = np.empty((num_segments, D), cd)
    blocks = nt if ids.size * max(D, 1) >= _SMALL else 1
    order = np.empty(0, np.int64) if order is None else order
    _runs(op, scale, rows, order, ids, _scalar_array(init, acc), _scalar_array(fill, cd), out,
          blocks)
    return out


def _random_reduce(op, scale, rows, ids, num_segments, init, cd, acc, nt):
    """Reduce the (n, D) rows by checked ids in any order (negatives dropped)."""
    n, D = rows.shape
    out = np.empty((num_segments, D), cd)
    init_arr = _scalar_array(init, acc)
    per_part = num_segments * D * acc.itemsize
    if n * D < _SMALL:
        nparts = 1
    else:
        nparts = int(min(_MAX_PARTS, max(1, n // max(4 * num_segments, 1 << 14))))
    if per_part <= _PRIVATE_MAX_BYTES and nparts * num_segments <= max(n, 1):
        _scatter_private(op, scale, rows, ids, init_arr, out, nparts, nt if n * D >= _SMALL else 1)
        return out
    row_bytes = max(D, 1) * acc.itemsize
    shift = max(0, int(math.floor(math.log2(max(1, _BUCKET_BYTES // row_bytes)))))
    nchunks = nt if n >= _SMALL else 1
    _scatter_bucketed(op, scale, rows, ids, init_arr, out, shift, nchunks)
    return out


def _cast_out(out, dtype, shape):
    out = out.reshape(shape)
    if out.dtype != dtype:
        out = out.astype(dtype) if dtype != np.uint64 or out.dtype != np.int64 else out.view(dtype)
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
    op, scale, cd, acc = _plan(kind, _UNSORTED_KINDS, data, accumulate)
    if data.shape[:ids.ndim] != ids.shape:
        raise BadInput("segment_ids", f"shape {ids.shape} is not a prefix of data shape"
                                      f" {data.shape}")
    shape = (num_segments,) + data.shape[ids.ndim:]
    nt = _threads(num_threads)
    flat = ids.reshape(-1)
    nbad, ndesc, _ = _stats(flat, -(1 << 63), num_segments, nt)
    if nbad:
        _raise_out_of_range("segment_ids", ids, -(1 << 63), num_segments, num_segments)
    init, fill = _fill_values(op, scale, data.dtype, cd, sorted_rule=False)
    rows = _rows(data, flat.size, math.prod(shape[1:]), cd)
    if not HAVE_NUMBA:
        out = _numpy_reduce(op, scale, rows, flat, num_segments, init, fill, acc)
    elif ndesc == 0:
        with _thread_limit(nt):
            out = _run_reduce(op, scale, rows, flat, num_segments, init, fill, cd, acc, nt)
    else:
        with _thread_limit(nt):
            out = _random_reduce(op, scale, rows, flat, num_segments, init, cd, acc, nt)
    return _cast_out(out, data.dtype, shape)


def unsorted_segment_counts(segment_ids, num_segments, num_threads=None):
    """Rows per segment (int64, shape (num_segments,)); negative ids are dropped."""
    ids = _as_ids(segment_ids)
    num_segments = _as_count(num_segments, "num_segments")
    nt = _threads(num_threads)
    flat = ids.reshape(-1)
    nbad, _, _ = _stats(flat, -(1 << 63), num_segments, nt)
    if nbad:
        _raise_out_of_range("segment_ids", ids, -(1 << 63), num_segments, num_segments)
    return _counts(flat, num_segments, nt)


def _counts(flat, num_segments, nt):
    if not HAVE_NUMBA:
        return np.bincount(flat[flat >= 0], minlength=num_segments).astype(np.int64)
    nparts = int(min(nt, max(1, flat.size // max(4 * num_segments, 1 << 14))))
    with _thread_limit(nt):
        return _count_ids(flat, num_segments, nparts)


def sorted_segment_reduce(kind, data, segment_ids, num_threads=None, accumulate="wide"):
    """TF's Segment{Sum,Prod,Max,Min,Mean}: `segment_ids` is 1-D, as long as data's first
    dimension, non-decreasing and non-negative; the result has last id + 1 rows (0 if empty).
    Empty segments (gaps) hold 0, except prod: 1."""
    data = np.asarray(data)
    ids = _as_ids(segment_ids)
    op, scale, cd, acc = _plan(kind, _SORTED_KINDS, data, accumulate)
    if data.ndim == 0:
        raise BadInput("data", "must be at least 1-D")
    if ids.ndim != 1 or ids.shape[0] != data.shape[0]:
        raise BadInput("segment_ids", f"shape {ids.shape} must be 1-D with the length of data's"
                                      f" first dimension (data shape {data.shape})")
    num_segments = int(ids[-1]) + 1 if ids.size else 0
    nt = _threads(num_threads)
    _check_sorted(ids, max(num_segments, 0), nt, derived=True)
    init, fill = _fill_values(op, scale, data.dtype, cd, sorted_rule=True)
    rows = _rows(data, ids.size, math.prod(data.shape[1:]), cd)
    with _thread_limit(nt):
        out = _run_reduce(op, scale, rows, ids, num_segments, init, fill, cd, acc, nt)
    return _cast_out(out, data.dtype, (num_segments,) + data.shape[1:])


def _check_sorted(ids, num_segments, nt, derived):
    """Ids must be non-decreasing and in [0, num_segments). With `derived` (num_segments taken
    from the last id) a descent is the error to report; otherwise the first bad position is."""
    nbad, ndesc, _ = _stats(ids, 0, num_segments, nt)
    if not (nbad or ndesc):
        return
    descent = int(np.flatnonzero(ids[1:] < ids[:-1])[0]) + 1 if ndesc else ids.size
    bad = _first_out_of_range(ids, 0, num_segments) if nbad else ids.size
    if ndesc and (derived or descent <= bad):
        _raise_not_increasing(ids)
    if ids[bad] < 0:
        raise BadInput("segment_ids", f"segment_ids[{bad}] = {ids[bad]} is negative")
    _raise_out_of_range("segment_ids", ids, 0, num_segments, num_segments)


def sparse_segment_reduce(kind, data, indices, segment_ids, num_segments=None, num_threads=None):
    """TF's SparseSegment{Sum,Mean,SqrtN}[WithNumSegments]: row j of the result reduces
    data[indices[i]] over the i with segment_ids[i] == j. indices and segment_ids are 1-D of one
    length; indices in [0, data.shape[0]); segment_ids non-decreasing, non-negative and below
    num_segments when given. Rows: num_segments, else last id + 1. Empty segments hold 0."""
    data = np.asarray(data)
    indices = _as_ids(indices, "indices")
    ids = _as_ids(segment_ids)
    op, scale, cd, acc = _plan(kind, _SPARSE_KINDS, data, "wide")
    if data.ndim == 0:
        raise BadInput("data", "must be at least 1-D")
    if indices.ndim != 1:
        raise BadInput("indices", f"must be 1-D, not of shape {indices.shape}")
    if ids.ndim != 1 or ids.shape != indices.shape:
        raise BadInput("segment_ids", f"shape {ids.shape} must be 1-D and equal to indices shape"
                                      f" {indices.shape}")
    nt = _threads(num_threads)
    n_rows = data.shape[0]
    nbad, _, _ = _stats(indices, 0, n_rows, nt)
    if nbad:
        _raise_out_of_range("indices", indices, 0, n_rows, n_rows)
    if num_segments is None:
        rows_out = int(ids[-1]) + 1 if ids.size else 0
        _check_sorted(ids, max(rows_out, 0), nt, derived=True)
    else:
        rows_out = _as_count(num_segments, "num_segments")
        _check_sorted(ids, rows_out, nt, derived=False)
    rows = _rows(data, n_rows, math.prod(data.shape[1:]), cd)
    with _thread_limit(nt):
        out = _run_reduce(op, scale, rows, ids, rows_out, 0, 0, cd, acc, nt, order=indices)
    return _cast_out(out, data.dtype, (rows_out,) + data.shape[1:])


def sparse_segment_grad(kind, grad, indices, segment_ids, output_dim0, num_threads=None):
    """The gradient of sparse_segment_reduce(kind, ...) with respect to data: shape
    (output_dim0,) + grad.shape[1:], out[indices[i]] += grad[segment_ids[i]] * scale_i with
    scale_i 1 (sum), 1/count (mean) or 1/sqrt(count) (sqrt_n) of segment segment_ids[i]."""
    grad = np.asarray(grad)
    indices = _as_ids(indices, "indices")
    ids = _as_ids(segment_ids)
    op, scale, cd, acc = _plan(kind, _SPARSE_KINDS, grad, "wide")
    output_dim0 = _as_count(output_dim0, "output_dim0")
    if grad.ndim == 0:
        raise BadInput("grad", "must be at least 1-D")
    if indices.ndim != 1 or ids.shape != indices.shape:
        raise BadInput("segment_ids", f"shape {ids.shape} must be 1-D and equal to indices shape"
                                      f" {indices.shape}")
    nt = _threads(num_threads)
    nseg = grad.shape[0]
    nbad, _, _ = _stats(ids, 0, nseg, nt)
    if nbad:
        _raise_out_of_range("segment_ids", ids, 0, nseg, nseg)
    nbad, _, _ = _stats(indices, 0, output_dim0, nt)
    if nbad:
        _raise_out_of_range("indices", indices, 0, output_dim0, output_dim0)
    rows = grad[ids]
    if scale:
        counts = np.maximum(_counts(ids, nseg, nt), 1).astype(np.float64)
        factor = 1.0 / (counts if scale == 1 else np.sqrt(counts))
        rows = (rows * factor[ids].reshape((-1,) + (1,) * (grad.ndim - 1))).astype(grad.dtype)
    return unsorted_segment_reduce("sum", rows, indices, output_dim0, num_threads=num_threads)


def bincount(arr, weights=None, minlength=0, maxlength=None, dtype=np.int32, num_threads=None):
    """TF's bincount: counts (or sums of `weights`) of each non-negative value of `arr`; length
    max(max(arr) + 1, minlength), capped at maxlength (larger values are ignored). Output dtype
    is weights' dtype with weights, else `dtype`."""
    arr = _as_ids(arr, "arr")
    flat = arr.reshape(-1)
    nt = _threads(num_threads)
    nbad, _, top = _stats(flat, 0, 1 << 62, nt)
    if nbad:
        pos = int(np.flatnonzero(flat < 0)[0])
        raise BadInput("arr", f"arr[{index_text(pos, arr.shape)}] = {flat[pos]} is negative;"
                              " bincount needs non-negative values")
    minlength = _as_count(minlength, "minlength")
    length = max(top + 1 if flat.size else 0, minlength)
    if maxlength is not None:
        length = min(length, _as_count(maxlength, "maxlength"))
        if flat.size and top >= length:
            flat = np.where(flat < length, flat, -1).astype(flat.dtype, copy=False)
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

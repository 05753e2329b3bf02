"""The compiled loops of the segment reductions: `@njit(cache=True, nogil=True)` functions only.

What they compute is chosen in plan.py (dtypes, strategy, threads) and called from api.py. Data
reaches them as float32, float64 or int64 and ids as int32 or int64, already checked (no loop here
checks bounds). The combine rule is a run-time argument `op`: one of the codes below, named by each
row of plan.KINDS; `scale` (0, 1 or 2) says how a finished segment is divided by its row count.
A new combine rule is a new code here plus its branch in `_combine` and `_combine_rows`.

Every parallel loop here has `workers` prange iterations (one per thread) that pull fixed chunks
of work from a shared counter (`next_chunk`; see kernels/_common.py): the chunk count is set by the
shape, so a thread that loses its core delays one chunk, and results never depend on which thread
ran which chunk. The passes over the ids alone (the check, the row counts) are in idpass.py.

- `runs_block` / `runs`: the run-length reduction of non-decreasing ids (sorted ops, sparse ops,
  unsorted ops fed sorted ids). Each output row is written once, gaps get the fill value; long
  runs are found by galloping and summed with four accumulators, short runs with D == 1 take a
  branch-free loop over the block's two halves at once (two independent chains). `runs` gives
  threads blocks of rows cut at run starts, so every segment is reduced by one thread in row
  order: bit-identical whatever the thread count.
- `private_span` / `private_finish` / `scatter_private`: random ids, small S*D: a fixed number of
  row chunks (set by the shape, never by the thread count), each with private accumulators,
  combined in chunk order.
- `scatter_bucketed`: random ids, large S*D: a stable parallel partition of the rows into buckets
  of 2**shift segments, then one thread per bucket reduces its rows in row order in accumulators
  that fit in cache and writes them once. Rows of up to 32 bytes are moved, wider rows by number.

Numba caches the compiled code next to this file (`cache=True`); the codes are module constants
here, so a change to them changes this file and invalidates that cache.
"""
import numpy as np

from segflow.kernels._common import (PREFETCH_AHEAD, ROW_AHEAD, SCATTER_PREFETCH_BYTES, next_chunk, njit, on_numba,
                                     prefetch, prefetch_lines, prange, row_lines)

# Combine rules (the `code` of plan.KINDS rows). MEAN and SQRT_N are SUM with `scale` 1 or 2.
SUM, PROD, MAX, MIN = 0, 1, 2, 3
# Accumulators under SCATTER_PREFETCH_BYTES are not prefetched (see _common.py). 1e6 random rows of
# 16, prefetched / not:
# private chunks of 1.28 MB, 2 threads, float32 0.52-0.90x, float64 0.89-1.03x, int64
# 0.55-0.77x; one serial scatter into 2.5-5 MB, 0.22-0.56x; rows of 1 never gained.


def _finish(scale, v, count):
    """v, or v / count (scale 1), or v / sqrt(count) (scale 2); v when count == 0. Integers
    (the sorted mean; sqrt_n is refused for them) divide truncating toward zero, as C++ does."""


@on_numba
def _define_finish():
    from numba import types
    from numba.extending import overload

    @overload(_finish)
    def _finish_impl(scale, v, count):
        if isinstance(v, types.Integer):
            def int_impl(scale, v, count):
                if scale != 1 or count == 0:
                    return v
                q = v // count                      # floor division: one below truncation when
                if v < 0 and q * count != v:        # a negative sum leaves a remainder
                    q += 1
                return q
            return int_impl

        def impl(scale, v, count):
            if scale == 0 or count == 0:
                return v
            if scale == 1:
                return v / count
            return v / np.sqrt(np.float64(count))
        return impl


def _same(s, before, like):
    """s == before (ids), compared in the type of `like`, the value a select on the result picks:
    as float32 / float64 when `like` is, so that the select compiles to a compare mask and a
    blend, not a branch (x86 has no conditional move into float registers, and a branch on where
    runs end is mispredicted on random run lengths). s - before wraps, and a nonzero integer
    converts to a float whose square is at least 1 (or inf), never 0: exact for all int64 ids."""


@on_numba
def _define_same():
    from numba import types
    from numba.extending import overload

    @overload(_same, inline="always")
    def _same_impl(s, before, like):
        if isinstance(like, types.Float):
            ftype = np.float32 if like.bitwidth == 32 else np.float64

            def float_impl(s, before, like):
                d = ftype(s - before)     # squared: LLVM would fold `ftype(d) == 0` back to d == 0
                return d * d == 0
            return float_impl

        def impl(s, before, like):
            return s == before
        return impl


@njit(cache=True, nogil=True, inline="always")
def _combine(op, a, b):
    """a (+|*|max|min) b for real a, b; max and min propagate NaN. np.maximum / np.minimum
    compile without a branch (a ternary on `b > a` became one, mispredicted on random data, and
    kept row loops from vectorising: a sorted max of 1e6 x 16 into 1e4 segments took 29 ms on
    one thread against 6.4 for the sum)."""
    if op == SUM:
        return a + b
    if op == PROD:
        return a * b
    if op == MAX:
        return np.maximum(a, b)
    return np.minimum(a, b)


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
            acc[s, k] = np.maximum(acc[s, k], data[r, k])     # branch-free: see _combine
    else:
        for k in range(D):
            acc[s, k] = np.minimum(acc[s, k], data[r, k])


@njit(cache=True, nogil=True, inline="always")
def _chain_rest(op, xs, col, out, init0, a, b, v, before):
    """The rows a..b-1 by which one of _short_runs_plain's chains is longer (v, before: its state)."""
    for i in range(a, b):
        s = xs[i]
        v = _combine(op, v if _same(s, before, v) else init0, col[i])
        if s >= 0:
            out[s] = v
        before = s


@njit(cache=True, nogil=True)
def _short_runs_plain(op, xs, col, out, init0):
    """runs_block's short-run loop for rows read in order with no scaling. Each row's running
    result depends on the row before (one add and select per row), so the block is cut at a run
    start near its middle and the halves run as two independent chains in one loop (each segment
    still reduced by one chain in row order: the same bits). Sums keep their own loop (through
    `_combine` with op unknown, 1.1x the time). A new run is told by `_same`: compared as plain
    integers, the choice of running value or init0 compiled to a branch, mispredicted on random
    runs (1e6 rows in random runs of about 1.6, one thread: 4.3 ms against 1.1)."""
    m = xs.shape[0]
    mid = m // 2
    while 0 < mid < m and xs[mid] == xs[mid - 1]:
        mid += 1
    k = min(mid, m - mid)
    va = vb = init0
    ba = xs[0] - 1 if m > 0 else 0           # "the id before": no match for the first row
    bb = xs[mid] - 1 if mid < m else 0
    if op == SUM:
        for i in range(k):
            sa = xs[i]
            sb = xs[mid + i]
            va = (va if _same(sa, ba, va) else init0) + col[i]
            vb = (vb if _same(sb, bb, vb) else init0) + col[mid + i]
            if sa >= 0:
                out[sa] = va
            if sb >= 0:
                out[sb] = vb
            ba, bb = sa, sb
    else:
        for i in range(k):
            sa = xs[i]
            sb = xs[mid + i]
            va = _combine(op, va if _same(sa, ba, va) else init0, col[i])
            vb = _combine(op, vb if _same(sb, bb, vb) else init0, col[mid + i])
            if sa >= 0:
                out[sa] = va
            if sb >= 0:
                out[sb] = vb
            ba, bb = sa, sb
    _chain_rest(op, xs, col, out, init0, k, mid, va, ba)
    _chain_rest(op, xs, col, out, init0, mid + k, m, vb, bb)


@njit(cache=True, nogil=True)
def runs_block(op, scale, data, order, ids, init, fill, out, a, b, last):
    """The rows a..b-1 (cut at run starts) of `runs`: writes segments ids[a-1]+1 .. ids[b-1],
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
        out[prev + 1:S if last else top + 1, 0] = fill0   # a slice: 9x faster than a loop here
        if not gathered and scale == 0:
            _short_runs_plain(op, xs, rows[:, 0], out[:, 0], init0)
            return
        v = init0
        count = 0
        before = xs[0] - 1 if m > 0 else 0
        for i in range(m):
            s = xs[i]
            same = _same(s, before, v)
            v = _combine(op, v if same else init0, rows[perm[i] if gathered else i, 0])
            count = (count if same else 0) + 1
            if s >= 0:
                out[s, 0] = _finish(scale, v, count)
            before = s
        return
    acc = np.empty((1, D), init.dtype)
    col = rows[:, 0] if D == 1 else rows[:0, 0]
    # gathered rows (sparse ops) are read at random: the row ROW_AHEAD ahead is prefetched
    flat = data.reshape(-1)
    lines = row_lines(D * data.itemsize)
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
                    if r + ROW_AHEAD < m:
                        prefetch(flat, perm[r + ROW_AHEAD])
                    v = _combine(op, v, rows[perm[r], 0])
                out[s, 0] = _finish(scale, v, j - i)
            elif gathered:
                for k in range(D):
                    acc[0, k] = init0
                for r in range(i, j):
                    if r + ROW_AHEAD < m:
                        prefetch_lines(flat, perm[r + ROW_AHEAD] * D, lines)
                    _combine_rows(op, acc, 0, rows, perm[r])
                for k in range(D):
                    out[s, k] = _finish(scale, acc[0, k], j - i)
            else:
                for k in range(D):
                    acc[0, k] = init0
                for r in range(i, j):
                    _combine_rows(op, acc, 0, rows, r)
                for k in range(D):
                    out[s, k] = _finish(scale, acc[0, k], j - i)
            prev = s
        i = j
    if last:
        out[prev + 1:S] = fill0


@njit(cache=True, nogil=True, parallel=True)
def runs(op, scale, data, order, ids, init, fill, out, nblocks, workers):
    """out[s] = reduce of the rows with id s, ids non-decreasing (negative ids lead and are
    dropped), rows data[order[i]] if order is non-empty else data[i]; empty segments get fill.
    Workers pull `nblocks` blocks of rows cut at run starts, so each segment is one block's."""
    n = ids.shape[0]
    bounds = np.zeros(nblocks + 1, np.int64)
    bounds[nblocks] = n
    for t in range(1, nblocks):
        bounds[t] = _run_start(ids, n * t // nblocks) if n > 0 else 0
    counter = np.zeros(1, np.int64)
    for w in prange(workers):
        t = next_chunk(counter)
        while t < nblocks:
            runs_block(op, scale, data, order, ids, init, fill, out, bounds[t], bounds[t + 1],
                       t == nblocks - 1)
            t = next_chunk(counter)


@njit(cache=True, nogil=True)
def private_span(op, scale, data, ids, a, b, part, count):
    """part[ids[i]] (op)= data[i] for i in a..b-1 with ids[i] >= 0; counts rows if scale.
    Rows (D > 1) of accumulators of SCATTER_PREFETCH_BYTES or more are prefetched PREFETCH_AHEAD
    rows ahead."""
    xs = ids[a:b]
    m = xs.shape[0]
    D = part.shape[1]
    ahead = PREFETCH_AHEAD if part.size * part.itemsize >= SCATTER_PREFETCH_BYTES else m
    if D == 1:
        col = data[a:b, 0]
        acc = part[:, 0]
        if op == SUM:
            for i in range(m):
                s = xs[i]
                if s >= 0:
                    acc[s] += col[i]
        else:
            for i in range(m):
                s = xs[i]
                if s >= 0:
                    acc[s] = _combine(op, acc[s], col[i])
    else:
        rows = data[a:b]
        for i in range(m):
            if i + ahead < m and xs[i + ahead] >= 0:
                prefetch(part, xs[i + ahead])
            s = xs[i]
            if s >= 0:
                _combine_rows(op, part, s, rows, i)
    if scale != 0:
        for i in range(xs.shape[0]):
            s = xs[i]
            if s >= 0:
                count[s] += 1


@njit(cache=True, nogil=True)
def private_finish(op, scale, parts, counts, out, s0, s1):
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
def scatter_private(op, scale, data, ids, parts, counts, out, nfinish, workers):
    """out[s] = reduce of the rows with id s (checked ids, negatives dropped): each of the
    len(parts) fixed row chunks accumulates in its own parts[c] (pre-filled with the start
    value; counts[c] when scale), then the chunks are combined in chunk order, over `nfinish`
    ranges of segments."""
    n = ids.shape[0]
    S = out.shape[0]
    nparts = parts.shape[0]
    counter = np.zeros(2, np.int64)
    for w in prange(workers):
        c = next_chunk(counter[0:1])
        while c < nparts:
            private_span(op, scale, data, ids, n * c // nparts, n * (c + 1) // nparts, parts[c],
                         counts[c])
            c = next_chunk(counter[0:1])
    for w in prange(workers):
        t = next_chunk(counter[1:2])
        while t < nfinish:
            private_finish(op, scale, parts, counts, out, S * t // nfinish, S * (t + 1) // nfinish)
            t = next_chunk(counter[1:2])


@njit(cache=True, nogil=True, parallel=True)
def scatter_bucketed(op, scale, data, ids, init, out, shift, nchunks, workers, move):
    """out[s] = reduce of the rows with id s (checked ids, negatives dropped): rows are
    partitioned, stably, into buckets of 2**shift segments; each bucket is reduced in row order
    by one thread in accumulators that fit in cache and written once. With `move` (D > 1) the
    partition copies the rows themselves, so the reduction streams them (the copy costs a
    data-sized buffer); otherwise it saves row numbers and the reduction reads rows at random."""
    n = ids.shape[0]
    S = out.shape[0]
    D = out.shape[1]
    nb = ((S - 1) >> shift) + 1 if S > 0 else 0
    hist = np.zeros((nchunks, nb + 1), np.int64)
    counter = np.zeros(3, np.int64)
    for w in prange(workers):
        c = next_chunk(counter[0:1])
        while c < nchunks:
            h = hist[c]
            xs = ids[n * c // nchunks:n * (c + 1) // nchunks]
            for i in range(xs.shape[0]):
                s = xs[i]
                if s >= 0:
                    h[s >> shift] += 1
            c = next_chunk(counter[0:1])
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
    moved = D == 1 or move
    values = np.empty((pos if moved else 0, D), data.dtype)
    where = np.empty(0 if moved else pos, np.int64)
    for w in prange(workers):
        c = next_chunk(counter[1:2])
        while c < nchunks:
            _partition_chunk(data, ids, offsets[c], n * c // nchunks, n * (c + 1) // nchunks,
                             shift, local, values, where)
            c = next_chunk(counter[1:2])
    for w in prange(workers):
        bk = next_chunk(counter[2:3])
        while bk < nb:
            _reduce_bucket(op, scale, data, init, out, shift, bk, bstart, local, values, where)
            bk = next_chunk(counter[2:3])


@njit(cache=True, nogil=True)
def _partition_chunk(data, ids, cur, a, b, shift, local, values, where):
    """Rows a..b-1 of scatter_bucketed's stable partition: each row's place in its bucket, taken
    from `cur` (this chunk's next offset per bucket); its values (D == 1, or values has rows) or
    its row number saved."""
    D = data.shape[1]
    width = 1 << shift
    xs = ids[a:b]
    col = data[a:b, 0] if D == 1 else data[0:0, 0]
    rows = data[a:b]
    moved = values.shape[0] > 0
    for i in range(xs.shape[0]):
        s = xs[i]
        if s >= 0:
            bk = s >> shift
            p = cur[bk]
            cur[bk] = p + 1
            local[p] = s & (width - 1)
            if D == 1:
                values[p, 0] = col[i]
            elif moved:
                for k in range(D):
                    values[p, k] = rows[i, k]
            else:
                where[p] = a + i


@njit(cache=True, nogil=True)
def _reduce_bucket(op, scale, data, init, out, shift, bk, bstart, local, values, where):
    """Bucket bk of scatter_bucketed: its rows, in row order, into accumulators for its 2**shift
    segments, written to out once."""
    S = out.shape[0]
    D = out.shape[1]
    width = 1 << shift
    base = bk << shift
    w = min(width, S - base)
    acc = np.full((w, D), init[0])
    counts = np.zeros(w if scale != 0 else 0, np.int64)
    p0 = bstart[bk]
    ls = local[p0:bstart[bk + 1]]
    if D == 1:
        vs = values[p0:bstart[bk + 1], 0]
        col = acc[:, 0]
        if op == SUM:
            for p in range(ls.shape[0]):
                col[ls[p]] += vs[p]
        else:
            for p in range(ls.shape[0]):
                l = ls[p]
                col[l] = _combine(op, col[l], vs[p])
    elif values.shape[0] > 0:
        vrows = values[p0:bstart[bk + 1]]
        for p in range(ls.shape[0]):
            _combine_rows(op, acc, ls[p], vrows, p)
    else:
        # rows read at random: the row ROW_AHEAD ahead is prefetched, as in a gather
        ws = where[p0:bstart[bk + 1]]
        m = ls.shape[0]
        flat = data.reshape(-1)
        lines = row_lines(D * data.itemsize)
        for p in range(m):
            if p + ROW_AHEAD < m:
                prefetch_lines(flat, ws[p + ROW_AHEAD] * D, lines)
            _combine_rows(op, acc, ls[p], data, ws[p])
    if scale != 0:
        for p in range(ls.shape[0]):
            counts[ls[p]] += 1
    for l in range(w):
        count = counts[l] if scale != 0 else 0
        for k in range(D):
            out[base + l, k] = _finish(scale, acc[l, k], count)

"""Candidate sampling kernels (TF's range samplers): candidate values from uniform draws, unique
sampling by rejection, expected counts, the learned-unigram counts, and accidental hits.

- `log_uniform_values(u, range_max)`: the inverse CDF of P(k) = log((k+2)/(k+1)) / log(range_max+1),
  floor(exp(u * log(range_max+1))) - 1 (mod range_max, against round-off); `log_uniform_probability`.
- `weighted_values(cum, u)`: the index whose cumulative weight interval holds u * total.
- `sample(draw, num_sampled, unique)`: (values, num_tries). Non-unique: one draw per value. Unique:
  draws are taken in order and a value already seen is rejected (TF's rejection loop); num_tries
  counts every draw up to the last one taken. The seen-set is an open-addressing hash table of
  2 * num_sampled slots at least (memory O(num_sampled), whatever range_max), walked by a compiled
  loop (`_take_new`); small chunks take a NumPy path (`_take_new_numpy`) with the same result.
- `expected_count(p, num_sampled, num_tries)`: p * num_sampled when num_tries == num_sampled (always
  for non-unique sampling), else 1 - (1 - p) ** num_tries (as -expm1(num_tries * log1p(-p))), in
  float32 like TF.
- `UnigramCounts`: the learned unigram sampler's counts (1 per class to start), sampled by
  cumulative counts (a Fenwick tree, O(log n) a draw and an update, for large ranges).
- `accidental_hits(true_classes, sampled)`: (row, position in sampled, -FLT_MAX) for every true
  class that was sampled; a value sampled twice is matched at its last position (as TF).
"""
import numpy as np

from segflow.kernels._common import HAVE_NUMBA, BadInput, njit

__all__ = ["log_uniform_values", "log_uniform_probability", "weighted_values", "sample", "expected_count",
           "UnigramCounts", "accidental_hits", "HAVE_NUMBA", "MAX_TRIES"]

MAX_TRIES = 2 ** 31 - 1          # TF aborts the process past this many tries; we raise
_SMALL = 256                     # chunks of at most this many draws take the NumPy path
_MAX_CHUNK = 1 << 20
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_FLT_MAX = np.finfo(np.float32).max


def log_uniform_values(u, range_max):
    """Log-uniform candidates in [0, range_max) from uniforms u in [0, 1)."""
    v = np.floor(np.exp(u * np.log1p(float(range_max)))).astype(np.int64) - 1
    return v % range_max            # never needed mathematically; guards against round-off


def log_uniform_probability(values, range_max):
    """P(value) = log((value + 2) / (value + 1)) / log(range_max + 1), float64."""
    v = values.astype(np.float64)
    return np.log((v + 2.0) / (v + 1.0)) / np.log1p(float(range_max))


def weighted_values(cum, u):
    """Indices drawn with weights whose running sum is `cum` (float64, last entry > 0): the first i
    with cum[i] > u * cum[-1]; zero-weight indices are never drawn."""
    return np.searchsorted(cum, u * cum[-1], side="right").astype(np.int64)


# -- unique sampling by rejection

@njit(cache=True, nogil=True)
def _take_new(draws, table, out, picked):
    """Appends to out[picked:] the draws not yet in the hash set `table` (slots -1 when empty; values
    >= 0), in order, until out is full. Returns (picked, draws consumed)."""
    n = out.shape[0]
    mask = table.shape[0] - 1
    bits = 0
    while (1 << bits) < table.shape[0]:
        bits += 1
    shift = np.uint64(64 - bits)
    i = 0
    while picked < n and i < draws.shape[0]:
        v = draws[i]
        i += 1
        h = np.int64((np.uint64(v) * _GOLDEN) >> shift) if bits > 0 else np.int64(0)
        while True:
            s = table[h]
            if s < 0:
                table[h] = v
                out[picked] = v
                picked += 1
                break
            if s == v:
                break
            h = (h + 1) & mask
    return picked, i


def _take_new_numpy(draws, out, picked):
    """`_take_new` with the values taken so far (out[:picked]) as the seen-set."""
    need = out.shape[0] - picked
    if need == 0:
        return picked, 0
    vals, first = np.unique(draws, return_index=True)
    order = np.argsort(first, kind="stable")
    vals, first = vals[order], first[order]
    if picked:
        keep = ~np.isin(vals, out[:picked])
        vals, first = vals[keep], first[keep]
    if vals.size >= need:
        out[picked:] = vals[:need]
        return out.shape[0], int(first[need - 1]) + 1
    out[picked:picked + vals.size] = vals
    return picked + vals.size, draws.shape[0]


def _insert_all(table, values):
    """Marks `values` seen in the hash set (when a sample moves from the NumPy to the compiled path)."""
    scratch = np.empty(values.shape[0], np.int64)
    _take_new(values, table, scratch, 0)


def sample(draw, num_sampled, unique, max_tries=MAX_TRIES):
    """(values int64 [num_sampled], num_tries): draws from `draw(n)` (n int64 candidates >= 0 of one
    distribution), distinct when `unique`. Raises BadInput after `max_tries` draws without
    num_sampled distinct values."""
    if not unique or num_sampled == 0:
        return np.ascontiguousarray(draw(num_sampled), np.int64), num_sampled
    out = np.empty(num_sampled, np.int64)
    picked, tries, table = 0, 0, None
    chunk = num_sampled
    while picked < num_sampled:
        chunk = min(chunk, max_tries - tries)
        if chunk <= 0:
            raise BadInput("true_classes", f"no {num_sampled} distinct candidates after {max_tries} tries")
        draws = np.ascontiguousarray(draw(chunk), np.int64)
        if (chunk <= _SMALL and table is None) or not HAVE_NUMBA:
            picked, used = _take_new_numpy(draws, out, picked)
        else:
            if table is None:
                table = np.full(1 << max(4, int(2 * num_sampled - 1).bit_length()), -1, np.int64)
                _insert_all(table, out[:picked])
            picked, used = _take_new(draws, table, out, picked)
        tries += used
        # the next chunk: about twice the draws the remaining values are likely to need
        chunk = min(_MAX_CHUNK, max(2 * chunk, 2 * (num_sampled - picked)))
    return out, tries


def expected_count(p, num_sampled, num_tries):
    """Expected occurrences (float32) of values of probability `p` in a sample of `num_sampled` values
    that took `num_tries` draws."""
    p = np.asarray(p, np.float32)
    if num_tries == num_sampled:
        return p * np.float32(num_sampled)
    with np.errstate(divide="ignore"):
        return (-np.expm1(np.float32(num_tries) * np.log1p(-p))).astype(np.float32)


# -- the learned unigram sampler's counts

_FENWICK_MIN = 4096     # below this many classes a cumulative sum per call is cheaper than a tree


@njit(cache=True, nogil=True)
def _fenwick_build(counts):
    n = counts.shape[0]
    tree = np.zeros(n + 1, np.int64)
    for i in range(n):
        tree[i + 1] += counts[i]
        j = (i + 1) + ((i + 1) & -(i + 1))
        if j <= n:
            tree[j] += tree[i + 1]
    return tree


@njit(cache=True, nogil=True)
def _fenwick_add(tree, counts, ids):
    """counts[id] += 1 for each id (in [0, n)), in the tree too."""
    n = counts.shape[0]
    for k in range(ids.shape[0]):
        i = ids[k]
        counts[i] += 1
        j = i + 1
        while j <= n:
            tree[j] += 1
            j += j & -j


@njit(cache=True, nogil=True)
def _fenwick_find(tree, targets, out):
    """out[k] = the first i with counts[0] + ... + counts[i] > targets[k]."""
    n = tree.shape[0] - 1
    top = 1
    while top * 2 <= n:
        top *= 2
    for k in range(targets.shape[0]):
        t = targets[k]
        pos = 0
        step = top
        while step > 0:
            nxt = pos + step
            if nxt <= n and tree[nxt] <= t:
                pos = nxt
                t -= tree[nxt]
            step >>= 1
        out[k] = pos


class UnigramCounts:
    """Counts of every class in [0, range_max), 1 each to start; `add(ids)` counts ids once more."""

    def __init__(self, range_max):
        self.counts = np.ones(range_max, np.int64)
        self.total = int(range_max)
        self.tree = None       # a Fenwick tree over counts, for large ranges (built on first use)

    def _use_tree(self):
        return HAVE_NUMBA and self.counts.shape[0] >= _FENWICK_MIN

    def probability(self, values):
        return self.counts[values] / float(self.total)

    def values(self, u):
        """Classes drawn with probability count / total from uniforms u in [0, 1)."""
        targets = np.minimum(np.floor(u * self.total).astype(np.int64), self.total - 1)
        if self._use_tree():
            if self.tree is None:
                self.tree = _fenwick_build(self.counts)
            out = np.empty(targets.shape[0], np.int64)
            _fenwick_find(self.tree, targets, out)
            return out
        return np.searchsorted(np.cumsum(self.counts), targets, side="right").astype(np.int64)

    def add(self, ids):
        ids = np.ascontiguousarray(ids, np.int64).reshape(-1)
        if self.tree is not None:
            _fenwick_add(self.tree, self.counts, ids)
        else:
            np.add.at(self.counts, ids, 1)
        self.total += ids.shape[0]


# -- accidental hits

def accidental_hits(true_classes, sampled):
    """(indices int32, ids int64, weights float32): one entry per true_classes[i, j] found in
    `sampled`, in row-major order: row i, its last position in sampled, -FLT_MAX."""
    flat = true_classes.reshape(-1)
    num_true = true_classes.shape[1] if true_classes.ndim == 2 else 1
    if sampled.shape[0] == 0 or flat.shape[0] == 0:
        return np.empty(0, np.int32), np.empty(0, np.int64), np.empty(0, np.float32)
    order = np.argsort(sampled, kind="stable")
    ordered = sampled[order]
    where = np.searchsorted(ordered, flat, side="right") - 1   # the last equal one: the last position
    found = where >= 0
    found[found] = ordered[where[found]] == flat[found]
    hits = np.flatnonzero(found)
    indices = (hits // num_true).astype(np.int32)
    ids = order[where[hits]].astype(np.int64)
    return indices, ids, np.full(hits.shape[0], -_FLT_MAX, np.float32)

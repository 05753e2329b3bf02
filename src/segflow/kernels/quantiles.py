"""Quantile kernels: `bucketize` (TF's Bucketize), `quantile_buckets` (TF's old contrib Quantiles
rule) and `WeightedQuantileSketch`, a mergeable weighted quantile summary.

The sketch keeps entries (value, weight, min_rank, max_rank) sorted by value, as in TF's
boosted-trees `WeightedQuantilesSummary`: `min_rank` is a lower bound of the weight of all values
strictly below `value`, `max_rank` an upper bound of the weight of all values up to and including
it. Built from a batch of values it is exact. Merging two sketches adds their rank uncertainties;
compressing drops entries only while the uncertainty a gap creates stays within eps * total weight.
Hence, at all times, for every entry (the sketch's `approximation_error()` <= eps)

    max_rank - min_rank - weight <= eps * W   and   prev-max-rank(i) - next-min-rank(i-1) <= eps * W,

and a query for rank r returns a value v whose true rank interval [weight(< v), weight(<= v)] lies
within eps * W of r (the rank-error bound). While fewer than `max_entries` distinct values were
added nothing is compressed and the answers are exact.
"""
import math

import numpy as np

from segflow.kernels._common import BadInput, njit

__all__ = ["bucketize", "quantile_buckets", "WeightedQuantileSketch"]


def bucketize(values, boundaries):
    """TF's Bucketize: bucket = number of `boundaries` <= value (boundaries sorted ascending)."""
    values = np.asarray(values)
    b = np.asarray(boundaries, np.float64)
    if b.ndim != 1:
        raise BadInput("boundaries", f"must be 1-D, got shape {list(b.shape)}")
    if b.size > 1 and np.any(b[1:] < b[:-1]):
        raise BadInput("boundaries", "must be sorted in ascending order")
    return np.searchsorted(b, values.astype(np.float64, copy=False), side="right").astype(np.int32)


def quantile_buckets(values, boundaries):
    """TF contrib's Quantiles rule: the index of the first boundary >= value, at most
    len(boundaries) - 1 (values above the last boundary share the last bucket); 0 without
    boundaries."""
    values = np.asarray(values, np.float64).reshape(-1)
    b = np.asarray(boundaries, np.float64).reshape(-1)
    if b.size == 0:
        return np.zeros(values.shape, np.int32)
    if b.size > 1 and np.any(b[1:] < b[:-1]):
        raise BadInput("buckets", "must be sorted in ascending order")
    out = np.searchsorted(b, values, side="left")
    np.minimum(out, b.size - 1, out=out)
    return out.astype(np.int32)


# ----------------------------------------------------------------------------------------------
# The summary's two loops (merge and compress) are sequential scans; Numba makes them cheap.

@njit(cache=True, nogil=True)
def _merge(v1, w1, lo1, hi1, v2, w2, lo2, hi2):
    """Merges two sorted summaries; ranks add (TF's WeightedQuantilesSummary::Merge)."""
    n1, n2 = v1.shape[0], v2.shape[0]
    v = np.empty(n1 + n2, np.float64)
    w = np.empty(n1 + n2, np.float64)
    lo = np.empty(n1 + n2, np.float64)
    hi = np.empty(n1 + n2, np.float64)
    i = j = k = 0
    next1 = 0.0  # next min rank of the last entry taken from summary 1
    next2 = 0.0
    while i < n1 and j < n2:
        if v1[i] < v2[j]:
            v[k], w[k] = v1[i], w1[i]
            lo[k] = lo1[i] + next2
            hi[k] = hi1[i] + (hi2[j] - w2[j])
            next1 = lo1[i] + w1[i]
            i += 1
        elif v2[j] < v1[i]:
            v[k], w[k] = v2[j], w2[j]
            lo[k] = lo2[j] + next1
            hi[k] = hi2[j] + (hi1[i] - w1[i])
            next2 = lo2[j] + w2[j]
            j += 1
        else:
            v[k], w[k] = v1[i], w1[i] + w2[j]
            lo[k] = lo1[i] + lo2[j]
            hi[k] = hi1[i] + hi2[j]
            next1 = lo1[i] + w1[i]
            next2 = lo2[j] + w2[j]
            i += 1
            j += 1
        k += 1
    while i < n1:
        v[k], w[k] = v1[i], w1[i]
        lo[k] = lo1[i] + next2
        hi[k] = hi1[i] + hi2[n2 - 1]
        i += 1
        k += 1
    while j < n2:
        v[k], w[k] = v2[j], w2[j]
        lo[k] = lo2[j] + next1
        hi[k] = hi2[j] + hi1[n1 - 1]
        j += 1
        k += 1
    return v[:k], w[:k], lo[:k], hi[:k]


@njit(cache=True, nogil=True)
def _compress(v, w, lo, hi, delta):
    """Keeps the first and last entries and, greedily, the fewest between them such that every
    new gap prev_max_rank(next) - next_min_rank(kept) stays <= delta. Returns the kept indices."""
    n = v.shape[0]
    keep = np.empty(n, np.int64)
    if n <= 2:
        for i in range(n):
            keep[i] = i
        return keep[:n]
    keep[0] = 0
    m = 1
    cur = 0
    while cur < n - 1:
        nxt = cur + 1
        # advance while the entry after nxt can follow cur directly
        while nxt + 1 < n and (hi[nxt + 1] - w[nxt + 1]) - (lo[cur] + w[cur]) <= delta:
            nxt += 1
        keep[m] = nxt
        m += 1
        cur = nxt
    return keep[:m]


class WeightedQuantileSketch:
    """A mergeable weighted quantile summary with rank error <= eps * total weight.

    Args:
      eps: the rank-error bound, as a fraction of the total weight (0 < eps < 1).
      max_entries: entries kept before compressing (default ceil(4 / eps)); while at most this
        many distinct values were added, every answer is exact.
    `add(values, weights)` adds a batch; `merge(other)` folds in another sketch (built on another
    chunk; the bound holds for the union); `boundaries(num_buckets)` returns sorted unique bucket
    boundaries, the minimum and the maximum included; `quantile(q)` a value of rank ~q * W.
    """

    def __init__(self, eps=0.01, max_entries=None):
        if not 0.0 < float(eps) < 1.0:
            raise ValueError(f"eps must be in (0, 1), got {eps}")
        self.eps = float(eps)
        self.max_entries = int(max_entries) if max_entries is not None else int(math.ceil(4.0 / self.eps))
        empty = np.zeros(0, np.float64)
        self._v, self._w, self._lo, self._hi = empty, empty, empty, empty

    # -- building ------------------------------------------------------------------------------
    def add(self, values, weights=None):
        """Adds values (NaN ignored) with non-negative weights (default 1). Returns self."""
        values = np.asarray(values, np.float64).reshape(-1)
        if weights is None:  # unit weights: a sort and run lengths (fast on sorted input too)
            values = np.sort(values[~np.isnan(values)])
            if values.size == 0:
                return self
            starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
            w = np.diff(np.r_[starts, values.size]).astype(np.float64)
            hi = np.cumsum(w)
            self._fold(values[starts], w, hi - w, hi)
            return self
        else:
            weights = np.asarray(weights, np.float64).reshape(-1)
            if weights.shape != values.shape:
                raise ValueError(f"weights shape {weights.shape} must equal values shape {values.shape}")
            if np.any(weights < 0):
                raise ValueError("weights must be non-negative")
        ok = ~np.isnan(values) & (weights > 0)
        values, weights = values[ok], weights[ok]
        if values.size == 0:
            return self
        order = np.argsort(values, kind="stable")
        values, weights = values[order], weights[order]
        starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
        v = values[starts]
        w = np.add.reduceat(weights, starts)
        hi = np.cumsum(w)
        lo = hi - w
        self._fold(v, w, lo, hi)
        return self

    def merge(self, other):
        """Folds `other` (a WeightedQuantileSketch) into this one. Returns self."""
        if not isinstance(other, WeightedQuantileSketch):
            raise TypeError(f"can only merge a WeightedQuantileSketch, not {type(other).__name__}")
        if other._v.size:
            self._fold(other._v, other._w, other._lo, other._hi)
        return self

    def _fold(self, v, w, lo, hi):
        if self._v.size == 0:
            self._v, self._w, self._lo, self._hi = v.copy(), w.copy(), lo.copy(), hi.copy()
        else:
            self._v, self._w, self._lo, self._hi = _merge(self._v, self._w, self._lo, self._hi, v, w, lo, hi)
        if self._v.size > self.max_entries:
            keep = _compress(self._v, self._w, self._lo, self._hi, self.eps * self.total_weight)
            self._v, self._w, self._lo, self._hi = (self._v[keep], self._w[keep], self._lo[keep],
                                                    self._hi[keep])

    # -- state -----------------------------------------------------------------------------------
    @property
    def total_weight(self):
        return float(self._hi[-1]) if self._hi.size else 0.0

    @property
    def size(self):
        return int(self._v.size)

    def approximation_error(self):
        """The summary's realised rank-uncertainty bound, as a fraction of the total weight."""
        if self._v.size == 0:
            return 0.0
        own = self._hi - self._lo - self._w
        gaps = (self._hi[1:] - self._w[1:]) - (self._lo[:-1] + self._w[:-1])
        worst = max(float(own.max()), float(gaps.max()) if gaps.size else 0.0, 0.0)
        return worst / self.total_weight

    def entries(self):
        """(values, weights, min_ranks, max_ranks) as copies."""
        return self._v.copy(), self._w.copy(), self._lo.copy(), self._hi.copy()

    def to_arrays(self):
        """The summary as one [4, n] float64 array (for sending between processes)."""
        return np.stack([self._v, self._w, self._lo, self._hi])

    @classmethod
    def from_arrays(cls, arrays, eps=0.01, max_entries=None):
        s = cls(eps, max_entries)
        a = np.asarray(arrays, np.float64)
        s._v, s._w, s._lo, s._hi = (a[0].copy(), a[1].copy(), a[2].copy(), a[3].copy())
        return s

    # -- queries ---------------------------------------------------------------------------------
    def _at_ranks(self, ranks):
        # The first entry whose max_rank reaches r: its true rank interval is within the
        # approximation error of r (module docstring).
        idx = np.searchsorted(self._hi, np.asarray(ranks, np.float64), side="left")
        return self._v[np.minimum(idx, self._v.size - 1)]

    def quantile(self, q):
        """A value whose rank is within eps * W of q * W (q in [0, 1]); NaN when empty."""
        if self._v.size == 0:
            return np.nan
        q = np.clip(np.asarray(q, np.float64), 0.0, 1.0)
        r = np.maximum(q * self.total_weight, np.finfo(np.float64).tiny)
        return self._at_ranks(r)

    def boundaries(self, num_buckets):
        """Sorted unique boundaries at ranks k * W / num_buckets, k = 0..num_buckets (the minimum
        and the maximum included): at most num_buckets + 1 values."""
        num_buckets = int(num_buckets)
        if num_buckets < 1:
            raise ValueError(f"num_buckets must be >= 1, got {num_buckets}")
        if self._v.size == 0:
            return np.zeros(0, np.float64)
        if self._v.size <= num_buckets + 1 and self.approximation_error() == 0.0:
            return self._v.copy()
        ranks = np.arange(num_buckets + 1, dtype=np.float64) * (self.total_weight / num_buckets)
        ranks[0] = np.finfo(np.float64).tiny
        return np.unique(self._at_ranks(ranks))



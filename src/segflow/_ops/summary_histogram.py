"""The two histograms TensorBoard reads, from NumPy arrays.

- `linear(data, buckets)`: TF2's `tf.summary.histogram`: `buckets` (30) equal-width buckets from
  the data's min to its max, as a `[buckets, 3]` float64 array of (left edge, right edge, count).
- `exponential(data)`: TF1's `HistogramSummary`: TF's fixed bucket limits (+-1e-12 * 1.1**k up to
  1e20, then DBL_MAX) with runs of empty buckets merged, plus min, max, num, sum, sum_squares.
"""
import sys

import numpy as np

__all__ = ["DEFAULT_BUCKETS", "linear", "exponential", "exponential_limits"]

DEFAULT_BUCKETS = 30
_LIMITS = []


def linear(data, buckets=DEFAULT_BUCKETS):
    """Rows (left, right, count) of `buckets` equal-width buckets over [min, max]; a value in
    [edge_i, edge_i+1) counts in bucket i, the maximum in the last. Empty data: `buckets` zero rows;
    one distinct value: every row's edges are that value and the last row holds the count."""
    data = np.asarray(data, np.float64).reshape(-1)
    k = max(0, int(buckets))
    if data.size == 0 or k == 0:
        return np.zeros((k, 3), np.float64)
    lo, hi = data.min(), data.max()
    out = np.zeros((k, 3), np.float64)
    if np.isnan(lo) or np.isnan(hi):
        out[:, :2] = np.nan
        return out
    if lo == hi:
        out[:, :2] = hi
        out[-1, 2] = data.size
        return out
    width = (hi - lo) / k
    with np.errstate(invalid="ignore", over="ignore"):
        idx = np.floor((data - lo) / width)
    idx = np.minimum(np.nan_to_num(idx, nan=0.0, posinf=k - 1, neginf=0.0), k - 1).astype(np.int64)
    edges = np.linspace(lo, hi, k + 1)
    edges[-1] = hi
    out[:, 0] = edges[:-1]
    out[:, 1] = edges[1:]
    out[:, 2] = np.bincount(idx, minlength=k)
    return out


def exponential_limits():
    """TF's default histogram bucket limits (the right edge of each bucket), ascending."""
    if not _LIMITS:
        pos = []
        v = 1e-12
        while v < 1e20:
            pos.append(v)
            v *= 1.1
        pos.append(sys.float_info.max)
        neg = [-x for x in reversed(pos)]
        _LIMITS.append(np.array(neg + [0.0] + pos, np.float64))
    return _LIMITS[0]


def exponential(data):
    """TF1's histogram of `data` (finite values) as HistogramProto fields: min, max, num, sum,
    sum_squares, bucket_limit, bucket. A value v counts in the first bucket whose limit is > v."""
    data = np.asarray(data, np.float64).reshape(-1)
    limits = exponential_limits()
    idx = np.minimum(np.searchsorted(limits, data, side="right"), limits.size - 1)
    counts = np.bincount(idx, minlength=limits.size)
    out_limits, out_counts = [], []
    i = 0
    n = limits.size
    while i < n:
        end, count = limits[i], counts[i]
        i += 1
        if count <= 0:      # a run of empty buckets becomes one, ending where the run ends
            while i < n and counts[i] <= 0:
                end, count = limits[i], counts[i]
                i += 1
        out_limits.append(float(end))
        out_counts.append(float(count))
    big = sys.float_info.max
    return {"min": float(data.min()) if data.size else big, "max": float(data.max()) if data.size else -big,
            "num": float(data.size), "sum": float(data.sum()), "sum_squares": float(np.dot(data, data)),
            "bucket_limit": out_limits, "bucket": out_counts}

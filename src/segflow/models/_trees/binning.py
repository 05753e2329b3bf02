"""Feature binning for the histogram learner: per feature at most `max_bins` bins from the weighted
quantile sketch, NaN in its own missing bin (index `max_bins`).

A feature with at most `max_bins` distinct values gets one bin per value (thresholds halfway
between neighbours); otherwise the thresholds are the sketch's quantile boundaries (rank error
<= eps * n with eps = 1 / (8 * max_bins)). Bin b of feature f holds the values x with
thresholds[f][b-1] < x <= thresholds[f][b], so "bin <= b" is "x <= thresholds[f][b]" and a split
learned on bins is applied to raw values with the same comparison.

`fit_sketches` takes one merged sketch per feature instead of the data (segflow.dask._trees builds
them per row chunk): while the merged sketch is exact (at most ceil(4 / eps) distinct values in all)
the thresholds are those `fit` gives on the same (unsampled) rows.
"""
import numpy as np

from segflow.kernels import histogram as hk
from segflow.kernels.quantiles import WeightedQuantileSketch

__all__ = ["BinMapper"]

_SKETCH_ROWS = 200_000   # rows sampled for the thresholds of a larger data set (as sklearn does)


class BinMapper:
    """Learns per-feature thresholds (`fit`) and maps values to uint8 bins (`transform`)."""

    def __init__(self, max_bins=255, random_state=None):
        if not 2 <= int(max_bins) <= 255:
            raise ValueError(f"max_bins must be in [2, 255], got {max_bins}")
        self.max_bins = int(max_bins)
        self.missing_bin = self.max_bins
        self.random_state = random_state

    def fit(self, x):
        x = np.asarray(x, np.float64)
        if x.shape[0] > _SKETCH_ROWS:
            rng = np.random.default_rng(self.random_state)
            x = x[np.sort(rng.choice(x.shape[0], _SKETCH_ROWS, replace=False))]
        self.thresholds_ = [self._thresholds(x[:, f]) for f in range(x.shape[1])]
        self.n_bins_ = np.array([len(t) + 1 for t in self.thresholds_], np.int64)
        return self

    def _thresholds(self, col):
        col = np.sort(col[~np.isnan(col)])
        if col.size == 0:
            return np.zeros(0, np.float64)
        distinct = col[np.r_[True, col[1:] != col[:-1]]]
        if distinct.size <= self.max_bins:
            return (distinct[:-1] + distinct[1:]) * 0.5
        return self._sketch_thresholds(WeightedQuantileSketch(self.eps).add(col))

    @property
    def eps(self):
        """The sketches' rank-error bound, 1 / (8 * max_bins)."""
        return 1.0 / (8 * self.max_bins)

    def _sketch_thresholds(self, sketch):
        bounds = sketch.boundaries(self.max_bins)
        return np.unique(bounds[1:-1])[: self.max_bins - 1]

    def fit_sketches(self, sketches):
        """Thresholds from one WeightedQuantileSketch (eps `self.eps`, unit weights) per feature."""
        self.thresholds_ = []
        for sketch in sketches:
            if sketch.size == 0:
                self.thresholds_.append(np.zeros(0, np.float64))
            elif sketch.size <= self.max_bins and sketch.approximation_error() == 0.0:  # exact distinct values
                v = sketch.entries()[0]
                self.thresholds_.append((v[:-1] + v[1:]) * 0.5)
            else:
                self.thresholds_.append(self._sketch_thresholds(sketch))
        self.n_bins_ = np.array([len(t) + 1 for t in self.thresholds_], np.int64)
        return self

    def transform(self, x):
        """[N, F] uint8 bins of x ([N, F]); NaN -> missing_bin."""
        return hk.bin_columns(np.asarray(x, np.float64), self.thresholds_, self.missing_bin)

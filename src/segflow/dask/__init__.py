"""segflow.dask: segflow's reductions and models on Dask arrays, for data beyond one machine.

    import dask.array as da, segflow.dask as sfd
    x = da.random.random((10**8, 8), chunks=(10**6, 8)); ids = ...   # ids chunked like x's rows
    sfd.unsorted_segment_sum(x, ids, 1000).compute()                # each chunk by segflow's kernel

Functions are named as in `sf.math` and take and return dask arrays, lazy until `.compute()`; each
row chunk is reduced by segflow's kernels on the worker that holds it and the partial results are
combined by Dask's tree reduction. `segflow.models.KMeans(...).fit(X)` accepts a dask array too
(_kmeans.py), and so do `GradientBoostedTreesRegressor/Classifier(...).fit(X, y)` (_trees.py:
per-chunk quantile sketches merged into the bins, per-chunk histograms summed per tree level; only
sketches, histograms and splits travel). Dask itself is imported on first use (`pip install segflow[dask]`);
`import segflow` never imports it, nor this package.
"""
from segflow.dask._bincount import bincount
from segflow.dask._segment import (unsorted_segment_max, unsorted_segment_mean, unsorted_segment_min,
                                   unsorted_segment_prod, unsorted_segment_sqrt_n, unsorted_segment_sum)

__all__ = ["unsorted_segment_sum", "unsorted_segment_prod", "unsorted_segment_max", "unsorted_segment_min",
           "unsorted_segment_mean", "unsorted_segment_sqrt_n", "bincount"]

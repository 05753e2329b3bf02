"""A data set larger than one worker's memory limit, generated lazily on the LocalCluster's
workers (conftest.py) and reduced there by segflow.dask. (Its own module, run first: the workers
are at their leanest before the other tests load more modules into them.)"""
import dask
import dask.array as da
import numpy as np

import segflow.dask as sfd


def test_data_larger_than_a_worker_reduced_on_the_workers(client):
    """1.5x one worker's memory limit of float32 rows, generated lazily on the workers; checked
    against a chunk-by-chunk NumPy reduction (np.add.at) of the same chunks, on the workers too."""
    limit = min(w["memory_limit"] for w in client.scheduler_info()["workers"].values())
    d, nseg, chunk_rows = 16, 64, 1 << 17                     # 8 MiB chunks
    rows = int(1.5 * limit) // (4 * d) // chunk_rows * chunk_rows
    g = da.random.default_rng(3)
    X = g.random((rows, d), dtype=np.float32, chunks=(chunk_rows, d))
    ids = g.integers(-1, nseg, size=rows, chunks=chunk_rows)
    assert X.nbytes >= 1.5 * limit * 0.99

    def numpy_partial(x, i):        # [nseg, d] sums of one chunk: one np.bincount over (id, column) pairs
        keep = i[:, 0] >= 0
        flat = (i[keep, 0][:, None] * d + np.arange(d)).ravel()
        return np.bincount(flat, weights=x[keep].ravel(), minlength=nseg * d).reshape(nseg, d)

    def numpy_counts(i):
        return np.bincount(i[i >= 0], minlength=nseg)

    nb = X.numblocks[0]
    ref = da.map_blocks(numpy_partial, X, ids[:, None], dtype=np.float64, chunks=((nseg,) * nb, (d,)))
    ref = ref.reshape((nb, nseg, d))
    counts_ref = da.map_blocks(numpy_counts, ids, dtype=np.int64, chunks=((nseg,) * nb,)).reshape((nb, nseg))
    got_sum, got_mean, want, n = dask.compute(sfd.unsorted_segment_sum(X, ids, nseg),
                                              sfd.unsorted_segment_mean(X, ids, nseg),
                                              ref.sum(axis=0), counts_ref.sum(axis=0))
    np.testing.assert_allclose(got_sum, want, rtol=1e-5)
    np.testing.assert_allclose(got_mean, want / n[:, None], rtol=1e-5)
    assert abs(got_mean.mean() - 0.5) < 1e-3 and n.sum() > rows * (nseg / (nseg + 1)) * 0.99

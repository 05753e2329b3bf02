"""KMeans.fit on dask arrays (segflow.dask._kmeans) on the LocalCluster, against the in-memory fit."""
import dask.array as da
import numpy as np
import pytest

from segflow.dask import _kmeans as dask_kmeans
from segflow.models import KMeans

RNG = np.random.default_rng(11)
CENTERS = RNG.normal(size=(4, 3)) * 6
X = (CENTERS[RNG.integers(0, 4, 3000)] + RNG.normal(size=(3000, 3))).astype(np.float64)
CHUNKS = ((700, 0, 1300, 1000),)      # uneven, one empty chunk


def _pair(X_np, chunks=CHUNKS, sample_weight=None, **params):
    a = KMeans(**params).fit(X_np, sample_weight=sample_weight)
    w = None if sample_weight is None else da.from_array(sample_weight, chunks=chunks[0])
    b = KMeans(**params).fit(da.from_array(X_np, chunks=chunks + ((X_np.shape[1],),)), sample_weight=w)
    return a, b


def _same(a, b):
    np.testing.assert_allclose(b.cluster_centers_, a.cluster_centers_, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(b.inertia_, a.inertia_, rtol=1e-9)
    assert b.n_iter_ == a.n_iter_
    labels = b.labels_.compute()
    assert labels.dtype == np.int32
    np.testing.assert_array_equal(labels, a.labels_)


@pytest.mark.parametrize("params", [
    {"n_clusters": 4, "init": X[[0, 1, 2, 3]].copy()},                 # same init: same result
    {"n_clusters": 4, "random_state": 3},                               # k-means++ on all rows (n < sample)
    {"n_clusters": 3, "init": "random", "n_init": 2, "random_state": 5, "distance_metric": "cosine", "max_iter": 4},
])
def test_fit_matches_the_in_memory_fit(client, params):
    a, b = _pair(X, **params)
    _same(a, b)


def test_weights_float32_and_an_empty_cluster(client):
    w = RNG.random(X.shape[0])
    a, b = _pair(X, sample_weight=w, n_clusters=4, random_state=0)
    _same(a, b)
    x32 = X.astype(np.float32)
    init = np.vstack([x32[:3], np.full((1, 3), 1e3, np.float32)])     # the far center loses all its rows
    a, b = _pair(x32, n_clusters=4, init=init)
    assert b.cluster_centers_.dtype == np.float32
    np.testing.assert_allclose(b.cluster_centers_, a.cluster_centers_, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(b.inertia_, a.inertia_, rtol=1e-5)


def test_large_n_initializes_on_a_sample_and_predicts_lazily(client, monkeypatch):
    monkeypatch.setattr(dask_kmeans, "SAMPLE_ROWS", 1000)             # n = 6000 rows is "large"
    rows = 6000
    assert dask_kmeans.sample_rows(rows, 4) == 1000
    x = (CENTERS[RNG.integers(0, 4, rows)] + RNG.normal(size=(rows, 3)) * 0.5)
    Xd = da.from_array(x, chunks=2000)
    b = KMeans(4, random_state=0, max_iter=10).fit(Xd)
    a = KMeans(4, init=b.cluster_centers_, max_iter=1).fit(x)          # the dask fit's centers are a fixed point
    np.testing.assert_allclose(a.cluster_centers_, b.cluster_centers_, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(np.sort(np.linalg.norm(b.cluster_centers_, axis=1)),
                               np.sort(np.linalg.norm(CENTERS, axis=1)), rtol=0.02)
    labels = b.predict(Xd)
    assert labels.chunks == Xd.chunks[:1]
    np.testing.assert_array_equal(labels.compute(), a.predict(x))
    np.testing.assert_allclose(b.transform(Xd).compute(), b.transform(x), rtol=1e-12)


def test_bad_input(client):
    with pytest.raises(ValueError, match="use_mini_batch"):
        KMeans(2, use_mini_batch=True).fit(da.from_array(X, chunks=1000))
    bad = X.copy()
    bad[5, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        KMeans(2).fit(da.from_array(bad, chunks=1000))
    with pytest.raises(ValueError, match="n_samples=3 should be >= n_clusters=4"):
        KMeans(4).fit(da.from_array(X[:3], chunks=2))

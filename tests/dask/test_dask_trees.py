"""GradientBoostedTrees*.fit on dask arrays (segflow.dask._trees) on the LocalCluster, against the
in-memory fit on the same data: the same bin edges, the same trees, the same predictions."""
import dask.array as da
import numpy as np
import pytest

from segflow.dask import _trees as dask_trees
from segflow.models import GradientBoostedTreesClassifier, GradientBoostedTreesRegressor

RNG = np.random.default_rng(5)
N = 2400
X = RNG.normal(size=(N, 5))
X[:, 3] = np.round(X[:, 3] * 2)              # few distinct values: one bin per value
X[:, 4] = np.round(X[:, 4] * 60)             # ~300 distinct (> max_bins): exact sketch boundaries
X[RNG.random(X.shape) < 0.05] = np.nan
Y = np.nansum(X[:, :3], axis=1) + 0.01 * np.nan_to_num(X[:, 4]) + RNG.normal(size=N) * 0.1
CHUNKS = (600, 0, 1000, 800)                 # uneven, one empty chunk


def _d(a):
    return da.from_array(a, chunks=(CHUNKS,) + tuple((s,) for s in a.shape[1:]))


def _same_trees(a, b):
    assert len(a.bin_thresholds_) == len(b.bin_thresholds_)
    for ta, tb in zip(a.bin_thresholds_, b.bin_thresholds_):
        np.testing.assert_array_equal(tb, ta)
    np.testing.assert_array_equal(b._starts, a._starts)
    np.testing.assert_array_equal(b._feature, a._feature)
    np.testing.assert_array_equal(b._threshold, a._threshold)
    np.testing.assert_array_equal(b._missing_left, a._missing_left)
    np.testing.assert_array_equal(b._count, a._count)
    np.testing.assert_allclose(b._value, a._value, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b._baseline, a._baseline, rtol=1e-12)
    assert b.n_iter_ == a.n_iter_


@pytest.mark.parametrize("params", [
    {"grow_policy": "depthwise", "max_depth": 3, "n_estimators": 3, "random_state": 0},
    {"max_leaf_nodes": 6, "n_estimators": 3, "max_features": 0.6, "random_state": 1, "l2_regularization": 0.5},
])
def test_regressor_matches_the_in_memory_fit(client, params, monkeypatch):
    passes = []
    level = dask_trees._Chunks.level
    monkeypatch.setattr(dask_trees._Chunks, "level", lambda self, *a: passes.append(1) or level(self, *a))
    a = GradientBoostedTreesRegressor(**params).fit(X, Y)
    b = GradientBoostedTreesRegressor(**params).fit(_d(X), _d(Y))
    _same_trees(a, b)
    if params.get("grow_policy") == "depthwise":    # one pass per level: the root, depth 1, depth 2
        assert len(passes) <= 3 * params["n_estimators"]
    pred = b.predict(_d(X))
    assert pred.chunks == (CHUNKS,)
    np.testing.assert_allclose(pred.compute(), a.predict(X), rtol=1e-9, atol=1e-9)


def test_classifiers_with_weights_match_the_in_memory_fit(client):
    w = RNG.random(N) + 0.5
    params = {"grow_policy": "depthwise", "max_depth": 2, "n_estimators": 3, "random_state": 0}
    for y in ((Y > 0).astype(np.int64), np.array(["a", "b", "c"])[(Y > -1).astype(int) + (Y > 1)]):
        a = GradientBoostedTreesClassifier(**params).fit(X, y, sample_weight=w)
        b = GradientBoostedTreesClassifier(**params).fit(_d(X), _d(y), sample_weight=_d(w))
        _same_trees(a, b)
        np.testing.assert_array_equal(b.classes_, a.classes_)
        proba = b.predict_proba(_d(X))
        assert proba.chunks == (CHUNKS, (len(a.classes_),))
        np.testing.assert_allclose(proba.compute(), a.predict_proba(X), rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(b.predict(_d(X)).compute(), a.predict(X))
        np.testing.assert_allclose(b.decision_function(_d(X)).compute(), a.decision_function(X), rtol=1e-9,
                                   atol=1e-12)


def test_early_stopping_on_the_training_loss(client):
    params = {"grow_policy": "depthwise", "max_depth": 2, "n_estimators": 30, "learning_rate": 0.5,
              "early_stopping": True, "validation_fraction": None, "n_iter_no_change": 2, "tol": 0.2}
    a = GradientBoostedTreesRegressor(**params).fit(X, Y)
    b = GradientBoostedTreesRegressor(**params).fit(_d(X), _d(Y))
    assert 1 < a.n_iter_ < 30
    _same_trees(a, b)
    np.testing.assert_allclose(b.train_score_, a.train_score_, rtol=1e-9)
    np.testing.assert_allclose(b.validation_score_, a.validation_score_, rtol=1e-9)


def test_approximate_bins_from_merged_sketches(client):
    # max_bins=4: eps = 1/32, each chunk's sketch is compressed; the merged boundaries are quantiles
    # within the sketch's rank error of the in-memory ones
    x = RNG.normal(size=(N, 1))
    b = GradientBoostedTreesRegressor(max_bins=4, n_estimators=1, max_depth=1).fit(_d(x), _d(x[:, 0]))
    edges = b.bin_thresholds_[0]
    assert len(edges) == 3
    ranks = np.searchsorted(np.sort(x[:, 0]), edges) / N
    np.testing.assert_allclose(ranks, [0.25, 0.5, 0.75], atol=2 / 32)


def test_bad_input(client):
    Xd, yd = _d(X), _d(Y)
    with pytest.raises(ValueError, match="subsample"):
        GradientBoostedTreesRegressor(subsample=0.5).fit(Xd, yd)
    with pytest.raises(ValueError, match="validation_fraction=None"):
        GradientBoostedTreesRegressor(early_stopping=True).fit(Xd, yd)
    with pytest.raises(ValueError, match="n_estimators"):
        GradientBoostedTreesRegressor(n_estimators=0).fit(Xd, yd)
    bad = X.copy()
    bad[7, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        GradientBoostedTreesRegressor(n_estimators=1).fit(_d(bad), yd)
    with pytest.raises(ValueError, match="y contains NaN"):
        GradientBoostedTreesRegressor(n_estimators=1).fit(Xd, _d(np.where(np.arange(N) == 9, np.nan, Y)))
    with pytest.raises(ValueError, match="one class"):
        GradientBoostedTreesClassifier(n_estimators=1).fit(Xd, _d(np.zeros(N)))
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        GradientBoostedTreesRegressor(n_estimators=1).fit(Xd, da.from_array(Y[:10]))
    model = GradientBoostedTreesRegressor(n_estimators=1, max_depth=1).fit(Xd, yd)
    with pytest.raises(ValueError, match="features"):
        model.predict(da.from_array(X[:, :3]))

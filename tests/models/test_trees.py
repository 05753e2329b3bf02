"""The histogram gradient-boosted trees: hand-derived trees, the histogram kernel against NumPy,
quality next to scikit-learn, missing values, determinism, save/load, estimator checks."""
import multiprocessing
import os

import numba
import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris, make_classification
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.model_selection import train_test_split
from sklearn.utils.estimator_checks import parametrize_with_checks
from threadpoolctl import threadpool_limits

from segflow.contrib.boosted_trees.python.ops import stats_ops
from segflow.kernels import histogram as hk
from segflow.models import GradientBoostedTreesClassifier, GradientBoostedTreesRegressor, load_trees

# y = 2 + 10 [x0 > 4.5] + 2 [x1 = 1]: the root splits x0 at 4.5, each child splits x1 (module
# docstring of grower.py for the formulas; the numbers below are worked by hand).
X_HAND = np.array([[1, 0], [2, 1], [3, 0], [4, 1], [5, 0], [6, 1], [7, 0], [8, 1]], np.float64)
Y_HAND = np.array([1, 3, 1, 3, 11, 13, 11, 13], np.float64)
HAND = dict(n_estimators=1, learning_rate=1.0, max_depth=2, max_leaf_nodes=None, min_samples_leaf=1,
            early_stopping=False)


def test_depth2_tree_by_hand():
    m = GradientBoostedTreesRegressor(**HAND).fit(X_HAND, Y_HAND)
    t = m.get_tree(0)
    # baseline 7, gradients 7 - y; root: G_L = 20, G_R = -20, H = 4 each:
    # gain = (20^2/4 + 20^2/4 - 0^2/8) / 2 = 100; children: x1 splits G = 20 into 12 | 8 (H 2 | 2):
    # gain = (144/2 + 64/2 - 400/4) / 2 = 2 (better than any x0 split: 2/3 at best)
    np.testing.assert_array_equal(t["feature"], [0, 1, 1, -1, -1, -1, -1])
    assert t["threshold"][0] == 4.5 and t["threshold"][1] == 0.5 and t["threshold"][2] == 0.5
    np.testing.assert_allclose(t["gain"][:3], [100.0, 2.0, 2.0])
    leaves = t["left"] < 0
    np.testing.assert_allclose(np.sort(t["value"][leaves]), [-6.0, -4.0, 4.0, 6.0])
    np.testing.assert_allclose(m.predict(X_HAND), Y_HAND)
    np.testing.assert_allclose(m.feature_importances_, [100 / 104, 4 / 104])
    np.testing.assert_array_equal(m.feature_importances("split"), [1, 2])


def test_l2_regularization_by_hand():
    m = GradientBoostedTreesRegressor(l2_regularization=1.0, **HAND).fit(X_HAND, Y_HAND)
    t = m.get_tree(0)
    # root gain (400/5 + 400/5 - 0) / 2 = 80; left child's x1 split: 144/3 + 64/3 - 400/5 < 0
    np.testing.assert_array_equal(t["feature"], [0, -1, -1])
    np.testing.assert_allclose(t["gain"][0], 80.0)
    np.testing.assert_allclose(t["value"][1:], [-20 / 5, 20 / 5])  # -G / (H + 1), G = +-20


def test_l1_regularization_by_hand():
    m = GradientBoostedTreesRegressor(l1_regularization=2.0, **dict(HAND, max_depth=1)).fit(X_HAND, Y_HAND)
    t = m.get_tree(0)
    # T(20) = 18: gain (18^2/4 * 2 - 0) / 2 = 81; leaves -T(G)/H = -+18/4
    np.testing.assert_allclose(t["gain"][0], 81.0)
    np.testing.assert_allclose(t["value"][1:], [-18 / 4, 18 / 4])


def test_min_split_gain_and_min_child_weight():
    t = GradientBoostedTreesRegressor(min_split_gain=2.0, **HAND).fit(X_HAND, Y_HAND).get_tree(0)
    np.testing.assert_array_equal(t["feature"], [0, -1, -1])  # the children's gain 2 is not > 2
    t = GradientBoostedTreesRegressor(min_split_gain=1.9, **HAND).fit(X_HAND, Y_HAND).get_tree(0)
    assert len(t["feature"]) == 7
    t = GradientBoostedTreesRegressor(min_child_weight=4.5, **HAND).fit(X_HAND, Y_HAND).get_tree(0)
    np.testing.assert_array_equal(t["feature"], [-1])  # no split leaves hessian >= 4.5 on both sides


def test_max_leaf_nodes_grows_best_first():
    y = Y_HAND.copy()
    y[4:] += np.array([0, 4, 0, 4])   # the right child's x1 split now gains more than the left's
    m = GradientBoostedTreesRegressor(**dict(HAND, max_leaf_nodes=3)).fit(X_HAND, y)
    t = m.get_tree(0)
    assert (t["left"] >= 0).sum() == 2
    right = t["right"][0]
    assert t["feature"][right] == 1 and t["feature"][t["left"][0]] == -1


def ref_histogram(binned, rows, g, h, n_bins):
    out = np.zeros((binned.shape[1], n_bins, 3))
    for f in range(binned.shape[1]):
        np.add.at(out[f], binned[rows, f], np.stack([g, h, np.ones(len(rows))], 1))
    return out


@pytest.mark.parametrize("n", [50, 40_000])
def test_histogram_kernel_matches_numpy(n):
    rng = np.random.default_rng(n)
    binned = rng.integers(0, 17, (n, 5)).astype(np.uint8)
    rows = np.sort(rng.choice(n, n // 2, replace=False))
    g, h = rng.normal(size=n), rng.uniform(size=n)
    want = ref_histogram(binned, rows, g[rows], h[rows], 17)
    np.testing.assert_allclose(hk.node_histogram(binned, rows, np.stack([g, h], 1), 17), want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(hk.segment_histogram(binned, rows, np.stack([g, h], 1), 17), want, rtol=1e-12, atol=1e-12)


def test_histogram_bits_independent_of_threads():
    rng = np.random.default_rng(5)
    binned = rng.integers(0, 255, (60_000, 8)).astype(np.uint8)
    rows = np.arange(60_000)
    g, h = rng.normal(size=60_000), rng.uniform(size=60_000)
    before = numba.get_num_threads()
    try:
        outs = []
        for nt in (1, before):
            numba.set_num_threads(nt)
            outs.append(hk.node_histogram(binned, rows, np.stack([g, h], 1), 256))
    finally:
        numba.set_num_threads(before)
    assert outs[0].tobytes() == outs[1].tobytes()


def _split(loader):
    X, y = loader(return_X_y=True)
    return train_test_split(X, y, random_state=0)


def test_classification_quality_next_to_sklearn():
    for loader in (load_breast_cancer, load_iris):
        Xtr, Xte, ytr, yte = _split(loader)
        ours = GradientBoostedTreesClassifier(random_state=0).fit(Xtr, ytr).score(Xte, yte)
        with threadpool_limits(1):  # sklearn's OpenMP threads crawl on a busy shared machine
            theirs = HistGradientBoostingClassifier(random_state=0).fit(Xtr, ytr).score(Xte, yte)
        assert ours >= theirs - 0.02, (loader.__name__, ours, theirs)


def test_regression_quality_next_to_sklearn():
    Xtr, Xte, ytr, yte = _split(load_diabetes)
    ours = GradientBoostedTreesRegressor(random_state=0).fit(Xtr, ytr).score(Xte, yte)
    with threadpool_limits(1):
        theirs = HistGradientBoostingRegressor(random_state=0).fit(Xtr, ytr).score(Xte, yte)
    assert ours >= theirs - 0.02, (ours, theirs)


def test_missing_values_take_the_learned_direction():
    rng = np.random.default_rng(0)
    x = rng.uniform(size=600)
    y = (x > 0.5).astype(float) * 10
    x[:150] = np.nan
    y[:150] = 10.0   # missing rows behave like the right side
    m = GradientBoostedTreesRegressor(n_estimators=30, learning_rate=0.5, early_stopping=False).fit(x[:, None], y)
    t = m.get_tree(0)
    assert t["missing_left"][0] == 0 and abs(t["threshold"][0] - 0.5) < 0.02
    np.testing.assert_allclose(m.predict(np.array([[np.nan], [0.9], [0.1]])), [10, 10, 0], atol=1e-3)
    y2 = y.copy()
    y2[:150] = 0.0   # now they behave like the left side
    m2 = GradientBoostedTreesRegressor(n_estimators=30, learning_rate=0.5, early_stopping=False).fit(x[:, None], y2)
    assert m2.get_tree(0)["missing_left"][0] == 1
    np.testing.assert_allclose(m2.predict(np.array([[np.nan]])), [0.0], atol=1e-3)


def test_missing_values_unseen_in_training_go_to_the_larger_child():
    x = np.r_[np.zeros(30), np.ones(70)][:, None]
    y = x[:, 0] * 5
    m = GradientBoostedTreesRegressor(n_estimators=1, learning_rate=1.0, early_stopping=False).fit(x, y)
    assert m.get_tree(0)["missing_left"][0] == 0
    np.testing.assert_allclose(m.predict(np.array([[np.nan]])), [5.0])


def test_early_stopping_stops_on_noise():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(3000, 4)), rng.normal(size=3000)
    m = GradientBoostedTreesRegressor(n_estimators=200, early_stopping=True, n_iter_no_change=5,
                                      random_state=0).fit(X, y)
    assert m.n_iter_ < 50 and len(m.validation_score_) == m.n_iter_ + 1


def test_deterministic_with_sampling_and_thread_count():
    X, y = make_classification(n_samples=3000, n_features=12, n_informative=6, n_classes=3, random_state=0)
    X[::7, 3] = np.nan
    kw = dict(n_estimators=15, subsample=0.7, max_features=0.5, random_state=3)
    a = GradientBoostedTreesClassifier(**kw).fit(X, y).predict_proba(X)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        b = GradientBoostedTreesClassifier(**kw).fit(X, y).predict_proba(X)
    finally:
        numba.set_num_threads(before)
    assert a.tobytes() == b.tobytes()
    c = GradientBoostedTreesClassifier(**dict(kw, random_state=4)).fit(X, y).predict_proba(X)
    assert not np.array_equal(a, c)


def test_save_load_round_trip(tmp_path):
    X, y = make_classification(n_samples=400, n_features=6, n_classes=3, n_informative=4, random_state=1)
    labels = np.array(["ant", "bee", "cat"])[y]
    X[::5, 0] = np.nan
    m = GradientBoostedTreesClassifier(n_estimators=10, random_state=0).fit(X, labels)
    m.save(tmp_path / "m.npz")
    back = GradientBoostedTreesClassifier.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(back.predict(X), m.predict(X))
    assert back.predict_proba(X).tobytes() == m.predict_proba(X).tobytes()
    assert back.get_params() == m.get_params() and list(back.classes_) == ["ant", "bee", "cat"]
    np.testing.assert_array_equal(back.feature_importances_, m.feature_importances_)
    r = GradientBoostedTreesRegressor(n_estimators=5).fit(X, y.astype(float))
    r.save(tmp_path / "r.npz")
    assert load_trees(tmp_path / "r.npz").predict(X).tobytes() == r.predict(X).tobytes()
    with pytest.raises(TypeError, match="not a GradientBoostedTreesClassifier"):
        GradientBoostedTreesClassifier.load(tmp_path / "r.npz")


def test_bad_parameters_raise():
    with pytest.raises(ValueError, match="max_bins"):
        GradientBoostedTreesRegressor(max_bins=300).fit(X_HAND, Y_HAND)
    with pytest.raises(ValueError, match="subsample"):
        GradientBoostedTreesRegressor(subsample=0).fit(X_HAND, Y_HAND)


# Every scikit-learn estimator check runs; none is excluded. sklearn itself skips the pandas checks
# without pandas and the array-API check without SCIPY_ARRAY_API=1.
@parametrize_with_checks([GradientBoostedTreesRegressor(n_estimators=20), GradientBoostedTreesClassifier(n_estimators=20)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_histogram_equals_the_split_handler_statistics():
    # The learner's fused histogram holds the same sums as stats_ops' per-(partition, bucket) rows.
    rng = np.random.default_rng(7)
    n = 300
    binned = rng.integers(0, 9, (n, 3)).astype(np.uint8)
    node = rng.integers(0, 2, n)
    g, h = rng.normal(size=n), rng.uniform(size=n)
    for part in (0, 1):
        rows = np.flatnonzero(node == part)
        hist = hk.node_histogram(binned, rows, np.stack([g, h], 1), 9)
        for f in range(3):
            p, b, gs, hs = (t.numpy() for t in stats_ops.dense_split_stats(node, binned[:, f], g, h))
            bias = (b == -1) & (p == part)
            np.testing.assert_allclose(gs[bias], hist[f, :, 0].sum(), rtol=1e-12)
            for k in np.flatnonzero((b >= 0) & (p == part)):
                np.testing.assert_allclose([gs[k], hs[k]], hist[f, b[k], :2], rtol=1e-12)
            assert ((b >= 0) & (p == part)).sum() == (hist[f, :, 2] > 0).sum()


def _child_histogram(queue):
    gh = np.ones((40_000, 2))
    queue.put(hk.node_histogram(np.zeros((40_000, 2), np.uint8), np.arange(40_000), gh, 4)[0, 0].tolist())


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_histogram_pool_works_in_a_forked_child():
    hk.node_histogram(np.zeros((40_000, 2), np.uint8), np.arange(40_000), np.ones((40_000, 2)), 4)  # parent pool
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child_histogram, args=(queue,))
    proc.start()
    try:
        assert queue.get(timeout=60) == [40_000.0, 40_000.0, 40_000.0]
    finally:
        proc.join(timeout=10)


def test_bin_columns_is_searchsorted_left():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(50_000, 3))
    x[::11, 1] = np.nan
    thresholds = [np.sort(rng.normal(size=k)) for k in (0, 7, 254)]
    x[5, 2] = thresholds[2][10]   # a value equal to a threshold stays in the bin to its left
    got = hk.bin_columns(x, thresholds, 255)
    for f, t in enumerate(thresholds):
        want = np.searchsorted(t, x[:, f], side="left")
        want[np.isnan(x[:, f])] = 255
        np.testing.assert_array_equal(got[:, f], want)
    assert got[5, 2] == 10


def test_block_kernels_match_the_row_list_kernels():
    rng = np.random.default_rng(9)
    n = 40_000
    binned = rng.integers(0, 12, (n, 4)).astype(np.uint8)
    binned[::13, 2] = 12   # missing bin
    gh = np.stack([rng.normal(size=n), rng.uniform(size=n)], 1)
    rows = np.sort(rng.choice(n, 30_000, replace=False))
    work, ghw, idx = binned[rows], gh[rows], rows.copy()
    scratch = (np.empty_like(work), np.empty_like(ghw), np.empty_like(idx))
    mid = hk.partition_block(work, ghw, idx, 0, len(rows), 2, 5, 12, True, scratch)
    left, right = hk.partition_rows(binned, rows, 2, 5, 12, True)
    np.testing.assert_array_equal(idx[:mid], left)
    np.testing.assert_array_equal(idx[mid:], right)
    np.testing.assert_array_equal(work, binned[idx])
    np.testing.assert_array_equal(ghw, gh[idx])
    for a, b, r in ((0, mid, left), (mid, len(rows), right)):
        got = hk.block_histogram(work, ghw, a, b, 13)
        assert got.tobytes() == hk.node_histogram(binned, r, gh, 13).tobytes()

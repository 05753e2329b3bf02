"""segflow.models.KMeans (scikit-learn's estimator API) against NumPy references and scikit-learn."""
import io

import numpy as np
import pytest

import segflow as sf
from segflow.models import KMeans

RNG = np.random.default_rng(11)
TRUE_CENTERS = np.array([[0.0, 0.0, 0.0, 0.0], [6.0, 6.0, 0.0, 0.0], [0.0, 6.0, 6.0, 0.0], [0.0, 0.0, 6.0, 6.0]])
LABELS = RNG.integers(0, 4, 300)
X = TRUE_CENTERS[LABELS] + RNG.normal(scale=1.5, size=(300, 4))
INIT = X[:4].copy()


# ----------------------------------------------------------------------------------------------
# NumPy reference: brute-force distances, means, scikit-learn's stopping rule


def ref_distances(x, c):
    return ((x[:, None, :] - c[None, :, :]) ** 2).sum(-1)


def ref_lloyd(x, c, max_iter, tol=0.0, w=None):
    w = np.ones(len(x)) if w is None else w
    tol = tol * np.var(x, axis=0).mean()
    labels_old, n_iter = None, 0
    for n_iter in range(1, max_iter + 1):
        labels = ref_distances(x, c).argmin(1)
        new = np.array([np.average(x[labels == j], axis=0, weights=w[labels == j]) for j in range(len(c))])
        shift = ((new - c) ** 2).sum()
        c = new
        if labels_old is not None and np.array_equal(labels, labels_old):
            break
        if shift <= tol:
            break
        labels_old = labels
    d = ref_distances(x, c)
    labels = d.argmin(1)
    return c, labels, float((d[np.arange(len(x)), labels] * w).sum()), n_iter


# ----------------------------------------------------------------------------------------------
# Lloyd iterations


@pytest.mark.parametrize("max_iter", [1, 2, 5])
def test_lloyd_iterations_match_numpy(max_iter):
    km = KMeans(4, init=INIT, n_init=1, max_iter=max_iter, tol=0.0).fit(X)
    c, labels, inertia, n_iter = ref_lloyd(X, INIT, max_iter)
    np.testing.assert_allclose(km.cluster_centers_, c, rtol=1e-10)
    np.testing.assert_array_equal(km.labels_, labels)
    assert km.inertia_ == pytest.approx(inertia, rel=1e-10)
    assert km.n_iter_ == n_iter
    assert km.n_features_in_ == 4 and km.labels_.dtype == np.int32


def test_runs_to_convergence_and_agrees_with_scikit_learn():
    sklearn_cluster = pytest.importorskip("sklearn.cluster")
    ours = KMeans(4, init=INIT, n_init=1).fit(X)
    theirs = sklearn_cluster.KMeans(4, init=INIT, n_init=1).fit(X)
    c, labels, inertia, n_iter = ref_lloyd(X, INIT, 300, tol=1e-4)
    np.testing.assert_allclose(ours.cluster_centers_, c, rtol=1e-10)
    np.testing.assert_allclose(ours.cluster_centers_, theirs.cluster_centers_, rtol=1e-10)
    assert ours.inertia_ == pytest.approx(theirs.inertia_, rel=1e-10)
    assert ours.n_iter_ == theirs.n_iter_ == n_iter


def test_blocks_and_threads_do_not_change_the_result():
    from segflow.models import _kmeans_steps
    big = np.vstack([X] * 40)  # 12000 rows: two blocks of 8192
    one = KMeans(4, init=INIT, n_init=1, n_threads=1).fit(big)
    two = KMeans(4, init=INIT, n_init=1, n_threads=2).fit(big)
    np.testing.assert_array_equal(one.cluster_centers_, two.cluster_centers_)
    assert one.inertia_ == two.inertia_
    assert _kmeans_steps.CHUNK_ROWS < len(big)
    c, labels, inertia, _ = ref_lloyd(big, INIT, 300, tol=1e-4)
    np.testing.assert_allclose(one.cluster_centers_, c, rtol=1e-9)


def test_float32_stays_float32():
    km = KMeans(4, init=INIT, n_init=1, max_iter=3, tol=0.0).fit(X.astype(np.float32))
    assert km.cluster_centers_.dtype == np.float32
    np.testing.assert_allclose(km.cluster_centers_, ref_lloyd(X, INIT, 3)[0], rtol=1e-4)


def test_sample_weight_equals_repeated_rows():
    w = RNG.integers(1, 4, len(X)).astype(np.float64)
    weighted = KMeans(4, init=INIT, n_init=1).fit(X, sample_weight=w)
    repeated = KMeans(4, init=INIT, n_init=1).fit(np.repeat(X, w.astype(int), axis=0))
    np.testing.assert_allclose(weighted.cluster_centers_, repeated.cluster_centers_, rtol=1e-10)
    assert weighted.inertia_ == pytest.approx(repeated.inertia_, rel=1e-10)
    np.testing.assert_allclose(weighted.cluster_centers_, ref_lloyd(X, INIT, 300, 1e-4, w)[0], rtol=1e-10)


def test_empty_cluster_takes_the_farthest_row():
    init = np.vstack([INIT[:3], [[100.0, 100.0, 100.0, 100.0]]])
    km = KMeans(4, init=init, n_init=1, max_iter=1).fit(X)
    # after one step: center 3 had no rows, so it becomes the row farthest from its center
    labels = ref_distances(X, init).argmin(1)
    far = ((X - init[labels]) ** 2).sum(1).argmax()
    np.testing.assert_array_equal(km.cluster_centers_[3], X[far])
    assert len(np.unique(km.labels_)) == 4


def test_cosine_metric_is_spherical_kmeans():
    km = KMeans(4, init=INIT, n_init=1, max_iter=2, tol=0.0, distance_metric="cosine").fit(X)
    xn = X / np.linalg.norm(X, axis=1, keepdims=True)
    c = INIT / np.linalg.norm(INIT, axis=1, keepdims=True)
    for _ in range(2):
        labels = (xn @ c.T).argmax(1)
        c = np.array([xn[labels == j].sum(0) for j in range(4)])
        c /= np.linalg.norm(c, axis=1, keepdims=True)
    np.testing.assert_allclose(km.cluster_centers_, c, rtol=1e-10)
    cos = xn @ c.T
    np.testing.assert_array_equal(km.labels_, cos.argmax(1))
    assert km.inertia_ == pytest.approx((1 - cos.max(1)).sum(), rel=1e-10)
    np.testing.assert_allclose(km.transform(X), 1 - cos, atol=1e-12)


def test_mini_batch_converges_on_separable_blobs():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 4, 4000)
    data = TRUE_CENTERS[labels] * 2 + rng.normal(scale=0.5, size=(4000, 4))
    km = KMeans(4, use_mini_batch=True, batch_size=256, max_iter=20, random_state=0).fit(data)
    nearest = np.sqrt(ref_distances(TRUE_CENTERS * 2, km.cluster_centers_)).min(1)
    assert (nearest < 0.1).all(), nearest
    full = KMeans(4, random_state=0).fit(data)
    assert km.inertia_ == pytest.approx(full.inertia_, rel=1e-3)


def test_mini_batch_rule_one_epoch_one_batch():
    # one batch holding every row: each center moves to (c + sum of its rows) / (1 + count)
    km = KMeans(4, init=INIT, n_init=1, use_mini_batch=True, batch_size=len(X), max_iter=1).fit(X)
    labels = ref_distances(X, INIT).argmin(1)
    want = np.array([(INIT[j] + X[labels == j].sum(0)) / (1 + (labels == j).sum()) for j in range(4)])
    np.testing.assert_allclose(km.cluster_centers_, want, rtol=1e-10)


# ----------------------------------------------------------------------------------------------
# seeding and restarts


def test_kmeans_plus_plus_is_seeded_and_finds_the_blobs():
    a = KMeans(4, random_state=3).fit(X)
    b = KMeans(4, random_state=3).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    nearest = np.sqrt(ref_distances(TRUE_CENTERS, a.cluster_centers_)).min(1)
    assert (nearest < 1.0).all(), nearest


def test_n_init_keeps_the_best_run():
    one = KMeans(4, init="random", n_init=1, random_state=5).fit(X)
    many = KMeans(4, init="random", n_init=6, random_state=5).fit(X)
    assert many.inertia_ <= one.inertia_
    # run i seeds its rows from RandomState(seeds[i]); the result is the best of the six runs
    seeds = np.random.RandomState(5).randint(np.iinfo(np.int32).max, size=6)
    inertias = [ref_lloyd(X, _random_init(s), 300, 1e-4)[2] for s in seeds]
    assert many.inertia_ == pytest.approx(min(inertias), rel=1e-10)


def _random_init(seed):
    return X[np.random.RandomState(seed).choice(len(X), 4, replace=False)]


def test_random_init_rows_are_distinct():
    km = KMeans(6, init="random", n_init=1, max_iter=1, random_state=0)
    centers = km._init_centers(X, X, (X * X).sum(1), np.random.RandomState(0), None)
    assert len({tuple(r) for r in centers}) == 6 and all(any((r == X).all(1)) for r in centers)


# ----------------------------------------------------------------------------------------------
# predict, transform, score; inputs


def test_predict_transform_score_match_numpy():
    km = KMeans(4, init=INIT, n_init=1).fit(X)
    new = RNG.normal(scale=4.0, size=(50, 4))
    d = ref_distances(new, km.cluster_centers_)
    np.testing.assert_array_equal(km.predict(new), d.argmin(1))
    np.testing.assert_allclose(km.transform(new), np.sqrt(d), rtol=1e-9, atol=1e-9)
    assert km.score(new) == pytest.approx(-d.min(1).sum(), rel=1e-10)
    np.testing.assert_array_equal(KMeans(4, init=INIT, n_init=1).fit_predict(X), km.labels_)
    np.testing.assert_allclose(KMeans(4, init=INIT, n_init=1).fit_transform(X), km.transform(X), rtol=1e-12)


def test_segflow_tensors_are_accepted():
    a = KMeans(4, init=INIT, n_init=1).fit(sf.constant(X))
    b = KMeans(4, init=sf.constant(INIT), n_init=1).fit(sf.Variable(X))
    np.testing.assert_allclose(a.cluster_centers_, ref_lloyd(X, INIT, 300, 1e-4)[0], rtol=1e-10)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    np.testing.assert_array_equal(a.predict(sf.constant(X[:10])), a.labels_[:10])


def test_fit_inside_a_graph_context_still_runs_eagerly():
    with sf.Graph().as_default():
        km = KMeans(4, init=INIT, n_init=1).fit(X)
    np.testing.assert_allclose(km.cluster_centers_, ref_lloyd(X, INIT, 300, 1e-4)[0], rtol=1e-10)


def test_bad_inputs_raise_value_error():
    with pytest.raises(ValueError, match="n_samples=3 should be >= n_clusters=4"):
        KMeans(4).fit(X[:3])
    with pytest.raises(ValueError, match="2D"):
        KMeans(2).fit(X[:, 0])
    with pytest.raises(ValueError, match="distance_metric"):
        KMeans(2, distance_metric="manhattan").fit(X)
    with pytest.raises(ValueError, match="shape of the initial centers"):
        KMeans(4, init=INIT[:3]).fit(X)
    with pytest.raises(ValueError, match="NaN"):
        KMeans(2).fit(np.where(X > 5, np.nan, X))
    with pytest.raises(ValueError, match="features"):
        KMeans(4, init=INIT, n_init=1).fit(X).predict(X[:, :3])


def test_progress_bar_only_when_asked(capsys):
    pytest.importorskip("tqdm")
    KMeans(4, init=INIT, n_init=1).fit(X)
    assert capsys.readouterr().err == ""
    KMeans(4, init=INIT, n_init=1, progress=True).fit(X)
    assert "KMeans" in capsys.readouterr().err


def test_verbose_prints_the_iterations(capsys):
    KMeans(4, init=INIT, n_init=1, verbose=1).fit(X)
    out = capsys.readouterr().out
    assert "Initialization complete" in out and "Iteration 0, inertia" in out


# ----------------------------------------------------------------------------------------------
# scikit-learn's estimator checks

# Checks that do not apply, each with its reason (scikit-learn excludes the same two for its own
# KMeans): a k-means++ or random seeding draws from the rows, so weights and repeated rows give
# different seedings even with one random_state.
EXPECTED_FAILED_CHECKS = {
    "check_sample_weight_equivalence_on_dense_data":
        "sample_weight is not equivalent to removing/repeating samples (the seeding draws rows)",
    "check_sample_weight_equivalence_on_sparse_data":
        "sample_weight is not equivalent to removing/repeating samples (the seeding draws rows)",
}

try:
    from sklearn.utils.estimator_checks import parametrize_with_checks
except ImportError:  # pragma: no cover
    parametrize_with_checks = None

if parametrize_with_checks is not None:
    @parametrize_with_checks([KMeans(n_clusters=2, max_iter=5, n_init=2)],
                             expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS)
    def test_sklearn_estimator_checks(estimator, check):
        check(estimator)


def test_works_without_a_terminal(monkeypatch):
    monkeypatch.setattr("sys.stderr", io.StringIO())
    km = KMeans(4, init=INIT, n_init=1, verbose=0).fit(X)
    assert km.n_iter_ >= 1


@pytest.mark.parametrize("offset", [0.0, 1e9])
def test_tol_scale_is_the_mean_feature_variance(offset):
    from segflow.models._kmeans import _mean_variance
    data = X + offset  # far from the origin, the one-pass formula cancels: np.var takes over
    got = _mean_variance(data, np.einsum("ij,ij->i", data, data))
    assert got == pytest.approx(np.var(data, axis=0).mean(), rel=1e-6)

"""clustering_ops.KMeans (TF's k-means graph) against NumPy references, step by step, in a Session."""
import numpy as np
import pytest

import segflow as sf
from segflow.compat import v1
from segflow.ops import clustering_ops as co

RNG = np.random.default_rng(7)
TRUE_CENTERS = np.array([[0.0, 0.0, 0.0], [8.0, 8.0, 0.0], [0.0, 8.0, 8.0], [8.0, 0.0, 8.0]])
LABELS = RNG.integers(0, 4, 60)
X = (TRUE_CENTERS[LABELS] + RNG.normal(scale=1.0, size=(60, 3))).astype(np.float64)
INIT = X[[0, 1, 2, 3]].copy()
SHARDS = [X[:17], X[17:40], X[40:]]


# ----------------------------------------------------------------------------------------------
# NumPy references (brute-force distances, TF's update rules)


def _normalize(a):
    return a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), np.sqrt(1e-12))


def ref_assign(x, c, metric):
    if metric == co.COSINE_DISTANCE:
        x, c = _normalize(x), _normalize(c)
        all_scores = 1.0 - x @ c.T
    else:
        all_scores = ((x[:, None, :] - c[None, :, :]) ** 2).sum(-1)
    idx = np.argmin(all_scores, axis=1)
    return all_scores, idx, all_scores[np.arange(len(x)), idx]


def ref_full_batch_step(x, c, metric):
    _, idx, _ = ref_assign(x, c, metric)
    xs = _normalize(x) if metric == co.COSINE_DISTANCE else x
    sums = np.zeros_like(c)
    np.add.at(sums, idx, xs)
    counts = np.bincount(idx, minlength=len(c))[:, None]
    new = sums / (counts + 1e-6)  # TF: an empty cluster becomes the zero vector
    return _normalize(new) if metric == co.COSINE_DISTANCE else new


def ref_mini_batch_step(shards, c, counts, metric):
    """Shards applied one after the other; assignments from the centers before the step."""
    c, counts = c.copy(), counts.copy()
    idxs = [ref_assign(s, c, metric)[1] for s in shards]
    for s, idx in zip(shards, idxs):
        xs = _normalize(s) if metric == co.COSINE_DISTANCE else s
        for j in np.unique(idx):
            rows = xs[idx == j]
            k = len(rows)
            c[j] += (rows.sum(0) - k * c[j]) / (counts[j] + k)
            counts[j] += k
    return c, counts


# ----------------------------------------------------------------------------------------------
# helpers


def _build(inputs, k, **kw):
    km = co.KMeans(inputs, k, **kw)
    return km.training_graph()


def _centers_var(name=co.CLUSTERS_VAR_NAME):
    return [v for v in v1.global_variables() if v.name.split(":")[0] == name][0]


def _init(sess, initialized, init_op, limit=20):
    sess.run(v1.global_variables_initializer())
    runs = 0
    while not sess.run(initialized):
        sess.run(init_op)
        runs += 1
        assert runs < limit
    return runs


# ----------------------------------------------------------------------------------------------
# full batch


@pytest.mark.parametrize("metric", [co.SQUARED_EUCLIDEAN_DISTANCE, co.COSINE_DISTANCE])
def test_full_batch_steps_match_numpy_lloyd(metric):
    with sf.Graph().as_default():
        all_scores, idx, scores, initialized, init_op, train = _build(
            [sf.constant(s) for s in SHARDS], 4, initial_clusters=INIT, distance_metric=metric)
        assert isinstance(all_scores, list) and len(idx) == len(SHARDS) == len(scores)
        centers = _centers_var()
        with v1.Session() as sess:
            assert _init(sess, initialized, init_op) == 1
            c = _normalize(INIT) if metric == co.COSINE_DISTANCE else INIT.copy()
            np.testing.assert_allclose(sess.run(centers), c, rtol=1e-12)
            for _ in range(3):
                ref_all, ref_idx, ref_scores = ref_assign(X, c, metric)
                got_all, got_idx, got_scores = sess.run([all_scores, idx, scores])
                np.testing.assert_allclose(np.concatenate(got_all), ref_all, rtol=1e-9, atol=1e-9)
                np.testing.assert_array_equal(np.concatenate(got_idx), ref_idx)
                np.testing.assert_allclose(np.concatenate(got_scores), ref_scores, rtol=1e-9, atol=1e-9)
                sess.run(train)
                c = ref_full_batch_step(X, c, metric)
                np.testing.assert_allclose(sess.run(centers), c, rtol=1e-9, atol=1e-12)


def test_full_batch_float32_single_tensor_input():
    x32 = X.astype(np.float32)
    with sf.Graph().as_default():
        _, idx, _, initialized, init_op, train = _build(sf.constant(x32), 4, initial_clusters=INIT)
        centers = _centers_var()
        with v1.Session() as sess:
            _init(sess, initialized, init_op)
            sess.run(train)
            got = sess.run(centers)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ref_full_batch_step(X, INIT, co.SQUARED_EUCLIDEAN_DISTANCE), rtol=1e-5)


def test_empty_cluster_becomes_zero_as_in_tf():
    init = np.vstack([INIT[:3], [[100.0, 100.0, 100.0]]])
    with sf.Graph().as_default():
        *_, initialized, init_op, train = _build(sf.constant(X), 4, initial_clusters=init)
        centers = _centers_var()
        with v1.Session() as sess:
            _init(sess, initialized, init_op)
            sess.run(train)
            got = sess.run(centers)
    np.testing.assert_array_equal(got[3], np.zeros(3))
    np.testing.assert_allclose(got, ref_full_batch_step(X, init, co.SQUARED_EUCLIDEAN_DISTANCE), rtol=1e-9)


def test_placeholder_input_and_callable_init():
    def first_rows(inputs, num_remaining):
        return inputs[0][:num_remaining]

    with sf.Graph().as_default():
        ph = v1.placeholder(sf.float64, [None, 3])
        *_, initialized, init_op, train = _build(ph, 4, initial_clusters=first_rows)
        centers = _centers_var()
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            while not sess.run(initialized):
                sess.run(init_op, {ph: X})
            np.testing.assert_array_equal(sess.run(centers), X[:4])
            sess.run(train, {ph: X})
            np.testing.assert_allclose(sess.run(centers),
                                       ref_full_batch_step(X, X[:4], co.SQUARED_EUCLIDEAN_DISTANCE), rtol=1e-9)


# ----------------------------------------------------------------------------------------------
# mini batch


@pytest.mark.parametrize("metric", [co.SQUARED_EUCLIDEAN_DISTANCE, co.COSINE_DISTANCE])
def test_mini_batch_steps_match_numpy(metric):
    with sf.Graph().as_default():
        _, idx, _, initialized, init_op, train = _build(
            [sf.constant(s) for s in SHARDS], 4, initial_clusters=INIT, distance_metric=metric, use_mini_batch=True)
        centers = _centers_var()
        with v1.Session() as sess:
            _init(sess, initialized, init_op)
            c = _normalize(INIT) if metric == co.COSINE_DISTANCE else INIT.copy()
            counts = np.ones(4)
            for _ in range(3):
                sess.run(train)
                c, counts = ref_mini_batch_step(SHARDS, c, counts, metric)
                np.testing.assert_allclose(sess.run(centers), c, rtol=1e-9, atol=1e-12)


def test_mini_batch_steps_per_iteration_syncs_every_few_steps():
    steps = 2
    with sf.Graph().as_default():
        *_, initialized, init_op, train = _build(sf.constant(X), 4, initial_clusters=INIT, use_mini_batch=True,
                                                 mini_batch_steps_per_iteration=steps)
        master, updated = _centers_var(), _centers_var("clusters_updated")
        with v1.Session() as sess:
            _init(sess, initialized, init_op)
            ref_master, ref_updated, counts = INIT.copy(), INIT.copy(), np.zeros(4)
            left = steps
            for _ in range(5):
                # assignments from the master copy as it was before the step's sync ...
                idx = ref_assign(X, ref_master, co.SQUARED_EUCLIDEAN_DISTANCE)[1]
                if left <= 0:  # ... then the sync: master := updated, counts := 0
                    ref_master, counts, left = ref_updated.copy(), np.zeros(4), steps - 1
                else:
                    left -= 1
                # ... then the update of the updated copy
                for j in np.unique(idx):
                    rows = X[idx == j]
                    ref_updated[j] += (rows.sum(0) - len(rows) * ref_updated[j]) / (counts[j] + len(rows))
                    counts[j] += len(rows)
                sess.run(train)
                np.testing.assert_allclose(sess.run(master), ref_master, rtol=1e-9)
                np.testing.assert_allclose(sess.run(updated), ref_updated, rtol=1e-9)


def test_mini_batch_converges_on_separable_blobs():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 4, 2000)
    data = TRUE_CENTERS[labels] + rng.normal(scale=0.5, size=(2000, 3))
    with sf.Graph().as_default():
        batch = v1.placeholder(sf.float64, [None, 3])
        *_, initialized, init_op, train = _build(batch, 4, initial_clusters=co.KMEANS_PLUS_PLUS_INIT,
                                                 use_mini_batch=True, random_seed=1)
        centers = _centers_var()
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            while not sess.run(initialized):
                sess.run(init_op, {batch: data[:500]})
            for i in range(20):
                sess.run(train, {batch: data[(i % 20) * 100:(i % 20) * 100 + 100]})
            got = sess.run(centers)
    # every true center has a learned center within 0.3
    nearest = np.sqrt(((TRUE_CENTERS[:, None] - got[None]) ** 2).sum(-1)).min(1)
    assert (nearest < 0.3).all(), nearest


# ----------------------------------------------------------------------------------------------
# initialization


def _init_centers(init, seed, inputs=None, k=4, **kw):
    with sf.Graph().as_default():
        *_, initialized, init_op, _ = _build(inputs if inputs is not None else sf.constant(X), k,
                                             initial_clusters=init, random_seed=seed, **kw)
        centers = _centers_var()
        with v1.Session() as sess:
            runs = _init(sess, initialized, init_op)
            return sess.run(centers), runs


def _row_ids(centers, data):
    d = ((centers[:, None] - data[None]) ** 2).sum(-1)
    assert np.allclose(d.min(1), 0), "every center is a row of the data"
    return d.argmin(1)


def test_kmeans_plus_plus_is_seeded_and_picks_one_row_per_blob():
    a, runs = _init_centers(co.KMEANS_PLUS_PLUS_INIT, 5)
    b, _ = _init_centers(co.KMEANS_PLUS_PLUS_INIT, 5)
    c, _ = _init_centers(co.KMEANS_PLUS_PLUS_INIT, 6)
    assert runs == 1
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    for centers in (a, c):
        assert sorted(LABELS[_row_ids(centers, X)]) == [0, 1, 2, 3]


def test_kmeans_plus_plus_op_greedy_retries_lower_the_potential():
    rng = np.random.default_rng(0)
    data = rng.normal(size=(300, 2))

    def potential(centers):
        return ((data[:, None] - centers[None]) ** 2).sum(-1).min(1).sum()

    def pots(retries):
        return np.mean([potential(co.kmeans_plus_plus_initialization(data, 8, s, retries).numpy())
                        for s in range(20)])
    assert pots(5) < pots(0)


def test_random_init_draws_distinct_rows():
    a, _ = _init_centers(co.RANDOM_INIT, 1)
    b, _ = _init_centers(co.RANDOM_INIT, 1)
    np.testing.assert_array_equal(a, b)
    assert len(set(_row_ids(a, X))) == 4


def test_kmc2_init_adds_chains_over_several_runs():
    centers, runs = _init_centers(co.KMC2_INIT, 2, k=6, kmc2_chain_length=20)
    # 60 rows / chain length 20 = up to 3 new centers per run of init_op: 6 centers take 2 runs
    assert runs == 2
    assert len(set(_row_ids(centers, X))) == 6


def test_cosine_init_is_normalized():
    centers, _ = _init_centers(co.KMEANS_PLUS_PLUS_INIT, 0, distance_metric=co.COSINE_DISTANCE)
    np.testing.assert_allclose(np.linalg.norm(centers, axis=1), 1.0, rtol=1e-12)


# ----------------------------------------------------------------------------------------------
# the ops under the initialization


def test_nearest_neighbors_op_matches_numpy(mode):
    centers = X[[5, 9, 30, 44, 50]]
    idx, dist = mode.evaluate(co.nearest_neighbors(X, centers, 2))
    d = ((X[:, None] - centers[None]) ** 2).sum(-1)
    order = np.argsort(d, axis=1, kind="stable")[:, :2]
    np.testing.assert_array_equal(idx, order)
    np.testing.assert_allclose(dist, np.take_along_axis(d, order, 1), rtol=1e-9, atol=1e-9)


def test_kmc2_chain_op_is_a_valid_seeded_index(mode):
    d = np.abs(RNG.normal(size=50))
    a = mode.evaluate(co.kmc2_chain_initialization(d, 3))
    b = mode.evaluate(co.kmc2_chain_initialization(d, 3))
    assert a == b and 0 <= a < 50
    # a chain over distances that are zero except at one point ends there
    spike = np.zeros(50)
    spike[17] = 1.0
    assert mode.evaluate(co.kmc2_chain_initialization(spike, 0)) == 17


# ----------------------------------------------------------------------------------------------
# errors and aliases


def test_bad_arguments_raise_value_error():
    with sf.Graph().as_default():
        with pytest.raises(ValueError, match="Unsupported initialization"):
            co.KMeans(sf.constant(X), 4, initial_clusters="kmeans++")
        with pytest.raises(ValueError, match="Unsupported distance metric"):
            co.KMeans(sf.constant(X), 4, distance_metric="manhattan")
        with pytest.raises(ValueError, match="num_clusters must be positive"):
            co.KMeans(sf.constant(X), 0)
        with pytest.raises(ValueError, match=r"inputs\[0\] must be a matrix"):
            co.KMeans(sf.constant(X[:, 0]), 2).training_graph()
        with pytest.raises(ValueError, match="float32 or float64"):
            co.KMeans(sf.constant(np.arange(6).reshape(3, 2)), 2).training_graph()


def test_more_clusters_than_rows_is_an_invalid_argument():
    with sf.Graph().as_default():
        *_, initialized, init_op, _ = _build(sf.constant(X[:3]), 4, initial_clusters=co.KMEANS_PLUS_PLUS_INIT)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            with pytest.raises(sf.errors.InvalidArgumentError, match="at least num_clusters rows"):
                sess.run(init_op)


def test_initial_clusters_of_the_wrong_size_is_an_invalid_argument():
    with sf.Graph().as_default():
        *_, initialized, init_op, _ = _build(sf.constant(X), 4, initial_clusters=INIT[:3])
        centers = _centers_var()
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            sess.run(init_op)  # 3 given centers make num_clusters 3, as in TF
            assert sess.run(initialized) and sess.run(centers).shape == (3, 3)
    with sf.Graph().as_default():
        def too_many(inputs, num_remaining):
            return inputs[0][:5]
        *_, initialized, init_op, _ = _build(sf.constant(X), 4, initial_clusters=too_many)
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            sess.run(init_op)  # 5 rows for 4 centers: more than asked
            with pytest.raises(sf.errors.InvalidArgumentError):
                sess.run(init_op)


def test_training_graph_needs_graph_mode():
    with pytest.raises(RuntimeError, match="builds a graph"):
        co.KMeans(X, 4).training_graph()


def test_contrib_factorization_is_the_same_class():
    from segflow.contrib import factorization
    assert factorization.KMeans is co.KMeans
    assert factorization.KMEANS_PLUS_PLUS_INIT == "kmeans_plus_plus" and factorization.COSINE_DISTANCE == "cosine"
    assert (co.RANDOM_INIT, co.KMC2_INIT, co.SQUARED_EUCLIDEAN_DISTANCE) == ("random", "kmc2", "squared_euclidean")

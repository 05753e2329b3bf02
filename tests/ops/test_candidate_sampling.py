"""The candidate samplers and compute_accidental_hits: distributions against the analytic ones
(chi-square with a fixed seed), expected counts against TF's formulas and Monte Carlo frequencies,
uniqueness, seeds, the learned and fixed unigram samplers' TF semantics (numbers from TF 2.21),
static shapes, errors, and the faces."""
import numpy as np
import pytest

import segflow as sf
from segflow._core.registry import get_gradient_function
from segflow.ops import candidate_sampling_ops

TC = np.array([[0, 1], [5, 7]], np.int64)
SAMPLERS = ["log_uniform", "uniform", "learned_unigram", "fixed_unigram"]


def _log_uniform_p(R):
    k = np.arange(R, dtype=np.float64)
    return np.log((k + 2) / (k + 1)) / np.log(R + 1)


def _call(kind, true_classes, num_true, num_sampled, unique, R, seed=None, name=None):
    if kind == "fixed_unigram":
        return sf.random.fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, R,
                                                         unigrams=_unigrams(R), distortion=0.75, seed=seed,
                                                         name=name)
    return getattr(sf.random, kind + "_candidate_sampler")(true_classes, num_true, num_sampled, unique, R,
                                                           seed=seed, name=name)


def _unigrams(R):
    return [float(1 + (3 * k) % 7) for k in range(R)]


def _p(kind, R):
    if kind == "log_uniform":
        return _log_uniform_p(R)
    if kind == "fixed_unigram":
        w = np.asarray(_unigrams(R)) ** 0.75
        return w / w.sum()
    return np.full(R, 1.0 / R)        # uniform, and learned unigram before it learned anything


def _chi2_bound(df, z=4.265):
    """Wilson-Hilferty upper quantile of chi-square(df) at the normal quantile z (z=4.265: p = 1e-5)."""
    c = 2.0 / (9 * df)
    return df * (1 - c + z * np.sqrt(c)) ** 3


@pytest.mark.parametrize("kind", SAMPLERS)
def test_distribution_and_non_unique_expected_counts(kind):
    R, n = 30, 20000
    tc = np.arange(R, dtype=np.int64).reshape(1, R)
    s, true_count, sampled_count = (x.numpy() for x in _call(kind, tc, R, n, False, R, seed=11))
    p = _p(kind, R)
    counts = np.bincount(s, minlength=R)
    chi2 = np.sum((counts - n * p) ** 2 / (n * p))
    assert chi2 < _chi2_bound(R - 1), (chi2, counts)
    # Monte Carlo: the mean number of times k is drawn is its expected count p * n (exact here)
    np.testing.assert_allclose(counts, true_count[0], atol=5 * np.sqrt(n * p.max()))
    np.testing.assert_allclose(true_count[0], (p.astype(np.float32) * np.float32(n)), rtol=2e-6)
    np.testing.assert_allclose(sampled_count, true_count[0][s], rtol=1e-6)
    assert s.dtype == np.int64 and true_count.dtype == np.float32 and sampled_count.dtype == np.float32


def _tries(p, count, n):
    """The number of tries that count = 1 - (1 - p) ** tries implies (TF's unique formula)."""
    return np.log1p(-count.astype(np.float64)) / np.log1p(-p)


@pytest.mark.parametrize("kind", SAMPLERS)
def test_unique_samples_are_distinct_and_counts_follow_the_tries(kind):
    R, n = 40, 12
    tc = np.arange(R, dtype=np.int64).reshape(2, R // 2)
    p = _p(kind, R)
    saw_rejection = False
    for seed in range(8):
        s, true_count, sampled_count = (x.numpy() for x in _call(kind, tc, R // 2, n, True, R, seed=seed))
        assert len(set(s.tolist())) == n and s.min() >= 0 and s.max() < R
        if np.allclose(true_count.ravel(), p * n, rtol=1e-6):
            continue           # no draw was rejected: tries == n and the count is p * n
        saw_rejection = True
        tries = _tries(p, true_count.ravel(), n)
        t = int(round(float(np.median(tries))))
        assert t > n
        np.testing.assert_allclose(true_count.ravel(), -np.expm1(t * np.log1p(-p)), rtol=1e-5)
        np.testing.assert_allclose(sampled_count, true_count.ravel()[s], rtol=1e-6)
    assert saw_rejection


def test_unique_tries_have_the_geometric_distribution():
    # 2 distinct of 3 uniform classes: the second new value comes after a Geometric(2/3) wait, so
    # P(tries = 2) = 2/3, P(tries = 3) = 2/9, P(tries >= 4) = 1/9; 2000 samples estimate these with
    # standard errors below 0.011, so 5 of them (0.055) bounds the difference.
    tc = np.array([[0]], np.int64)
    counts = np.array([sf.random.uniform_candidate_sampler(tc, 1, 2, True, 3, seed=4).true_expected_count.numpy()[0, 0]
                       for _ in range(2000)])
    tries = np.rint(np.log1p(-counts.astype(np.float64)) / np.log1p(-1 / 3)).astype(int)
    tries[np.isclose(counts, 2 / 3)] = 2       # no rejection: TF's count is p * n = 2/3
    freq = [np.mean(tries == 2), np.mean(tries == 3), np.mean(tries >= 4)]
    np.testing.assert_allclose(freq, [2 / 3, 2 / 9, 1 / 9], atol=0.055)


@pytest.mark.parametrize("kind", SAMPLERS)
def test_unique_with_the_whole_range_is_a_permutation(kind):
    s = _call(kind, TC, 2, 10, True, 10, seed=1).sampled_candidates.numpy()
    np.testing.assert_array_equal(np.sort(s), np.arange(10))


def test_expected_counts_from_tf():
    # TF 2.21: log-uniform, unique, range 10, the sample [0 6 4 1 5] after 6 tries
    p = _log_uniform_p(10)
    np.testing.assert_allclose(-np.expm1(6 * np.log1p(-p[[0, 6, 4, 1, 5]])),
                               [0.87088406, 0.29091868, 0.37779146, 0.670908, 0.32878873], rtol=1e-6)
    # ... and a non-unique one: true classes [[0, 1], [5, 7]], 5 draws
    _, true_count, _ = sf.random.log_uniform_candidate_sampler(TC, 2, 5, False, 10, seed=3)
    np.testing.assert_allclose(true_count.numpy(), [[1.4453242, 0.8454604], [0.32142913, 0.2455967]], rtol=1e-6)
    _, true_count, sampled_count = sf.random.uniform_candidate_sampler(TC, 2, 10, True, 10, seed=2)
    t = _tries(np.full(4, 0.1), true_count.numpy().ravel(), 10)
    np.testing.assert_allclose(t, np.round(t), atol=1e-3)


@pytest.mark.parametrize("kind", SAMPLERS + ["all"])
def test_seeds_are_reproducible(kind):
    def draw(seed):
        if kind == "all":
            return [x.numpy() for x in sf.random.all_candidate_sampler(TC, 2, 8, True, seed=seed)]
        return [x.numpy() for x in _call(kind, TC, 2, 5, True, 12, seed=seed)]

    def runs(global_seed, op_seed):
        sf.random.set_seed(global_seed)
        try:
            return [draw(op_seed) for _ in range(3)]
        finally:
            sf.random.set_seed(None)

    a, b = runs(7, 3), runs(7, 3)
    c, d = runs(7, None), runs(7, None)
    for x, y in zip(a + c, b + d):
        for u, v in zip(x, y):
            np.testing.assert_array_equal(u, v)
    if kind != "all":    # a kept generator moves on: repeated calls differ
        assert any(not np.array_equal(a[0][0], a[i][0]) for i in (1, 2))


def test_graph_sessions_repeat_and_runs_move_on():
    graph = sf.Graph()
    with graph.as_default():
        sf.compat.v1.set_random_seed(5)
        out = sf.random.log_uniform_candidate_sampler(TC, 2, 6, True, 50)
        seqs = []
        for _ in range(2):
            with sf.compat.v1.Session() as sess:
                seqs.append([sess.run(out.sampled_candidates) for _ in range(3)])
    for x, y in zip(*seqs):
        np.testing.assert_array_equal(x, y)
    assert not all(np.array_equal(seqs[0][0], s) for s in seqs[0][1:])


def test_learned_unigram_counts_true_classes_after_sampling():
    # TF 2.21 (eager, seed=5, range 10, 3 draws): counts 1 per class, then +1 for 0, 1, 5, 7 per call
    want = [[0.3] * 4, [3 / 7] * 4, [0.5] * 4]
    for i in range(3):
        s, true_count, sampled_count = sf.random.learned_unigram_candidate_sampler(TC, 2, 3, False, 10, seed=5)
        np.testing.assert_allclose(true_count.numpy().ravel(), want[i], rtol=1e-6)
        counts = np.ones(10)
        np.add.at(counts, np.repeat(TC.ravel(), i), 1)
        np.testing.assert_allclose(sampled_count.numpy(), 3 * counts[s.numpy()] / counts.sum(), rtol=1e-6)
    graph = sf.Graph()
    with graph.as_default():
        out = sf.random.learned_unigram_candidate_sampler(TC, 2, 3, False, 10, seed=5)
        with sf.compat.v1.Session() as sess:
            for i in range(3):
                np.testing.assert_allclose(sess.run(out.true_expected_count).ravel(), want[i], rtol=1e-6)
        with sf.compat.v1.Session() as sess:       # a new Session starts learning anew
            np.testing.assert_allclose(sess.run(out.true_expected_count).ravel(), want[0], rtol=1e-6)


def test_learned_unigram_draws_follow_the_learned_counts():
    R = 6
    heavy = np.full((1, 40), 2, np.int64)
    for _ in range(6):       # the same attrs each call: the same (learning) sampler, as in TF's kernel cache
        s, _, _ = sf.random.learned_unigram_candidate_sampler(heavy, 40, 12000, False, R, seed=9)
    p = np.ones(R)
    p[2] += 200
    p /= p.sum()
    counts = np.bincount(s.numpy(), minlength=R)
    assert np.sum((counts - 12000 * p) ** 2 / (12000 * p)) < _chi2_bound(R - 1)


def test_fixed_unigram_reserved_ids_distortion_and_shards(tmp_path):
    # TF 2.21: reserved ids weigh 0; distortion 0.5 takes square roots
    _, true_count, _ = sf.random.fixed_unigram_candidate_sampler(
        TC, 2, 3, False, 8, unigrams=[1., 2., 3., 4., 5., 6.], num_reserved_ids=2, distortion=0.5, seed=1)
    np.testing.assert_allclose(true_count.numpy(), [[0, 0], [0.5539234, 0.6784149]], rtol=1e-6)
    # TF 2.21, shard 1 of 2 with 2 reserved ids: the unigrams' ids start after the one reserved id
    # kept, so the weights are [0, u0, u2, u4] = [0, 1, 3, 5]
    tc = np.array([[0, 1], [2, 3]], np.int64)
    _, true_count, _ = sf.random.fixed_unigram_candidate_sampler(
        tc, 2, 3, False, 4, unigrams=[1., 2., 3., 4., 5., 6.], num_reserved_ids=2, num_shards=2, shard=1)
    np.testing.assert_allclose(true_count.numpy() / 3, [[0, 1 / 9], [3 / 9, 5 / 9]], rtol=1e-6)
    _, true_count, _ = sf.random.fixed_unigram_candidate_sampler(
        tc, 2, 3, False, 4, unigrams=[1., 2., 3., 4., 5., 6., 7., 8.], num_shards=2, shard=1)
    np.testing.assert_allclose(true_count.numpy() / 3, [[0.1, 0.2], [0.3, 0.4]], rtol=1e-6)
    # a vocabulary file: the last comma-separated field of each non-empty line
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("a,1\nb,x,4\n\nc,9\n")
    s, true_count, _ = sf.random.fixed_unigram_candidate_sampler(
        np.array([[0], [1], [2]], np.int64), 1, 2, False, 3, vocab_file=str(vocab))
    np.testing.assert_allclose(true_count.numpy().ravel() / 2, [1 / 14, 4 / 14, 9 / 14], rtol=1e-6)
    # zero weights are never drawn
    s, _, _ = sf.random.fixed_unigram_candidate_sampler(TC, 2, 500, False, 8, unigrams=[1.] * 6,
                                                        num_reserved_ids=2, seed=3)
    assert s.numpy().min() >= 2


def test_all_candidate_sampler():
    s, true_count, sampled_count = sf.random.all_candidate_sampler(TC, 2, 8, True)
    np.testing.assert_array_equal(s.numpy(), np.arange(8))
    np.testing.assert_array_equal(true_count.numpy(), np.ones((2, 2), np.float32))
    np.testing.assert_array_equal(sampled_count.numpy(), np.ones(8, np.float32))


def _reference_hits(true_classes, sampled):
    rows, ids = [], []
    for i, row in enumerate(true_classes):
        for t in row:
            pos = [j for j, s in enumerate(sampled) if s == t]
            if pos:
                rows.append(i)
                ids.append(pos[-1])
    return rows, ids


def test_compute_accidental_hits(mode):
    tc = np.array([[1, 2], [3, 3], [2, 9]], np.int64)
    sampled = np.array([2, 3, 5, 2], np.int64)
    rows, ids, weights = mode.evaluate(sf.nn.compute_accidental_hits(tc, sampled, num_true=2))
    np.testing.assert_array_equal(rows, [0, 1, 1, 2])            # TF 2.21
    np.testing.assert_array_equal(ids, [3, 1, 1, 3])
    assert rows.dtype == np.int32 and ids.dtype == np.int64
    np.testing.assert_array_equal(weights, np.full(4, -np.finfo(np.float32).max, np.float32))
    rng = np.random.default_rng(0)
    tc = rng.integers(0, 20, (6, 3))
    sampled = rng.integers(0, 20, 9)
    rows, ids, _ = mode.evaluate(sf.nn.compute_accidental_hits(tc, sampled, 3))
    want_rows, want_ids = _reference_hits(tc, sampled)
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_array_equal(ids, want_ids)


def test_graph_static_shapes_and_fetches():
    with sf.Graph().as_default():
        ph = sf.compat.v1.placeholder(sf.int64, [None, 2])
        out = sf.random.log_uniform_candidate_sampler(ph, 2, 4, False, 10, name="cand")
        assert out.sampled_candidates.shape.as_list() == [4]
        assert out.true_expected_count.shape.as_list() == [None, 2]
        assert out.sampled_expected_count.shape.as_list() == [4]
        assert out.sampled_candidates.op.type == "LogUniformCandidateSampler"
        with sf.compat.v1.Session() as sess:
            got = sess.run(out, {ph: TC})
        assert got.true_expected_count.shape == (2, 2)
        hits = sf.nn.compute_accidental_hits(ph, out.sampled_candidates, 2)
        assert [h.shape.as_list() for h in hits] == [[None]] * 3


def test_samplers_are_not_differentiable():
    with sf.Graph().as_default():
        ops_ = [f(TC, 2, 3, False, 10).sampled_candidates.op for f in (
            sf.random.uniform_candidate_sampler, sf.random.log_uniform_candidate_sampler,
            sf.random.learned_unigram_candidate_sampler)]
        ops_.append(sf.random.all_candidate_sampler(TC, 2, 8, False).sampled_candidates.op)
        ops_.append(sf.random.fixed_unigram_candidate_sampler(TC, 2, 3, False, 8, unigrams=[1.] * 8)
                    .sampled_candidates.op)
        ops_.append(sf.nn.compute_accidental_hits(TC, [1, 2], 2).indices.op)
        assert [get_gradient_function(op) for op in ops_] == [None] * 6


BAD = [
    (lambda: sf.random.uniform_candidate_sampler(TC, 2, 11, True, 10), "Sampler's range is too small"),
    (lambda: sf.random.uniform_candidate_sampler(TC, 2, 0, False, 10), "attr 'num_sampled' must be at least 1"),
    (lambda: sf.random.uniform_candidate_sampler(TC, 2, 2, False, 0), "attr 'range_max' must be at least 1"),
    (lambda: sf.random.uniform_candidate_sampler(TC, 3, 2, True, 10), "num_true columns, expected: 3 was: 2"),
    (lambda: sf.random.uniform_candidate_sampler(np.array([1, 2]), 1, 2, True, 10), "must be a matrix"),
    (lambda: sf.random.log_uniform_candidate_sampler(np.array([[12], [-1]]), 1, 2, True, 10),
     r"true_classes\[0,0\] = 12 is out of range \[0, 10\)"),
    (lambda: sf.random.all_candidate_sampler(TC, 2, 4, True), r"= 5 is out of range \[0, 4\)"),
    (lambda: sf.random.uniform_candidate_sampler(sf.constant([[1]], sf.int32), 1, 2, True, 10), "must be int64"),
    (lambda: sf.random.fixed_unigram_candidate_sampler(TC, 2, 2, True, 10), "Must provide either vocab_file or"),
    (lambda: sf.random.fixed_unigram_candidate_sampler(TC, 2, 2, True, 8, vocab_file="v", unigrams=[1.] * 8),
     "Must only provide one of vocab_file and unigrams"),
    (lambda: sf.random.fixed_unigram_candidate_sampler(TC, 2, 2, True, 7, unigrams=[1.] * 8),
     "range is 7 must be equal to weights size 8"),
    (lambda: sf.random.fixed_unigram_candidate_sampler(TC, 2, 2, True, 8, unigrams=[1.] * 8, shard=1),
     "need 0 <= shard < num_shards"),
    (lambda: sf.random.fixed_unigram_candidate_sampler(TC, 2, 7, True, 8, unigrams=[1.] * 6, num_reserved_ids=2),
     "only 6 candidates have a nonzero weight"),
    (lambda: sf.random.fixed_unigram_candidate_sampler(TC, 2, 1, True, 8, unigrams=[-1.] * 8),
     "finite and non-negative"),
    (lambda: sf.nn.compute_accidental_hits(np.array([[1, 2]]), np.array([2]), 1), "num_true=1"),
    (lambda: sf.nn.compute_accidental_hits(np.array([[1, 2]]), np.array([[2]]), 2), "must be a vector"),
]


@pytest.mark.parametrize("i", range(len(BAD)))
def test_errors(i):
    f, match = BAD[i]
    with pytest.raises(sf.errors.InvalidArgumentError, match=match):
        f()


def test_errors_name_the_op_in_a_graph():
    with sf.Graph().as_default():
        ph = sf.compat.v1.placeholder(sf.int64, [None, 1])
        out = sf.random.uniform_candidate_sampler(ph, 1, 2, True, 10, name="cand")
        with sf.compat.v1.Session() as sess:
            with pytest.raises(sf.errors.InvalidArgumentError, match=r"UniformCandidateSampler 'cand'.*true_classes"):
                sess.run(out, {ph: [[10]]})
        with pytest.raises(ValueError, match="num_true columns"):
            sf.random.uniform_candidate_sampler(ph, 2, 2, True, 10)
    with pytest.raises(sf.errors.NotFoundError, match="vocab_file"):
        sf.random.fixed_unigram_candidate_sampler(TC, 2, 2, True, 8, vocab_file="/nonexistent/vocab.txt")


def test_faces():
    names = ["all_candidate_sampler", "fixed_unigram_candidate_sampler", "learned_unigram_candidate_sampler",
             "log_uniform_candidate_sampler", "uniform_candidate_sampler"]
    for n in names:
        f = getattr(candidate_sampling_ops, n)
        assert getattr(sf.random, n) is f and getattr(sf.compat.v1.nn, n) is f and getattr(sf.compat.v1.random, n) is f
    # (TF2's tf.nn lacks log_uniform_ and uniform_candidate_sampler; sf.nn has them because
    # test_namespaces wants sf.nn and sf.compat.v1.nn to hold the same names)
    for n in names + ["compute_accidental_hits"]:
        assert getattr(sf.nn, n) is getattr(candidate_sampling_ops, n)

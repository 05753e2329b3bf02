"""The candidate-sampling kernels against plain Python/NumPy references: the log-uniform inverse CDF,
weighted draws, unique sampling by rejection (compiled and NumPy paths, tries counted), expected
counts, the learned-unigram counts (Fenwick tree and cumulative sums) and accidental hits."""
import numpy as np
import pytest

from segflow.kernels import BadInput, sampling as sk


def test_log_uniform_inverse_cdf_hits_every_class_interval():
    # value k takes the u in [log(k+1), log(k+2)) / log(R+1): the middle of each interval maps to k
    for R in (1, 2, 10, 1000):
        edges = np.log(np.arange(1, R + 2)) / np.log(R + 1.0)
        mid = (edges[:-1] + edges[1:]) / 2
        np.testing.assert_array_equal(sk.log_uniform_values(mid, R), np.arange(R))
        np.testing.assert_allclose(sk.log_uniform_probability(np.arange(R), R), np.diff(edges), rtol=1e-10)
        assert abs(sk.log_uniform_probability(np.arange(R), R).sum() - 1) < 1e-12
    u = np.random.default_rng(0).random(10000)
    v = sk.log_uniform_values(u, 7)
    assert v.dtype == np.int64 and v.min() >= 0 and v.max() < 7
    assert sk.log_uniform_values(np.array([np.nextafter(1.0, 0.0)]), 7)[0] == 6


def test_weighted_values_skip_zero_weights():
    w = np.array([0.0, 2.0, 0.0, 0.0, 1.0, 1.0, 0.0])
    cum = np.cumsum(w)
    u = np.linspace(0, 1, 4001)[:-1]
    got = sk.weighted_values(cum, u)
    want = np.array([np.nonzero(cum > x * cum[-1])[0][0] for x in u])
    np.testing.assert_array_equal(got, want)
    assert set(got.tolist()) == {1, 4, 5}
    np.testing.assert_allclose(np.bincount(got, minlength=7) / u.size, w / w.sum(), atol=1e-3)


def _stream(values):
    """draw(n): the next n values of a fixed stream (so the result cannot depend on chunk sizes)."""
    pos = [0]

    def draw(n):
        out = values[pos[0]:pos[0] + n]
        pos[0] += n
        assert out.size == n, "the stream ran out"
        return out
    return draw


def _reference_unique(values, n):
    seen, out = set(), []
    for i, v in enumerate(values.tolist()):
        if v not in seen:
            seen.add(v)
            out.append(v)
            if len(out) == n:
                return np.array(out), i + 1
    raise AssertionError("too short")


@pytest.mark.parametrize("n, R", [(1, 5), (3, 3), (10, 40), (300, 400), (1000, 100000), (2000, 2000)])
def test_unique_sample_takes_first_distinct_draws_and_counts_tries(n, R):
    stream = np.random.default_rng(n).integers(0, R, 200 * R + 1000)
    got, tries = sk.sample(_stream(stream), n, unique=True)
    want, want_tries = _reference_unique(stream, n)
    np.testing.assert_array_equal(got, want)
    assert tries == want_tries
    assert len(set(got.tolist())) == n


def test_compiled_and_numpy_paths_agree():
    rng = np.random.default_rng(3)
    for trial in range(30):
        R = int(rng.integers(1, 60))
        n = int(rng.integers(1, R + 1))
        draws = rng.integers(0, R, int(rng.integers(1, 200)))
        start = int(rng.integers(0, n + 1))
        prefix = rng.permutation(R)[:start].astype(np.int64)
        a = np.full(n, -7, np.int64)
        a[:start] = prefix
        b = a.copy()
        table = np.full(1 << max(4, int(2 * n - 1).bit_length()), -1, np.int64)
        sk._insert_all(table, prefix)
        got_a = sk._take_new(draws, table, a, start)
        got_b = sk._take_new_numpy(draws, b, start)
        assert tuple(int(x) for x in got_a) == got_b, trial
        np.testing.assert_array_equal(a, b)


def test_non_unique_sample_is_the_draws():
    stream = np.arange(10, dtype=np.int64) % 3
    got, tries = sk.sample(_stream(stream), 7, unique=False)
    np.testing.assert_array_equal(got, stream[:7])
    assert tries == 7


def test_unique_sample_gives_up_after_max_tries():
    with pytest.raises(BadInput, match="no 2 distinct candidates after 50 tries"):
        sk.sample(lambda k: np.zeros(k, np.int64), 2, unique=True, max_tries=50)


def test_expected_count_formulas():
    p = np.array([0.0, 0.01, 0.3, 1.0])
    np.testing.assert_array_equal(sk.expected_count(p, 5, 5), p.astype(np.float32) * np.float32(5))  # float, as TF
    got = sk.expected_count(p, 5, 9)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, 1 - (1 - p) ** 9, rtol=1e-6)


@pytest.mark.parametrize("R", [10, 5000])   # cumulative sums, and the Fenwick tree (>= 4096 classes)
def test_unigram_counts_draw_in_proportion_and_learn(R):
    c = sk.UnigramCounts(R)
    counts = np.ones(R, np.int64)
    rng = np.random.default_rng(R)
    for step in range(4):
        ids = rng.integers(0, R, 50) if step else np.zeros(0, np.int64)
        c.add(ids)
        np.add.at(counts, ids, 1)
        np.testing.assert_array_equal(c.counts, counts)
        u = rng.random(3000)
        cum = np.cumsum(counts)
        want = np.searchsorted(cum, np.floor(u * cum[-1]), side="right")
        np.testing.assert_array_equal(c.values(u), want)
        assert c.total == cum[-1] == R + 50 * step
    np.testing.assert_allclose(c.probability(np.arange(R)), counts / counts.sum())
    # the very last target lands on the last class with a nonzero count
    assert c.values(np.array([np.nextafter(1.0, 0.0)]))[0] == R - 1


def _reference_hits(true_classes, sampled):
    rows, ids = [], []
    for i in range(true_classes.shape[0]):
        for t in true_classes[i]:
            pos = [j for j, s in enumerate(sampled) if s == t]
            if pos:
                rows.append(i)
                ids.append(pos[-1])
    return np.array(rows, np.int32), np.array(ids, np.int64)


def test_accidental_hits_against_a_loop():
    rng = np.random.default_rng(5)
    for trial in range(20):
        b, nt, s = (int(x) for x in rng.integers(1, 6, 3))
        R = int(rng.integers(1, 12))
        tc = rng.integers(0, R, (b, nt))
        sampled = rng.integers(0, R, s)
        rows, ids, weights = sk.accidental_hits(tc, sampled)
        want_rows, want_ids = _reference_hits(tc, sampled)
        np.testing.assert_array_equal(rows, want_rows)
        np.testing.assert_array_equal(ids, want_ids)
        assert rows.dtype == np.int32 and ids.dtype == np.int64 and weights.dtype == np.float32
        np.testing.assert_array_equal(weights, np.full(rows.size, -np.finfo(np.float32).max, np.float32))
    empty = sk.accidental_hits(np.zeros((0, 2), np.int64), np.array([1, 2]))
    assert [e.size for e in empty] == [0, 0, 0]

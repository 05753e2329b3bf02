"""quantile_ops: Bucketize, TF contrib's Quantiles, the weighted quantile sketch and its bound."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from segflow.contrib.boosted_trees.python.ops import quantile_ops
from segflow.framework import errors
from segflow.kernels.quantiles import WeightedQuantileSketch


def ref_lower_bound_clamped(values, buckets):  # TF contrib Quantiles: std::lower_bound, clamped
    out = []
    for v in values:
        i = next((k for k, b in enumerate(buckets) if b >= v), len(buckets) - 1)
        out.append(i)
    return np.array(out, np.int32)


def test_bucketize_counts_boundaries_at_or_below(mode):
    x = np.array([[-1.0, 0.0, 1.0], [1.5, 2.0, 9.0]], np.float32)
    got = mode.evaluate(quantile_ops.bucketize(x, [0.0, 1.0, 2.0]))
    np.testing.assert_array_equal(got, [[0, 1, 2], [2, 3, 3]])  # by hand: #boundaries <= x
    assert got.dtype == np.int32


def test_bucketize_rejects_unsorted_boundaries():
    with pytest.raises(errors.InvalidArgumentError, match="Bucketize.*boundaries"):
        quantile_ops.bucketize(np.array([1.0]), [2.0, 1.0])


def test_quantiles_dense_and_multivalent_sparse(mode):
    dense = np.array([0.5, 1.0, 2.5, 3.0, 7.0], np.float32)
    sparse = np.array([1.5, -4.0, 9.0], np.float32)
    idx = np.array([[0, 2], [1, 0], [4, 1]], np.int64)
    dense_ids, sparse_ids = mode.evaluate(quantile_ops.quantiles(
        [dense], [sparse], [np.array([1.0, 2.0, 3.0], np.float32)], [np.array([0.0, 2.0], np.float32)], [idx]))
    np.testing.assert_array_equal(dense_ids[0], ref_lower_bound_clamped(dense, [1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(dense_ids[0], [0, 0, 2, 2, 2])
    np.testing.assert_array_equal(sparse_ids[0], [[1, 2], [0, 0], [1, 1]])  # (bucket, dimension)


def test_quantiles_without_indices_and_without_boundaries(mode):
    dense_ids, sparse_ids = mode.evaluate(quantile_ops.quantiles(
        [np.array([1.0, 5.0], np.float32)], [np.array([3.0], np.float32)],
        [np.zeros(0, np.float32)], [np.array([2.0, 4.0], np.float32)]))
    np.testing.assert_array_equal(dense_ids[0], [0, 0])
    np.testing.assert_array_equal(sparse_ids[0], [1])


def test_quantiles_checks_list_lengths():
    with pytest.raises(ValueError, match="dense features"):
        quantile_ops.quantiles([np.ones(2, np.float32)], [], [], [])


def test_sketch_is_exact_on_small_data():
    values = np.array([5.0, 1.0, 3.0, 3.0, np.nan, 2.0, 4.0])
    s = WeightedQuantileSketch(0.1).add(values)
    v, w, lo, hi = s.entries()
    np.testing.assert_array_equal(v, [1, 2, 3, 4, 5])
    np.testing.assert_array_equal(w, [1, 1, 2, 1, 1])
    np.testing.assert_array_equal(lo, [0, 1, 2, 4, 5])
    np.testing.assert_array_equal(hi, [1, 2, 4, 5, 6])
    assert s.approximation_error() == 0.0
    np.testing.assert_array_equal(s.boundaries(10), [1, 2, 3, 4, 5])
    # ranks 0, 3, 6 of W=6: the minimum, the 3rd smallest (3), the maximum
    np.testing.assert_array_equal(s.boundaries(2), [1, 3, 5])


def test_sketch_merge_equals_one_sketch_when_exact():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 50, 400).astype(np.float64)
    w = rng.uniform(0.1, 3.0, 400)
    a = WeightedQuantileSketch(0.01).add(x[:150], w[:150]).merge(WeightedQuantileSketch(0.01).add(x[150:], w[150:]))
    b = WeightedQuantileSketch(0.01).add(x, w)
    for got, want in zip(a.entries(), b.entries()):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    ux = np.unique(x)
    np.testing.assert_array_equal(a.entries()[0], ux)
    np.testing.assert_allclose(a.entries()[1], [w[x == u].sum() for u in ux])


def _rank_error(sorted_x, cum_w, value, rank):
    i = np.searchsorted(sorted_x, value)
    below = cum_w[i - 1] if i > 0 else 0.0
    at_or_below = cum_w[np.searchsorted(sorted_x, value, side="right") - 1]
    return max(below - rank, rank - at_or_below, 0.0)


def test_sketch_rank_error_within_bound_on_a_million_values():
    rng = np.random.default_rng(0)
    n, eps = 1_000_000, 0.01
    x = np.concatenate([rng.lognormal(size=n // 2), rng.integers(0, 100, n // 2).astype(float)])
    rng.shuffle(x)
    w = rng.uniform(0.5, 2.0, n)
    chunks = []
    for c in range(4):  # per-chunk sketches merged afterwards, as on Dask
        s = WeightedQuantileSketch(eps)
        for b in range(c * n // 4, (c + 1) * n // 4, 50_000):
            s.add(x[b:b + 50_000], w[b:b + 50_000])
        chunks.append(s)
    s = chunks[0]
    for other in chunks[1:]:
        s.merge(other)
    assert s.size < 10 / eps
    assert s.approximation_error() <= eps
    order = np.argsort(x, kind="stable")
    xs, cw = x[order], np.cumsum(w[order])
    total = cw[-1]
    np.testing.assert_allclose(s.total_weight, total, rtol=1e-9)
    for q in np.linspace(0.0, 1.0, 201):
        assert _rank_error(xs, cw, s.quantile(q), q * total) <= eps * total
    b = s.boundaries(64)
    assert b[0] == xs[0] and b[-1] == xs[-1] and np.all(np.diff(b) > 0)


def test_quantile_boundaries_op(mode):
    got = mode.evaluate(quantile_ops.quantile_boundaries(np.arange(10.0, dtype=np.float32), 2))
    np.testing.assert_array_equal(got, [0.0, 4.0, 9.0])  # ranks 0, 5, 10 of W = 10


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 3000), eps=st.sampled_from([0.02, 0.05, 0.2]),
       batch=st.integers(1, 500), weighted=st.booleans(), distinct=st.integers(1, 5000))
def test_sketch_rank_error_property(seed, n, eps, batch, weighted, distinct):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, distinct, n).astype(np.float64)
    w = rng.pareto(1.5, n) + 0.01 if weighted else np.ones(n)
    s = WeightedQuantileSketch(eps, max_entries=20)   # forces compressions
    for b in range(0, n, batch):
        s.add(x[b:b + batch], w[b:b + batch] if weighted else None)
    assert s.approximation_error() <= eps + 1e-12
    order = np.argsort(x, kind="stable")
    xs, cw = x[order], np.cumsum(w[order])
    total = cw[-1]
    for q in np.linspace(0.0, 1.0, 21):
        assert _rank_error(xs, cw, s.quantile(q), q * total) <= eps * total * (1 + 1e-9)

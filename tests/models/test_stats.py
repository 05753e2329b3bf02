"""Split-handler statistics against a NumPy reference: bias bucket, multivalent and categorical
features, multiclass gradients (vector and full hessians), per-example rows."""
import numpy as np
import pytest

import segflow as sf
from segflow.contrib.boosted_trees.python.ops import quantile_ops, stats_ops


def ref_stats(partitions, value_examples, buckets, dims, g, h):
    """Bias rows per partition (first appearance order), then sums per (partition, dim, bucket)
    in order of first appearance among the values; plain loops in float64."""
    parts = list(dict.fromkeys(partitions.tolist()))
    rows_p, rows_b, rows_d, rows_g, rows_h = [], [], [], [], []
    for p in parts:
        m = partitions == p
        rows_p.append(p), rows_b.append(-1), rows_d.append(0)
        rows_g.append(g[m].astype(np.float64).sum(0)), rows_h.append(h[m].astype(np.float64).sum(0))
    keys = {}
    for j, e in enumerate(value_examples):
        k = (partitions[e], dims[j], buckets[j])
        if k not in keys:
            keys[k] = [np.zeros(g.shape[1:]), np.zeros(h.shape[1:])]
        keys[k][0] = keys[k][0] + g[e]
        keys[k][1] = keys[k][1] + h[e]
    for (p, d, b), (gs, hs) in keys.items():
        rows_p.append(p), rows_b.append(b), rows_d.append(d), rows_g.append(gs), rows_h.append(hs)
    return (np.array(rows_p), np.array(rows_b), np.array(rows_d), np.array(rows_g, g.dtype),
            np.array(rows_h, h.dtype))


RNG = np.random.default_rng(3)
N = 40
PARTS = RNG.choice([5, 0, 9], N).astype(np.int32)


@pytest.mark.parametrize("shape", ["scalar", "vector", "full"])
def test_dense_split_stats(mode, shape):
    buckets = RNG.integers(0, 6, N)
    g = RNG.normal(size={"scalar": (N,), "vector": (N, 3), "full": (N, 3)}[shape]).astype(np.float32)
    h = RNG.uniform(size={"scalar": (N,), "vector": (N, 3), "full": (N, 3, 3)}[shape]).astype(np.float32)
    p, b, gs, hs = mode.evaluate(stats_ops.dense_split_stats(PARTS, buckets, g, h))
    rp, rb, _, rg, rh = ref_stats(PARTS, np.arange(N), buckets, np.zeros(N, int), g, h)
    np.testing.assert_array_equal(p, rp)
    np.testing.assert_array_equal(b, rb)
    np.testing.assert_allclose(gs, rg, rtol=1e-6)
    np.testing.assert_allclose(hs, rh, rtol=1e-6)
    assert gs.dtype == np.float32 and b.dtype == np.int64


def test_dense_split_stats_hand_checked():
    p, b, g, h = stats_ops.dense_split_stats(np.array([3, 1, 3, 3, 1]), np.array([0, 2, 0, 1, 2]),
                                             np.arange(5.0), np.ones(5))
    np.testing.assert_array_equal(p, [3, 1, 3, 1, 3])
    np.testing.assert_array_equal(b, [-1, -1, 0, 2, 1])
    np.testing.assert_array_equal(g, [0 + 2 + 3, 1 + 4, 0 + 2, 1 + 4, 3])
    np.testing.assert_array_equal(h, [3, 2, 2, 2, 1])


def test_dense_split_stats_float64_accumulation():
    # 1e8 + 1 - 1e8 in float32 loses the 1; accumulating in float64 keeps it.
    g = np.array([1e8, 1.0, -1e8], np.float32)
    _, _, gs, _ = stats_ops.dense_split_stats(np.zeros(3, np.int32), np.zeros(3, np.int32), g, np.ones(3, np.float32))
    assert gs.numpy()[0] == 1.0


def test_sparse_multivalent_split_stats(mode):
    idx = np.array([[0, 0], [0, 1], [3, 1], [4, 0], [4, 1], [7, 2], [9, 0]], np.int64)
    vals = np.array([0.5, 2.0, 3.0, 0.1, 1.5, 9.0, 2.0], np.float32)
    st = sf.SparseTensor(idx, vals, [N, 3])
    bounds = np.array([1.0, 2.0, 2.5], np.float32)
    g = RNG.normal(size=(N, 2)).astype(np.float32)
    h = RNG.uniform(size=(N, 2)).astype(np.float32)
    p, b, gs, hs = mode.evaluate(stats_ops.sparse_split_stats(PARTS, st, bounds, g, h))
    rb_buckets = np.minimum(np.searchsorted(bounds, vals, side="left"), 2)
    rp, rb, rd, rg, rh = ref_stats(PARTS, idx[:, 0], rb_buckets, idx[:, 1], g, h)
    np.testing.assert_array_equal(p, rp)
    np.testing.assert_array_equal(b, np.stack([rb, rd], 1))
    np.testing.assert_allclose(gs, rg, rtol=1e-6)
    np.testing.assert_allclose(hs, rh, rtol=1e-6)


def test_categorical_split_stats(mode):
    idx = np.array([[1, 0], [1, 1], [2, 0], [6, 0], [6, 1], [6, 2]], np.int64)
    vals = np.array([3, 11, 3, 0, 3, 11], np.int64)
    g = RNG.normal(size=N).astype(np.float64)
    h = RNG.uniform(size=N).astype(np.float64)
    p, b, gs, hs = mode.evaluate(stats_ops.categorical_split_stats(PARTS, sf.SparseTensor(idx, vals, [N, 3]), g, h))
    rp, rb, rd, rg, rh = ref_stats(PARTS, idx[:, 0], vals, np.zeros(6, int), g, h)
    np.testing.assert_array_equal(p, rp)
    np.testing.assert_array_equal(b, np.stack([rb, rd], 1))
    np.testing.assert_allclose(gs, rg, rtol=1e-12)
    np.testing.assert_allclose(hs, rh, rtol=1e-12)


def test_unaggregated_rows_are_the_seed_layout(mode):
    buckets = np.array([2, 0, 2])
    p, b, gs, hs = mode.evaluate(stats_ops.dense_split_stats(np.array([1, 1, 0]), buckets, np.array([1., 2., 3.]),
                                                             np.array([1., 1., 1.]), aggregate=False))
    np.testing.assert_array_equal(p, [1, 0, 1, 1, 0])
    np.testing.assert_array_equal(b, [-1, -1, 2, 0, 2])
    np.testing.assert_array_equal(gs, [3, 3, 1, 2, 3])
    np.testing.assert_array_equal(hs, [2, 1, 1, 1, 1])


def test_quantiles_and_stats_in_a_traced_function():
    @sf.function
    def stats(x, partitions, g):
        dense, _ = quantile_ops.quantiles([x], [], [sf.constant([0.0, 1.0, 2.0])], [])
        return stats_ops.dense_split_stats(partitions, dense[0], g, sf.ones_like(g))

    p, b, g, h = (t.numpy() for t in stats(sf.constant([0.5, 1.5, 3.0, -1.0]), sf.constant([0, 1, 0, 1]),
                                           sf.constant([1.0, 2.0, 3.0, 4.0])))
    # buckets (first boundary >= x, clamped): 1, 2, 2, 0
    np.testing.assert_array_equal(p, [0, 1, 0, 1, 0, 1])
    np.testing.assert_array_equal(b, [-1, -1, 1, 2, 2, 0])
    np.testing.assert_array_equal(g, [4, 6, 1, 2, 3, 4])
    np.testing.assert_array_equal(h, [2, 2, 1, 1, 1, 1])

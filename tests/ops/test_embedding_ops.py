"""embedding_lookup (one table, partitioned "mod"/"div", Variables, max_norm), embedding_lookup_sparse,
SparseTensor conversions: values against NumPy references, gradients in both modes, aggregation of
mixed sparse and dense gradients."""
import numpy as np
import pytest

import segflow as sf
from segflow.framework import errors, ops
from segflow.ops import array_ops, math_ops
from segflow.ops import embedding_ops, variables
from segflow.eager import backprop
from segflow._ops.sparse_tensor import SparseTensor, from_dense, to_dense
from gradcheck import check_gradients


def _init(mode):
    if not mode.eager:
        mode.session.run(variables.global_variables_initializer())


def _dense(g, shape):
    if isinstance(g, ops.IndexedSlicesValue):
        out = np.zeros(shape, g.values.dtype)
        np.add.at(out, g.indices, g.values)
        return out
    return np.asarray(g)


def split_table(table, n, strategy):
    """TF's partitioning of a table's rows, written out: "mod" deals rows round-robin; "div" cuts
    contiguous blocks, the first (rows % n) one row longer."""
    if strategy == "mod":
        return [table[p::n] for p in range(n)]
    per, extra = divmod(table.shape[0], n)
    sizes = [per + 1 if p < extra else per for p in range(n)]
    bounds = np.cumsum([0] + sizes)
    return [table[bounds[p]:bounds[p + 1]] for p in range(n)]


TABLE = np.arange(33, dtype=np.float64).reshape(11, 3) / 10.0
IDS = np.array([[0, 10, 4], [4, 7, 0]])


# -- embedding_lookup


def test_lookup_one_table(mode):
    got = mode.evaluate(embedding_ops.embedding_lookup(TABLE, IDS))
    np.testing.assert_array_equal(got, TABLE[IDS])


def test_lookup_variable_table_uses_sparse_read(mode):
    v = sf.Variable(TABLE)
    _init(mode)
    out = embedding_ops.embedding_lookup(v, IDS)
    if not mode.eager:
        assert "ResourceGather" in [o.type for o in mode.graph.get_operations()]
    np.testing.assert_array_equal(mode.evaluate(out), TABLE[IDS])


@pytest.mark.parametrize("strategy", ["mod", "div"])
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_lookup_partitioned(mode, strategy, n):
    parts = [sf.constant(p) for p in split_table(TABLE, n, strategy)]
    got = mode.evaluate(embedding_ops.embedding_lookup(parts, IDS, partition_strategy=strategy))
    np.testing.assert_array_equal(got, TABLE[IDS])


def test_lookup_partitioned_int64_ids_and_scalar_id(mode):
    parts = [sf.constant(p) for p in split_table(TABLE, 3, "div")]
    got = mode.evaluate(embedding_ops.embedding_lookup(parts, np.array([9, 3, 3], np.int64), "div"))
    np.testing.assert_array_equal(got, TABLE[[9, 3, 3]])
    got = mode.evaluate(embedding_ops.embedding_lookup(parts, np.int64(5), "div"))
    np.testing.assert_array_equal(got, TABLE[5])


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_lookup_partitioned_variables_get_indexed_slices(mode, strategy):
    pieces = split_table(TABLE, 3, strategy)
    vs = [sf.Variable(p) for p in pieces]
    _init(mode)
    w = np.arange(18.0).reshape(2, 3, 3)

    def loss():
        return sf.reduce_sum(embedding_ops.embedding_lookup(vs, IDS, partition_strategy=strategy) * w)

    if mode.eager:
        with sf.GradientTape() as tape:
            y = loss()
        grads = tape.gradient(y, vs)
    else:
        grads = sf.gradients(loss(), vs)
    assert all(isinstance(g, sf.IndexedSlices) for g in grads)
    got = np.concatenate([_dense(g, p.shape) for g, p in zip(mode.evaluate(grads), pieces)])
    want_full = np.zeros_like(TABLE)
    np.add.at(want_full, IDS.reshape(-1), w.reshape(-1, 3))
    np.testing.assert_allclose(got, np.concatenate(split_table(want_full, 3, strategy)))


def test_lookup_out_of_range(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = 11 is out of range \[0, 11\)"):
        mode.evaluate(embedding_ops.embedding_lookup(TABLE, [3, 11]))


def test_lookup_errors():
    with pytest.raises(ValueError, match="partition strategy"):
        embedding_ops.embedding_lookup([TABLE, TABLE], [0], partition_strategy="cyclic")
    with pytest.raises(ValueError, match="at least one"):
        embedding_ops.embedding_lookup([], [0])


def ref_clip(rows, max_norm):
    norm = np.sqrt(np.sum(rows * rows, axis=-1, keepdims=True))
    return rows * max_norm / np.maximum(norm, max_norm)


@pytest.mark.parametrize("n", [1, 2])
def test_lookup_max_norm(mode, n):
    table = TABLE.copy()
    table[4] = 0.0                                     # a zero row stays zero
    parts = split_table(table, n, "mod")
    got = mode.evaluate(embedding_ops.embedding_lookup([sf.constant(p) for p in parts], IDS, max_norm=1.5))
    np.testing.assert_allclose(got, ref_clip(table[IDS], 1.5))


def test_lookup_gradient_dense_table(mode):
    check_gradients(mode, lambda t: embedding_ops.embedding_lookup(t, IDS) * 2.0, [TABLE])


def test_lookup_gradient_partitioned_and_clipped(mode):
    pieces = split_table(TABLE, 2, "div")
    check_gradients(mode, lambda a, b: embedding_ops.embedding_lookup([a, b], IDS, "div", max_norm=0.8), pieces)


def test_aggregate_mixed_sparse_and_dense_gradients():
    # Three lookups (IndexedSlices gradients) and a dense use of the same table: the eager gradient
    # must equal the graph one, densified through unsorted_segment_sum where it stayed sparse.
    def fn(x):
        g1 = embedding_ops.embedding_lookup(x, sf.constant(np.array([0, 1])))
        g2 = embedding_ops.embedding_lookup(x, sf.constant(np.array([2, 3])))
        g3 = embedding_ops.embedding_lookup(x, sf.constant(np.array([1, 3])))
        g4 = math_ops.reduce_sum(x * sf.constant(2.0))
        return g1 * g2 * g3 * g4

    var_np = np.random.default_rng(0).random((4, 2)).astype(np.float32)
    grad = backprop.gradients_function(fn, [0])(sf.constant(var_np))[0]
    grad = ops.convert_to_tensor(grad).numpy()
    with sf.Graph().as_default(), sf.Session() as sess:
        tf_var = sf.constant(var_np, sf.float32)
        tf_g1 = embedding_ops.embedding_lookup(tf_var, sf.constant([0, 1]))
        tf_g2 = embedding_ops.embedding_lookup(tf_var, sf.constant([2, 3]))
        tf_g3 = embedding_ops.embedding_lookup(tf_var, sf.constant([1, 3]))
        tf_g4 = math_ops.reduce_sum(tf_var * 2.0, axis=(0, 1))
        tf_grad = sf.gradients(tf_g1 * tf_g2 * tf_g3 * tf_g4, [tf_var])[0]
        if isinstance(tf_grad, sf.IndexedSlices):
            tf_grad = math_ops.unsorted_segment_sum(tf_grad.values, tf_grad.indices, tf_grad.dense_shape[0])
        graph_grad = sess.run(tf_grad)
    np.testing.assert_allclose(grad, graph_grad, rtol=1e-5)
    # and both against the hand-derived gradient of y = a*b*c*s, s = 2*sum(x)
    a, b, c = var_np[[0, 1]], var_np[[2, 3]], var_np[[1, 3]]
    s = 2.0 * var_np.sum()
    want = np.zeros_like(var_np)
    np.add.at(want, [0, 1], b * c * s)
    np.add.at(want, [2, 3], a * c * s)
    np.add.at(want, [1, 3], a * b * s)
    want += 2.0 * np.sum(a * b * c)
    np.testing.assert_allclose(grad, want, rtol=1e-5)


# -- embedding_lookup_sparse


SP_IDX = np.array([[0, 0], [0, 1], [0, 2], [2, 0], [3, 0], [3, 1]])
SP_IDS = np.array([3, 7, 3, 10, 0, 5], np.int64)
SP_W = np.array([1.0, 2.0, 0.5, 3.0, -1.0, 4.0])


def ref_lookup_sparse(table, weights, combiner):
    rows = SP_IDX[:, 0].max() + 1
    out = np.zeros((rows, table.shape[1]))
    wsum = np.zeros(rows)
    w2sum = np.zeros(rows)
    for (r, _), i, w in zip(SP_IDX, SP_IDS, weights):
        out[r] += w * table[i]
        wsum[r] += w
        w2sum[r] += w * w
    div = {"sum": np.ones(rows), "mean": wsum, "sqrtn": np.sqrt(w2sum)}[combiner]
    safe = np.where(div == 0, 1.0, div)
    return np.where((div == 0)[:, None], 0.0, out / safe[:, None])


def _sp(values, dtype=None):
    return SparseTensor(SP_IDX, np.asarray(values, dtype), [4, 3])


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("weighted", [True, False])
def test_lookup_sparse_values(mode, combiner, weighted):
    weights = SP_W if weighted else np.ones(len(SP_IDS))
    out = embedding_ops.embedding_lookup_sparse(TABLE, _sp(SP_IDS), _sp(SP_W) if weighted else None,
                                                combiner=combiner)
    np.testing.assert_allclose(mode.evaluate(out), ref_lookup_sparse(TABLE, weights, combiner), rtol=1e-12)


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_lookup_sparse_partitioned(mode, strategy):
    parts = [sf.constant(p) for p in split_table(TABLE, 3, strategy)]
    out = embedding_ops.embedding_lookup_sparse(parts, _sp(SP_IDS), _sp(SP_W), partition_strategy=strategy)
    np.testing.assert_allclose(mode.evaluate(out), ref_lookup_sparse(TABLE, SP_W, "mean"))


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_lookup_sparse_gradient(mode, combiner):
    sp_ids = _sp(SP_IDS)
    check_gradients(mode, lambda t: embedding_ops.embedding_lookup_sparse(t, sp_ids, _sp(SP_W), combiner=combiner),
                    [TABLE])
    check_gradients(mode, lambda t: embedding_ops.embedding_lookup_sparse(t, sp_ids, None, combiner=combiner),
                    [TABLE])


def test_lookup_sparse_variable_gradient_is_sparse():
    v = sf.Variable(TABLE)
    with sf.GradientTape() as tape:
        y = sf.reduce_sum(embedding_ops.embedding_lookup_sparse(v, _sp(SP_IDS), None, combiner="sum"))
    g = tape.gradient(y, v)
    assert isinstance(g, sf.IndexedSlices)
    want = np.zeros_like(TABLE)
    np.add.at(want, SP_IDS, 1.0)
    np.testing.assert_allclose(_dense(ops.IndexedSlicesValue(g.values.numpy(), g.indices.numpy(), None),
                                      TABLE.shape), want)


def test_lookup_sparse_errors():
    with pytest.raises(ValueError, match="combiner"):
        embedding_ops.embedding_lookup_sparse(TABLE, _sp(SP_IDS), None, combiner="max")
    with pytest.raises(TypeError, match="sp_ids"):
        embedding_ops.embedding_lookup_sparse(TABLE, SP_IDS, None)


def test_safe_lookup_sparse_drops_invalid_and_pads(mode):
    ids = SparseTensor([[0, 0], [0, 1], [2, 0]], np.array([1, -1, 4], np.int64), [4, 2])
    got = mode.evaluate(embedding_ops.safe_embedding_lookup_sparse(TABLE, ids, combiner="sum"))
    np.testing.assert_allclose(got, [TABLE[1], np.zeros(3), TABLE[4], np.zeros(3)])


def test_safe_lookup_sparse_v2_partitions_by_div(mode):
    # Two shards of a 5-row table by "div": rows 0-2 and 3-4; ids 4 and 1, a dropped -1, a mean.
    table = TABLE[:5]
    shards = [sf.constant(table[:3]), sf.constant(table[3:])]
    ids = SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1]], np.array([4, 1, -1, 3], np.int64), [3, 2])
    got = mode.evaluate(embedding_ops.safe_embedding_lookup_sparse_v2(shards, ids, combiner="mean"))
    np.testing.assert_allclose(got, [(table[4] + table[1]) / 2, table[3], np.zeros(3)])


# -- SparseTensor


def test_sparse_to_dense_and_back(mode):
    sp = SparseTensor([[0, 1], [2, 0]], np.array([5.0, 7.0]), [3, 2])
    assert sp.shape.as_list() == [3, 2] and sp.dtype == sf.float64
    np.testing.assert_array_equal(mode.evaluate(to_dense(sp)), [[0, 5], [0, 0], [7, 0]])
    np.testing.assert_array_equal(mode.evaluate(to_dense(sp, default_value=-1.0)), [[-1, 5], [-1, -1], [7, -1]])
    back = from_dense(np.array([[0.0, 2.0], [3.0, 0.0]]))
    idx, vals, shape = mode.evaluate([back.indices, back.values, back.dense_shape])
    np.testing.assert_array_equal(idx, [[0, 1], [1, 0]])
    np.testing.assert_array_equal(vals, [2.0, 3.0])
    np.testing.assert_array_equal(shape, [2, 2])


def test_sparse_to_dense_gradient(mode):
    check_gradients(mode, lambda v: to_dense(SparseTensor([[0, 1], [2, 0]], v, [3, 2])) * 3.0,
                    [np.array([5.0, 7.0])])


def test_sparse_tensor_checks():
    with pytest.raises(ValueError, match="matrix"):
        SparseTensor([0, 1], [1.0, 2.0], [3])
    assert array_ops is not None

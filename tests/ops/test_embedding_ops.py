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
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = 11 is not in \[0, 11\)"):
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


# -- ragged ids (embedding_lookup, embedding_lookup_sparse, safe_embedding_lookup_sparse)

RT = sf.RaggedTensor
RAGGED_ROWS = [[3, 7, 3], [], [10], [0, 5]]          # the rows of SP_IDX / SP_IDS
RAGGED_W = [[1.0, 2.0, 0.5], [], [3.0], [-1.0, 4.0]]


def _ragged(rows, dtype):
    return sf.ragged.constant(rows, dtype=dtype)


def _value(mode, x):
    if isinstance(x, RT):
        return x.to_list() if mode.eager else mode.session.run(x).to_list()
    return mode.evaluate(x)


@pytest.mark.parametrize("n,strategy", [(1, "mod"), (3, "mod"), (2, "div")])
def test_lookup_ragged_ids_gives_ragged_rows(mode, n, strategy):
    ids = _ragged(RAGGED_ROWS, sf.int64)
    parts = [sf.constant(p) for p in split_table(TABLE, n, strategy)]
    out = embedding_ops.embedding_lookup(parts if n > 1 else parts[0], ids, partition_strategy=strategy)
    assert isinstance(out, RT) and out.ragged_rank == 1
    got = _value(mode, out)
    assert len(got) == 4 and got[1] == []
    for g, r in zip(got, RAGGED_ROWS):
        np.testing.assert_array_equal(np.reshape(g, (-1, 3)), TABLE[r].reshape(-1, 3))
    np.testing.assert_array_equal(mode.evaluate(out.row_splits), [0, 3, 3, 4, 6])


def test_lookup_ragged_ids_nested_max_norm_and_gradient(mode):
    ids = sf.ragged.constant([[[1, 2], []], [[4]]])
    out = embedding_ops.embedding_lookup(TABLE, ids, max_norm=1.0)
    assert out.ragged_rank == 2
    np.testing.assert_allclose(mode.evaluate(out.flat_values), ref_clip(TABLE[[1, 2, 4]], 1.0))
    check_gradients(mode, lambda t: embedding_ops.embedding_lookup(t, ids).flat_values * 2.0, [TABLE])
    check_gradients(mode, lambda t: embedding_ops.embedding_lookup_v2(t, ids, max_norm=0.9).flat_values, [TABLE])


@pytest.mark.parametrize("n", [1, 2])
def test_lookup_and_transform(mode, n):
    parts = [sf.constant(p) for p in split_table(TABLE, n, "div")]
    params = parts if n > 1 else parts[0]
    # the transform sees the clipped rows of each partition; the result is put back in id order
    out = embedding_ops._embedding_lookup_and_transform(params, IDS, "div", max_norm=1.5,
                                                        transform_fn=lambda rows: sf.reduce_sum(rows, -1, True) * 10.0)
    np.testing.assert_allclose(mode.evaluate(out), ref_clip(TABLE[IDS], 1.5).sum(-1, keepdims=True) * 10.0)
    if not mode.eager:    # the transformed rows' shape, not the tables'
        assert out.shape.as_list() == [2, 3, 1]
    plain = embedding_ops._embedding_lookup_and_transform(params, IDS, "div")
    np.testing.assert_array_equal(mode.evaluate(plain), TABLE[IDS])


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("weighted", [True, False])
def test_lookup_sparse_ragged_ids_and_weights(mode, combiner, weighted):
    weights = SP_W if weighted else np.ones(len(SP_IDS))
    rw = _ragged(RAGGED_W, sf.float64) if weighted else None
    out = embedding_ops.embedding_lookup_sparse(TABLE, _ragged(RAGGED_ROWS, sf.int64), rw, combiner=combiner)
    np.testing.assert_allclose(mode.evaluate(out), ref_lookup_sparse(TABLE, weights, combiner), rtol=1e-12)
    out2 = embedding_ops.embedding_lookup_sparse_v2(TABLE, _ragged(RAGGED_ROWS, sf.int64), rw, combiner=combiner,
                                                    allow_fast_lookup=True)
    np.testing.assert_allclose(mode.evaluate(out2), ref_lookup_sparse(TABLE, weights, combiner), rtol=1e-12)


def test_lookup_sparse_ragged_gradient(mode):
    ids, w = _ragged(RAGGED_ROWS, sf.int64), _ragged(RAGGED_W, sf.float64)
    check_gradients(mode, lambda t: embedding_ops.embedding_lookup_sparse(t, ids, w, combiner="sqrtn"), [TABLE])


def test_lookup_sparse_kinds_and_shapes_must_agree():
    rids, rw = _ragged(RAGGED_ROWS, sf.int64), _ragged(RAGGED_W, sf.float64)
    for f in (embedding_ops.embedding_lookup_sparse, embedding_ops.safe_embedding_lookup_sparse):
        with pytest.raises(TypeError, match="same type"):
            f(TABLE, rids, _sp(SP_W))
        with pytest.raises(TypeError, match="SparseTensor"):
            f(TABLE, _sp(SP_IDS), rw)
        with pytest.raises(TypeError, match="same type"):
            f(TABLE, rids, np.ones(6))
        with pytest.raises(ValueError, match="incompatible"):
            f(TABLE, rids, _ragged([[1.0, 2.0], [], [3.0], [4.0]], sf.float64))
        with pytest.raises(ValueError, match="incompatible"):
            f(TABLE, _sp(SP_IDS), SparseTensor(SP_IDX[:5], SP_W[:5], [4, 3]))
        with pytest.raises(ValueError, match="incompatible"):
            f(TABLE, _sp(SP_IDS), SparseTensor(SP_IDX[:, :1], SP_W, [4]))


def ref_safe(table, idx, ids, weights, dense_shape, combiner, default_id=None, max_norm=None):
    """TF's rule cell by cell: ids < 0 dropped, weights <= 0 dropped unless combiner is "sum", a
    cell left empty gets table[default_id] (clipped too) or 0."""
    def clip(rows):
        return rows if max_norm is None else ref_clip(rows.reshape(len(rows), -1), max_norm).reshape(rows.shape)

    lead = tuple(dense_shape[:-1])
    out = np.zeros(lead + table.shape[1:])
    weights = np.ones(len(ids)) if weights is None else weights
    for cell in np.ndindex(*lead):
        kept = [(i, w) for ix, i, w in zip(idx, ids, weights)
                if tuple(ix[:-1]) == cell and i >= 0 and (combiner == "sum" or w > 0)]
        if not kept:
            out[cell] = 0.0 if default_id is None else clip(table[[default_id]])[0]
            continue
        rows = clip(table[[i for i, _ in kept]])
        w = np.array([w for _, w in kept]).reshape((-1,) + (1,) * (table.ndim - 1))
        total = (rows * w).sum(0)
        div = {"sum": 1.0, "mean": w.sum(), "sqrtn": np.sqrt((w * w).sum())}[combiner]
        out[cell] = total / div if div != 0 else 0.0
    return out


# ids of rank 3: [2, 2, 3] (cells (0,0), (0,1), (1,0), (1,1)); cell (1,0) holds only a -1, cell
# (0,1) only a zero weight, cell (1,1) nothing
S3_IDX = np.array([[0, 0, 0], [0, 0, 2], [0, 1, 0], [1, 0, 1]])
S3_IDS = np.array([2, 9, 5, -1], np.int64)
S3_W = np.array([0.5, 2.0, 0.0, 1.0])


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("default_id", [None, 4])
def test_safe_lookup_rank_3_ids_and_weight_pruning(mode, combiner, default_id):
    ids = SparseTensor(S3_IDX, S3_IDS, [2, 2, 3])
    w = SparseTensor(S3_IDX, S3_W, [2, 2, 3])
    out = embedding_ops.safe_embedding_lookup_sparse(TABLE, ids, w, combiner=combiner, default_id=default_id)
    want = ref_safe(TABLE, S3_IDX, S3_IDS, S3_W, [2, 2, 3], combiner, default_id)
    got = mode.evaluate(out)
    assert got.shape == (2, 2, 3)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    if not mode.eager:
        assert out.shape.as_list()[-1] == 3 and out.shape.rank == 3
    # the zero weight is kept by "sum" (cell (0,1) is 0 * table[5]) and pruned otherwise
    if combiner == "sum":
        np.testing.assert_array_equal(got[0, 1], 0.0)
    elif default_id is not None:
        np.testing.assert_array_equal(got[0, 1], TABLE[default_id])


@pytest.mark.parametrize("combiner", ["sum", "mean"])
def test_safe_lookup_default_id_is_clipped_and_fills_every_embedding_dim(mode, combiner):
    table3 = np.arange(44, dtype=np.float64).reshape(11, 2, 2) / 10.0
    ids = SparseTensor([[0, 0], [0, 1], [2, 0]], np.array([1, -1, 7], np.int64), [4, 2])
    out = embedding_ops.safe_embedding_lookup_sparse(table3, ids, combiner=combiner, default_id=9, max_norm=2.0)
    idx, vals = np.array([[0, 0], [0, 1], [2, 0]]), np.array([1, -1, 7])
    want = ref_safe(table3, idx, vals, None, [4, 2], combiner, 9, 2.0)
    np.testing.assert_allclose(mode.evaluate(out), want, rtol=1e-12)
    out = embedding_ops.safe_embedding_lookup_sparse_v2(TABLE, ids, combiner=combiner, default_id=9, max_norm=2.0)
    want = ref_safe(TABLE, idx, vals, None, [4, 2], combiner, 9, 2.0)
    np.testing.assert_allclose(mode.evaluate(out), want, rtol=1e-12)


@pytest.mark.parametrize("strategy", ["div", "mod"])
def test_safe_lookup_ragged_and_partitioned(mode, strategy):
    parts = [sf.constant(p) for p in split_table(TABLE, 3, strategy)]
    rows = [[3, -1, 3], [], [10], [0, 5]]
    wrows = [[1.0, 2.0, 0.5], [], [3.0], [-1.0, 4.0]]
    out = embedding_ops.safe_embedding_lookup_sparse(parts, _ragged(rows, sf.int64), _ragged(wrows, sf.float64),
                                                     combiner="mean", partition_strategy=strategy,
                                                     allow_fast_lookup=True)
    sp = _ragged(rows, sf.int64).to_sparse()
    idx, vals = (sp.indices.numpy(), sp.values.numpy()) if mode.eager else mode.session.run([sp.indices, sp.values])
    want = ref_safe(TABLE, idx, vals, np.concatenate(wrows), [4, 3], "mean")
    np.testing.assert_allclose(mode.evaluate(out), want, rtol=1e-12)


def test_safe_lookup_gradient_rank_3(mode):
    ids = SparseTensor(S3_IDX, S3_IDS, [2, 2, 3])
    w = SparseTensor(S3_IDX, S3_W, [2, 2, 3])
    check_gradients(mode, lambda t: embedding_ops.safe_embedding_lookup_sparse(t, ids, w, combiner="sum",
                                                                               default_id=1), [TABLE])
    check_gradients(mode, lambda t: embedding_ops.safe_embedding_lookup_sparse_v2(t, ids, w, combiner="sqrtn"),
                    [TABLE])


def test_safe_lookup_table_dtypes(mode):
    ids = SparseTensor([[0, 0], [1, 0]], np.array([1, 2], np.int64), [2, 1])
    w32 = SparseTensor([[0, 0], [1, 0]], np.array([2.0, 1.0], np.float32), [2, 1])
    # a NumPy table takes the weights' dtype
    out = embedding_ops.safe_embedding_lookup_sparse(TABLE, ids, w32, combiner="sum")
    assert out.dtype == sf.float32
    np.testing.assert_allclose(mode.evaluate(out), [2 * TABLE[1], TABLE[2]], rtol=1e-6)
    with pytest.raises(ValueError):       # a float64 tensor cannot become float32
        embedding_ops.safe_embedding_lookup_sparse(sf.constant(TABLE), ids, w32)
    v = sf.Variable(TABLE)
    with pytest.raises(ValueError, match="dtype"):
        embedding_ops.safe_embedding_lookup_sparse(v, ids, w32)
    with pytest.raises(TypeError, match="same dtype"):
        embedding_ops.safe_embedding_lookup_sparse([sf.constant(TABLE[:6]), sf.constant(TABLE[6:].astype(np.float32))],
                                                   ids)
    with pytest.raises(ValueError, match="Missing embedding_weights"):
        embedding_ops.safe_embedding_lookup_sparse([], ids)
    with pytest.raises(ValueError, match="Missing embedding_weights"):
        embedding_ops.safe_embedding_lookup_sparse(None, ids)


def test_safe_lookup_variable_tables(mode):
    shards = [sf.Variable(p) for p in split_table(TABLE, 2, "div")]
    _init(mode)
    ids = SparseTensor([[0, 0], [0, 1], [2, 0]], np.array([9, 1, -4], np.int64), [3, 2])
    out = embedding_ops.safe_embedding_lookup_sparse(shards, ids, combiner="sqrtn", default_id=0)
    np.testing.assert_allclose(mode.evaluate(out), [(TABLE[9] + TABLE[1]) / np.sqrt(2), TABLE[0], TABLE[0]])


@pytest.mark.parametrize("ids_shape", [(), (3,), (4, 3), (2, 3, 4)])
@pytest.mark.parametrize("shards", [1, 2, 3])
def test_lookup_and_transform_sees_rows_for_any_id_rank(ids_shape, shards):
    """transform_fn gets [n, ...] rows (the ids flattened) whatever the ids' rank, as in TF, and
    the result is ids.shape + the transformed row shape."""
    from segflow.ops import embedding_ops
    rng = np.random.default_rng(8)
    params = rng.random((6, 3)) + 2.0
    norms = np.linalg.norm(params * (2.0 / np.linalg.norm(params, axis=1, keepdims=True)), axis=1)
    ids = rng.integers(0, 6, size=int(np.prod(ids_shape, dtype=np.int64))).reshape(ids_shape)
    if shards == 1:
        tables = params
    else:   # "mod" partitions: shard p holds rows p, p + shards, ...
        tables = [params[p::shards] for p in range(shards)]
    got = embedding_ops._embedding_lookup_and_transform(tables, ids, max_norm=2.0,
                                                          transform_fn=lambda x: sf.norm(x, axis=1))
    np.testing.assert_allclose(got.numpy(), norms[ids], rtol=1e-12)
    assert got.shape.as_list() == list(ids_shape)

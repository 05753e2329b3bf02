"""RaggedTensor (segflow._ops.ragged*): every row-partition factory, from_tensor / from_sparse /
to_sparse / to_tensor, indexing, operators, constant / constant_value, the segment-id ops, the ragged
reductions, boolean_mask, range, stack_dynamic_partitions and map_flat_values. Values against
hand-worked numbers or NumPy over Python lists, eagerly and in a graph (Session.run of a RaggedTensor
gives a RaggedTensorValue); gradients through the conversions and reductions against numerical
Jacobians; bad row partitions and ids raise InvalidArgumentError naming the problem."""
import numpy as np
import pytest

import segflow as sf
from segflow.framework import errors
from segflow.client.session import Session
from segflow.ops.ragged import ragged_factory_ops, ragged_math_ops, ragged_tensor, segment_id_ops
from segflow.ops.ragged import ragged_array_ops, ragged_functional_ops, ragged_tensor_value
from segflow._ops.sparse_tensor import SparseTensor, SparseTensorValue
from gradcheck import check_gradients

RT = sf.RaggedTensor
RaggedTensorValue = sf.ragged.RaggedTensorValue


def value(mode, x, feed=None):
    """Nested lists (a RaggedTensor) or a NumPy array (a tensor), eagerly or through the Session."""
    if isinstance(x, RT):
        if mode.eager:
            return x.to_list()
        v = mode.session.run(x, feed)
        assert isinstance(v, RaggedTensorValue)
        return v.to_list()
    return mode.evaluate(x) if feed is None else mode.session.run(x, feed)


def same(got, want):
    """Nested lists / arrays equal, leaf by leaf (NaN equals NaN), same nesting."""
    if isinstance(want, (list, tuple)) and (not want or isinstance(want[0], (list, tuple))):
        assert isinstance(got, (list, tuple, np.ndarray)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            same(g, w)
        return
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(want, np.float64), rtol=1e-6, atol=1e-6,
                               equal_nan=True)
    assert np.shape(got) == np.shape(want), (got, want)


ROWS = [[3, 1, 4], [1, 5], [], [2, 6]]            # TF's docstring tensor, with an empty row
FLAT = np.array([3, 1, 4, 1, 5, 2, 6])
SPLITS = np.array([0, 3, 5, 5, 7])


# ----------------------------------------------------------------------------------------------
# factories


def test_every_row_partition_factory_gives_the_same_rows(mode):
    rts = [RT.from_row_splits(FLAT, SPLITS), RT.from_row_lengths(FLAT, [3, 2, 0, 2]),
           RT.from_value_rowids(FLAT, [0, 0, 0, 1, 1, 3, 3]), RT.from_value_rowids(FLAT, [0, 0, 0, 1, 1, 3, 3], 4),
           RT.from_row_starts(FLAT, [0, 3, 5, 5]), RT.from_row_limits(FLAT, [3, 5, 5, 7])]
    for rt in rts:
        assert rt.ragged_rank == 1 and rt.dtype == sf.int64 and rt.row_splits.dtype == sf.int64
        assert rt.shape.as_list()[1] is None
    got = [value(mode, rt) for rt in rts]
    for g in got:
        assert g == ROWS
    parts = mode.evaluate([rts[1].row_splits, rts[2].nrows(), rts[3].row_lengths(), rts[4].value_rowids(),
                           rts[5].row_starts(), rts[0].row_limits()])
    for g, w in zip(parts, [SPLITS, 4, [3, 2, 0, 2], [0, 0, 0, 1, 1, 3, 3], [0, 3, 5, 5], [3, 5, 5, 7]]):
        np.testing.assert_array_equal(g, w)


def test_value_rowids_with_trailing_empty_rows_and_int32(mode):
    rt = RT.from_value_rowids(np.array([1.0, 2.0, 3.0]), np.array([1, 1, 3], np.int32), nrows=6)
    assert rt.row_splits.dtype == sf.int32
    assert value(mode, rt) == [[], [1.0, 2.0], [], [3.0], [], []]


def test_uniform_row_length(mode):
    assert value(mode, RT.from_uniform_row_length(np.arange(6), 2)) == [[0, 1], [2, 3], [4, 5]]
    assert value(mode, RT.from_uniform_row_length(np.zeros(0), 0, nrows=3)) == [[], [], []]
    rt = RT.from_uniform_row_length(np.arange(6).reshape(3, 2), 3)     # rows of 2-vectors
    assert value(mode, rt) == [[[0, 1], [2, 3], [4, 5]]]
    with pytest.raises(errors.InvalidArgumentError, match=r"last row split \(6\) must equal the number of values \(7\)"):
        value(mode, RT.from_uniform_row_length(np.arange(7), 2))


def test_nested_factories(mode):
    want = [[[1], []], [[2, 3, 4]]]
    rts = [RT.from_nested_row_splits([1, 2, 3, 4], [[0, 2, 3], [0, 1, 1, 4]]),
           RT.from_nested_row_lengths([1, 2, 3, 4], [[2, 1], [1, 0, 3]]),
           RT.from_nested_value_rowids([1, 2, 3, 4], [[0, 0, 1], [0, 2, 2, 2]]),
           RT.from_nested_value_rowids([1, 2, 3, 4], [[0, 0, 1], [0, 2, 2, 2]], [2, 3])]
    for rt in rts:
        assert rt.ragged_rank == 2 and rt.shape.rank == 3
        assert value(mode, rt) == want
    rt = rts[0]
    got = mode.evaluate(list(rt.nested_row_splits) + [rt.flat_values] + list(rt.nested_row_lengths())
                        + list(rt.nested_value_rowids()) + [rt.row_lengths(axis=0)])
    for g, w in zip(got, [[0, 2, 3], [0, 1, 1, 4], [1, 2, 3, 4], [2, 1], [1, 0, 3], [0, 0, 1], [0, 2, 2, 2], 2]):
        np.testing.assert_array_equal(g, w)
    assert value(mode, rt.row_lengths(axis=2)) == [[1, 0], [3]]
    with pytest.raises(TypeError, match="list of Tensors"):
        RT.from_nested_row_splits([1, 2], np.array([[0, 2]]))
    with pytest.raises(ValueError, match="same length"):
        RT.from_nested_value_rowids([1, 2], [[0, 0]], [1, 2])


def test_constructor_is_private_and_split_dtypes_must_agree():
    with pytest.raises(ValueError, match="private"):
        RT(np.array([1]), np.array([0, 1]))
    inner = RT.from_row_splits([1, 2], np.array([0, 2], np.int32))
    with pytest.raises(ValueError, match="dtype mismatch"):
        RT.from_row_splits(inner, np.array([0, 1], np.int64))
    fixed = RT.from_row_splits(inner.with_row_splits_dtype(sf.int64), np.array([0, 1], np.int64))
    assert fixed.to_list() == [[[1, 2]]]
    both32 = fixed.with_row_splits_dtype("int32")
    assert [s.dtype for s in both32.nested_row_splits] == [sf.int32, sf.int32]
    with pytest.raises(ValueError, match="int32 or int64"):
        fixed.with_row_splits_dtype(sf.float32)
    with pytest.raises(TypeError, match="row_splits must be int32 or int64"):
        RT.from_row_splits([1.0], np.array([0.0, 1.0]))


# ----------------------------------------------------------------------------------------------
# bad row partitions


BAD_SPLITS = [([1, 3], "must start with 0, got 1"),
              ([0, 2, 1, 3], r"must not decrease, but row_splits\[2\] = 1 < row_splits\[1\] = 2"),
              ([0, 2], r"the last row split \(2\) must equal the number of values \(3\)"),
              ([0, 1, 4], r"the last row split \(4\) must equal the number of values \(3\)")]


@pytest.mark.parametrize("splits,message", BAD_SPLITS)
def test_bad_row_splits_raise_at_construction(mode, splits, message):
    with pytest.raises(errors.InvalidArgumentError, match=message):
        value(mode, RT.from_row_splits(np.array([1.0, 2.0, 3.0]), splits))


@pytest.mark.parametrize("splits,message", BAD_SPLITS)
def test_bad_row_splits_fed_at_run_time_raise_when_run(splits, message):
    with sf.Graph().as_default(), Session() as sess:
        s = sf.placeholder(sf.int64, [None])
        v = sf.placeholder(sf.float64, [None])
        rt = RT.from_row_splits(v, s)
        good = sess.run(rt, {s: [0, 1, 3], v: [1.0, 2.0, 3.0]})
        assert good.to_list() == [[1.0], [2.0, 3.0]]
        with pytest.raises(errors.InvalidArgumentError, match="RaggedValidateRowSplits.*" + message):
            sess.run(rt, {s: splits, v: [1.0, 2.0, 3.0]})
        # validate=False skips the check (TF's contract: the caller vouches for the partition)
        unchecked = RT.from_row_splits(v, s, validate=False)
        assert unchecked.row_splits is s


def test_negative_row_lengths_and_unsorted_rowids(mode):
    with pytest.raises(errors.InvalidArgumentError, match="non-negative|must not decrease"):
        value(mode, RT.from_row_lengths([1, 2, 3], [2, -1, 2]))
    with pytest.raises(errors.InvalidArgumentError, match=r"must be sorted, but segment_ids\[2\] = 0"):
        value(mode, RT.from_value_rowids([1, 2, 3], [0, 1, 0]))
    with pytest.raises(errors.InvalidArgumentError, match=r"segment_ids\[2\] = 3 is not in \[0, 2\)"):
        value(mode, RT.from_value_rowids([1, 2, 3], [0, 1, 3], nrows=2))


# ----------------------------------------------------------------------------------------------
# segment ids <-> row splits


def test_row_splits_to_segment_ids(mode):
    got = mode.evaluate([sf.ragged.row_splits_to_segment_ids([0, 2, 2, 3]),
                         sf.ragged.row_splits_to_segment_ids(np.array([0, 0, 0], np.int32)),
                         sf.ragged.row_splits_to_segment_ids([0], out_type=sf.int32)])
    np.testing.assert_array_equal(got[0], [0, 0, 2])
    assert got[0].dtype == np.int64 and got[1].dtype == np.int32 and got[2].dtype == np.int32
    assert got[1].shape == (0,) and got[2].shape == (0,)


def test_segment_ids_to_row_splits(mode):
    f = sf.ragged.segment_ids_to_row_splits
    got = mode.evaluate([f([0, 0, 2]), f([0, 0, 2], num_segments=5), f(np.array([1, 1], np.int32)),
                         f([], num_segments=2), f([3], out_type=sf.int32)])
    for g, w in zip(got, [[0, 2, 2, 3], [0, 2, 2, 3, 3, 3], [0, 0, 2], [0, 0, 0], [0, 0, 0, 0, 1]]):
        np.testing.assert_array_equal(g, w)
    assert got[0].dtype == np.int64 and got[2].dtype == np.int32 and got[4].dtype == np.int32


@pytest.mark.parametrize("ids,n,message", [
    ([0, 2, 1], None, r"must be sorted, but segment_ids\[2\] = 1 < segment_ids\[1\] = 2"),
    ([0, 2, 5], 3, r"segment_ids\[2\] = 5 is not in \[0, 3\)"),
    ([-1, 2], 3, r"segment_ids\[0\] = -1 is not in \[0, 3\)"),
])
def test_segment_ids_to_row_splits_errors(mode, ids, n, message):
    with pytest.raises(errors.InvalidArgumentError, match="RaggedSegmentIdsToRowSplits.*" + message):
        mode.evaluate(sf.ragged.segment_ids_to_row_splits(ids, n))


def test_row_splits_to_segment_ids_errors(mode):
    with pytest.raises(errors.InvalidArgumentError, match="must start with 0"):
        mode.evaluate(sf.ragged.row_splits_to_segment_ids([1, 2]))
    with pytest.raises(errors.InvalidArgumentError, match="must not decrease"):
        mode.evaluate(sf.ragged.row_splits_to_segment_ids([0, 2, 1]))
    with pytest.raises(TypeError, match="int32 or int64"):
        sf.ragged.row_splits_to_segment_ids([0.0, 1.0])


# ----------------------------------------------------------------------------------------------
# from_tensor / from_sparse / to_sparse / to_tensor


def ref_from_tensor(t, lengths=None, padding=None):
    """TF's documented rule, row by row: cut row i to lengths[i] (clipped to [0, ncols]), or to one
    past its last element (an inner slice, for rank > 2) that differs from padding."""
    rows = []
    for i, row in enumerate(t):
        if lengths is not None:
            n = min(max(int(lengths[i]), 0), len(row))
        elif padding is not None:
            differs = [not np.all(np.asarray(x) == padding) for x in row]
            n = max([j + 1 for j, d in enumerate(differs) if d], default=0)
        else:
            n = len(row)
        rows.append(np.asarray(row[:n]).tolist())
    return rows


T2 = np.array([[1, 0, 2, 0, 0], [0, 0, 0, 0, 0], [3, 3, 3, 3, 3], [0, 4, 0, 0, 0]])
T3 = np.array([[[1, 0], [0, 0], [0, 0]], [[0, 0], [0, 2], [0, 0]], [[0, 0], [0, 0], [0, 0]]])


def test_from_tensor_cases(mode):
    cases = [(T2, {}), (T2, dict(lengths=[2, -1, 9, 3])), (T2, dict(padding=0)), (T2, dict(padding=3)),
             (T3, dict(padding=0)), (T3, dict(padding=[0, 0])), (T3, dict(lengths=[1, 3, 0])),
             (T3.astype(np.float32), dict(padding=np.float32(0)))]
    rts = [RT.from_tensor(t, **kw) for t, kw in cases]
    for rt, (t, kw) in zip(rts, cases):
        assert value(mode, rt) == ref_from_tensor(t, **kw), kw
        assert rt.dtype == sf.as_dtype(t.dtype)


def test_from_tensor_vector_padding_needs_the_whole_slice(mode):
    # [0, 5] is not padding [0, 0] although one element is
    t = np.array([[[1, 1], [0, 5], [0, 0]]])
    assert value(mode, RT.from_tensor(t, padding=[0, 0])) == [[[1, 1], [0, 5]]]
    assert value(mode, RT.from_tensor(t, padding=[0, 5])) == [[[1, 1], [0, 5], [0, 0]]]


def test_from_tensor_with_no_columns_or_rows(mode):
    assert value(mode, RT.from_tensor(np.zeros((2, 0)), padding=0.0)) == [[], []]
    assert value(mode, RT.from_tensor(np.zeros((2, 0)), lengths=[3, 1])) == [[], []]
    assert value(mode, RT.from_tensor(np.zeros((0, 3)))) == []


def test_from_tensor_ragged_rank_2(mode):
    t = np.array([[[1, 0], [0, 0]], [[0, 2], [3, 0]]])
    assert value(mode, RT.from_tensor(t, ragged_rank=2)) == t.tolist()
    assert value(mode, RT.from_tensor(t, padding=0, ragged_rank=2)) == [[[1], []], [[0, 2], [3]]]
    t3 = np.arange(12).reshape(2, 2, 3)
    rt = RT.from_tensor(t3, lengths=[1, 2, 3, 0], ragged_rank=2)     # lengths of the innermost rows
    assert rt.ragged_rank == 2
    assert value(mode, rt) == [[[0], [3, 4]], [[6, 7, 8], []]]
    rt32 = RT.from_tensor(t3, ragged_rank=2, row_splits_dtype=sf.int32)
    assert [s.dtype for s in rt32.nested_row_splits] == [sf.int32, sf.int32]


def test_from_tensor_errors():
    with pytest.raises(ValueError, match="lengths or padding"):
        RT.from_tensor(T2, lengths=[1, 1, 1, 1], padding=0)
    with pytest.raises(ValueError, match="ragged_rank"):
        RT.from_tensor(T2, ragged_rank=2)
    with pytest.raises(ValueError, match="ragged_rank"):
        RT.from_tensor(T2, ragged_rank=0)


def test_from_sparse(mode):
    st = SparseTensor([[0, 0], [0, 1], [2, 0], [2, 1], [2, 2]], np.array([1.0, 2.0, 3.0, 4.0, 5.0]), [4, 5])
    rt = RT.from_sparse(st)
    assert value(mode, rt) == [[1.0, 2.0], [], [3.0, 4.0, 5.0], []]
    assert value(mode, RT.from_sparse(SparseTensor(np.zeros((0, 2), np.int64), np.zeros(0), [2, 3]))) == [[], []]
    assert RT.from_sparse(st, row_splits_dtype=sf.int32).row_splits.dtype == sf.int32
    with pytest.raises(ValueError, match=r"rank\(st_input\) must be 2"):
        RT.from_sparse(SparseTensor([[0, 0, 0]], [1.0], [1, 1, 1]))
    with pytest.raises(ValueError, match=r"rank\(st_input\) must be 2"):
        RT.from_sparse(SparseTensor([[0]], [1.0], [3]))
    with pytest.raises(TypeError, match="SparseTensor"):
        RT.from_sparse(np.ones((2, 2)))


@pytest.mark.parametrize("indices,message", [
    ([[0, 0], [0, 2]], r"not ragged-right.*indices\[1\] = \[0, 2\], expected column 1"),
    ([[0, 1]], r"indices\[0\] = \[0, 1\], expected column 0"),
    ([[1, 0], [0, 0]], r"indices\[1\] = \[0, 0\].*of a later row"),
])
def test_from_sparse_needs_ragged_right_indices(mode, indices, message):
    st = SparseTensor(indices, np.ones(len(indices)), [2, 3])
    with pytest.raises(errors.InvalidArgumentError, match="RaggedCheckRaggedRight.*" + message):
        value(mode, RT.from_sparse(st))


def test_to_sparse_and_back(mode):
    rt = sf.ragged.constant([[[1.0], [2.0, 3.0]], [], [[4.0]]])
    back = RT.from_nested_row_splits(rt.flat_values, rt.nested_row_splits)
    assert value(mode, back) == value(mode, rt)
    flat = sf.ragged.constant(ROWS)
    assert value(mode, RT.from_sparse(flat.to_sparse())) == ROWS


def test_to_sparse(mode):
    rt = sf.ragged.constant(ROWS)
    sp = rt.to_sparse()
    idx, vals, shape = mode.evaluate([sp.indices, sp.values, sp.dense_shape])
    np.testing.assert_array_equal(idx, [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [3, 0], [3, 1]])
    np.testing.assert_array_equal(vals, FLAT)
    np.testing.assert_array_equal(shape, [4, 3])
    got = value(mode, sp) if not mode.eager else sp.numpy()
    assert isinstance(got, SparseTensorValue)
    np.testing.assert_array_equal(got.values, FLAT)


def test_to_sparse_nested_and_inner_dims(mode):
    rt = sf.ragged.constant([[[1, 2], []], [], [[3]]])
    idx, vals, shape = mode.evaluate(list(rt.to_sparse()._fetch_parts()[0]))
    np.testing.assert_array_equal(idx, [[0, 0, 0], [0, 0, 1], [2, 0, 0]])
    np.testing.assert_array_equal(vals, [1, 2, 3])
    np.testing.assert_array_equal(shape, [3, 2, 2])
    rt = sf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)     # rows of 2-vectors
    idx, vals, shape = mode.evaluate(list(rt.to_sparse()._fetch_parts()[0]))
    np.testing.assert_array_equal(idx, [[0, 0, 0], [0, 0, 1], [0, 1, 0], [0, 1, 1], [1, 0, 0], [1, 0, 1]])
    np.testing.assert_array_equal(vals, [1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(shape, [2, 2, 2])


def ref_to_tensor(rows, fill=0, shape=None):
    width = max((len(r) for r in rows), default=0)
    shape = [len(rows), width] if shape is None else [
        len(rows) if shape[0] is None else shape[0], width if shape[1] is None else shape[1]]
    out = np.full(shape, fill, np.float64)
    for i, r in enumerate(rows[:shape[0]]):
        n = min(len(r), shape[1])
        out[i, :n] = r[:n]
    return out


def test_to_tensor(mode):
    rt = sf.ragged.constant(ROWS, dtype=sf.float32)
    shapes = [None, [2, 5], [None, 2], [6, None], (3, 3), sf.TensorShape([5, 1])]
    outs = [rt.to_tensor()] + [rt.to_tensor(shape=s) for s in shapes[1:]] + [rt.to_tensor(default_value=-1)]
    got = mode.evaluate(outs)
    for g, s in zip(got, shapes):
        want = ref_to_tensor(ROWS, shape=None if s is None else list(s))
        assert g.dtype == np.float32
        np.testing.assert_array_equal(g, want, err_msg=str(s))
    np.testing.assert_array_equal(got[-1], ref_to_tensor(ROWS, fill=-1))
    if not mode.eager:     # what is known statically: at least the row count and the given sizes
        assert outs[0].shape.rank == 2 and outs[0].shape.is_compatible_with([4, 3])
        assert outs[0].shape.as_list()[0] == 4
        assert outs[1].shape.as_list() == [2, 5]
        assert outs[2].shape.as_list() == [4, 2]


def test_to_tensor_nested_inner_dims_and_vector_default(mode):
    rt = sf.ragged.constant([[[1, 2], []], [], [[3]]])
    np.testing.assert_array_equal(mode.evaluate(rt.to_tensor(default_value=9)),
                                  [[[1, 2], [9, 9]], [[9, 9], [9, 9]], [[3, 9], [9, 9]]])
    rt = sf.ragged.constant([[[1.0, 2.0]], []], ragged_rank=1)
    np.testing.assert_array_equal(mode.evaluate(rt.to_tensor(default_value=[7.0, 8.0])), [[[1, 2]], [[7, 8]]])
    empty = sf.ragged.constant([[], []])
    assert mode.evaluate(empty.to_tensor()).shape == (2, 0)


def test_bounding_shape(mode):
    rt = sf.ragged.constant([[[1, 2], [3]], [], [[4, 5, 6]]])
    got = mode.evaluate([rt.bounding_shape(), rt.bounding_shape(axis=2), rt.bounding_shape(out_type=sf.int32),
                         sf.ragged.constant([[], []]).bounding_shape(),
                         sf.ragged.constant([[[1, 2]], []], ragged_rank=1).bounding_shape()])
    np.testing.assert_array_equal(got[0], [3, 2, 3])
    assert got[1] == 3 and got[2].dtype == np.int32
    np.testing.assert_array_equal(got[3], [2, 0])
    np.testing.assert_array_equal(got[4], [2, 1, 2])


# ----------------------------------------------------------------------------------------------
# Session.run, to_list, numpy


def test_session_run_returns_ragged_tensor_values_in_structures():
    with sf.Graph().as_default(), Session() as sess:
        v = sf.placeholder(sf.float32, [None])
        rt = RT.from_row_lengths(v, [2, 0, 1])
        nested = RT.from_row_lengths(rt, [1, 2])
        out = sess.run({"a": rt, "b": [nested, rt.row_lengths()]}, {v: [1.0, 2.0, 3.0]})
        assert isinstance(out["a"], RaggedTensorValue) and out["a"].to_list() == [[1.0, 2.0], [], [3.0]]
        b = out["b"][0]
        assert b.ragged_rank == 2 and b.to_list() == [[[1.0, 2.0]], [[], [3.0]]]
        np.testing.assert_array_equal(b.flat_values, [1, 2, 3])
        np.testing.assert_array_equal(b.nested_row_splits[0], [0, 1, 3])
        assert b.dtype == np.float32 and b.shape == (2, None, None) and b.nrows() == 2
        np.testing.assert_array_equal(b.values.row_lengths(), [2, 0, 1])
        np.testing.assert_array_equal(b.values.value_rowids(), [0, 0, 2])
        np.testing.assert_array_equal(out["b"][1], [2, 0, 1])
        assert rt.eval({v: [4.0, 5.0, 6.0]}, session=sess).to_list() == [[4.0, 5.0], [], [6.0]]
        with pytest.raises(ValueError, match="eager"):
            rt.to_list()
        assert "RaggedTensor" in repr(rt)


def test_numpy_and_repr_eagerly():
    rt = sf.ragged.constant([[1, 2], [], [3]])
    rows = rt.numpy()
    assert rows.dtype == object and len(rows) == 3
    np.testing.assert_array_equal(rows[0], [1, 2])
    assert rows[1].shape == (0,)
    assert repr(rt) == "<sf.RaggedTensor [[1, 2], [], [3]]>"
    nested = sf.ragged.constant([[[1], [2, 3]], []]).numpy()
    np.testing.assert_array_equal(nested[0][1], [2, 3])
    with pytest.raises(TypeError, match="truth value"):
        bool(rt)


# ----------------------------------------------------------------------------------------------
# indexing


def test_row_indexing(mode):
    rt = sf.ragged.constant(ROWS)
    keys = [1, -1, 2, np.int64(0)]
    got = mode.evaluate([rt[k] for k in keys])
    for k, g in zip(keys, got):
        np.testing.assert_array_equal(g, ROWS[k])
    assert mode.evaluate(rt[0, 1]) == 1
    np.testing.assert_array_equal(mode.evaluate(rt[0, 1:]), [1, 4])


@pytest.mark.parametrize("key", [slice(1, 3), slice(-2, None), slice(2, 10), slice(3, 1), slice(None, -3),
                                 slice(None), slice(-10, 2), slice(4, None)])
def test_row_slices(mode, key):
    rt = sf.ragged.constant(ROWS)
    assert value(mode, rt[key]) == ROWS[key]


def test_row_slices_of_unknown_row_count():
    with sf.Graph().as_default(), Session() as sess:
        s = sf.placeholder(sf.int64, None)
        v = sf.placeholder(sf.int64, None)
        rt = RT.from_row_splits(v, s, validate=False)
        feed = {s: SPLITS, v: FLAT}
        for key in (slice(1, 3), slice(-2, None), slice(None, -1), slice(3, 1), slice(-9, 9)):
            assert sess.run(rt[key], feed).to_list() == ROWS[key], key


def test_nested_indexing(mode):
    rt = sf.ragged.constant([[[1, 2], [3]], [], [[4, 5, 6]]])
    np.testing.assert_array_equal(mode.evaluate(rt[0, 1]), [3])
    assert mode.evaluate(rt[2, 0, 1]) == 5
    assert value(mode, rt[0]) == [[1, 2], [3]]
    assert value(mode, rt[0:2]) == [[[1, 2], [3]], []]


def test_indexing_errors(mode):
    rt = sf.ragged.constant(ROWS)
    with pytest.raises(ValueError, match="step"):
        rt[::2]
    with pytest.raises(ValueError, match="slice of rows"):
        rt[1:3, 0]
    with pytest.raises(TypeError, match="integers, slices"):
        rt["a"]
    with pytest.raises(errors.InvalidArgumentError):
        mode.evaluate(rt[7])


# ----------------------------------------------------------------------------------------------
# operators, map_flat_values, with_*


def test_operators(mode):
    rt = sf.ragged.constant(ROWS)
    other = sf.ragged.constant([[1, 1, 2], [2, 2], [], [1, 3]])

    def each(f):
        return [[f(x) for x in r] for r in ROWS]

    o = [[1, 1, 2], [2, 2], [], [1, 3]]
    cases = [(rt * 2 + 1, each(lambda x: 2 * x + 1)), (10 - rt, each(lambda x: 10 - x)), (-rt, each(lambda x: -x)),
             (rt + other, [[a + b for a, b in zip(r, q)] for r, q in zip(ROWS, o)]),
             (rt // other, [[a // b for a, b in zip(r, q)] for r, q in zip(ROWS, o)]),
             (rt % 2, each(lambda x: x % 2)), (2 ** rt, each(lambda x: 2 ** x)), (rt > 2, each(lambda x: x > 2)),
             (rt <= 1, each(lambda x: x <= 1)), (abs(rt - 3), each(lambda x: abs(x - 3))),
             ((rt > 2) & (rt < 5), each(lambda x: 2 < x < 5)), (~(rt > 2), each(lambda x: not x > 2))]
    for got_rt, want in cases:
        assert value(mode, got_rt) == want
    half = sf.ragged.constant(ROWS, dtype=sf.float64) / 2
    same(value(mode, half), each(lambda x: x / 2))


def test_operator_errors():
    rt = sf.ragged.constant(ROWS)
    with pytest.raises(errors.InvalidArgumentError, match="identical ragged splits"):
        rt + sf.ragged.constant([[3, 1], [1, 5, 1], [], [2, 6]])
    with pytest.raises(ValueError, match="ragged rank"):
        rt + sf.ragged.constant([[[1]]])
    with pytest.raises(ValueError, match="scalar"):
        rt + np.ones(4, np.int32)


def test_map_flat_values_and_with_values(mode):
    rt = sf.ragged.constant([[1.0, 4.0], [], [9.0]])
    assert value(mode, sf.ragged.map_flat_values(sf.math.sqrt, rt)) == [[1.0, 2.0], [], [3.0]]
    assert value(mode, sf.ragged.map_flat_values(sf.math.add, rt, y=rt)) == [[2.0, 8.0], [], [18.0]]
    assert value(mode, sf.ragged.map_flat_values(sf.math.multiply, rt, 3.0)) == [[3.0, 12.0], [], [27.0]]
    np.testing.assert_array_equal(mode.evaluate(sf.ragged.map_flat_values(sf.math.add, 1.0, 2.0)), 3.0)
    nested = sf.ragged.constant([[[1], [2, 3]], []])
    assert value(mode, nested.with_flat_values(sf.constant([7, 8, 9]))) == [[[7], [8, 9]], []]
    assert value(mode, nested.with_values(RT.from_row_lengths([5, 6], [0, 2]))) == [[[], [5, 6]], []]
    with pytest.raises(errors.InvalidArgumentError, match="identical ragged splits"):
        sf.ragged.map_flat_values(sf.math.add, rt, sf.ragged.constant([[1.0], [4.0], [9.0]]))


# ----------------------------------------------------------------------------------------------
# constant / constant_value


def test_constant(mode):
    cases = [
        (dict(pylist=[[1, 2], [3]]), [[1, 2], [3]], sf.int32, 1),
        (dict(pylist=[[1.5], []]), [[1.5], []], sf.float32, 1),
        (dict(pylist=[[], []]), [[], []], sf.float32, 1),
        (dict(pylist=[[1, 2], [3]], dtype=sf.float64), [[1.0, 2.0], [3.0]], sf.float64, 1),
        (dict(pylist=[[[1, 2], [3]], []]), [[[1, 2], [3]], []], sf.int32, 2),
        (dict(pylist=[[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1), [[[1, 2], [3, 4]], [[5, 6]]], sf.int32, 1),
        (dict(pylist=[[[1, 2], [3, 4]], [[5, 6]]], inner_shape=(2,)), [[[1, 2], [3, 4]], [[5, 6]]], sf.int32, 1),
        (dict(pylist=[[], []], ragged_rank=2), [[], []], sf.float32, 2),
        (dict(pylist=[[[1, 2, 3, 4]]], ragged_rank=1, inner_shape=(2, 2)), [[[[1, 2], [3, 4]]]], sf.int32, 1),
    ]
    for kw, want, dtype, rr in cases:
        rt = sf.ragged.constant(**kw)
        assert rt.dtype == dtype and rt.ragged_rank == rr, kw
        assert value(mode, rt) == want, kw
    assert sf.ragged.constant([[1]], row_splits_dtype=sf.int32).row_splits.dtype == sf.int32
    dense = sf.ragged.constant(5)
    assert isinstance(dense, sf.Tensor) and mode.evaluate(dense) == 5
    dense = sf.ragged.constant([[1, 2], [3, 4]], ragged_rank=0)       # no ragged dimension: a tensor
    assert isinstance(dense, sf.Tensor)
    np.testing.assert_array_equal(mode.evaluate(dense), [[1, 2], [3, 4]])
    assert value(mode, sf.ragged.constant(sf.ragged.constant_value([[1], [2, 3]]))) == [[1], [2, 3]]
    empty_inner = sf.ragged.constant([[], []], inner_shape=(3,))
    assert empty_inner.flat_values.shape.as_list() == [0, 3]


@pytest.mark.parametrize("kw,message", [
    (dict(pylist=[[1, [2]], [3]]), "same nesting depth"),
    (dict(pylist=[1, [2]]), "same nesting depth"),
    (dict(pylist=[[1, 2]], ragged_rank=2), "depth"),
    (dict(pylist=[[[1, 2], [3]]], ragged_rank=1), "inconsistent shapes"),
    (dict(pylist=[[[1, 2, 3]]], inner_shape=(2,)), "inner_shape"),
    (dict(pylist=[[1]], ragged_rank=-1), "ragged_rank"),
    (dict(pylist=[[1, 2, 3, 4]], inner_shape=(2,)), "inner_shape"),
    (dict(pylist=[[1, 2], [3]], ragged_rank=0), "inconsistent shapes"),
])
def test_constant_errors(kw, message):
    with pytest.raises(ValueError, match=message):
        sf.ragged.constant(**kw)
    with pytest.raises(ValueError, match=message):
        sf.ragged.constant_value(**kw)


def test_constant_value():
    v = sf.ragged.constant_value([[1, 2], [], [3]])
    assert isinstance(v, RaggedTensorValue)
    assert v.to_list() == [[1, 2], [], [3]] and v.dtype == np.int64 and v.row_splits.dtype == np.int64
    np.testing.assert_array_equal(v.row_splits, [0, 2, 2, 3])
    v = sf.ragged.constant_value([[[1.0], [2.0, 3.0]]], dtype=np.float32, row_splits_dtype="int32")
    assert v.ragged_rank == 2 and v.dtype == np.float32 and v.row_splits.dtype == np.int32
    assert v.to_list() == [[[1.0], [2.0, 3.0]]]
    v = sf.ragged.constant_value([[[1, 2, 3, 4]]], ragged_rank=1, inner_shape=(2, 2))
    assert v.flat_values.shape == (1, 2, 2) and v.to_list() == [[[[1, 2], [3, 4]]]]
    assert sf.ragged.constant_value([[], []]).dtype == np.float64
    assert sf.ragged.constant_value(3.0) == 3.0


# ----------------------------------------------------------------------------------------------
# reductions


INT_MAX, INT_MIN = np.iinfo(np.int32).max, np.iinfo(np.int32).min
REDUCERS = {"sum": (ragged_math_ops.reduce_sum, np.sum), "prod": (ragged_math_ops.reduce_prod, np.prod),
            "max": (ragged_math_ops.reduce_max, np.max), "min": (ragged_math_ops.reduce_min, np.min),
            "mean": (ragged_math_ops.reduce_mean, np.mean)}
EMPTY_ROW = {"sum": 0, "prod": 1, "max": INT_MIN, "min": INT_MAX, "mean": np.nan}


def ref_reduce(kind, rows, axis):
    """NumPy over the rows (ragged rank 1): axis 1 per row, axis 0 per position."""
    fn = REDUCERS[kind][1]
    if axis is None:
        return fn(np.concatenate([np.asarray(r, np.float64) for r in rows]))
    if axis in (1, -1):
        return [fn(np.asarray(r, np.float64)) if r else EMPTY_ROW[kind] for r in rows]
    width = max(len(r) for r in rows)
    return [fn(np.asarray([r[j] for r in rows if len(r) > j], np.float64)) for j in range(width)]


R1 = [[0, 1, 2, 3], [4], [], [5, 6], [7], [8, 9]]     # TF's test tensor


@pytest.mark.parametrize("kind", sorted(REDUCERS))
@pytest.mark.parametrize("axis", [None, 0, 1, -1, -2])
def test_reduce_ragged_rank_1(mode, kind, axis):
    rt = sf.ragged.constant(R1)
    out = REDUCERS[kind][0](rt, axis=axis)
    got = mode.evaluate(out)
    want = ref_reduce(kind, R1, {-2: 0}.get(axis, axis))
    np.testing.assert_allclose(got, want, equal_nan=True)
    assert got.dtype == (np.float64 if kind == "mean" else np.int32)     # TF: int mean is truediv


def test_reduce_docstring_examples_and_empty_row_identities(mode):
    rt = sf.ragged.constant([[3, 1, 4], [1, 5], [9], [2, 6]])
    got = mode.evaluate([ragged_math_ops.reduce_sum(rt, 0), ragged_math_ops.reduce_sum(rt, 1),
                         ragged_math_ops.reduce_prod(rt, 0), ragged_math_ops.reduce_min(rt, 0),
                         ragged_math_ops.reduce_max(rt, 1), ragged_math_ops.reduce_mean(rt, 0),
                         ragged_math_ops.reduce_mean(rt, 1)])
    for g, w in zip(got, [[15, 12, 4], [8, 6, 9, 8], [54, 30, 4], [1, 1, 4], [4, 5, 9, 6], [3.75, 4, 4],
                          [8 / 3, 3, 9, 4]]):
        np.testing.assert_allclose(g, w)
    f = sf.ragged.constant([[1.5], []], dtype=sf.float32)
    got = mode.evaluate([ragged_math_ops.reduce_max(f, 1), ragged_math_ops.reduce_min(f, 1),
                         ragged_math_ops.reduce_mean(f, 1)])
    lowest = np.finfo(np.float32).min            # TF's segment max: numeric_limits<T>::lowest()
    np.testing.assert_array_equal(got[0], [1.5, lowest])
    np.testing.assert_array_equal(got[1], [1.5, np.finfo(np.float32).max])
    assert got[2][0] == 1.5 and np.isnan(got[2][1]) and got[2].dtype == np.float32


R2 = [[[1, 2], [], [3, 4, 5]], [[6, 7], [], [8]], [], [[9]]]     # TF's ragged_rank=2 test tensor


@pytest.mark.parametrize("axis,keepdims,want", [
    ([], False, R2),
    (None, False, 45),
    (0, False, [[1 + 6 + 9, 2 + 7], [], [3 + 8, 4, 5]]),
    (1, False, [[1 + 3, 2 + 4, 5], [6 + 8, 7], [], [9]]),
    (2, False, [[3, 0, 12], [13, 0, 8], [], [9]]),
    ([0, 1], False, [1 + 3 + 6 + 8 + 9, 2 + 4 + 7, 5]),
    ([0, 2], False, [25, 0, 20]),
    ([1, 2], False, [15, 21, 0, 9]),
    ([-2, -1], False, [15, 21, 0, 9]),
    ([0, 1, 2], False, 45),
    ([-3, -2, -1], False, 45),
    (None, True, [[[45]]]),
    (0, True, [[[16, 9], [], [11, 4, 5]]]),
    (1, True, [[[4, 6, 5]], [[14, 7]], [[]], [[9]]]),
    (2, True, [[[3], [0], [12]], [[13], [0], [8]], [], [[9]]]),
    ([0, 1], True, [[[27, 13, 5]]]),
    ([0, 2], True, [[[25], [0], [20]]]),
    ([1, 2], True, [[[15]], [[21]], [[0]], [[9]]]),
])
def test_reduce_sum_ragged_rank_2(mode, axis, keepdims, want):
    rt = sf.ragged.constant(R2)
    got = value(mode, ragged_math_ops.reduce_sum(rt, axis, keepdims=keepdims))
    if isinstance(got, np.ndarray):
        got = got.tolist()
    assert got == want


def test_reduce_keepdims_ragged_rank_1(mode):
    rt = sf.ragged.constant([[3, 1, 4], [1, 5], [9], [2, 6]])
    got = mode.evaluate([ragged_math_ops.reduce_sum(rt, 0, keepdims=True),
                         ragged_math_ops.reduce_max(rt, -1, keepdims=True),
                         ragged_math_ops.reduce_mean(rt, 0, keepdims=True),
                         ragged_math_ops.reduce_sum(rt, None, keepdims=True)])
    for g, w in zip(got, [[[15, 12, 4]], [[4], [5], [9], [6]], [[3.75, 4, 4]], [[31]]]):
        np.testing.assert_allclose(g, w)
        assert g.shape == np.shape(w)


def test_reduce_mean_of_several_axes_is_one_mean(mode):
    # mean over all listed axes at once (sum / count), not a mean of means
    rt = sf.ragged.constant([[[1.0, 2.0], [3.0, 4.0, 5.0]], [[6.0, 7.0], [8.0]], [[9.0]]])
    got = mode.evaluate([ragged_math_ops.reduce_mean(rt, [0, 1]), ragged_math_ops.reduce_mean(rt, [1, 2])])
    np.testing.assert_allclose(got[0], [(1 + 3 + 6 + 8 + 9) / 5, (2 + 4 + 7) / 3, 5])
    np.testing.assert_allclose(got[1], [15 / 5, 21 / 3, 9])
    got = value(mode, ragged_math_ops.reduce_mean(rt, 1))
    same(got, [[2, 3, 5], [7, 7], [9]])
    same(value(mode, ragged_math_ops.reduce_mean(rt, 0)), [[16 / 3, 4.5], [5.5, 4, 5]])


def test_reduce_inner_uniform_axis_keeps_the_shape(mode):
    rt = sf.ragged.constant([[[[1, 1]]]], ragged_rank=2)
    assert rt.shape.as_list() == [1, None, None, 2]
    out = ragged_math_ops.reduce_sum(rt, axis=2)
    assert out.shape.as_list() == [1, None, 2]
    assert value(mode, out) == [[[1, 1]]]
    v = sf.ragged.constant([[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0]]], ragged_rank=1)
    assert value(mode, ragged_math_ops.reduce_sum(v, 2)) == [[3.0, 7.0], [11.0]]
    np.testing.assert_allclose(mode.evaluate(ragged_math_ops.reduce_max(v, 1)), [[3, 4], [5, 6]])


def test_reduce_dense_inputs_and_empty(mode):
    got = mode.evaluate([ragged_math_ops.reduce_mean([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]], axis=1),
                         ragged_math_ops.reduce_sum(np.arange(6).reshape(2, 3), 0),
                         ragged_math_ops.reduce_sum(sf.ragged.constant([[], []]), 0),
                         ragged_math_ops.reduce_max(RT.from_row_splits(np.zeros(0, np.int32), [0]), 1)])
    np.testing.assert_allclose(got[0], [2.0, 20.0])
    np.testing.assert_array_equal(got[1], [3, 5, 7])
    assert got[2].shape == (0,) and got[3].shape == (0,)


def test_reduce_errors():
    rt = sf.ragged.constant([[1, 2, 3], [4, 5]])
    with pytest.raises(TypeError, match="axis must be an int; got str"):
        ragged_math_ops.reduce_sum(rt, ["x"])
    with pytest.raises(ValueError, match="out of bounds"):
        ragged_math_ops.reduce_sum(rt, 2)
    with pytest.raises(ValueError, match="out of bounds"):
        ragged_math_ops.reduce_sum(rt, -3)
    with sf.Graph().as_default():
        axis = sf.placeholder(sf.int32, [])
        with pytest.raises(ValueError, match="known at graph construction time"):
            ragged_math_ops.reduce_sum(sf.ragged.constant([[1, 2]]), axis)
        np.testing.assert_array_equal(Session().run(ragged_math_ops.reduce_sum(sf.ragged.constant([[1, 2], [3]]),
                                                                               sf.constant(1))), [3, 3])


# ----------------------------------------------------------------------------------------------
# gradients (with respect to the flat values, through the conversions and reductions)


RNG = np.random.default_rng(7)
V7 = RNG.uniform(0.5, 2.0, 7) * RNG.choice([-1, 1], 7)
LENGTHS = [3, 2, 0, 2]


def test_gradient_from_row_lengths_to_tensor(mode):
    check_gradients(mode, lambda v: RT.from_row_lengths(v, LENGTHS).to_tensor() * 2.0, [V7])
    check_gradients(mode, lambda v: RT.from_row_lengths(v, LENGTHS).to_tensor(shape=[3, 2]), [V7])
    check_gradients(mode, lambda v: RT.from_row_splits(v, SPLITS).to_sparse().values * 3.0, [V7])


def test_gradient_to_tensor_of_inner_dims(mode):
    x = RNG.uniform(-1, 1, (5, 2))
    check_gradients(mode, lambda v: RT.from_row_lengths(v, [2, 0, 3]).to_tensor(default_value=0.5), [x])


def test_gradient_from_tensor(mode):
    t = RNG.uniform(0.5, 2.0, (3, 4))
    check_gradients(mode, lambda x: RT.from_tensor(x, lengths=[2, 4, 1]).flat_values * 2.0, [t])
    # padding found in the values: entries multiplied by 0 stay padding whatever x holds there
    keep = np.array([[1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    check_gradients(mode, lambda x: RT.from_tensor(x * keep, padding=0.0).flat_values * 2.0, [t])
    check_gradients(mode, lambda x: RT.from_tensor(x * keep, padding=0.0).to_tensor(), [t])
    check_gradients(mode, lambda x: RT.from_tensor(x, ragged_rank=1).flat_values, [t])


@pytest.mark.parametrize("kind", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_gradient_ragged_reductions(mode, kind, axis):
    lengths = [3, 2, 0, 2] if kind != "mean" or axis != 1 else [3, 2, 1, 1]    # no NaN rows for a mean
    fn = REDUCERS[kind][0]
    check_gradients(mode, lambda v: fn(RT.from_row_lengths(v, lengths), axis), [V7])


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gradient_ragged_rank_2_reductions(mode, axis):
    x = RNG.uniform(0.5, 2.0, 9)
    f = lambda v: ragged_math_ops.reduce_sum(RT.from_nested_row_lengths(v, [[3, 3, 0, 1], [2, 0, 3, 2, 0, 1, 1]]),
                                             axis).flat_values * 1.5
    check_gradients(mode, f, [x])
    g = lambda v: ragged_math_ops.reduce_max(RT.from_nested_row_lengths(v, [[3, 3, 0, 1], [2, 0, 3, 2, 0, 1, 1]]),
                                             axis).flat_values
    check_gradients(mode, g, [x])


def test_gradient_of_a_tape_through_a_ragged_pipeline():
    v = sf.constant(np.array([1.0, 2.0, 3.0, 4.0]))
    with sf.GradientTape() as tape:
        tape.watch(v)
        rt = RT.from_row_lengths(v, [1, 3])
        y = sf.reduce_sum(ragged_math_ops.reduce_mean(rt * rt, 1))
    # y = 1 + (4 + 9 + 16) / 3: dy/dv = [2, 2*2/3, 2*3/3, 2*4/3]
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), [2.0, 4 / 3, 2.0, 8 / 3])


# ----------------------------------------------------------------------------------------------
# boolean_mask, range, stack_dynamic_partitions


def test_boolean_mask(mode):
    bm = sf.ragged.boolean_mask
    rt = sf.ragged.constant(ROWS)
    cases = [
        (bm([[1, 2, 3], [4, 5, 6]], [[True, False, True], [False, False, False]]), [[1, 3], []]),
        (bm(rt, rt > 2), [[3, 4], [5], [], [6]]),
        (bm(rt, [True, False, False, True]), [[3, 1, 4], [2, 6]]),
        (bm(sf.ragged.constant([[[1], [2, 3]], [], [[4]]]), [False, True, True]), [[], [[4]]]),
        (bm(np.arange(8).reshape(2, 2, 2), np.array([[[True, False], [True, True]], [[False, False], [False, True]]])),
         [[[0], [2, 3]], [[], [7]]]),
        (bm(np.arange(6).reshape(2, 3), sf.ragged.constant([[True, False, True], [False, True, False]])),
         [[0, 2], [4]]),
        (bm(sf.ragged.constant([[[1, 2], [3]], [[4, 5, 6]]]),
            sf.ragged.constant([[[True, False], [True]], [[False, True, True]]])), [[[1], [3]], [[5, 6]]]),
        (bm(sf.ragged.constant([[[1, 2], [3]], [[4, 5, 6]]]), sf.ragged.constant([[False, True], [True]])),
         [[[3]], [[4, 5, 6]]]),
        (bm(np.arange(6).reshape(3, 2), [True, False, True]), [[0, 1], [4, 5]]),
    ]
    for rt_out, want in cases:
        got = value(mode, rt_out)
        assert (got.tolist() if isinstance(got, np.ndarray) else got) == want


def test_boolean_mask_errors():
    rt = sf.ragged.constant(ROWS)
    with pytest.raises(ValueError, match="scalar"):
        sf.ragged.boolean_mask(rt, True)
    with pytest.raises(errors.InvalidArgumentError, match="identical ragged splits"):
        sf.ragged.boolean_mask(rt, sf.ragged.constant([[True], [False, True, True], [], [True, True]]))
    with pytest.raises(TypeError, match="bool"):
        sf.ragged.boolean_mask(rt, rt)


def test_range(mode):
    r = sf.ragged.range
    cases = [(r([3, 5, 2]), [[0, 1, 2], [0, 1, 2, 3, 4], [0, 1]], np.int32),
             (r([0, 5, 8], [3, 3, 12]), [[0, 1, 2], [], [8, 9, 10, 11]], np.int32),
             (r([0, 5, 8], [3, 3, 12], 2), [[0, 2], [], [8, 10]], np.int32),
             (r([0, 5, 8], [3, 3, 12], [-1, -2, 3]), [[], [5], [8, 11]], np.int32),
             (r(5, 0, -2), [[5, 3, 1]], np.int32),
             (r([0], [1.0], 0.25), [[0.0, 0.25, 0.5, 0.75]], np.float32),
             (r(np.int64(4)), [[0, 1, 2, 3]], np.int64),
             (r([2, 3], dtype=sf.float64), [[0.0, 1.0], [0.0, 1.0, 2.0]], np.float64)]
    for rt, want, dtype in cases:
        assert rt.dtype == sf.as_dtype(dtype)
        assert value(mode, rt) == want
    assert r([1, 2], row_splits_dtype=sf.int32).row_splits.dtype == sf.int32


def test_range_errors_and_fed_bounds(mode):
    with pytest.raises(errors.InvalidArgumentError, match="delta != 0"):
        value(mode, sf.ragged.range([1, 2], [3, 4], [1, 0]))
    with pytest.raises(errors.InvalidArgumentError, match="same size"):
        value(mode, sf.ragged.range([1, 2], [3, 4, 5]))
    if not mode.eager:
        limits = sf.placeholder(sf.int32, [None])
        rt = sf.ragged.range(limits)
        assert value(mode, rt, {limits: [2, 0, 3]}) == [[0, 1], [], [0, 1, 2]]


def test_stack_dynamic_partitions(mode):
    f = sf.ragged.stack_dynamic_partitions
    assert value(mode, f([10, 20, 30, 40, 50], [1, 0, 1, 3, 0], 4)) == [[20, 50], [10, 30], [], [40]]
    data = np.arange(12).reshape(2, 3, 2)
    got = value(mode, f(data, [[0, 2, 0], [1, 0, 2]], 3))
    assert got == [[[0, 1], [4, 5], [8, 9]], [[6, 7]], [[2, 3], [10, 11]]]
    with pytest.raises(errors.InvalidArgumentError, match="not in"):
        value(mode, f([1, 2], [0, 3], 3))


# ----------------------------------------------------------------------------------------------
# names


def test_faces_name_the_same_objects():
    assert sf.RaggedTensor is ragged_tensor.RaggedTensor
    assert ragged_tensor_value.RaggedTensorValue is sf.ragged.RaggedTensorValue is ragged_tensor.RaggedTensorValue
    assert sf.ragged.constant is ragged_factory_ops.constant
    assert sf.ragged.constant_value is ragged_factory_ops.constant_value
    assert sf.ragged.range is ragged_math_ops.range
    assert sf.ragged.map_flat_values is ragged_functional_ops.map_flat_values
    assert sf.ragged.boolean_mask is ragged_array_ops.boolean_mask
    assert sf.ragged.stack_dynamic_partitions is ragged_array_ops.stack_dynamic_partitions
    assert sf.ragged.row_splits_to_segment_ids is segment_id_ops.row_splits_to_segment_ids
    assert sf.ragged.segment_ids_to_row_splits is segment_id_ops.segment_ids_to_row_splits
    assert sf.ragged.is_ragged(sf.ragged.constant([[1]])) and not sf.ragged.is_ragged(sf.constant([1]))
    assert sf.ragged.is_ragged(sf.ragged.constant_value([[1]]))


def test_flat_reduce_functions_dispatch_on_ragged_tensors():
    """sf.reduce_sum / reduce_mean / math.reduce_max take a RaggedTensor as in TF (routed to the
    segment-based ragged reductions)."""
    rt = sf.ragged.constant([[1.0, 2.0], [3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_array_equal(sf.reduce_sum(rt, 1).numpy(), [3.0, 3.0, 15.0])
    np.testing.assert_array_equal(sf.reduce_mean(rt, axis=1).numpy(), [1.5, 3.0, 5.0])
    np.testing.assert_array_equal(sf.math.reduce_max(rt, axis=0).numpy(), [4.0, 5.0, 6.0])
    np.testing.assert_array_equal(sf.reduce_min(rt, 1).numpy(), [1.0, 3.0, 4.0])
    np.testing.assert_array_equal(sf.reduce_prod(rt, 1).numpy(), [2.0, 3.0, 120.0])
    assert sf.reduce_sum(rt).numpy() == 21.0

"""The ops under RaggedTensor: row partitions as segment ids and back, the check of a row partition,
and the flattening of a ragged tensor into SparseTensor parts (TF's `segment_id_ops` and the
`RaggedTensorToSparse` kernel).

A row partition `row_splits` (int64 or int32, `nrows + 1` entries, starting at 0, never decreasing,
ending at the number of values) is exactly a sorted segment-id vector: `value_rowids`. Converting
between the two is what lets every ragged reduction be a segment reduction.
"""
import numpy as np

from segflow._core import dtypes, errors
from segflow._core.apply import apply_op
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._core.registry import RegisterGradient, NotDifferentiable, TensorSpec, register_op
from segflow._core.tensor import Tensor
from segflow.kernels import BadInput
from segflow._ops import cast as cast_ops, elementwise as cw, join as join_ops, reduce as reduce_ops
from segflow._ops import segment as segment_ops, shape as shape_ops

__all__ = ["row_splits_to_segment_ids", "segment_ids_to_row_splits"]

SPLITS_DTYPES = (dtypes.int32, dtypes.int64)


def check_splits(splits, input_name="row_splits", nvals=None):
    """Raises BadInput unless `splits` (a NumPy vector) is a row partition (of `nvals` values)."""
    if splits.ndim != 1 or splits.size == 0:
        raise BadInput(input_name, f"must be a non-empty vector, got shape {list(splits.shape)}")
    if splits[0] != 0:
        raise BadInput(input_name, f"must start with 0, got {int(splits[0])}")
    steps = np.diff(splits)
    if steps.size and steps.min() < 0:
        at = int(np.argmax(steps < 0))
        raise BadInput(input_name, f"must not decrease, but {input_name}[{at + 1}] = {int(splits[at + 1])} < "
                       f"{input_name}[{at}] = {int(splits[at])}")
    if nvals is not None and int(splits[-1]) != int(nvals):
        raise BadInput(input_name, f"the last row split ({int(splits[-1])}) must equal the number of values "
                       f"({int(nvals)})")


def _infer_vector(op, row_splits, *unused, **attrs):
    if row_splits.shape.rank not in (None, 1):
        raise errors.invalid_input(op, "row_splits", f"must be a vector, got shape {row_splits.shape}")
    return [TensorSpec(row_splits.dtype, row_splits.shape)]


def _validate_kernel(row_splits, nvals):
    check_splits(row_splits, nvals=nvals)
    return row_splits


# The run-time check of a row partition whose values are not known while the graph is built (a
# known one is checked at once, in every mode). Returns row_splits.
register_op("RaggedValidateRowSplits", inputs=("row_splits", "nvals"), attrs={"T": "row_splits", "Tn": "nvals"},
            allowed={"T": SPLITS_DTYPES, "Tn": SPLITS_DTYPES}, infer=_infer_vector, kernel=_validate_kernel)
NotDifferentiable("RaggedValidateRowSplits")


def _ragged_right_kernel(indices):
    if indices.ndim != 2 or indices.shape[1] != 2:
        raise BadInput("indices", f"must be a matrix of [row, column] pairs, got shape {list(indices.shape)}")
    rows, cols = indices[:, 0], indices[:, 1]
    starts = np.r_[True, rows[1:] != rows[:-1]] if rows.size else np.zeros(0, bool)
    run_start = np.maximum.accumulate(np.where(starts, np.arange(rows.size), 0)) if rows.size else starts
    expected = np.arange(rows.size) - run_start       # the position of each value within its row
    bad = np.flatnonzero((cols != expected) | np.r_[False, rows[1:] < rows[:-1]])
    if bad.size:
        i = int(bad[0])
        raise BadInput("indices", f"the SparseTensor is not ragged-right (each row's values at columns 0, 1, ... "
                       f"in row-major order): indices[{i}] = [{int(rows[i])}, {int(cols[i])}], expected column "
                       f"{int(expected[i])}" + (" of a later row" if i and rows[i] < rows[i - 1] else ""))
    return indices


# from_sparse's check that a 2-D SparseTensor's values fill each row from column 0 (TF's
# "ragged-right"). Returns indices.
register_op("RaggedCheckRaggedRight", inputs=("indices",), attrs={"T": "indices"}, allowed={"T": SPLITS_DTYPES},
            infer=lambda op, indices: [TensorSpec(indices.dtype, indices.shape)], kernel=_ragged_right_kernel)
NotDifferentiable("RaggedCheckRaggedRight")


def _infer_rowids(op, row_splits):
    if row_splits.shape.rank not in (None, 1):
        raise errors.invalid_input(op, "row_splits", f"must be a vector, got shape {row_splits.shape}")
    return [TensorSpec(row_splits.dtype, [None])]


def _rowids_kernel(row_splits):
    check_splits(row_splits)
    return np.repeat(np.arange(row_splits.size - 1, dtype=row_splits.dtype), np.diff(row_splits))


register_op("RaggedRowSplitsToSegmentIds", inputs=("row_splits",), attrs={"T": "row_splits"},
            allowed={"T": SPLITS_DTYPES}, infer=_infer_rowids, kernel=_rowids_kernel)
NotDifferentiable("RaggedRowSplitsToSegmentIds")


def _infer_splits(op, segment_ids, num_segments, out_type=dtypes.int64):
    if segment_ids.shape.rank not in (None, 1):
        raise errors.invalid_input(op, "segment_ids", f"must be a vector, got shape {segment_ids.shape}")
    n = segment_ops.static_count(op, num_segments, "num_segments")
    return [TensorSpec(out_type, [None if n is None else n + 1])]


def _splits_kernel(segment_ids, num_segments, out_type=dtypes.int64):
    if np.ndim(num_segments) != 0:
        raise BadInput("num_segments", f"must be a scalar, got shape {list(np.shape(num_segments))}")
    n = int(num_segments)
    if n < 0:
        raise BadInput("num_segments", f"must be >= 0, got {n}")
    ids = segment_ids
    if ids.size:
        if ids.min() < 0 or ids.max() >= n:
            bad = int(np.argmax((ids < 0) | (ids >= n)))
            raise BadInput("segment_ids", f"segment_ids[{bad}] = {int(ids[bad])} is not in [0, {n})")
        steps = np.diff(ids)
        if steps.size and steps.min() < 0:
            at = int(np.argmax(steps < 0)) + 1
            raise BadInput("segment_ids", f"must be sorted, but segment_ids[{at}] = {int(ids[at])} < "
                           f"segment_ids[{at - 1}] = {int(ids[at - 1])}")
    counts = np.bincount(ids.astype(np.int64), minlength=n)
    out = np.zeros(n + 1, out_type.as_numpy_dtype)
    np.cumsum(counts, out=out[1:])
    return out


register_op("RaggedSegmentIdsToRowSplits", inputs=("segment_ids", "num_segments"),
            attrs={"T": "segment_ids", "Tnum": "num_segments"},
            allowed={"T": SPLITS_DTYPES, "Tnum": SPLITS_DTYPES}, infer=_infer_splits, kernel=_splits_kernel,
            defaults={"out_type": dtypes.int64})
NotDifferentiable("RaggedSegmentIdsToRowSplits")


def _infer_to_sparse(op, rt_nested_splits, rt_dense_values):
    ragged_rank = len(rt_nested_splits)
    values = rt_dense_values.shape
    rank = None if values.rank is None else ragged_rank + values.rank
    return [TensorSpec(dtypes.int64, [None, rank]), TensorSpec(rt_dense_values.dtype, [None]),
            TensorSpec(dtypes.int64, [rank])]


def _to_sparse_kernel(rt_nested_splits, rt_dense_values):
    """Row-major (indices, values, dense_shape) of a ragged tensor given its nested splits."""
    values = rt_dense_values
    inner = values.shape[1:]
    n = values.shape[0]
    index_cols = []
    pos = np.arange(n, dtype=np.int64)    # where each flat value sits, one ragged level up at a time
    widths = []
    for k, splits in reversed(list(enumerate(rt_nested_splits))):
        check_splits(splits, f"rt_nested_splits[{k}]", nvals=n)
        splits = splits.astype(np.int64)
        rowids = np.repeat(np.arange(splits.size - 1, dtype=np.int64), np.diff(splits))
        index_cols.insert(0, pos - splits[rowids[pos]] if pos.size else pos)
        widths.insert(0, int(np.diff(splits).max()) if splits.size > 1 else 0)
        pos = rowids[pos] if pos.size else pos
        n = splits.size - 1
    index_cols.insert(0, pos)
    ragged = np.stack(index_cols, axis=1) if index_cols[0].size else np.zeros((0, len(index_cols)), np.int64)
    if inner:
        grid = np.indices(inner).reshape(len(inner), -1).T.astype(np.int64)
        k = grid.shape[0]
        indices = np.concatenate([np.repeat(ragged, k, axis=0), np.tile(grid, (ragged.shape[0], 1))], axis=1)
    else:
        indices = ragged
    dense_shape = np.asarray([n] + widths + list(inner), np.int64)
    return [indices.astype(np.int64), values.reshape(-1), dense_shape]


register_op("RaggedTensorToSparse", inputs=("rt_nested_splits*", "rt_dense_values"),
            attrs={"Tsplits": "rt_nested_splits", "T": "rt_dense_values"}, allowed={"Tsplits": SPLITS_DTYPES},
            infer=_infer_to_sparse, kernel=_to_sparse_kernel, num_outputs=3)


@RegisterGradient("RaggedTensorToSparse")
def _ragged_to_sparse_grad(op, unused_indices_grad, values_grad, unused_shape_grad):
    """The sparse values are the flat values in order: their gradient is reshaped back."""
    flat_values = op.inputs[-1]
    grad = shape_ops.reshape(values_grad, shape_ops.shape(flat_values))
    return [None] * (len(op.inputs) - 1) + [grad]


def as_index(x, what, dtype=None):
    """`x` as an int32/int64 tensor (Python numbers become int64, TF's hint for row partitions)."""
    if isinstance(x, Tensor):
        if x.dtype not in SPLITS_DTYPES:
            raise TypeError(f"{what} must be int32 or int64, got {x.dtype.name}")
        return x if dtype is None or x.dtype == dtype else cast_ops.cast(x, dtype)
    if isinstance(x, (list, tuple)) and len(x) == 0:
        return convert_to_tensor(np.zeros(0, (dtype or dtypes.int64).as_numpy_dtype))
    if not isinstance(x, Tensor) and np.asarray(x).dtype.kind not in "iu":
        raise TypeError(f"{what} must be int32 or int64, got {np.asarray(x).dtype.name} values")
    if dtype is None:
        dtype = None if isinstance(x, (np.ndarray, np.generic)) else dtypes.int64
    t = convert_to_tensor(x, dtype=dtype) if dtype is not None else convert_to_tensor(x)
    if t.dtype not in SPLITS_DTYPES:
        raise TypeError(f"{what} must be int32 or int64, got {t.dtype.name}")
    return t


def row_splits_to_segment_ids(splits, name=None, out_type=None):
    """The row of each value: `[0, 2, 2, 3] -> [0, 0, 2]`."""
    with name_scope(name, "RaggedSplitsToSegmentIds"):
        splits = as_index(splits, "splits")
        ids = apply_op("RaggedRowSplitsToSegmentIds", splits)
        if out_type is not None and dtypes.as_dtype(out_type) != ids.dtype:
            ids = cast_ops.cast(ids, out_type)
        return ids


def segment_ids_to_row_splits(segment_ids, num_segments=None, out_type=None, name=None):
    """Row splits of sorted segment ids: `[0, 0, 2], num_segments=3 -> [0, 2, 2, 3]` (num_segments
    defaults to the largest id + 1)."""
    with name_scope(name, "SegmentIdsToRaggedSplits"):
        segment_ids = as_index(segment_ids, "segment_ids")
        if out_type is None:
            out_type = segment_ids.dtype
        if num_segments is None:
            num_segments = cw.add(reduce_ops.reduce_max(join_ops.concat(
                [segment_ids, convert_to_tensor([-1], dtype=segment_ids.dtype)], 0)), 1)
        num_segments = as_index(num_segments, "num_segments")
        return apply_op("RaggedSegmentIdsToRowSplits", segment_ids, num_segments,
                        out_type=dtypes.as_dtype(out_type))


def check_ragged_right(indices):
    """`indices` (a SparseTensor's), checked at run time to fill each row from column 0."""
    return apply_op("RaggedCheckRaggedRight", indices)


def validate_splits(splits, nvals):
    """`splits`, checked at run time against `nvals` values (a RaggedValidateRowSplits op)."""
    return apply_op("RaggedValidateRowSplits", splits, nvals)

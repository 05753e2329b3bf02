"""RaggedTensor: rows of different lengths, stored as flat values plus row partitions (TF's
`tf.RaggedTensor`), and the ops that build, convert and reduce it.

A RaggedTensor of ragged rank 1 is `values` (a tensor whose first dimension is all rows' elements
laid end to end) and `row_splits` (int64 or int32, `nrows + 1` entries, starting at 0, never
decreasing, ending at `len(values)`): row i is `values[row_splits[i]:row_splits[i + 1]]`. A higher
ragged rank nests: `values` is itself a RaggedTensor. Every row-partition encoding TF accepts
(`from_row_lengths`, `from_value_rowids`, `from_row_starts`, `from_row_limits`, nested forms,
`from_tensor`, `from_sparse`) is converted to row_splits once, at construction.

The row partition of a ragged row is exactly a segment-id vector (`value_rowids`), so the reductions
along a ragged axis are segment reductions (`reduce_sum(rt, axis=1)` is
`unsorted_segment_sum(values, value_rowids, nrows)`), and their gradients are the segment ones.
Everything is built from ops, so it works eagerly, in graphs and under a tape; the gradient of a
result with respect to `flat_values` flows through those ops.
"""
import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core import mode as context
from segflow._core.apply import apply_op
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._core.registry import RegisterGradient, NotDifferentiable, TensorSpec, register_op
from segflow._core.tensor import EagerTensor, Tensor
from segflow._core import fold as tensor_util
from segflow.kernels import BadInput
from segflow._ops import cast as cast_ops, elementwise as cw, gather as gather_ops, join as join_ops
from segflow._ops import reduce as reduce_ops, scatter as scatter_ops, segment as segment_ops
from segflow._ops import shape as shape_ops, sort as sort_ops
from segflow._ops.sequence import range as range_
from segflow._ops.sparse_tensor import SparseTensor

__all__ = ["RaggedTensor", "RaggedTensorValue", "constant", "constant_value", "is_ragged",
           "row_splits_to_segment_ids", "segment_ids_to_row_splits", "map_flat_values",
           "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "boolean_mask",
           "ragged_range", "stack_dynamic_partitions"]

_SPLITS = (dtypes.int32, dtypes.int64)


# ----------------------------------------------------------------------------------------------
# The ops: row partitions <-> segment ids, and ragged -> sparse.

def _check_splits(splits, input_name="row_splits"):
    if splits.ndim != 1 or splits.size == 0:
        raise BadInput(input_name, f"must be a non-empty vector, got shape {list(splits.shape)}")
    if splits[0] != 0:
        raise BadInput(input_name, f"must start with 0, got {int(splits[0])}")
    steps = np.diff(splits)
    if steps.size and steps.min() < 0:
        at = int(np.argmax(steps < 0))
        raise BadInput(input_name, f"must not decrease, but row_splits[{at + 1}] = {int(splits[at + 1])} < "
                       f"row_splits[{at}] = {int(splits[at])}")


def _infer_rowids(op, row_splits):
    if row_splits.shape.rank not in (None, 1):
        raise errors.invalid_input(op, "row_splits", f"must be a vector, got shape {row_splits.shape}")
    return [TensorSpec(row_splits.dtype, [None])]


def _rowids_kernel(row_splits):
    _check_splits(row_splits)
    return np.repeat(np.arange(row_splits.size - 1, dtype=row_splits.dtype), np.diff(row_splits))


register_op("RaggedRowSplitsToSegmentIds", inputs=("row_splits",), attrs={"T": "row_splits"},
            allowed={"T": _SPLITS}, infer=_infer_rowids, kernel=_rowids_kernel)
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
            allowed={"T": _SPLITS, "Tnum": _SPLITS}, infer=_infer_splits, kernel=_splits_kernel,
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
    # positions of every flat value along each ragged dimension, innermost first
    n = values.shape[0]
    index_cols = []
    pos = np.arange(n, dtype=np.int64)
    widths = []
    for k, splits in reversed(list(enumerate(rt_nested_splits))):
        _check_splits(splits, f"rt_nested_splits[{k}]")
        splits = splits.astype(np.int64)
        if splits[-1] != n:
            raise BadInput(f"rt_nested_splits[{k}]", f"the last split ({int(splits[-1])}) must equal the "
                           f"number of values it partitions ({n})")
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
            attrs={"Tsplits": "rt_nested_splits", "T": "rt_dense_values"}, allowed={"Tsplits": _SPLITS},
            infer=_infer_to_sparse, kernel=_to_sparse_kernel, num_outputs=3)


@RegisterGradient("RaggedTensorToSparse")
def _ragged_to_sparse_grad(op, unused_indices_grad, values_grad, unused_shape_grad):
    """The sparse values are the flat values in order: their gradient is reshaped back."""
    flat_values = op.inputs[-1]
    grad = shape_ops.reshape(values_grad, shape_ops.shape(flat_values))
    return [None] * (len(op.inputs) - 1) + [grad]


def row_splits_to_segment_ids(splits, name=None, out_type=None):
    """The row of each value: `[0, 2, 2, 3] -> [0, 0, 2]`."""
    with name_scope(name, "RaggedSplitsToSegmentIds"):
        splits = convert_to_tensor(splits, dtype=dtypes.int64) if not isinstance(splits, Tensor) else splits
        ids = apply_op("RaggedRowSplitsToSegmentIds", splits)
        if out_type is not None and dtypes.as_dtype(out_type) != ids.dtype:
            ids = cast_ops.cast(ids, out_type)
        return ids


def segment_ids_to_row_splits(segment_ids, num_segments=None, out_type=None, name=None):
    """Row splits of sorted segment ids: `[0, 0, 2], num_segments=3 -> [0, 2, 2, 3]`."""
    with name_scope(name, "SegmentIdsToRaggedSplits"):
        segment_ids = _as_index(segment_ids, "segment_ids")
        if out_type is None:
            out_type = segment_ids.dtype
        if num_segments is None:
            num_segments = cw.add(reduce_ops.reduce_max(join_ops.concat(
                [segment_ids, convert_to_tensor([-1], dtype=segment_ids.dtype)], 0)), 1)
        num_segments = _as_index(num_segments, "num_segments")
        return apply_op("RaggedSegmentIdsToRowSplits", segment_ids, num_segments,
                        out_type=dtypes.as_dtype(out_type))


def _as_index(x, what, dtype=None):
    if isinstance(x, Tensor):
        if x.dtype not in _SPLITS:
            raise TypeError(f"{what} must be int32 or int64, got {x.dtype.name}")
        return x if dtype is None or x.dtype == dtype else cast_ops.cast(x, dtype)
    if isinstance(x, (list, tuple)) and len(x) == 0:
        return convert_to_tensor(np.zeros(0, (dtype or dtypes.int64).as_numpy_dtype))
    if dtype is None:   # Python numbers become int64 (TF's dtype hint for row partitions)
        dtype = None if isinstance(x, (np.ndarray, np.generic)) else dtypes.int64
    t = convert_to_tensor(x, dtype=dtype) if dtype is not None else convert_to_tensor(x)
    if t.dtype not in _SPLITS:
        raise TypeError(f"{what} must be int32 or int64, got {t.dtype.name}")
    return t


# ----------------------------------------------------------------------------------------------
# RaggedTensor

def is_ragged(x):
    return isinstance(x, (RaggedTensor, RaggedTensorValue))


def _nrows_of(values, out_type):
    if isinstance(values, RaggedTensor):
        return values.nrows(out_type=out_type)
    return shape_ops.shape(values, out_type=out_type)[0]


def _static_dim0(values):
    shape = values.shape
    return None if shape.rank is None or shape.rank == 0 else shape.as_list()[0]


class RaggedTensor:
    """A tensor with ragged (variable-length) dimensions: TF's `tf.RaggedTensor`.

    Build one with a `from_*` factory or `sf.ragged.constant`; the constructor is internal.
    """

    def __init__(self, values, row_splits, internal=False, _validate=True):
        if not internal:
            raise ValueError("RaggedTensor constructor is private; please use one of the factory methods "
                             "instead (e.g., RaggedTensor.from_row_lengths())")
        if not isinstance(values, (RaggedTensor, Tensor)):
            values = convert_to_tensor(values)
        if values.shape.rank == 0:
            raise ValueError("values must have rank >= 1")
        self._values = values
        self._row_splits = row_splits
        if isinstance(values, RaggedTensor) and values.row_splits.dtype != row_splits.dtype:
            raise ValueError("dtype mismatch: the row_splits of nested ragged dimensions differ "
                             f"({row_splits.dtype.name} and {values.row_splits.dtype.name}); use "
                             "with_row_splits_dtype to convert")
        if _validate:
            self._validate()

    def _validate(self):
        splits = self._row_splits
        if splits.shape.rank not in (None, 1):
            raise ValueError(f"row_splits must be a vector, got shape {splits.shape}")
        n = _static_dim0(self._values)
        known = tensor_util.constant_value(splits) if not isinstance(splits, EagerTensor) else splits.numpy()
        if known is None:
            return
        known = np.asarray(known)
        try:
            _check_splits(known)
        except BadInput as e:
            raise errors.InvalidArgumentError(None, None, f"RaggedTensor: {e}") from None
        if n is not None and int(known[-1]) != n:
            raise errors.InvalidArgumentError(None, None, f"RaggedTensor: the last row split ({int(known[-1])}) "
                                              f"must equal the number of values ({n})")

    # ---------------------------------------------------------------- factories
    @classmethod
    def _make(cls, values, splits, validate=True):
        return cls(values, splits, internal=True, _validate=validate)

    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True):
        """Row i is `values[row_splits[i]:row_splits[i + 1]]`."""
        with name_scope(name, "RaggedFromRowSplits"):
            values = _as_values(values)
            row_splits = _as_index(row_splits, "row_splits")
            return cls._make(values, row_splits, validate)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True):
        """Row i holds the next `row_lengths[i]` values."""
        with name_scope(name, "RaggedFromRowLengths"):
            values = _as_values(values)
            lengths = _as_index(row_lengths, "row_lengths")
            if validate and isinstance(lengths, EagerTensor) and lengths.numpy().size \
                    and lengths.numpy().min() < 0:
                raise errors.InvalidArgumentError(None, None, "RaggedTensor: row_lengths must be non-negative")
            splits = join_ops.concat([convert_to_tensor([0], dtype=lengths.dtype),
                                      reduce_ops.cumsum(lengths)], 0)
            return cls._make(values, splits, validate)

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None, validate=True):
        """Value j belongs to row `value_rowids[j]` (sorted); `nrows` rows (default: last id + 1)."""
        with name_scope(name, "RaggedFromValueRowIds"):
            values = _as_values(values)
            rowids = _as_index(value_rowids, "value_rowids")
            if nrows is not None:
                nrows = _as_index(nrows, "nrows", rowids.dtype)
            splits = segment_ids_to_row_splits(rowids, nrows, out_type=rowids.dtype)
            return cls._make(values, splits, validate)

    @classmethod
    def from_row_starts(cls, values, row_starts, name=None, validate=True):
        with name_scope(name, "RaggedFromRowStarts"):
            values = _as_values(values)
            starts = _as_index(row_starts, "row_starts")
            n = cast_ops.cast(_nrows_of(values, dtypes.int64), starts.dtype)
            splits = join_ops.concat([starts, shape_ops.reshape(n, [1])], 0)
            return cls._make(values, splits, validate)

    @classmethod
    def from_row_limits(cls, values, row_limits, name=None, validate=True):
        with name_scope(name, "RaggedFromRowLimits"):
            values = _as_values(values)
            limits = _as_index(row_limits, "row_limits")
            splits = join_ops.concat([convert_to_tensor([0], dtype=limits.dtype), limits], 0)
            return cls._make(values, splits, validate)

    @classmethod
    def from_uniform_row_length(cls, values, uniform_row_length, nrows=None, validate=True, name=None):
        with name_scope(name, "RaggedFromUniformRowLength"):
            values = _as_values(values)
            width = _as_index(uniform_row_length, "uniform_row_length")
            nvals = cast_ops.cast(_nrows_of(values, dtypes.int64), width.dtype)
            if nrows is None:
                nrows = cw.floordiv(nvals, cw.maximum(width, convert_to_tensor(1, dtype=width.dtype)))
            nrows = _as_index(nrows, "nrows", width.dtype)
            splits = cw.multiply(range_(0, nrows + 1, dtype=width.dtype), width)
            return cls._make(values, splits, validate)

    @classmethod
    def from_nested_row_splits(cls, flat_values, nested_row_splits, name=None, validate=True):
        if isinstance(nested_row_splits, (Tensor, np.ndarray)):
            raise TypeError("nested_row_splits must be a list of Tensors")
        with name_scope(name, "RaggedFromNestedRowSplits"):
            result = flat_values
            for splits in reversed(list(nested_row_splits)):
                result = cls.from_row_splits(result, splits, validate=validate)
            return result

    @classmethod
    def from_nested_row_lengths(cls, flat_values, nested_row_lengths, name=None, validate=True):
        with name_scope(name, "RaggedFromNestedRowlengths"):
            result = flat_values
            for lengths in reversed(list(nested_row_lengths)):
                result = cls.from_row_lengths(result, lengths, validate=validate)
            return result

    @classmethod
    def from_nested_value_rowids(cls, flat_values, nested_value_rowids, nested_nrows=None, name=None,
                                 validate=True):
        nested_value_rowids = list(nested_value_rowids)
        nested_nrows = [None] * len(nested_value_rowids) if nested_nrows is None else list(nested_nrows)
        if len(nested_nrows) != len(nested_value_rowids):
            raise ValueError("nested_nrows must have the same length as nested_value_rowids")
        with name_scope(name, "RaggedFromNestedValueRowIds"):
            result = flat_values
            for rowids, nrows in reversed(list(zip(nested_value_rowids, nested_nrows))):
                result = cls.from_value_rowids(result, rowids, nrows, validate=validate)
            return result

    @classmethod
    def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank=1, name=None,
                    row_splits_dtype=dtypes.int64):
        """The ragged tensor of a dense one: each row of dimension 1 cut to `lengths[i]`, or to the
        position after its last element that is not `padding` (all of it, with neither)."""
        row_splits_dtype = dtypes.as_dtype(row_splits_dtype)
        if lengths is not None and padding is not None:
            raise ValueError("Specify lengths or padding, but not both")
        if not isinstance(ragged_rank, int) or ragged_rank < 1:
            raise ValueError(f"ragged_rank must be a positive integer, got {ragged_rank!r}")
        with name_scope(name, "RaggedFromTensor"):
            tensor = convert_to_tensor(tensor)
            rank = tensor.shape.rank
            if rank is not None and rank <= ragged_rank:
                raise ValueError(f"ragged_rank must be smaller than the rank of the tensor ({rank}), got "
                                 f"{ragged_rank}")
            if ragged_rank > 1:
                if lengths is not None:
                    raise ValueError("from_tensor: lengths with ragged_rank > 1 is not supported; build the "
                                     "inner rows with from_tensor(..., lengths) and nest them")
                dims = shape_ops.shape(tensor, out_type=row_splits_dtype)
                nrows, ncols = dims[0], dims[1]
                merged = shape_ops.reshape(tensor, join_ops.concat([shape_ops.reshape(nrows * ncols, [1]),
                                                                    dims[2:]], 0))
                inner = cls.from_tensor(merged, padding=padding, ragged_rank=ragged_rank - 1,
                                        row_splits_dtype=row_splits_dtype)
                splits = cw.multiply(range_(0, nrows + 1, dtype=row_splits_dtype), ncols)
                return cls._make(inner, splits, validate=False)
            dims = shape_ops.shape(tensor, out_type=row_splits_dtype)
            nrows, ncols = dims[0], dims[1]
            if lengths is None and padding is None:
                values = shape_ops.reshape(tensor, join_ops.concat([shape_ops.reshape(nrows * ncols, [1]),
                                                                    dims[2:]], 0))
                splits = cw.multiply(range_(0, nrows + 1, dtype=row_splits_dtype), ncols)
                return cls._make(values, splits, validate=False)
            positions = range_(0, ncols, dtype=row_splits_dtype)
            if padding is not None:
                padding = convert_to_tensor(padding, dtype=tensor.dtype)
                kept = cw.not_equal(tensor, padding)
                if rank is None or rank > 2:
                    axes = range_(2, shape_ops.rank(tensor))
                    kept = reduce_ops.reduce_any(kept, axes)
                # a row's length: one past its last element that is not padding
                lengths = reduce_ops.reduce_max(
                    cw.where_v2(kept, positions + 1, shape_ops.zeros_like(positions)), 1)
            else:
                lengths = _as_index(lengths, "lengths", row_splits_dtype)
                lengths = cw.minimum(cw.maximum(lengths, convert_to_tensor(0, dtype=row_splits_dtype)), ncols)
            mask = cw.less(shape_ops.reshape(positions, [1, -1]), shape_ops.reshape(lengths, [-1, 1]))
            values = sort_ops.boolean_mask(tensor, mask)
            splits = join_ops.concat([convert_to_tensor([0], dtype=row_splits_dtype),
                                      reduce_ops.cumsum(lengths)], 0)
            return cls._make(values, splits, validate=False)

    @classmethod
    def from_sparse(cls, st_input, name=None, row_splits_dtype=dtypes.int64):
        """The ragged tensor of a 2-D SparseTensor whose indices are in row-major order; row i holds
        the values of sparse row i (the sparse column positions are not kept)."""
        row_splits_dtype = dtypes.as_dtype(row_splits_dtype)
        if not isinstance(st_input, SparseTensor):
            raise TypeError(f"st_input must be a SparseTensor, got {type(st_input).__name__}")
        rank = st_input.indices.shape.as_list()[1] if st_input.indices.shape.rank == 2 else None
        if rank is None:
            rank = st_input.dense_shape.shape.as_list()[0] if st_input.dense_shape.shape.rank == 1 else None
        if rank is None or rank != 2:
            raise ValueError("rank(st_input) must be 2.")
        with name_scope(name, "RaggedFromSparse"):
            rowids = cast_ops.cast(st_input.indices[:, 0], row_splits_dtype)
            nrows = cast_ops.cast(st_input.dense_shape[0], row_splits_dtype)
            splits = segment_ids_to_row_splits(rowids, nrows, out_type=row_splits_dtype)
            return cls._make(st_input.values, splits, validate=False)

    # ---------------------------------------------------------------- structure
    @property
    def values(self):
        return self._values

    @property
    def row_splits(self):
        return self._row_splits

    @property
    def flat_values(self):
        v = self._values
        while isinstance(v, RaggedTensor):
            v = v.values
        return v

    @property
    def nested_row_splits(self):
        out = [self._row_splits]
        v = self._values
        while isinstance(v, RaggedTensor):
            out.append(v.row_splits)
            v = v.values
        return tuple(out)

    @property
    def ragged_rank(self):
        return len(self.nested_row_splits)

    @property
    def dtype(self):
        return self.flat_values.dtype

    @property
    def row_splits_dtype(self):
        return self._row_splits.dtype

    @property
    def shape(self):
        """[nrows, None (ragged), ..., the flat values' inner dimensions]."""
        n = self._row_splits.shape.as_list()[0] if self._row_splits.shape.rank == 1 else None
        nrows = None if n is None else n - 1
        inner = self._values.shape
        if inner.rank is None:
            return tensor_shape.unknown_shape()
        return tensor_shape.TensorShape([nrows, None]).concatenate(inner[1:])

    def get_shape(self):
        return self.shape

    @property
    def graph(self):
        return self._row_splits.graph

    @property
    def op(self):
        return self.flat_values.op

    def nrows(self, out_type=None, name=None):
        out_type = self._row_splits.dtype if out_type is None else dtypes.as_dtype(out_type)
        with name_scope(name, "RaggedNRows"):
            n = shape_ops.shape(self._row_splits, out_type=out_type)[0] - 1
            return n

    def row_lengths(self, axis=1, name=None):
        if axis == 0:
            return self.nrows()
        if axis != 1:
            if not isinstance(self._values, RaggedTensor):
                raise ValueError(f"axis={axis} out of bounds: expected 0 <= axis < 2 for a ragged tensor "
                                 "of ragged rank 1")
            return self.with_values(self._values.row_lengths(axis - 1))
        with name_scope(name, "RaggedRowLengths"):
            return self._row_splits[1:] - self._row_splits[:-1]

    def value_rowids(self, name=None):
        return row_splits_to_segment_ids(self._row_splits, name=name)

    def row_starts(self, name=None):
        return self._row_splits[:-1]

    def row_limits(self, name=None):
        return self._row_splits[1:]

    def nested_row_lengths(self, name=None):
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt.row_lengths())
            rt = rt.values
        return tuple(out)

    def nested_value_rowids(self, name=None):
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt.value_rowids())
            rt = rt.values
        return tuple(out)

    def bounding_shape(self, axis=None, name=None, out_type=None):
        """The smallest dense shape that holds every row: [nrows, longest row, ...]."""
        out_type = self._row_splits.dtype if out_type is None else dtypes.as_dtype(out_type)
        with name_scope(name, "RaggedBoundingBox"):
            dims = [cast_ops.cast(self.nrows(), out_type)]
            rt = self
            while isinstance(rt, RaggedTensor):
                lengths = rt.row_lengths()
                longest = reduce_ops.reduce_max(join_ops.concat([lengths, convert_to_tensor(
                    [0], dtype=lengths.dtype)], 0))
                dims.append(cast_ops.cast(longest, out_type))
                rt = rt.values
            inner = shape_ops.shape(rt, out_type=out_type)[1:]
            shape = join_ops.concat([join_ops.stack(dims), inner], 0)
            if axis is not None:
                return shape[axis]
            return shape

    def with_values(self, new_values):
        return RaggedTensor._make(new_values, self._row_splits, validate=False)

    def with_flat_values(self, new_values):
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    def with_row_splits_dtype(self, dtype):
        dtype = dtypes.as_dtype(dtype)
        if dtype not in _SPLITS:
            raise ValueError(f"dtype must be int32 or int64, got {dtype.name}")
        values = self._values
        if isinstance(values, RaggedTensor):
            values = values.with_row_splits_dtype(dtype)
        splits = self._row_splits if self._row_splits.dtype == dtype else cast_ops.cast(self._row_splits, dtype)
        return RaggedTensor._make(values, splits, validate=False)

    # ---------------------------------------------------------------- conversions
    def to_sparse(self, name=None):
        """The SparseTensor with an element at [row, position in row, ...] for every value."""
        with name_scope(name, "RaggedToSparse"):
            indices, values, dense_shape = apply_op("RaggedTensorToSparse", list(self.nested_row_splits),
                                                    self.flat_values)
            return SparseTensor(indices, values, dense_shape)

    def to_tensor(self, default_value=None, name=None, shape=None):
        """The dense tensor of bounding_shape() (or `shape`), short rows padded with `default_value`
        (0); rows or values beyond `shape` are dropped."""
        with name_scope(name, "RaggedToTensor"):
            sparse = self.to_sparse()
            dense_shape = sparse.dense_shape
            indices, values = sparse.indices, sparse.values
            if shape is not None:
                target = _shape_vector(shape, dense_shape)
                keep = reduce_ops.reduce_all(cw.less(indices, shape_ops.reshape(target, [1, -1])), 1)
                indices = sort_ops.boolean_mask(indices, keep)
                values = sort_ops.boolean_mask(values, keep)
                dense_shape = target
            fill = convert_to_tensor(0 if default_value is None else default_value, dtype=self.dtype)
            base = shape_ops.fill(dense_shape, fill)
            return scatter_ops.tensor_scatter_nd_update(base, indices, values)

    def to_list(self):
        """Nested Python lists of the values (eager only)."""
        if not context.executing_eagerly() or not isinstance(self.flat_values, EagerTensor):
            raise ValueError("RaggedTensor.to_list() is only supported in eager mode; in graph mode, "
                             "evaluate the RaggedTensor first and then use RaggedTensorValue.to_list().")
        return self.numpy_value().to_list()

    def numpy_value(self):
        return RaggedTensorValue(_eager_numpy(self._values), self._row_splits.numpy())

    def numpy(self):
        """An object array of the rows (each a NumPy array, or for nested rows another object array)."""
        return self.numpy_value().numpy()

    def _fetch_parts(self):
        """For Session.run: the tensors to fetch and how to rebuild the value from them."""
        splits = list(self.nested_row_splits)
        parts = splits + [self.flat_values]

        def build(values):
            rt = values[-1]
            for s in reversed(values[:-1]):
                rt = RaggedTensorValue(rt, s)
            return rt
        return parts, build

    def eval(self, feed_dict=None, session=None):
        session = session or context.get_default_session()
        return session.run(self, feed_dict)

    # ---------------------------------------------------------------- indexing
    def __getitem__(self, key):
        if isinstance(key, tuple):
            if not key:
                return self
            first, rest = key[0], key[1:]
            if isinstance(first, slice) and first == slice(None) and rest:
                raise ValueError("RaggedTensor indexing of inner dimensions with ':' in the first dimension "
                                 "is not supported; index rows first")
            row = self[first]
            return row[rest] if rest else row
        if isinstance(key, slice):
            return self._row_slice(key)
        if isinstance(key, (Tensor, int, np.integer)):
            i = key
            if isinstance(i, (int, np.integer)) and i < 0:
                start, limit = self._row_splits[i - 1], self._row_splits[i]
            else:
                start, limit = self._row_splits[i], self._row_splits[i + 1]
            return self._values[start:limit]
        raise TypeError(f"RaggedTensor indices must be integers, slices or tuples of them, not "
                        f"{type(key).__name__}")

    def _row_slice(self, key):
        if key.step not in (None, 1):
            raise ValueError("RaggedTensor row slices with a step are not supported")
        n = self.shape.as_list()[0] if self.shape.rank else None
        a, b = key.start, key.stop
        if (a is not None and a < 0) or (b is not None and b < 0):
            if n is None:
                n_t = self.nrows()
                a = None if a is None else (a if a >= 0 else n_t + a)
                b = None if b is None else (b if b >= 0 else n_t + b)
            else:
                a, b, _ = slice(a, b).indices(n)
        a = 0 if a is None else a
        splits = self._row_splits
        sub = splits[a:] if b is None else splits[a:b + 1]
        if n is not None and isinstance(a, int) and (b is None or isinstance(b, int)):
            a = min(a, n)
        start = splits[a] if isinstance(a, Tensor) or n is None or a <= n else splits[-1]
        new_splits = sub - start
        end = sub[-1]
        return RaggedTensor._make(self._values[start:end], new_splits, validate=False)

    # ---------------------------------------------------------------- elementwise operators
    def _binary(self, other, fn, reverse=False):
        if isinstance(other, RaggedTensor):
            _check_same_partition(self, other)
            a, b = self.flat_values, other.flat_values
        else:
            other = convert_to_tensor(other, dtype=self.dtype) if not isinstance(other, Tensor) else other
            if other.shape.rank not in (0,):
                raise ValueError("RaggedTensor elementwise ops take a scalar or a RaggedTensor with the same "
                                 f"row partition; got a tensor of shape {other.shape}")
            a, b = self.flat_values, other
        if reverse:
            a, b = b, a
        return self.with_flat_values(fn(a, b))

    def __add__(self, other):
        return self._binary(other, cw.add)

    def __radd__(self, other):
        return self._binary(other, cw.add, True)

    def __sub__(self, other):
        return self._binary(other, cw.subtract)

    def __rsub__(self, other):
        return self._binary(other, cw.subtract, True)

    def __mul__(self, other):
        return self._binary(other, cw.multiply)

    def __rmul__(self, other):
        return self._binary(other, cw.multiply, True)

    def __truediv__(self, other):
        return self._binary(other, cw.truediv)

    def __rtruediv__(self, other):
        return self._binary(other, cw.truediv, True)

    def __neg__(self):
        return self.with_flat_values(cw.negative(self.flat_values))

    def __abs__(self):
        return self.with_flat_values(cw.abs(self.flat_values))

    def __lt__(self, other):
        return self._binary(other, cw.less)

    def __le__(self, other):
        return self._binary(other, cw.less_equal)

    def __gt__(self, other):
        return self._binary(other, cw.greater)

    def __ge__(self, other):
        return self._binary(other, cw.greater_equal)

    __hash__ = None

    def __bool__(self):
        raise TypeError("A RaggedTensor has no truth value")

    def __repr__(self):
        if isinstance(self.flat_values, EagerTensor):
            return f"<sf.RaggedTensor {self.to_list()}>"
        return f"sf.RaggedTensor(values={self._values!r}, row_splits={self._row_splits!r})"

    __str__ = __repr__


def _eager_numpy(values):
    if isinstance(values, RaggedTensor):
        return values.numpy_value()
    return values.numpy()


def _as_values(values):
    if isinstance(values, (RaggedTensor, Tensor)):
        return values
    if isinstance(values, RaggedTensorValue):
        return RaggedTensor.from_row_splits(values.values, values.row_splits, validate=False)
    return convert_to_tensor(values)


def _shape_vector(shape, like):
    if isinstance(shape, tensor_shape.TensorShape):
        shape = shape.as_list()
    if isinstance(shape, (list, tuple)):
        parts = [like[i] if d is None or (isinstance(d, int) and d < 0) else
                 convert_to_tensor(d, dtype=dtypes.int64) for i, d in enumerate(shape)]
        return join_ops.stack([cast_ops.cast(p, dtypes.int64) for p in parts])
    return cast_ops.cast(convert_to_tensor(shape), dtypes.int64)


def _check_same_partition(a, b):
    sa, sb = a.nested_row_splits, b.nested_row_splits
    if len(sa) != len(sb):
        raise ValueError(f"RaggedTensors of ragged rank {len(sa)} and {len(sb)} cannot be combined elementwise")
    for x, y in zip(sa, sb):
        if isinstance(x, EagerTensor) and isinstance(y, EagerTensor):
            if x.numpy().shape != y.numpy().shape or not np.array_equal(x.numpy(), y.numpy()):
                raise errors.InvalidArgumentError(None, None, "Inputs must have identical ragged splits")


class RaggedTensorValue:
    """A RaggedTensor's value in NumPy (what Session.run returns for a RaggedTensor)."""

    def __init__(self, values, row_splits):
        self._values = values
        self._row_splits = np.asarray(row_splits)

    @property
    def values(self):
        return self._values

    @property
    def row_splits(self):
        return self._row_splits

    @property
    def flat_values(self):
        v = self._values
        while isinstance(v, RaggedTensorValue):
            v = v.values
        return v

    @property
    def nested_row_splits(self):
        out, v = [self._row_splits], self._values
        while isinstance(v, RaggedTensorValue):
            out.append(v.row_splits)
            v = v.values
        return tuple(out)

    @property
    def ragged_rank(self):
        return len(self.nested_row_splits)

    @property
    def dtype(self):
        return self.flat_values.dtype

    @property
    def shape(self):
        return (self._row_splits.shape[0] - 1, None) + tuple(np.shape(self.flat_values)[1:])

    def row_lengths(self):
        return np.diff(self._row_splits)

    def value_rowids(self):
        return np.repeat(np.arange(self._row_splits.size - 1, dtype=self._row_splits.dtype),
                         np.diff(self._row_splits))

    def nrows(self):
        return self._row_splits.shape[0] - 1

    def _rows(self):
        s = self._row_splits
        return [self._values_slice(int(s[i]), int(s[i + 1])) for i in range(s.size - 1)]

    def _values_slice(self, a, b):
        v = self._values
        if isinstance(v, RaggedTensorValue):
            splits = v.row_splits[a:b + 1]
            return RaggedTensorValue(v.values_slice_raw(int(splits[0]), int(splits[-1])), splits - splits[0])
        return v[a:b]

    def values_slice_raw(self, a, b):
        return self._values_slice_flat(a, b)

    def _values_slice_flat(self, a, b):
        v = self._values
        if isinstance(v, RaggedTensorValue):
            splits = v.row_splits[a:b + 1]
            return RaggedTensorValue(v._values_slice_flat(int(splits[0]), int(splits[-1])), splits - splits[0])
        return v[a:b]

    def to_list(self):
        out = []
        for row in self._rows():
            out.append(row.to_list() if isinstance(row, RaggedTensorValue) else np.asarray(row).tolist())
        return out

    def numpy(self):
        rows = self._rows()
        out = np.empty(len(rows), dtype=object)
        for i, row in enumerate(rows):
            out[i] = row.numpy() if isinstance(row, RaggedTensorValue) else np.asarray(row)
        return out

    def __repr__(self):
        return f"tf.RaggedTensorValue(values={self._values!r}, row_splits={self._row_splits!r})"


# ----------------------------------------------------------------------------------------------
# constant: nested Python lists -> RaggedTensor

def _depth(x):
    if isinstance(x, (list, tuple)) or (isinstance(x, np.ndarray) and x.ndim > 0):
        return 1 + max((_depth(e) for e in x), default=0)
    return 0


def _scalar_depths(x, d, out):
    if isinstance(x, (list, tuple)) or (isinstance(x, np.ndarray) and x.ndim > 0):
        for e in x:
            _scalar_depths(e, d + 1, out)
    else:
        out.add(d)


def _ragged_parts(pylist, dtype, ragged_rank, inner_shape):
    """(flat values as a NumPy-convertible list, nested splits as int lists) of `pylist`."""
    depths = set()
    _scalar_depths(pylist, 0, depths)
    if len(depths) > 1:
        raise ValueError("all scalar values must have the same nesting depth")
    scalar_depth = depths.pop() if depths else None
    max_depth = _depth(pylist)
    if scalar_depth is not None and scalar_depth != max_depth:
        raise ValueError("all scalar values must have the same nesting depth")
    inner_rank = len(inner_shape) if inner_shape is not None else None
    if ragged_rank is None:
        if inner_rank is None:
            inner_rank = 0
        ragged_rank = max(1, max_depth - 1 - inner_rank)
    if inner_rank is None:
        inner_rank = max(0, max_depth - 1 - ragged_rank)
    if scalar_depth is not None and ragged_rank + inner_rank + 1 != max_depth:
        raise ValueError(f"pylist has scalar values at depth {max_depth}, but ragged_rank={ragged_rank} "
                         f"requires scalar values at depth {ragged_rank + inner_rank + 1}")
    level = [pylist]
    splits = []
    for _ in range(ragged_rank + 1):
        row_splits = [0]
        nxt = []
        for row in level:
            if not isinstance(row, (list, tuple, np.ndarray)):
                raise ValueError("pylist is not nested deeply enough for ragged_rank")
            nxt.extend(row)
            row_splits.append(len(nxt))
        splits.append(row_splits)
        level = nxt
    # the first level is the single-row wrapper added above
    return level, splits[1:], inner_rank


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None, row_splits_dtype=dtypes.int64):
    """A RaggedTensor from nested Python lists: `constant([[1, 2], [3]])` has rows [1, 2] and [3].

    The last `len(inner_shape)` dimensions are uniform (each flat value an array of that shape);
    the others, but the first, are ragged. A pylist with no nesting gives a plain tensor.
    """
    row_splits_dtype = dtypes.as_dtype(row_splits_dtype)
    if isinstance(pylist, RaggedTensorValue):
        pylist = pylist.to_list()
    with name_scope(name, "RaggedConstant"):
        if _depth(pylist) == 0:
            return convert_to_tensor(pylist, dtype=dtype)
        flat, splits, inner_rank = _ragged_parts(pylist, dtype, ragged_rank, inner_shape)
        if flat:
            values = convert_to_tensor(flat, dtype=dtype)
        else:
            shape = [0] + list(inner_shape or [])
            values = convert_to_tensor(np.zeros(shape, (dtypes.as_dtype(dtype) if dtype is not None
                                                        else dtypes.float32).as_numpy_dtype))
        if inner_shape is not None and values.shape.rank is not None and \
                values.shape.as_list()[1:] != list(inner_shape):
            values = shape_ops.reshape(values, [-1] + list(inner_shape))
        nested = [convert_to_tensor(np.asarray(s, row_splits_dtype.as_numpy_dtype)) for s in splits]
        return RaggedTensor.from_nested_row_splits(values, nested, validate=False)


def constant_value(pylist, dtype=None, ragged_rank=None, inner_shape=None, row_splits_dtype="int64"):
    """constant() as a RaggedTensorValue of NumPy arrays."""
    if _depth(pylist) == 0:
        return np.asarray(pylist, dtype)
    flat, splits, _ = _ragged_parts(pylist, dtype, ragged_rank, inner_shape)
    values = np.asarray(flat, dtype) if flat else np.zeros([0] + list(inner_shape or []), dtype or np.float64)
    out = values
    for s in reversed(splits):
        out = RaggedTensorValue(out, np.asarray(s, np.dtype(row_splits_dtype)))
    return out


# ----------------------------------------------------------------------------------------------
# ops over ragged tensors

def map_flat_values(op, *args, **kwargs):
    """`op` applied to the flat values of the ragged arguments (all with one row partition); the
    result has that partition."""
    partition = None
    flat_args = []
    for a in args:
        if isinstance(a, RaggedTensor):
            if partition is None:
                partition = a
            else:
                _check_same_partition(partition, a)
            flat_args.append(a.flat_values)
        else:
            flat_args.append(a)
    flat_kwargs = {}
    for k, a in kwargs.items():
        if isinstance(a, RaggedTensor):
            if partition is None:
                partition = a
            else:
                _check_same_partition(partition, a)
            flat_kwargs[k] = a.flat_values
        else:
            flat_kwargs[k] = a
    if partition is None:
        return op(*flat_args, **flat_kwargs)
    return partition.with_flat_values(op(*flat_args, **flat_kwargs))


_SEGMENT_REDUCERS = {
    "sum": segment_ops.unsorted_segment_sum,
    "max": segment_ops.unsorted_segment_max,
    "min": segment_ops.unsorted_segment_min,
    "prod": segment_ops.unsorted_segment_prod,
}
_DENSE_REDUCERS = {"sum": reduce_ops.reduce_sum, "max": reduce_ops.reduce_max, "min": reduce_ops.reduce_min,
                   "prod": reduce_ops.reduce_prod, "mean": reduce_ops.reduce_mean}


def _reduce(kind, rt, axis, keepdims, name):
    if not isinstance(rt, RaggedTensor):
        return _DENSE_REDUCERS[kind](rt, axis, keepdims=keepdims, name=name)
    with name_scope(name, "RaggedReduce" + kind.capitalize()):
        rank = rt.shape.rank
        if axis is None:
            return _DENSE_REDUCERS[kind](rt.flat_values, None, keepdims=False)
        if isinstance(axis, (list, tuple)):
            axes = sorted({(a + rank if a < 0 else a) for a in axis}, reverse=True)
            out = rt
            for a in axes:
                out = _reduce(kind, out, a, keepdims, None)
            return out
        if axis < 0:
            if rank is None:
                raise ValueError("a negative axis needs a ragged tensor of known rank")
            axis += rank
        if keepdims:
            raise ValueError("keepdims=True is not supported for ragged reductions")
        if axis == 0:
            # row k of the result combines position k of every row: segment by position
            if kind == "mean":
                total = _reduce("sum", rt, 0, False, None)
                count = _reduce("sum", rt.with_flat_values(shape_ops.ones_like(rt.flat_values)), 0, False, None)
                return _map2(_mean_of, total, count)
            values = rt.values
            rowids = rt.value_rowids()
            positions = range_(0, shape_ops.shape(rowids, out_type=rowids.dtype)[0], dtype=rowids.dtype) - \
                gather_ops.gather(rt.row_splits, rowids)
            width = reduce_ops.reduce_max(join_ops.concat([rt.row_lengths(), convert_to_tensor(
                [0], dtype=rowids.dtype)], 0))
            if isinstance(values, RaggedTensor):
                raise ValueError("reducing axis 0 of a ragged tensor of ragged rank > 1 is not supported")
            return _SEGMENT_REDUCERS[kind](values, positions, width)
        if axis == 1:
            nrows = rt.nrows()
            rowids = rt.value_rowids()
            values = rt.values
            if isinstance(values, RaggedTensor):
                # the rows of `values` combine by position within each outer row
                raise ValueError("reducing axis 1 of a ragged tensor of ragged rank > 1 is not supported")
            if kind == "mean":
                total = segment_ops.unsorted_segment_sum(values, rowids, nrows)
                count = segment_ops.unsorted_segment_sum(shape_ops.ones_like(values), rowids, nrows)
                return _mean_of(total, count)
            return _SEGMENT_REDUCERS[kind](values, rowids, nrows)
        # an inner axis: reduce inside the values
        return rt.with_values(_reduce(kind, rt.values, axis - 1, keepdims, None))


def _mean_of(total, count):
    """total / count, 0 where count is 0; integers divide truncating (as TF's integer mean)."""
    if total.dtype.is_floating or total.dtype.is_complex:
        return cw.div_no_nan(total, count)
    return cw.truncatediv(total, cw.maximum(count, shape_ops.ones_like(count)))


def _map2(fn, a, b):
    if isinstance(a, RaggedTensor):
        return a.with_flat_values(fn(a.flat_values, b.flat_values if isinstance(b, RaggedTensor) else b))
    return fn(a, b)


def reduce_sum(input_tensor, axis=None, keepdims=None, name=None):
    """Sum along `axis` of a ragged tensor: along the ragged axis 1 a segment sum per row (rows
    without values give 0), along 0 a sum per position."""
    return _reduce("sum", input_tensor, axis, bool(keepdims), name)


def reduce_mean(input_tensor, axis=None, keepdims=None, name=None):
    return _reduce("mean", input_tensor, axis, bool(keepdims), name)


def reduce_max(input_tensor, axis=None, keepdims=None, name=None):
    """Max along `axis`; an empty row gives the dtype's lowest value (as TF's segment max)."""
    return _reduce("max", input_tensor, axis, bool(keepdims), name)


def reduce_min(input_tensor, axis=None, keepdims=None, name=None):
    return _reduce("min", input_tensor, axis, bool(keepdims), name)


def reduce_prod(input_tensor, axis=None, keepdims=None, name=None):
    return _reduce("prod", input_tensor, axis, bool(keepdims), name)


def boolean_mask(data, mask, name=None):
    """The elements of `data` where `mask` is true, per row (a ragged mask keeps the ragged rows of
    data; a dense 2-D mask on dense data gives ragged rows)."""
    with name_scope(name, "RaggedMask"):
        if isinstance(mask, RaggedTensor):
            if not isinstance(data, RaggedTensor):
                data = RaggedTensor.from_tensor(data, lengths=mask.row_lengths())
            _check_same_partition(data, mask)
            keep = mask.flat_values
            values = sort_ops.boolean_mask(data.flat_values, keep)
            rowids = gather_ops.gather(data.value_rowids(), cw.where_v2(keep)[:, 0])
            splits = segment_ids_to_row_splits(rowids, data.nrows(), out_type=data.row_splits.dtype)
            return RaggedTensor._make(values, splits, validate=False)
        mask = convert_to_tensor(mask, dtype=dtypes.bool)
        if mask.shape.rank == 1:
            return sort_ops.boolean_mask(data, mask)
        data = convert_to_tensor(data)
        dense = RaggedTensor.from_tensor(data)
        return boolean_mask(dense, RaggedTensor.from_tensor(mask))


def ragged_range(starts, limits=None, deltas=1, dtype=None, name=None, row_splits_dtype=dtypes.int64):
    """Row i is range(starts[i], limits[i], deltas[i]) (scalars broadcast)."""
    if limits is None:
        starts, limits = 0, starts
    with name_scope(name, "RaggedRange"):
        starts_v = np.asarray(_concrete(starts))
        limits_v = np.asarray(_concrete(limits))
        deltas_v = np.asarray(_concrete(deltas))
        if any(v is None for v in (starts_v, limits_v, deltas_v)):
            raise ValueError("ragged.range needs starts, limits and deltas whose values are known")
        starts_v, limits_v, deltas_v = np.broadcast_arrays(starts_v, limits_v, deltas_v)
        rows = [np.arange(s, l, d) for s, l, d in zip(starts_v.reshape(-1), limits_v.reshape(-1),
                                                      deltas_v.reshape(-1))]
        if np.any(deltas_v == 0):
            raise errors.InvalidArgumentError(None, None, "RaggedRange: Requires delta != 0")
        dtype = dtypes.as_dtype(dtype) if dtype is not None else convert_to_tensor(
            starts_v.reshape(-1)[:1].tolist() or [0]).dtype
        flat = np.concatenate(rows).astype(dtype.as_numpy_dtype) if rows else np.zeros(0, dtype.as_numpy_dtype)
        splits = np.zeros(len(rows) + 1, dtypes.as_dtype(row_splits_dtype).as_numpy_dtype)
        np.cumsum([len(r) for r in rows], out=splits[1:])
        return RaggedTensor.from_row_splits(convert_to_tensor(flat), convert_to_tensor(splits), validate=False)


def _concrete(x):
    if isinstance(x, EagerTensor):
        return x.numpy()
    if isinstance(x, Tensor):
        return tensor_util.constant_value(x)
    return x


def stack_dynamic_partitions(data, partitions, num_partitions, name=None):
    """Row p holds the elements of `data` whose partition is p, in order (ragged dynamic_partition)."""
    with name_scope(name, "SegmentStackDynamicPartitions"):
        data = convert_to_tensor(data)
        partitions = convert_to_tensor(partitions)
        order = sort_ops.argsort(partitions, stable=True)
        values = gather_ops.gather(data, order)
        rowids = gather_ops.gather(partitions, order)
        splits = segment_ids_to_row_splits(cast_ops.cast(rowids, dtypes.int64),
                                           convert_to_tensor(num_partitions, dtype=dtypes.int64))
        return RaggedTensor._make(values, splits, validate=False)

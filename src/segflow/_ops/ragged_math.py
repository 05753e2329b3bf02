"""Ops over ragged tensors (TF's `ragged_math_ops`, `ragged_array_ops`, `ragged_functional_ops`):
reductions, boolean_mask, range, stack_dynamic_partitions, map_flat_values.

A reduction along a ragged axis is a segment reduction: along axis 1 each value's segment is its
row (`value_rowids`), along axis 0 its position within its row; where the values are ragged
themselves, their rows are combined position by position (TF's `_ragged_segment_aggregate`).
Empty rows give the segment reductions' identities: 0 for sum, 1 for prod, the dtype's lowest
(largest) value for max (min), and NaN for mean (0 / 0, as TF).
"""
import numpy as np

from segflow._core import dtypes, errors
from segflow._core.apply import apply_op
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._core.registry import NotDifferentiable, TensorSpec, register_op
from segflow._core.tensor import EagerTensor, Tensor
from segflow._core import fold as tensor_util
from segflow.kernels import BadInput
from segflow._ops import cast as cast_ops, elementwise as cw, gather as gather_ops, join as join_ops
from segflow._ops import reduce as reduce_ops, segment as segment_ops, shape as shape_ops, sort as sort_ops
from segflow._ops import transpose as transpose_ops
from segflow._ops.ragged import RaggedTensor, check_same_partition
from segflow._ops.ragged_ops import row_splits_to_segment_ids, segment_ids_to_row_splits
from segflow._ops.sequence import range as range_

__all__ = ["map_flat_values", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod",
           "boolean_mask", "ragged_range", "stack_dynamic_partitions"]


def map_flat_values(op, *args, **kwargs):
    """`op` applied to the flat values of the ragged arguments (all with one row partition); the
    result has that partition."""
    partition = []

    def flat(a):
        if isinstance(a, RaggedTensor):
            if partition:
                check_same_partition(partition[0], a)
            else:
                partition.append(a)
            return a.flat_values
        return a

    out = op(*[flat(a) for a in args], **{k: flat(a) for k, a in kwargs.items()})
    return partition[0].with_flat_values(out) if partition else out


# ----------------------------------------------------------------------------------------------
# reductions

_SEGMENT = {"sum": segment_ops.unsorted_segment_sum, "max": segment_ops.unsorted_segment_max,
            "min": segment_ops.unsorted_segment_min, "prod": segment_ops.unsorted_segment_prod}
_DENSE = {"sum": reduce_ops.reduce_sum, "max": reduce_ops.reduce_max, "min": reduce_ops.reduce_min,
          "prod": reduce_ops.reduce_prod}


def _rows_and_positions(row_splits):
    """For each value a row partition covers: its row, and its position within that row."""
    rowids = row_splits_to_segment_ids(row_splits)
    n = shape_ops.shape(rowids, out_type=rowids.dtype)[0]
    return rowids, range_(0, n, dtype=rowids.dtype) - gather_ops.gather(row_splits, rowids)


def positions_in_rows(rt):
    """For each value of `rt.values`, its position within its row."""
    return _rows_and_positions(rt.row_splits)[1]


def _segment_aggregate(kind, data, segment_ids, num_segments):
    """unsorted_segment_<kind> of the rows of `data`; ragged rows combine position by position."""
    if not isinstance(data, RaggedTensor):
        return _SEGMENT[kind](data, segment_ids, num_segments)
    lengths = data.row_lengths()
    out_lengths = cw.maximum(segment_ops.unsorted_segment_max(lengths, segment_ids, num_segments),
                             shape_ops.zeros_like(lengths[:1]))
    out_splits = join_ops.concat([shape_ops.zeros([1], dtype=out_lengths.dtype), reduce_ops.cumsum(out_lengths)], 0)
    # value j of data row r goes to position j of output row segment_ids[r]
    starts = gather_ops.gather(out_splits, segment_ids)
    value_ids = gather_ops.gather(starts, data.value_rowids()) + positions_in_rows(data)
    values = _segment_aggregate(kind, data.values, value_ids, out_splits[-1])
    return RaggedTensor._make(values, out_splits, validate=False)


def _expand_dims(t, axis):
    if not isinstance(t, RaggedTensor):
        return transpose_ops.expand_dims(t, axis)
    if axis == 0:
        return RaggedTensor.from_uniform_row_length(t, t.nrows(), nrows=1, validate=False)
    return RaggedTensor.from_uniform_row_length(t, 1, nrows=t.nrows(), validate=False)


def _axes(axis, rank):
    """`axis` (None, an int, a list of them or a constant tensor) with negative axes resolved."""
    if isinstance(axis, Tensor):
        value = axis.numpy() if isinstance(axis, EagerTensor) else tensor_util.constant_value(axis)
        if value is None:
            raise ValueError("axis must be known at graph construction time.")
        axis = np.asarray(value).tolist()
    if axis is None:
        return None
    many = isinstance(axis, (list, tuple))
    out = []
    for a in (axis if many else [axis]):
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise TypeError(f"axis must be an int; got {type(a).__name__}")
        if rank is not None and not -rank <= a < rank:
            raise ValueError(f"axis={a} out of bounds: expected {-rank}<=axis<{rank}")
        if a < 0:
            if rank is None:
                raise ValueError("a negative axis needs a ragged tensor of known rank")
            a += rank
        out.append(int(a))
    return out if many else out[0]


def _aggregate(kind, rt, axis, keepdims):
    """TF's ragged_reduce_aggregate for sum, max, min, prod (one axis at a time, innermost first)."""
    if not isinstance(rt, RaggedTensor):
        return _DENSE[kind](rt, axis, keepdims=keepdims)
    rank = rt.shape.rank
    axis = _axes(axis, rank)
    if axis is None:
        result = _DENSE[kind](rt.flat_values, None)
        return shape_ops.reshape(result, [1] * rank) if keepdims and rank is not None else result
    if isinstance(axis, list):
        for a in sorted(set(axis), reverse=True):
            rt = _aggregate(kind, rt, a, keepdims)
        return rt
    if axis == 0:
        lengths = rt.row_lengths()
        width = reduce_ops.reduce_max(join_ops.concat([lengths, shape_ops.zeros_like(lengths[:1])], 0))
        result = _segment_aggregate(kind, rt.values, positions_in_rows(rt), width)
    elif axis == 1:
        result = _segment_aggregate(kind, rt.values, rt.value_rowids(), rt.nrows())
    else:
        return rt.with_values(_aggregate(kind, rt.values, axis - 1, keepdims))
    return _expand_dims(result, axis) if keepdims else result


def _reduce(kind, input_tensor, axis, keepdims, name):
    with name_scope(name, "RaggedReduce" + kind.capitalize()):
        return _aggregate(kind, input_tensor, axis, bool(keepdims))


def reduce_sum(input_tensor, axis=None, keepdims=None, name=None):
    """Sum along `axis` (None, an int or a list) of a ragged (or dense) tensor: along the ragged
    axis 1 a segment sum per row (rows without values give 0), along 0 a sum per position."""
    return _reduce("sum", input_tensor, axis, keepdims, name)


def reduce_max(input_tensor, axis=None, keepdims=None, name=None):
    """Max along `axis`; an empty row gives the dtype's lowest value (TF's unsorted_segment_max)."""
    return _reduce("max", input_tensor, axis, keepdims, name)


def reduce_min(input_tensor, axis=None, keepdims=None, name=None):
    """Min along `axis`; an empty row gives the dtype's largest value."""
    return _reduce("min", input_tensor, axis, keepdims, name)


def reduce_prod(input_tensor, axis=None, keepdims=None, name=None):
    """Product along `axis`; an empty row gives 1."""
    return _reduce("prod", input_tensor, axis, keepdims, name)


def reduce_mean(input_tensor, axis=None, keepdims=None, name=None):
    """The sum along `axis` over the count along it (both over all axes given): an empty row gives
    NaN, and integers give float64, as TF's `/` (truediv)."""
    with name_scope(name, "RaggedReduceMean"):
        keepdims = bool(keepdims)
        total = _aggregate("sum", input_tensor, axis, keepdims)
        if isinstance(input_tensor, RaggedTensor):
            ones = input_tensor.with_flat_values(shape_ops.ones_like(input_tensor.flat_values))
        else:
            ones = shape_ops.ones_like(input_tensor)
        count = _aggregate("sum", ones, axis, keepdims)
        if isinstance(total, RaggedTensor):
            return total.with_flat_values(cw.truediv(total.flat_values, count.flat_values))
        return cw.truediv(total, count)


# sf.reduce_sum(rt, ...) and kin on a RaggedTensor come here (TF dispatches them the same way)
reduce_ops.DISPATCH[RaggedTensor] = {
    "Sum": lambda x, axis, keepdims, name: reduce_sum(x, axis, keepdims, name),
    "Max": lambda x, axis, keepdims, name: reduce_max(x, axis, keepdims, name),
    "Min": lambda x, axis, keepdims, name: reduce_min(x, axis, keepdims, name),
    "Prod": lambda x, axis, keepdims, name: reduce_prod(x, axis, keepdims, name),
    "Mean": lambda x, axis, keepdims, name: reduce_mean(x, axis, keepdims, name),
}


# ----------------------------------------------------------------------------------------------
# boolean_mask, range, stack_dynamic_partitions

def gather_rows(data, indices):
    """Rows `indices` (a vector) of a tensor or ragged tensor."""
    if not isinstance(data, RaggedTensor):
        return gather_ops.gather(data, indices)
    starts = gather_ops.gather(data.row_starts(), indices)
    lengths = gather_ops.gather(data.row_lengths(), indices)
    splits = join_ops.concat([shape_ops.zeros([1], dtype=lengths.dtype), reduce_ops.cumsum(lengths)], 0)
    rowids, positions = _rows_and_positions(splits)
    value_ids = gather_ops.gather(starts, rowids) + positions
    return RaggedTensor._make(gather_rows(data.values, value_ids), splits, validate=False)


def boolean_mask(data, mask, name=None):
    """The elements of `data` where `mask` is true, without flattening the mask's dimensions: the
    result is ragged along the mask's last dimension (TF's `tf.ragged.boolean_mask`).

    `mask` (bool, dense or ragged, of known rank) covers a prefix of `data`'s dimensions; a ragged
    mask's row partitions must be those of data (dense data is made ragged with the mask's ragged
    rank). A 1-D mask selects rows.
    """
    with name_scope(name, "RaggedMask"):
        if not isinstance(mask, RaggedTensor):
            mask = convert_to_tensor(mask, dtype=dtypes.bool)
            rank = mask.shape.rank
            if rank is None:
                raise ValueError("mask.shape.ndims must be known statically.")
            if rank == 0:
                raise ValueError("mask cannot be scalar.")
            if rank == 1:
                if isinstance(data, RaggedTensor):
                    return gather_rows(data, cw.where_v2(mask)[:, 0])
                return sort_ops.boolean_mask(data, mask)
            mask = RaggedTensor.from_tensor(mask, ragged_rank=rank - 1)
        elif mask.dtype != dtypes.bool:
            raise TypeError(f"mask must be bool, got {mask.dtype.name}")
        if not isinstance(data, RaggedTensor):
            data = RaggedTensor.from_tensor(data, ragged_rank=mask.ragged_rank,
                                            row_splits_dtype=mask.row_splits.dtype)
        if data.ragged_rank < mask.ragged_rank:
            raise ValueError(f"a mask of ragged rank {mask.ragged_rank} needs data of at least that ragged rank, "
                             f"got {data.ragged_rank}")
        return _mask_rows(data, mask)


def _mask_rows(data, mask):
    """data and mask share their outer partitions; the mask's innermost rows select data's."""
    check_same_partition(data, mask, depth=1)
    if isinstance(mask.values, RaggedTensor):
        return data.with_values(_mask_rows(data.values, mask.values))
    keep = mask.values
    values = boolean_mask(data.values, keep)     # a 1-D mask: rows of data.values
    rowids = sort_ops.boolean_mask(data.value_rowids(), keep)
    splits = segment_ids_to_row_splits(rowids, data.nrows(), out_type=data.row_splits.dtype)
    return RaggedTensor._make(values, splits, validate=False)


def _range_kernel(starts, limits, deltas, Tsplits=dtypes.int64):
    for name, v in (("starts", starts), ("limits", limits), ("deltas", deltas)):
        if v.ndim > 1:
            raise BadInput(name, f"must be a scalar or a vector, got shape {list(v.shape)}")
    try:
        starts, limits, deltas = np.broadcast_arrays(starts, limits, deltas)
    except ValueError:
        raise BadInput("starts", f"starts, limits and deltas must have the same size, got {starts.size}, "
                       f"{limits.size} and {deltas.size}") from None
    if np.any(deltas == 0):
        raise BadInput("deltas", "Requires delta != 0")
    rows = [np.arange(s, l, d, dtype=starts.dtype)
            for s, l, d in zip(starts.reshape(-1), limits.reshape(-1), deltas.reshape(-1))]
    splits = np.zeros(len(rows) + 1, Tsplits.as_numpy_dtype)
    np.cumsum([len(r) for r in rows], out=splits[1:])
    values = np.concatenate(rows) if rows else np.zeros(0, starts.dtype)
    return [splits, values.astype(starts.dtype)]


def _infer_range(op, starts, limits, deltas, Tsplits=dtypes.int64):
    if not starts.dtype == limits.dtype == deltas.dtype:
        raise errors.invalid_op(op, f"starts, limits and deltas must have one dtype, got {starts.dtype.name}, "
                                    f"{limits.dtype.name} and {deltas.dtype.name}")
    return [TensorSpec(Tsplits, [None]), TensorSpec(starts.dtype, [None])]


register_op("RaggedRange", inputs=("starts", "limits", "deltas"), attrs={"T": "starts"},
            allowed={"T": (dtypes.bfloat16, dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)},
            infer=_infer_range, kernel=_range_kernel, num_outputs=2, defaults={"Tsplits": dtypes.int64})
NotDifferentiable("RaggedRange")

_RANGE_DTYPES = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


def ragged_range(starts, limits=None, deltas=1, dtype=None, name=None, row_splits_dtype=dtypes.int64):
    """Row i is range(starts[i], limits[i], deltas[i]) (scalars broadcast; empty where the bounds
    run against delta, as Python's range). Without `dtype` the widest of the inputs' dtypes
    (int32 < int64 < float32 < float64) is used."""
    if limits is None:
        starts, limits = 0, starts
    with name_scope(name, "RaggedRange"):
        if dtype is not None:
            parts = [convert_to_tensor(x, dtype=dtype) for x in (starts, limits, deltas)]
        else:
            parts = [convert_to_tensor(x) for x in (starts, limits, deltas)]
            for p in parts:
                if p.dtype not in _RANGE_DTYPES:
                    raise TypeError(f"ragged.range takes int32, int64, float32 or float64, got {p.dtype.name}")
            widest = max((p.dtype for p in parts), key=_RANGE_DTYPES.index)
            parts = [p if p.dtype == widest else cast_ops.cast(p, widest) for p in parts]
        splits, values = apply_op("RaggedRange", *parts, Tsplits=dtypes.as_dtype(row_splits_dtype))
        return RaggedTensor._make(values, splits, validate=False)


def stack_dynamic_partitions(data, partitions, num_partitions, name=None):
    """Row p holds the slices of `data` whose partition is p, in row-major order (a ragged
    dynamic_partition); `partitions` covers a prefix of data's dimensions."""
    with name_scope(name, "SegmentStackDynamicPartitions"):
        data = convert_to_tensor(data)
        partitions = convert_to_tensor(partitions)
        if partitions.shape.rank is None:
            raise ValueError("partitions must have known rank.")
        if partitions.shape.rank != 1:
            k = partitions.shape.rank
            data = shape_ops.reshape(data, join_ops.concat([[-1], shape_ops.shape(data)[k:]], 0))
            partitions = shape_ops.reshape(partitions, [-1])
        order = sort_ops.argsort(partitions, stable=True)
        values = gather_ops.gather(data, order)
        rowids = cast_ops.cast(gather_ops.gather(partitions, order), dtypes.int64)
        splits = segment_ids_to_row_splits(rowids, convert_to_tensor(num_partitions, dtype=dtypes.int64))
        return RaggedTensor._make(values, splits, validate=False)

"""Splitting rows into partitions and stitching them back: dynamic_partition, dynamic_stitch,
parallel_dynamic_stitch.

Gradients in stitch_grad.py. Where indices repeat,
`dynamic_stitch` lets later indices win, as TensorFlow does.
"""

from __future__ import annotations

from typing import Sequence
import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core import fold as tensor_util
from segflow._core.apply import apply_op
from segflow._core.memory import memory_limit
from segflow._core.registry import TensorSpec, register_op
from segflow.kernels import BadInput, ids, index_text
from segflow._ops.shape import check_output_shape
from segflow._core.typing import Name, TensorLike
from segflow._core.tensor import Tensor

__all__ = ["dynamic_partition", "dynamic_stitch", "parallel_dynamic_stitch"]


# ----------------------------------------------------------------------------------------------
# DynamicStitch


def _count_problem(n_indices, n_data):
    return (f"List argument 'data' with length {n_data} must match length {n_indices} of argument 'indices': "
            "it takes as many data tensors as indices tensors")


def _negative_problem(i, ind):
    """TF's "out of range" for the first negative index of indices tensor `i` (a NumPy array)."""
    flat = np.asarray(ind).reshape(-1)
    bad = int(np.flatnonzero(flat < 0)[0])
    return (f"indices[{i}][{index_text(bad, np.shape(ind))}] = {flat[bad]} is negative: out of range, as the "
            "indices of a stitch are rows (>= 0) of its result")


def _infer_stitch(op, indices, data):
    if len(indices) != len(data):
        raise errors.invalid_op(op, _count_problem(len(indices), len(data)))
    if not indices:
        raise errors.invalid_op(op, "needs at least one indices tensor")
    for i, t in enumerate(indices):
        if t.dtype not in dtypes.INDEX:
            raise errors.invalid_input(op, "indices", f"indices[{i}] must be int32 or int64, not {t.dtype.name}")
    tail = None
    for i, (ind, d) in enumerate(zip(indices, data)):
        if ind.shape.rank is None or d.shape.rank is None:
            continue
        if not tensor_shape.is_prefix(ind.shape, d.shape):
            raise errors.invalid_input(op, "data", f"data[{i}].shape {d.shape} does not start with "
                                       f"indices[{i}].shape {ind.shape}")
        this = tensor_shape.TensorShape(d.shape.as_list()[ind.shape.rank:])
        if tail is not None and not tail.is_compatible_with(this):
            raise errors.invalid_input(op, "data", f"data[{i}] has inner shape {this}; data[0] has {tail}")
        tail = this if tail is None else tail.merge_with(this)
    rows = None
    known = [tensor_util.constant_value(t) for t in indices]
    for i, k in enumerate(known):       # a constant negative index: the kernel's error, at build time
        if k is not None and np.size(k) and np.min(k) < 0:
            raise errors.invalid_input(op, "indices", _negative_problem(i, k))
    if all(k is not None for k in known):
        rows = int(max((int(np.max(k)) for k in known if np.size(k)), default=-1)) + 1
    if tail is None or tail.rank is None:
        return [TensorSpec(data[0].dtype, tensor_shape.unknown_shape())]
    return [TensorSpec(data[0].dtype, [rows] + tail.as_list())]


def stitch(indices, data):
    """merged[indices[i][j...]] = data[i][j...]; later (i, j) win for repeated indices."""
    if len(indices) != len(data):
        raise BadInput("data", _count_problem(len(indices), len(data)))
    tail = None
    for i, ind in enumerate(indices):     # int32 / int64 only: a float index is never truncated
        try:
            ids.check_index_dtype(ind, f"indices[{i}]")
        except BadInput as e:
            raise BadInput("indices", e.message) from None
    for i, (ind, d) in enumerate(zip(indices, data)):
        if d.shape[:ind.ndim] != ind.shape:
            raise BadInput("data", f"data[{i}].shape {list(d.shape)} does not start with indices[{i}].shape "
                                   f"{list(ind.shape)}")
        this = d.shape[ind.ndim:]
        if tail is None:
            tail = this
        elif this != tail:
            raise BadInput("data", f"data[{i}] has inner shape {list(this)}; data[0] has {list(tail)}")
        if ind.size and ind.min() < 0:
            raise BadInput("indices", _negative_problem(i, ind))
    flat = np.concatenate([np.asarray(ind, np.int64).reshape(-1) for ind in indices])
    # the leading dimension spelled out: (-1,) + tail is ambiguous for NumPy when tail holds a 0
    values = [d.reshape((ind.size,) + tail) for ind, d in zip(indices, data)]
    values = np.concatenate(values) if len(values) > 1 else values[0]
    rows = int(flat.max()) + 1 if flat.size else 0
    check_output_shape((rows,) + tail, data[0].dtype, "indices")
    out = np.zeros((rows,) + tail, dtype=data[0].dtype)
    if flat.size:
        rev = flat[::-1]
        uniq, first = np.unique(rev, return_index=True)      # the last writer of each row
        out[uniq] = values[flat.size - 1 - first]
    return out


for _name in ("DynamicStitch", "ParallelDynamicStitch"):
    register_op(_name, inputs=("indices*", "data*"), attrs={"T": "data"}, infer=_infer_stitch, kernel=stitch)


def dynamic_stitch(indices: Sequence[TensorLike], data: Sequence[TensorLike], name: Name = None) -> Tensor:
    """Interleaves the rows of `data` into one tensor: `merged[indices[i][j]] = data[i][j]`.

    Args:
      indices: list of int32 tensors (any shapes) of non-negative row ids.
      data: list of tensors, `data[i].shape = indices[i].shape + inner_shape`, of any dtype
        (quantized ones too).
    Returns:
      Shape `[max(indices) + 1] + inner_shape`. Where an id repeats, the later entry (in list order,
      then in order within a tensor) wins; rows no index names are 0.
    """
    return apply_op("DynamicStitch", list(indices), list(data), name=name)


def parallel_dynamic_stitch(indices: Sequence[TensorLike], data: Sequence[TensorLike], name: Name = None) -> Tensor:
    """dynamic_stitch (deterministic here: later entries win as in dynamic_stitch)."""
    return apply_op("ParallelDynamicStitch", list(indices), list(data), name=name)


# ----------------------------------------------------------------------------------------------
# DynamicPartition


# num_partitions is an int attr that TF's kernel reads as an int32; every partition is an output
# (an array and a tensor object, ~256 bytes of bookkeeping even when empty), so a count whose
# outputs alone would not fit in memory is refused before any of them is made.
_MAX_PARTITIONS = 2**31 - 1
_BYTES_PER_OUTPUT = 256


def _num_partitions_problem(num_partitions):
    """(kind, message) for an unusable num_partitions attr, or None: kind is "type" (not an
    integer), "value" (< 1 or beyond int32) or "memory" (too many outputs for memory)."""
    if isinstance(num_partitions, (bool, np.bool_)) or not isinstance(num_partitions, (int, np.integer)):
        return "type", f"attr 'num_partitions' must be an int, got {num_partitions!r}"
    n = int(num_partitions)
    if n < 1:
        return "value", f"attr 'num_partitions' = {n} must be an integer at least 1"
    if n > _MAX_PARTITIONS:
        return "value", f"attr 'num_partitions' = {n} does not fit in int32 (at most {_MAX_PARTITIONS})"
    nbytes = n * _BYTES_PER_OUTPUT
    if nbytes > memory_limit():
        return "memory", (f"attr 'num_partitions' = {n} asks for {n} outputs, about {nbytes} bytes of "
                          f"bookkeeping: more than the {memory_limit()} bytes of memory")
    return None


def _check_num_partitions_attr(op, num_partitions):
    """Raises the segflow error for an unusable num_partitions (graph building, the wrapper)."""
    problem = _num_partitions_problem(num_partitions)
    if problem is None:
        return int(num_partitions)
    kind, message = problem
    cls = {"type": errors.DTypeError, "value": errors.InvalidArgumentError, "memory": errors.ResourceExhaustedError}[kind]
    raise errors.invalid_op(op, message, cls=cls)


def _infer_partition(op, data, partitions, num_partitions):
    num_partitions = _check_num_partitions_attr(op, num_partitions)
    if partitions.dtype not in dtypes.INDEX:
        raise errors.invalid_input(op, "partitions", f"must be int32, not {partitions.dtype.name}")
    if data.shape.rank is not None and partitions.shape.rank is not None \
            and not tensor_shape.is_prefix(partitions.shape, data.shape):
        raise errors.invalid_input(op, "partitions", f"shape {partitions.shape} is not a prefix of data's shape "
                                   f"{data.shape}")
    tail = [] if data.shape.rank is None or partitions.shape.rank is None \
        else data.shape.as_list()[partitions.shape.rank:]
    shape = tensor_shape.unknown_shape() if data.shape.rank is None or partitions.shape.rank is None else [None] + tail
    return [TensorSpec(data.dtype, shape) for _ in range(num_partitions)]


def partition(data, partitions, num_partitions):
    """[data[partitions == p] for p in range(num_partitions)], rows kept in order."""
    problem = _num_partitions_problem(num_partitions)
    if problem is not None:
        if problem[0] == "memory":
            raise MemoryError(problem[1])
        raise BadInput("num_partitions", problem[1])
    num_partitions = int(num_partitions)
    ids.check_index_dtype(partitions, "partitions")
    if data.shape[:partitions.ndim] != partitions.shape:
        raise BadInput("partitions", f"shape {list(partitions.shape)} is not a prefix of data's shape "
                                     f"{list(data.shape)}")
    flat = partitions.reshape(-1)
    if flat.size and (flat.min() < 0 or flat.max() >= num_partitions):
        bad = int(np.flatnonzero((flat < 0) | (flat >= num_partitions))[0])
        raise BadInput("partitions", f"partitions[{index_text(bad, partitions.shape)}] = {flat[bad]} is not in "
                                     f"[0, {num_partitions})")
    rows = data.reshape((flat.size,) + data.shape[partitions.ndim:])
    order = np.argsort(flat, kind="stable")
    bounds = np.searchsorted(flat[order], np.arange(num_partitions + 1))
    return [rows[order[bounds[p]:bounds[p + 1]]] for p in range(num_partitions)]


register_op("DynamicPartition", inputs=("data", "partitions"), attrs={"T": "data"}, infer=_infer_partition,
            kernel=partition, defaults={"num_partitions": 1}, num_outputs=lambda attrs, counts: attrs["num_partitions"],
            list_output=True)


def dynamic_partition(data: TensorLike, partitions: TensorLike, num_partitions: int, name: Name = None) -> list[Tensor]:
    """Splits the rows of `data` by `partitions`: output p holds the rows (in order) whose partition
    id is p. `partitions.shape` must be a prefix of `data.shape`; ids must be in [0, num_partitions)."""
    num_partitions = _check_num_partitions_attr(errors.OpName("DynamicPartition", name), num_partitions)
    return apply_op("DynamicPartition", data, partitions, num_partitions=num_partitions, name=name)

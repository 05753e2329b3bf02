"""Joining and splitting along an axis: concat, stack, unstack, split, tile. Gradients in join_grad.py."""

from __future__ import annotations

from typing import Optional, Sequence, Union
import numpy as np
from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.convert import convert_to_tensor
from segflow._core.tensor import Tensor
from segflow._core import fold as tensor_util
from segflow._core.apply import apply_op
from segflow._core.registry import TensorSpec, hooks, register_op
from segflow.kernels import BadInput
from segflow._core import mode as context
from segflow._ops import shape as so
from segflow._ops.shape import identity
from segflow._core.typing import AxisLike, IntLike, Name, TensorLike

__all__ = ["concat", "stack", "unstack", "split", "tile"]


# -- unstack
def _infer_unpack(op, value, num, axis=0):
    if value.shape.rank is None:
        return [TensorSpec(value.dtype, tensor_shape.unknown_shape())] * num
    dims = value.shape.as_list()
    if not -len(dims) <= axis < len(dims):
        raise errors.invalid_input(op, "value", f"axis {axis} is out of range for shape {value.shape}")
    a = axis % len(dims)
    if dims[a] is not None and dims[a] != num:
        raise errors.invalid_input(op, "value", f"dimension {a} of {value.shape} is not {num}")
    del dims[a]
    return [TensorSpec(value.dtype, dims)] * num


def _unpack_kernel(x, num, axis=0):
    if not -x.ndim <= axis < x.ndim:
        raise BadInput("value", f"axis {axis} is out of range for shape {x.shape}")
    if x.shape[axis] != num:
        raise ValueError(f"dimension {axis} of shape {x.shape} is not {num}")
    # np.take copies (contiguous already); np.asarray keeps a 0-d result 0-d, which ascontiguousarray would not
    return [np.asarray(np.take(x, i, axis=axis)) for i in range(num)]


register_op("Unpack", inputs=("value",), attrs={"T": "value"}, infer=_infer_unpack, kernel=_unpack_kernel,
            defaults={"num": None, "axis": 0}, num_outputs=lambda attrs, counts: attrs["num"], list_output=True)


def unstack(value: TensorLike, num: Optional[int] = None, axis: int = 0, name: Name = "unstack") -> list[Tensor]:
    """Splits `value` along `axis` into a list of tensors of one less rank."""
    if not isinstance(value, Tensor):
        value = convert_to_tensor(value)
    if num is None:
        r = value.shape.rank
        if r is not None and not -r <= axis < r:
            raise ValueError(f"unstack: axis {axis} is out of range for shape {value.shape}")
        if r is None or value.shape.as_list()[axis] is None:
            raise ValueError(f"Cannot infer argument `num` from shape {value.shape}")
        num = value.shape.as_list()[axis]
    return apply_op("Unpack", value, num=num, axis=axis, name=name)


# -- split
def _const_axis(op, axis, rank, input_name):
    a = tensor_util.constant_value(axis)
    if a is None or rank is None:
        return None
    if np.ndim(a) != 0:
        raise errors.invalid_input(op, input_name, f"must be a scalar, got shape {np.shape(a)}")
    a = int(a)
    if not -rank <= a < rank:
        raise errors.invalid_input(op, input_name, f"axis {a} is out of range for rank {rank}")
    return a % rank


def _infer_split(op, split_dim, value, num_split):
    if split_dim.dtype != dtypes.int32:
        raise errors.invalid_input(op, "split_dim", f"must be int32, not {split_dim.dtype.name}")
    a = _const_axis(op, split_dim, value.shape.rank, "split_dim")
    if a is None:
        return [TensorSpec(value.dtype, tensor_shape.unknown_shape(value.shape.rank))] * num_split
    dims = value.shape.as_list()
    if dims[a] is not None:
        if dims[a] % num_split:
            raise errors.invalid_input(op, "value", f"dimension {a} of shape {value.shape} does not split evenly "
                                       f"into {num_split} pieces")
        dims[a] //= num_split
    return [TensorSpec(value.dtype, dims)] * num_split


def _check_axis(axis, ndim, input_name):
    a = int(axis)
    if not -ndim <= a < max(ndim, 1) or ndim == 0:
        raise BadInput(input_name, f"axis {a} is out of range for rank {ndim}")
    return a % ndim


def _split_kernel(split_dim, value, num_split):
    a = _check_axis(split_dim, value.ndim, "split_dim")
    if value.shape[a] % num_split:
        raise BadInput("value", f"dimension {a} of shape {value.shape} does not split evenly into {num_split} pieces")
    return [np.ascontiguousarray(p) for p in np.split(value, num_split, axis=a)]


register_op("Split", inputs=("split_dim", "value"), attrs={"T": "value"}, infer=_infer_split,
            kernel=_split_kernel, defaults={"num_split": 1},
            num_outputs=lambda attrs, counts: attrs["num_split"], list_output=True)


def _resolve_sizes(sizes, dim):
    """size_splits with its one -1 filled in from `dim` (None when dim is unknown), or an error text."""
    sizes = [int(v) for v in sizes]
    if sum(1 for v in sizes if v == -1) > 1:
        return None, f"can have at most one -1, got {sizes}"
    if any(v < -1 for v in sizes):
        return None, f"sizes must be non-negative (or one -1), got {sizes}"
    if dim is None:
        return [None if v == -1 else v for v in sizes], None
    known = sum(v for v in sizes if v != -1)
    if -1 in sizes:
        if known > dim:
            return None, f"sizes {sizes} add up to more than the dimension's size {dim}"
        return [dim - known if v == -1 else v for v in sizes], None
    if known != dim:
        return None, f"sizes {sizes} add up to {known}, not to the dimension's size {dim}"
    return sizes, None


def _infer_split_v(op, value, size_splits, split_dim, num_split):
    if split_dim.dtype != dtypes.int32:
        raise errors.invalid_input(op, "split_dim", f"must be int32, not {split_dim.dtype.name}")
    if size_splits.dtype not in (dtypes.int32, dtypes.int64):
        raise errors.invalid_input(op, "size_splits", f"must be int32 or int64, not {size_splits.dtype.name}")
    a = _const_axis(op, split_dim, value.shape.rank, "split_dim")
    sizes = tensor_util.constant_value(size_splits)
    if a is None:
        return [TensorSpec(value.dtype, tensor_shape.unknown_shape(value.shape.rank))] * num_split
    dims = value.shape.as_list()
    if sizes is None:
        return [TensorSpec(value.dtype, dims[:a] + [None] + dims[a + 1:])] * num_split
    sizes = np.asarray(sizes).reshape(-1)
    if sizes.size != num_split:
        raise errors.invalid_input(op, "size_splits", f"has {sizes.size} entries, expected num_split = {num_split}")
    sizes, problem = _resolve_sizes(sizes, dims[a])
    if problem:
        raise errors.invalid_input(op, "size_splits", problem)
    return [TensorSpec(value.dtype, dims[:a] + [s] + dims[a + 1:]) for s in sizes]


def _split_v_kernel(value, size_splits, split_dim, num_split):
    a = _check_axis(split_dim, value.ndim, "split_dim")
    if np.ndim(size_splits) != 1 or len(size_splits) != num_split:
        raise BadInput("size_splits", f"must be a vector of {num_split} sizes, got shape {np.shape(size_splits)}")
    sizes, problem = _resolve_sizes(size_splits, value.shape[a])
    if problem:
        raise BadInput("size_splits", problem)
    return [np.ascontiguousarray(p) for p in np.split(value, np.cumsum(sizes)[:-1], axis=a)]


register_op("SplitV", inputs=("value", "size_splits", "split_dim"), attrs={"T": "value", "Tlen": "size_splits"},
            allowed={"Tlen": dtypes.INDEX}, infer=_infer_split_v, kernel=_split_v_kernel, defaults={"num_split": 1},
            num_outputs=lambda attrs, counts: attrs["num_split"], list_output=True)


def split(value: TensorLike, num_or_size_splits: Union[IntLike, Sequence[int]], axis: AxisLike = 0,
          num: Optional[int] = None, name: Name = "split") -> list[Tensor]:
    """Splits `value` along `axis` into a list of tensors.

    Args:
      value: the tensor to split.
      num_or_size_splits: an int n (n equal pieces: "Split") or a 1-D list/tensor of sizes, one of
        which may be -1 for the rest ("SplitV").
      axis: scalar int32, the dimension to split (negative counts from the end).
      num: the number of pieces when `num_or_size_splits` is a tensor of unknown length.
    Returns:
      A list of tensors.
    Raises:
      InvalidArgumentError: n does not divide the dimension, sizes do not add up, axis out of range.
    """
    if not isinstance(axis, Tensor):
        axis = np.asarray(axis, np.int32)
    if isinstance(num_or_size_splits, Tensor) and num_or_size_splits.shape.rank == 0:
        n = tensor_util.constant_value(num_or_size_splits)
        if n is None:
            raise ValueError("split: a scalar num_or_size_splits must be known when the graph is built")
        num_or_size_splits = int(n)
    if isinstance(num_or_size_splits, (int, np.integer)) and not isinstance(num_or_size_splits, bool):
        n = int(num_or_size_splits)
        if n < 1:
            raise ValueError(f"num_or_size_splits must be >= 1, got {n}")
        return apply_op("Split", axis, value, num_split=n, name=name)
    sizes = num_or_size_splits
    if isinstance(sizes, Tensor):
        if num is None:
            if sizes.shape.rank != 1 or sizes.shape.as_list()[0] is None:
                raise ValueError(f"Cannot infer argument `num` from shape {sizes.shape}")
            num = sizes.shape.as_list()[0]
    else:
        sizes = np.asarray(sizes)
        if sizes.ndim != 1 or sizes.dtype.kind not in "iu":
            raise ValueError(f"num_or_size_splits must be an int or a 1-D list of ints, got {num_or_size_splits!r}")
        sizes = sizes.astype(np.int32 if np.all(np.abs(sizes) < 2**31) else np.int64)
        num = sizes.size
    return apply_op("SplitV", value, sizes, axis, num_split=int(num), name=name)


# -- tile
def _infer_tile(op, input, multiples):
    if multiples.dtype not in (dtypes.int32, dtypes.int64):
        raise errors.invalid_input(op, "multiples", f"must be int32 or int64, not {multiples.dtype.name}")
    m = tensor_util.constant_value(multiples)
    rank = input.shape.rank
    if m is None:
        # Some entries may still be known (multiples packed from constants and tensors).
        partial = tensor_util.constant_value_as_shape(multiples)
        if partial.rank is None:
            return [TensorSpec(input.dtype, tensor_shape.unknown_shape(rank))]
        if rank is not None and partial.rank != rank:
            raise errors.invalid_input(op, "multiples", f"has {partial.rank} entries, expected one per "
                                       f"dimension of {input.shape}")
        if rank is None:
            return [TensorSpec(input.dtype, tensor_shape.unknown_shape(partial.rank))]
        return [TensorSpec(input.dtype, [None if d is None or k is None else d * k
                                         for d, k in zip(input.shape.as_list(), partial.as_list())])]
    m = np.asarray(m).reshape(-1)
    if rank is not None and m.size != rank:
        raise errors.invalid_input(op, "multiples", f"has {m.size} entries, expected one per dimension of "
                                   f"{input.shape}")
    if np.any(m < 0):
        raise errors.invalid_input(op, "multiples", f"must be non-negative, got {m.tolist()}")
    if rank is None:
        return [TensorSpec(input.dtype, tensor_shape.unknown_shape(m.size))]
    return [TensorSpec(input.dtype, [None if d is None else d * int(k) for d, k in zip(input.shape.as_list(), m)])]


def _tile_kernel(input, multiples):
    m = np.asarray(multiples)
    if m.dtype.kind not in "iu":
        raise BadInput("multiples", f"must be int32 or int64, not {m.dtype}")
    m = m.reshape(-1)
    if m.size != input.ndim:
        raise BadInput("multiples", f"has {m.size} entries, expected one per dimension of shape {input.shape}")
    if np.any(m < 0):
        raise BadInput("multiples", f"must be non-negative, got {m.tolist()}")
    reps = tuple(int(k) for k in m)
    shape = [d * k for d, k in zip(input.shape, reps)]
    if so.check_output_shape(shape, input.dtype, "multiples") == 0:
        return np.zeros(shape, input.dtype)    # an empty result: np.tile would build (and allocate) the rest
    return np.tile(input, reps) if input.ndim else np.array(input, copy=True)


register_op("Tile", inputs=("input", "multiples"), attrs={"T": "input", "Tmultiples": "multiples"},
            allowed={"Tmultiples": dtypes.INDEX}, infer=_infer_tile, kernel=_tile_kernel)


def tile(input: TensorLike, multiples: TensorLike, name: Name = None) -> Tensor:
    """`input` repeated `multiples[i]` times along dimension i (shape `input.shape * multiples`)."""
    if not isinstance(multiples, Tensor):
        multiples = so._shape_arg(multiples)
    return apply_op("Tile", input, multiples, name=name)


# -- concat, stack, add_n
def _normalize_axis(op, axis, rank, input_name="axis"):
    if rank is None:
        return axis
    if not -rank <= axis < max(rank, 1):
        raise errors.invalid_input(op, input_name, f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def _infer_concat(op, values, axis):
    if not values:
        raise errors.invalid_input(op, "values", "needs at least one tensor")
    a = tensor_util.constant_value(axis)
    ranks = {v.shape.rank for v in values if v.shape.rank is not None}
    if len(ranks) > 1:
        raise errors.invalid_input(op, "values", f"ranks differ: {[str(v.shape) for v in values]}")
    rank = ranks.pop() if ranks else None
    if a is None or rank is None:
        return [TensorSpec(values[0].dtype, tensor_shape.unknown_shape(rank))]
    a = _normalize_axis(op, int(a), rank)
    dims = [None] * rank
    total = 0
    for v in values:
        vd = v.shape.as_list() if v.shape.rank is not None else [None] * rank
        for i in range(rank):
            if i == a:
                continue
            if dims[i] is None:
                dims[i] = vd[i]
            elif vd[i] is not None and vd[i] != dims[i]:
                raise errors.invalid_input(op, "values", f"dimension {i} differs: shapes "
                                           f"{[str(x.shape) for x in values]} (concatenating on axis {a})")
        total = None if total is None or vd[a] is None else total + vd[a]
    dims[a] = total
    return [TensorSpec(values[0].dtype, dims)]


register_op("ConcatV2", inputs=("values*", "axis"), attrs={"T": "values", "Tidx": "axis"}, allowed={"Tidx": dtypes.INDEX},
            infer=_infer_concat, kernel=lambda values, axis: np.concatenate(values, axis=int(axis)))


def concat(values: Union[TensorLike, Sequence[TensorLike]], axis: AxisLike, name: Name = "concat") -> Tensor:
    """Joins tensors along `axis`."""
    values = list(values)
    if len(values) == 1 and not context.executing_eagerly():
        return identity(values[0], name=name)
    return apply_op("ConcatV2", values, axis, name=name)


def _infer_pack(op, values, axis=0):
    if not values:
        raise errors.invalid_input(op, "values", "needs at least one tensor")
    shape = tensor_shape.unknown_shape()
    for v in values:
        if not shape.is_compatible_with(v.shape):
            raise errors.invalid_input(op, "values", f"shapes differ: {[str(x.shape) for x in values]}")
        shape = shape.merge_with(v.shape)
    if shape.rank is None:
        return [TensorSpec(values[0].dtype, tensor_shape.unknown_shape())]
    dims = shape.as_list()
    a = _normalize_axis(op, axis, len(dims) + 1)
    dims.insert(a, len(values))
    return [TensorSpec(values[0].dtype, dims)]


register_op("Pack", inputs=("values*",), attrs={"T": "values"}, infer=_infer_pack,
            kernel=lambda values, axis=0: np.stack(values, axis=axis), defaults={"axis": 0})


def stack(values: Sequence[TensorLike], axis: int = 0, name: Name = "stack") -> Tensor:
    """Stacks same-shaped tensors along a new `axis`."""
    return apply_op("Pack", list(values), axis=axis, name=name)


hooks.concat = concat

"""Ordering: top_k (the TopKV2 op), and sort / argsort built on it as TensorFlow builds them, plus
boolean_mask. Gradients in sort_grad.py (top_k scatters the gradient back to the input positions).

Ties: top_k lists equal values by increasing index, so `argsort` is stable in both directions.
"""

from __future__ import annotations

import collections

import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._core import fold as tensor_util
from segflow._core.apply import apply_op
from segflow._core.registry import TensorSpec, register_op
from segflow.kernels import BadInput
from segflow._ops import cast as cast_ops
from segflow._ops import transpose as transpose_ops
from segflow._ops import elementwise as cw
from segflow._ops import shape as so
from segflow._ops import gather as gather_ops
from segflow._ops.reduce import reduce_prod
from segflow._ops import join as join_ops
from typing import Optional
from segflow._core.typing import AxisLike, DTypeLike, IntLike, Name, TensorLike
from segflow._core.tensor import Tensor

__all__ = ["top_k", "sort", "argsort", "boolean_mask", "TopKV2Output"]

TopKV2Output = collections.namedtuple("TopKV2", ["values", "indices"])


def _infer_top_k(op, input, k, sorted=True, index_type=dtypes.int32):
    if k.dtype not in (dtypes.int32, dtypes.int64):
        raise errors.invalid_input(op, "k", f"must be int32 or int64, not {k.dtype.name}")
    if not input.dtype.is_integer and not input.dtype.is_floating:
        raise errors.invalid_input(op, "input", f"must be a real number type, not {input.dtype.name}")
    if input.shape.rank == 0:
        raise errors.invalid_input(op, "input", "must have rank >= 1")
    kv = tensor_util.constant_value(k)
    if input.shape.rank is None:
        shape = tensor_shape.unknown_shape()
    else:
        dims = input.shape.as_list()
        if kv is not None and dims[-1] is not None and not 0 <= int(kv) <= dims[-1]:
            raise errors.invalid_input(op, "k", f"k = {int(kv)} is not in [0, {dims[-1]}] (the last dimension)")
        shape = dims[:-1] + [None if kv is None else int(kv)]
    return [TensorSpec(input.dtype, shape), TensorSpec(index_type, shape)]


def top_k_kernel(x, k, sorted=True, index_type=dtypes.int32):
    """(values, indices) of the k largest entries along the last axis; ties by increasing index."""
    if x.ndim == 0:
        raise BadInput("input", "must have rank >= 1")
    n = x.shape[-1]
    k = int(k)
    if not 0 <= k <= n:
        raise BadInput("k", f"k = {k} is not in [0, {n}] (the last dimension of input)")
    # Stable ascending sort of the reversed row, read backwards: descending values, and among equal
    # values the lower index first. Works for every real dtype (no negation, so no overflow).
    r = np.argsort(x[..., ::-1], axis=-1, kind="stable")
    order = (n - 1 - r)[..., ::-1][..., :k]
    values = np.take_along_axis(x, order, axis=-1)
    return values, order.astype(dtypes.as_dtype(index_type).as_numpy_dtype)


register_op("TopKV2", inputs=("input", "k"), attrs={"T": "input", "Tk": "k"}, infer=_infer_top_k,
            kernel=top_k_kernel, num_outputs=2, defaults={"sorted": True, "index_type": dtypes.int32})


def top_k(input: TensorLike, k: IntLike = 1, sorted: bool = True, name: Name = None,
          index_type: DTypeLike = dtypes.int32) -> TopKV2Output:
    """The k largest entries of each last-axis row of `input`, and their indices.

    Returns:
      TopKV2(values, indices), both of shape `input.shape[:-1] + [k]`, values in decreasing order,
      equal values by increasing index. The gradient goes back to the chosen positions.
    Raises:
      InvalidArgumentError: k < 0 or k > input.shape[-1].
    """
    values, indices = apply_op("TopKV2", input, k, sorted=sorted, index_type=dtypes.as_dtype(index_type), name=name)
    return TopKV2Output(values, indices)


def _move_axis_last(values, axis):
    """(values with `axis` moved last, the permutation to undo it or None)."""
    rank = values.shape.rank
    if rank is None:
        raise ValueError("sort needs a tensor of known rank")
    if rank == 0:
        raise ValueError("sort needs a tensor of rank >= 1")
    axis = int(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of range for a tensor of rank {rank}")
    axis %= rank
    if axis == rank - 1:
        return values, None
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    return transpose_ops.transpose(values, perm), perm


def _sort_or_argsort(values, axis, direction, return_argsort, name):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
    with name_scope(name, "argsort" if return_argsort else "sort"):
        values = convert_to_tensor(values)
        moved, perm = _move_axis_last(values, axis)
        key = moved
        if direction == "ASCENDING":
            if key.dtype.is_unsigned:
                key = cast_ops.cast(key, dtypes.int64)
            key = cw.negative(key)
        n = so.shape(key)[-1]
        out_values, out_indices = top_k(key, n)
        if return_argsort:
            out = out_indices
        elif direction == "ASCENDING":
            out = cw.negative(out_values)
            if out.dtype != values.dtype:
                out = cast_ops.cast(out, values.dtype)
        else:
            out = out_values
        if perm is not None:
            out = transpose_ops.transpose(out, perm)
        return out


def sort(values: TensorLike, axis: int = -1, direction: str = "ASCENDING", name: Name = None) -> Tensor:
    """`values` sorted along `axis` ("ASCENDING" or "DESCENDING"). Differentiable (top_k's gradient)."""
    return _sort_or_argsort(values, axis, direction, False, name)


def argsort(values: TensorLike, axis: int = -1, direction: str = "ASCENDING", stable: bool = False,
            name: Name = None) -> Tensor:
    """int32 indices that sort `values` along `axis`; equal values keep their order (stable)."""
    return _sort_or_argsort(values, axis, direction, True, name)


def boolean_mask(tensor: TensorLike, mask: TensorLike, name: Name = "boolean_mask",
                 axis: Optional[AxisLike] = None) -> Tensor:
    """The entries of `tensor` where `mask` is true: `mask.shape` must match `tensor.shape[axis:axis+k]`;
    those k dimensions collapse into one holding the selected entries (in row-major order)."""
    with name_scope(name, "boolean_mask"):
        tensor = convert_to_tensor(tensor)
        mask = convert_to_tensor(mask)
        if mask.dtype != dtypes.bool:
            raise TypeError(f"boolean_mask: mask must be bool, not {mask.dtype.name}")
        k = mask.shape.rank
        if k is None:
            raise ValueError("Number of mask dimensions must be specified, even if some dimensions are None.")
        if k == 0:
            raise ValueError("mask cannot be scalar.")
        axis = 0 if axis is None else int(axis)
        rank = tensor.shape.rank
        if rank is not None:
            axis %= max(rank, 1)
            inner = tensor_shape.TensorShape(tensor.shape.as_list()[axis:axis + k])
            if not inner.is_compatible_with(mask.shape):
                raise ValueError(f"Shapes {tensor.shape} and {mask.shape} are incompatible")
        shape = so.shape(tensor)
        lead = shape[:axis]
        flat_dim = so.reshape(cast_ops.cast(_prod(shape[axis:axis + k]), dtypes.int32), [1])
        tensor = so.reshape(tensor, join_ops.concat([lead, flat_dim, shape[axis + k:]], 0))
        indices = so.reshape(cw.where_v2(so.reshape(mask, [-1])), [-1])
        return gather_ops.gather(tensor, indices, axis=axis)


def _prod(x):
    return reduce_prod(x)

"""Scatter into new tensors: scatter_nd, tensor_scatter_nd_update / add / sub. (Scatter updates of
variables are in state_ops / resource_variable_ops.) Gradients in scatter_grad.py.

`indices` has shape [..., depth]: each last-dimension vector addresses the first `depth` dimensions
of the output; `updates` has shape `indices.shape[:-1] + shape[depth:]`. Duplicates add up in
scatter_nd and the add/sub ops; in tensor_scatter_nd_update the last one (in index order) wins.
"""

from __future__ import annotations

import math

import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core import fold as tensor_util
from segflow._core.apply import apply_op
from segflow._core.registry import TensorSpec, register_op
from segflow.kernels import BadInput, accumulator_dtype, ids, scatter
from segflow._core.typing import Name, ShapeLike, TensorLike
from segflow._core.tensor import Tensor

__all__ = ["scatter_nd", "tensor_scatter_nd_update", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
           "tensor_scatter_update", "tensor_scatter_add", "tensor_scatter_sub"]



def _check_updates_shape(op, indices, updates, shape):
    """Static check that updates.shape == indices.shape[:-1] + shape[depth:]."""
    if indices.shape.rank is None or updates.shape.rank is None or shape.rank is None:
        return
    depth = indices.shape.as_list()[-1] if indices.shape.rank else None
    if depth is None:
        return
    if depth > shape.rank:
        raise errors.invalid_input(op, "indices", f"index depth {depth} exceeds the rank of the output {shape}")
    want = tensor_shape.TensorShape(indices.shape.as_list()[:-1] + shape.as_list()[depth:])
    if not want.is_compatible_with(updates.shape):
        raise errors.invalid_input(op, "updates", f"shape {updates.shape} must be indices.shape[:-1] + "
                                   f"shape[indices.shape[-1]:] = {want}")


def _rows_updates(shape, indices, updates):
    rows, depth = ids.checked_nd_rows(shape, indices)
    want = indices.shape[:-1] + tuple(shape[depth:])
    if updates.shape != want:
        raise BadInput("updates", f"shape {list(updates.shape)} must be indices.shape[:-1] + "
                                  f"shape[indices.shape[-1]:] = {list(want)}")
    tail = tuple(shape[depth:])
    return rows, updates.reshape((rows.size,) + tail), tail


# -- ScatterNd


def _infer_scatter_nd(op, indices, updates, shape):
    if indices.dtype not in dtypes.INDEX:
        raise errors.invalid_input(op, "indices", f"must be int32 or int64, not {indices.dtype.name}")
    out = tensor_util.constant_value_as_shape(shape)
    _check_updates_shape(op, indices, updates, out)
    return [TensorSpec(updates.dtype, out)]


def scatter_nd_kernel(indices, updates, shape):
    """zeros(shape) with updates added at indices (duplicates add, in a wide accumulator)."""
    shape = tuple(int(d) for d in np.asarray(shape).reshape(-1))
    if any(d < 0 for d in shape):
        raise BadInput("shape", f"must be non-negative, got {list(shape)}")
    rows, upd, tail = _rows_updates(shape, indices, updates)
    acc = accumulator_dtype(updates.dtype) if updates.dtype.kind == "f" else updates.dtype
    out = np.zeros((math.prod(shape[:len(shape) - len(tail)]),) + tail, acc)
    if rows.size:
        np.add.at(out, rows, upd)
    return out.reshape(shape).astype(updates.dtype, copy=False)


register_op("ScatterNd", inputs=("indices", "updates", "shape"), attrs={"T": "updates", "Tindices": ("indices", "shape")},
            allowed={"Tindices": dtypes.INDEX}, infer=_infer_scatter_nd, kernel=scatter_nd_kernel)


def scatter_nd(indices: TensorLike, updates: TensorLike, shape: ShapeLike, name: Name = None) -> Tensor:
    """A tensor of `shape`, zero except where `updates` are added at `indices` (duplicates add).

    Args:
      indices: int32/int64 of shape [..., depth], each vector indexing the first depth dims of shape.
      updates: `indices.shape[:-1] + shape[depth:]`.
      shape: the output shape (1-D, same dtype as indices).
    Raises:
      InvalidArgumentError: an index out of range (naming its position), or mismatched shapes.
    """
    return apply_op("ScatterNd", indices, updates, shape, name=name)


# -- TensorScatterUpdate / Add / Sub


def _infer_tensor_scatter(op, tensor, indices, updates):
    if indices.dtype not in dtypes.INDEX:
        raise errors.invalid_input(op, "indices", f"must be int32 or int64, not {indices.dtype.name}")
    _check_updates_shape(op, indices, updates, tensor.shape)
    return [TensorSpec(tensor.dtype, tensor.shape)]


def _tensor_scatter_kernel(how):
    def kernel(tensor, indices, updates):
        rows, upd, tail = _rows_updates(tensor.shape, indices, updates)
        out = np.array(tensor, copy=True)
        d = math.prod(tail)
        lead = math.prod(out.shape[:out.ndim - len(tail)])
        scatter.scatter_rows(out.reshape(lead, d), rows, upd.reshape(rows.size, d), how)
        return out
    return kernel


for _how in ("Update", "Add", "Sub"):
    register_op("TensorScatter" + _how, inputs=("tensor", "indices", "updates"),
                attrs={"T": ("tensor", "updates"), "Tindices": "indices"}, allowed={"Tindices": dtypes.INDEX},
                infer=_infer_tensor_scatter, kernel=_tensor_scatter_kernel(_how.lower()))


def tensor_scatter_nd_update(tensor: TensorLike, indices: TensorLike, updates: TensorLike, name: Name = None) -> Tensor:
    """A copy of `tensor` with the slices at `indices` replaced by `updates` (the last duplicate wins)."""
    return apply_op("TensorScatterUpdate", tensor, indices, updates, name=name)


def tensor_scatter_nd_add(tensor: TensorLike, indices: TensorLike, updates: TensorLike, name: Name = None) -> Tensor:
    """A copy of `tensor` with `updates` added at `indices` (duplicates add)."""
    return apply_op("TensorScatterAdd", tensor, indices, updates, name=name)


def tensor_scatter_nd_sub(tensor: TensorLike, indices: TensorLike, updates: TensorLike, name: Name = None) -> Tensor:
    """A copy of `tensor` with `updates` subtracted at `indices` (duplicates subtract)."""
    return apply_op("TensorScatterSub", tensor, indices, updates, name=name)


tensor_scatter_update = tensor_scatter_nd_update
tensor_scatter_add = tensor_scatter_nd_add
tensor_scatter_sub = tensor_scatter_nd_sub

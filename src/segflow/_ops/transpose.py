"""Ops that move or insert axes: transpose, expand_dims, squeeze, reverse. Gradients in transpose_grad.py."""

from __future__ import annotations

import numpy as np
from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.convert import convert_to_tensor, index_array
from segflow._core.tensor import Tensor
from segflow._core import fold as tensor_util
from segflow._core.apply import apply_op
from segflow._core.registry import TensorSpec, register_op
from segflow.kernels import BadInput
from segflow._ops import shape as so
from segflow._ops.sequence import range as range_
from segflow._ops.elementwise import conj
from typing import Optional, Sequence
from segflow._core.typing import AxisLike, Name, TensorLike

__all__ = ["transpose", "expand_dims", "squeeze", "reverse", "reverse_v2"]


# -- transpose
def _infer_transpose(op, x, perm):
    p = tensor_util.constant_value(perm)
    if x.shape.rank is None or p is None:
        return [TensorSpec(x.dtype, tensor_shape.unknown_shape(x.shape.rank))]
    p = [int(i) for i in np.asarray(p).reshape(-1)]
    if sorted(p) != list(range(x.shape.rank)):
        raise errors.invalid_input(op, "perm", f"{p} is not a permutation of the {x.shape.rank} dimensions of {x.shape}")
    dims = x.shape.as_list()
    return [TensorSpec(x.dtype, [dims[i] for i in p])]


register_op("Transpose", inputs=("x", "perm"), attrs={"T": "x", "Tperm": "perm"}, allowed={"Tperm": dtypes.INDEX},
            infer=_infer_transpose,
            kernel=lambda x, perm: np.transpose(x, [int(i) for i in perm]).copy())  # copy(): C order, 0-d kept


def transpose(a: TensorLike, perm: Optional[Sequence[int]] = None, name: Name = "transpose",
              conjugate: bool = False) -> Tensor:
    """Permutes dimensions (reverses them when `perm` is None)."""
    if not isinstance(a, Tensor):
        a = convert_to_tensor(a)
    if perm is None:
        if a.shape.rank is None:
            r = so.rank(a)
            perm = range_(r - 1, -1, -1)
        else:
            perm = np.arange(a.shape.rank - 1, -1, -1, dtype=np.int32)
    elif not isinstance(perm, Tensor):
        perm = index_array(perm)
    out = apply_op("Transpose", a, perm, name=name)
    if conjugate:
        out = conj(out)
    return out


# -- expand_dims / squeeze
def _infer_expand_dims(op, input, dim):
    d = tensor_util.constant_value(dim)
    if input.shape.rank is None or d is None:
        return [TensorSpec(input.dtype, tensor_shape.unknown_shape())]
    r = input.shape.rank
    d = int(np.asarray(d).reshape(-1)[0])
    if not -r - 1 <= d <= r:
        raise errors.invalid_input(op, "dim", f"axis {d} is out of range for rank {r}")
    dims = input.shape.as_list()
    dims.insert(d % (r + 1), 1)
    return [TensorSpec(input.dtype, dims)]


register_op("ExpandDims", inputs=("input", "dim"), attrs={"T": "input", "Tdim": "dim"}, allowed={"Tdim": dtypes.INDEX},
            infer=_infer_expand_dims,
            kernel=lambda x, dim: np.expand_dims(x, int(np.asarray(dim).reshape(-1)[0])))


def expand_dims(input: TensorLike, axis: Optional[AxisLike] = None, name: Name = None,
                dim: Optional[int] = None) -> Tensor:
    """Inserts a dimension of length 1 at `axis`."""
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("expand_dims needs an axis")
    return apply_op("ExpandDims", input, axis, name=name)


def _squeeze_axes(shape, squeeze_dims):
    if squeeze_dims:
        return sorted({int(a) % len(shape) for a in squeeze_dims})
    return [i for i, d in enumerate(shape) if d == 1]


def _infer_squeeze(op, input, squeeze_dims=()):
    if input.shape.rank is None:
        return [TensorSpec(input.dtype, tensor_shape.unknown_shape())]
    dims = input.shape.as_list()
    r = len(dims)
    for a in squeeze_dims or ():
        if not -r <= a < r:
            raise errors.invalid_input(op, "input", f"squeeze axis {a} is out of range for shape {input.shape}")
        if dims[a] is not None and dims[a] != 1:
            raise errors.invalid_input(op, "input", f"cannot squeeze dim[{a % r}] of shape {input.shape}: "
                                       f"expected a dimension of 1, got {dims[a]}")
    if not squeeze_dims and any(d is None for d in dims):
        return [TensorSpec(input.dtype, tensor_shape.unknown_shape())]
    axes = _squeeze_axes(dims, squeeze_dims)
    return [TensorSpec(input.dtype, [d for i, d in enumerate(dims) if i not in axes])]


def _squeeze_kernel(x, squeeze_dims=()):
    for a in squeeze_dims or ():
        if not -x.ndim <= a < x.ndim:
            raise BadInput("input", f"squeeze axis {a} is out of range for shape {x.shape}")
    axes = _squeeze_axes(x.shape, squeeze_dims)
    for a in axes:
        if x.shape[a] != 1:
            raise BadInput("input", f"cannot squeeze dim[{a}] of shape {x.shape}: expected a dimension of 1, "
                                    f"got {x.shape[a]}")
    return np.squeeze(x, axis=tuple(axes)) if axes else x


register_op("Squeeze", inputs=("input",), attrs={"T": "input"}, infer=_infer_squeeze, kernel=_squeeze_kernel,
            defaults={"squeeze_dims": ()})


def squeeze(input: TensorLike, axis: Optional[AxisLike] = None, name: Name = None,
            squeeze_dims: Optional[AxisLike] = None) -> Tensor:
    """Removes dimensions of length 1 (only those in `axis` when given)."""
    axis = squeeze_dims if axis is None else axis
    if axis is None:
        axis = ()
    elif isinstance(axis, int):
        axis = (axis,)
    return apply_op("Squeeze", input, squeeze_dims=tuple(int(a) for a in axis), name=name)


# -- reverse
def _infer_reverse(op, tensor, axis):
    if axis.dtype not in (dtypes.int32, dtypes.int64):
        raise errors.invalid_input(op, "axis", f"must be int32 or int64, not {axis.dtype.name}")
    a = tensor_util.constant_value(axis)
    rank = tensor.shape.rank
    if a is not None and rank is not None:
        a = np.asarray(a).reshape(-1)
        if np.any((a < -rank) | (a >= rank)):
            raise errors.invalid_input(op, "axis", f"{a.tolist()} is out of range for rank {rank}")
        if len(set((a % max(rank, 1)).tolist())) != a.size:
            raise errors.invalid_input(op, "axis", f"{a.tolist()} names an axis twice")
    return [TensorSpec(tensor.dtype, tensor.shape)]


def _reverse_kernel(tensor, axis):
    a = np.asarray(axis).reshape(-1)
    r = tensor.ndim
    if np.any((a < -r) | (a >= r)):
        raise BadInput("axis", f"{a.tolist()} is out of range for rank {r}")
    axes = (a % max(r, 1)).tolist()
    if len(set(axes)) != len(axes):
        raise BadInput("axis", f"{a.tolist()} names an axis twice")
    return np.ascontiguousarray(np.flip(tensor, axis=tuple(axes))) if axes else np.array(tensor, copy=True)


register_op("ReverseV2", inputs=("tensor", "axis"), attrs={"T": "tensor", "Tidx": "axis"}, allowed={"Tidx": dtypes.INDEX},
            infer=_infer_reverse,
            kernel=_reverse_kernel)


def reverse(tensor: TensorLike, axis: AxisLike, name: Name = None) -> Tensor:
    """`tensor` with the order of its entries reversed along each dimension in `axis` (a list)."""
    if not isinstance(axis, Tensor):
        axis = index_array(axis).reshape(-1)
    return apply_op("ReverseV2", tensor, axis, name=name)


reverse_v2 = reverse

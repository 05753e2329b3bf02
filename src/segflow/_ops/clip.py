"""Clipping: `clip_by_value`, `clip_by_norm`, `global_norm`, `clip_by_global_norm` (TF's clip_ops).

Built from elementwise ops and reductions, so their gradients are those ops' gradients: the
gradient of clip_by_value passes where the value was inside [min, max] (at a bound, TF's maximum /
minimum send it to the first input), and IndexedSlices (sparse gradients) are clipped as slices,
never densified.
"""

from __future__ import annotations

from segflow._core import errors
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.tensor import Tensor
from segflow._ops import elementwise as cw, reduce as reduce_ops, shape as shape_ops, cast as cast_ops
from typing import Optional, Sequence
from segflow._core.typing import AxisLike, Name, TensorLike

__all__ = ["clip_by_value", "clip_by_norm", "global_norm", "clip_by_global_norm", "clip_by_average_norm"]


def _values(t):
    return t.values if isinstance(t, IndexedSlices) else t


def _like(t, values):
    return IndexedSlices(values, t.indices, t.dense_shape) if isinstance(t, IndexedSlices) else values


def clip_by_value(t: TensorLike, clip_value_min: TensorLike, clip_value_max: TensorLike, name: Name = None) -> Tensor:
    """`t` with every element below `clip_value_min` raised to it and above `clip_value_max` cut
    to it (both broadcast against t; min > max gives max, as TF's minimum(maximum(...)))."""
    with name_scope(name, "clip_by_value"):
        values = _values(t)
        values = values if isinstance(values, Tensor) else convert_to_tensor(values)
        lo = convert_to_tensor(clip_value_min, dtype=values.dtype)
        hi = convert_to_tensor(clip_value_max, dtype=values.dtype)
        clipped = cw.minimum(cw.maximum(values, lo), hi)
        if values.shape.rank is not None and clipped.shape.rank is not None and \
                not values.shape.is_compatible_with(clipped.shape):
            raise errors.InvalidArgumentError(None, None, f"clip_by_value: clip_value_min/max of shapes {lo.shape}/"
                                              f"{hi.shape} would change the shape of t {values.shape}")
        return _like(t, clipped)


def clip_by_norm(t: TensorLike, clip_norm: TensorLike, axes: Optional[AxisLike] = None, name: Name = None) -> Tensor:
    """`t * clip_norm / max(l2norm(t), clip_norm)`: t unchanged when its L2 norm (over `axes`, all
    by default) is at most clip_norm, else scaled down to it. A zero t stays zero."""
    with name_scope(name, "clip_by_norm"):
        values = _values(t)
        values = values if isinstance(values, Tensor) else convert_to_tensor(values)
        l2sum = reduce_ops.reduce_sum(values * values, axes, keepdims=True)
        positive = cw.greater(l2sum, shape_ops.zeros_like(l2sum))
        safe = cw.where_v2(positive, l2sum, shape_ops.ones_like(l2sum))
        norm = cw.where_v2(positive, cw.sqrt(safe), l2sum)
        clip_norm = cast_ops.cast(convert_to_tensor(clip_norm), values.dtype)
        clipped = cw.truediv(values * clip_norm, cw.maximum(norm, clip_norm))
        return _like(t, shape_ops.identity(clipped))


def global_norm(t_list: Sequence[Optional[TensorLike]], name: Name = None) -> Tensor:
    """sqrt(sum of squares of every element of every tensor in t_list); None entries are skipped."""
    if isinstance(t_list, (Tensor, IndexedSlices)) or not hasattr(t_list, "__iter__"):
        raise TypeError("t_list should be a sequence of tensors")
    t_list = list(t_list)
    with name_scope(name, "global_norm"):
        sums = []
        for t in t_list:
            if t is None:
                continue
            v = _values(t)
            v = v if isinstance(v, Tensor) else convert_to_tensor(v)
            sums.append(reduce_ops.reduce_sum(v * v))
        if not sums:
            return convert_to_tensor(0.0)
        dtype = sums[0].dtype
        total = reduce_ops.add_n([s if s.dtype == dtype else cast_ops.cast(s, dtype) for s in sums])
        return cw.sqrt(total)


def clip_by_global_norm(t_list: Sequence[Optional[TensorLike]], clip_norm: TensorLike,
                        use_norm: Optional[TensorLike] = None,
                        name: Name = None) -> tuple[list[Optional[Tensor]], Tensor]:
    """Every tensor of t_list scaled by `clip_norm / max(global_norm, clip_norm)`; returns
    (clipped list, the global norm). A global norm of inf or NaN gives NaN everywhere (as TF)."""
    if isinstance(t_list, (Tensor, IndexedSlices)) or not hasattr(t_list, "__iter__"):
        raise TypeError("t_list should be a sequence of tensors")
    t_list = list(t_list)
    with name_scope(name, "clip_by_global_norm"):
        norm = global_norm(t_list) if use_norm is None else convert_to_tensor(use_norm)
        clip_norm = cast_ops.cast(convert_to_tensor(clip_norm), norm.dtype)
        one = convert_to_tensor(1.0, dtype=norm.dtype)
        scale = clip_norm * cw.minimum(cw.truediv(one, norm), cw.truediv(one, clip_norm))
        finite = cw.is_finite(norm)
        scale = cw.where_v2(finite, scale, convert_to_tensor(float("nan"), dtype=norm.dtype))
        out = []
        for t in t_list:
            if t is None:
                out.append(None)
                continue
            v = _values(t)
            v = v if isinstance(v, Tensor) else convert_to_tensor(v)
            s = scale if scale.dtype == v.dtype else cast_ops.cast(scale, v.dtype)
            out.append(_like(t, shape_ops.identity(v * s)))
        return out, norm


def clip_by_average_norm(t: TensorLike, clip_norm: TensorLike, name: Name = None) -> Tensor:
    """TF1's clip_by_average_norm: clip_by_norm with the L2 norm divided by the element count."""
    with name_scope(name, "clip_by_average_norm"):
        t = convert_to_tensor(t)
        n = cast_ops.cast(shape_ops.size(t), t.dtype)
        l2norm_inv = cw.rsqrt(reduce_ops.reduce_sum(t * t))
        clip_norm = cast_ops.cast(convert_to_tensor(clip_norm), t.dtype)
        return t * clip_norm * cw.minimum(l2norm_inv * n, cw.truediv(convert_to_tensor(1.0, dtype=t.dtype),
                                                                       clip_norm))

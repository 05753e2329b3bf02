"""one_hot: indices as one-hot vectors along a new axis. Its gradient is none (NotDifferentiable in shape_grad.py)."""

from __future__ import annotations

from typing import Optional
import numpy as np
from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.convert import convert_to_tensor
from segflow._core.tensor import Tensor
from segflow._core import fold as tensor_util
from segflow._core.apply import apply_op
from segflow._core.memory import check_alloc
from segflow._core.registry import TensorSpec, register_op
from segflow.kernels import BadInput, ids
from segflow._core.typing import DTypeLike, IntLike, Name, TensorLike


__all__ = ["one_hot"]


def _infer_one_hot(op, indices, depth, on_value, off_value, axis=-1):
    if indices.dtype not in (dtypes.uint8,) + dtypes.INDEX:
        raise errors.invalid_input(op, "indices", f"must be uint8, int32 or int64, not {indices.dtype.name}")
    if depth.dtype not in _ONE_HOT_DEPTH or depth.shape.rank not in (None, 0):
        raise errors.invalid_input(op, "depth", f"must be a scalar int32, got {depth.dtype.name} of shape "
                                   f"{depth.shape}")
    for name, v in (("on_value", on_value), ("off_value", off_value)):
        if v.shape.rank not in (None, 0):
            raise errors.invalid_input(op, name, f"must be a scalar, got shape {v.shape}")
    d = tensor_util.constant_value(depth)
    if d is not None and int(d) < 0:
        raise errors.invalid_input(op, "depth", f"must be non-negative, got {int(d)}")
    if d is not None and int(d) > _INT32_MAX:
        raise errors.invalid_input(op, "depth", f"depth = {int(d)} does not fit in int32")
    if indices.shape.rank is None:
        return [TensorSpec(on_value.dtype, tensor_shape.unknown_shape())]
    dims = indices.shape.as_list()
    r = len(dims)
    if not -1 <= axis <= r:
        raise errors.invalid_input(op, "indices", f"axis {axis} is out of range [-1, {r}] for indices of rank {r}")
    dims.insert(r if axis == -1 else axis, None if d is None else int(d))
    return [TensorSpec(on_value.dtype, dims)]


def _one_hot_kernel(indices, depth, on_value, off_value, axis=-1):
    """The output filled with off_value, then on_value written at each in-range index: about 1x the
    output's memory (plus a few index-sized temporaries). Negative or too-large indices (and
    uint8 indices >= depth) leave their row all off, as TensorFlow does."""
    ids.check_index_dtype(indices, "indices", allowed=_ONE_HOT_INDEX)
    depth_arr = np.asarray(depth)
    if depth_arr.ndim != 0 or depth_arr.dtype.kind not in "iu":
        raise BadInput("depth", f"must be a scalar int32, got {depth_arr.dtype} of shape {list(depth_arr.shape)}")
    depth = int(depth_arr)
    if depth < 0:
        raise BadInput("depth", f"must be non-negative, got {depth}")
    if depth > _INT32_MAX:      # an int64 depth known only at run time: never wrapped to int32
        raise BadInput("depth", f"depth = {depth} does not fit in int32")
    for label, v in (("on_value", on_value), ("off_value", off_value)):
        if np.ndim(v) != 0:
            raise BadInput(label, f"must be a scalar, got shape {list(np.shape(v))}")
    on = np.asarray(on_value)
    r = indices.ndim
    axis = r if axis == -1 else axis
    if not 0 <= axis <= r:
        raise BadInput("indices", f"axis {axis} is out of range [-1, {r}] for indices of rank {r}")
    shape = indices.shape[:axis] + (depth,) + indices.shape[axis:]
    check_alloc(shape, on.dtype, "depth")
    out = np.empty(shape, on.dtype)
    out.fill(off_value)
    if out.size == 0:
        return out
    outer = int(np.prod(indices.shape[:axis], dtype=np.int64))
    inner = int(np.prod(indices.shape[axis:], dtype=np.int64))
    flat = indices.reshape(-1)
    hot = np.flatnonzero(flat < depth) if flat.dtype.kind == "u" else np.flatnonzero((flat >= 0) & (flat < depth))
    # index k = o * inner + i (o over indices.shape[:axis], i over the rest) goes to out[o, v, i]
    o, i = np.divmod(hot, inner) if inner > 1 else (hot, 0)
    dest = (o * depth + flat[hot].astype(np.int64)) * inner + i
    out.reshape(outer * depth * inner)[dest] = on
    return out


_ONE_HOT_INDEX = (np.dtype(np.uint8), np.dtype(np.int32), np.dtype(np.int64))
# TF's depth is int32; an int64 or uint8 depth tensor is taken too, its value checked by the kernel
_ONE_HOT_DEPTH = (dtypes.int32, dtypes.int64, dtypes.uint8)
_INT32_MAX = 2**31 - 1


register_op("OneHot", inputs=("indices", "depth", "on_value", "off_value"),
            attrs={"TI": "indices", "T": ("on_value", "off_value")},
            allowed={"TI": (dtypes.uint8,) + dtypes.INDEX}, infer=_infer_one_hot,
            kernel=_one_hot_kernel, defaults={"axis": -1})


def one_hot(indices: TensorLike, depth: IntLike, on_value: Optional[TensorLike] = None,
            off_value: Optional[TensorLike] = None, axis: Optional[int] = None, dtype: Optional[DTypeLike] = None,
            name: Name = None) -> Tensor:
    """A one-hot tensor: `on_value` where the new `axis` (default: last) equals `indices`, else `off_value`.

    Args:
      indices: uint8/int32/int64 tensor; an index outside [0, depth) gives a row of `off_value`.
      depth: scalar int, the length of the new axis.
      on_value, off_value: scalars (default 1 and 0) of the output dtype.
      axis: where the new axis goes (-1: last).
      dtype: output dtype; default the dtype of `on_value`/`off_value`, else float32.
    Returns:
      Shape `indices.shape` with `depth` inserted at `axis`.
    Raises:
      InvalidArgumentError: non-integer indices, a negative, float or beyond-int32 depth (also
        one known only at run time), non-scalar on/off values.
      ResourceExhaustedError: the output would not fit in memory (checked before allocating).
    """
    if dtype is None:
        for v in (on_value, off_value):
            if isinstance(v, Tensor):
                dtype = v.dtype
                break
            if isinstance(v, (np.ndarray, np.generic)):
                dtype = dtypes.from_numpy(v.dtype)
                break
        if dtype is None:
            given = [v for v in (on_value, off_value) if v is not None]
            dtype = dtypes.as_dtype(convert_to_tensor(given[0]).dtype) if given else dtypes.float32
    dtype = dtypes.as_dtype(dtype)
    on = convert_to_tensor(1 if on_value is None else on_value, dtype=dtype)
    off = convert_to_tensor(0 if off_value is None else off_value, dtype=dtype)
    if not isinstance(depth, Tensor):
        depth = _one_hot_depth(depth, name)
    return apply_op("OneHot", indices, depth, on, off, axis=-1 if axis is None else int(axis), name=name)


def _one_hot_depth(depth, name):
    """A Python or NumPy depth as an int32 array: a float (even an integral one: 4.0), bool,
    non-numeric or out-of-int32 depth raises, as TensorFlow refuses it (TypeError: "Value passed
    to parameter 'depth' has DataType float32 not in list of allowed values: int32")."""
    arr = np.asarray(depth)
    stub = errors.OpName("OneHot", name)
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind in "fcb":     # a Python float is float32 to TF
            dt = "float32" if isinstance(depth, float) else dtypes.as_dtype(arr.dtype).name
            got = f"{depth!r} of DataType {dt}"
        else:
            got = repr(depth)
        raise errors.invalid_input(stub, "depth", f"must be an int32 scalar, got {got}", cls=errors.DTypeError)
    if arr.size and not (arr.min() >= -2**31 and arr.max() < 2**31):
        raise errors.invalid_input(stub, "depth", f"depth = {arr.reshape(-1)[0] if arr.size == 1 else arr.tolist()} "
                                                  "does not fit in int32")
    return arr.astype(np.int32)

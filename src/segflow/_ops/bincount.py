"""bincount: how often each value occurs in an int array (or the sum of its weights); TF's Bincount. It has no gradient."""

from __future__ import annotations

import numpy as np
from segflow._core import dtypes, errors
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._core.tensor import EagerTensor, Tensor
from segflow._core import fold as tensor_util
from segflow._core.apply import apply_op
from segflow._core.memory import check_alloc
from segflow._core.registry import TensorSpec, register_op
from segflow.kernels import BadInput, segment
from segflow._ops.segment import static_count
from segflow._ops import cast as cast_ops
from segflow._ops import join as join_ops
from segflow._ops import reduce as ro, shape as so
from segflow._ops import elementwise as cw
from typing import Optional
from segflow._core.typing import DTypeLike, IntLike, Name, TensorLike

__all__ = ["bincount"]

_INT64_MAX = 2**63 - 1
_BINCOUNT_WEIGHTS = (dtypes.int32, dtypes.int64, dtypes.float16, dtypes.bfloat16, dtypes.float32,
                     dtypes.float64)
def _infer_bincount(op, arr, size, weights, weighted=False):
    if arr.dtype not in dtypes.INDEX:
        raise errors.invalid_input(op, "arr", f"must be int32 or int64, not {arr.dtype.name}")
    if weighted and not arr.shape.is_compatible_with(weights.shape):
        raise errors.invalid_input(op, "weights", f"shape {weights.shape} must equal arr shape {arr.shape}")
    rows = static_count(op, size, "size")
    return [TensorSpec(weights.dtype, [rows])]

def _bincount_kernel(arr, size, weights, weighted=False):
    # Without `weighted`, empty weights mean "count" (TF's convention; with an empty arr of any
    # shape both give zeros). With it (sf.math.bincount given weights) the weights are weights and
    # must have arr's shape, even when empty. size caps and pads. The bins are checked to fit in
    # memory before anything is allocated.
    size_arr = np.asarray(size)
    if size_arr.ndim == 0 and size_arr.dtype.kind in "iu" and int(size_arr) > 0:
        check_alloc([int(size_arr)], np.int64, "size")
    if weighted and weights.shape != arr.shape:
        raise BadInput("weights", f"shape {list(weights.shape)} must equal arr shape {list(arr.shape)}")
    if weights.size == 0 and not weighted:
        return segment.bincount(arr, None, minlength=size, maxlength=size, dtype=weights.dtype)
    return segment.bincount(arr, weights, minlength=size, maxlength=size, dtype=weights.dtype)


register_op("Bincount", inputs=("arr", "size", "weights"),
            attrs={"Tarr": "arr", "Tsize": "size", "T": "weights"},
            allowed={"Tarr": dtypes.INDEX, "Tsize": dtypes.INDEX, "T": _BINCOUNT_WEIGHTS},
            infer=_infer_bincount, kernel=_bincount_kernel, defaults={"weighted": False})

# ----------------------------------------------------------------------------------------------
# bincount


def _concrete(x):
    """x as a NumPy array when its value is known now (eager tensor, constant, array), else None."""
    if x is None:
        return None
    if isinstance(x, EagerTensor):
        return x.numpy()
    if isinstance(x, Tensor):
        v = tensor_util.constant_value(x)
        return None if v is None else np.asarray(v)
    if hasattr(x, "_dense_var_to_tensor"):  # a variable: read it as a tensor
        return None
    return np.asarray(x)


def bincount(arr: TensorLike, weights: Optional[TensorLike] = None, minlength: Optional[IntLike] = None,
             maxlength: Optional[IntLike] = None, dtype: DTypeLike = dtypes.int32, name: Name = None) -> Tensor:
    """Counts how often each value occurs in `arr` (or sums `weights` per value).

    Args:
      arr: int32 or int64 tensor of any shape with non-negative values.
      weights: optional tensor of the shape of `arr` (int32, int64 or floating); bin v then holds
        the sum of the weights at the positions where arr == v.
      minlength: optional minimum number of bins (the output is padded with zeros).
      maxlength: optional maximum number of bins; values >= maxlength are ignored.
      dtype: the output dtype when `weights` is None.
    Returns:
      1-D tensor of length `max(max(arr) + 1, minlength)` (0 for an empty arr), capped at
      `maxlength`; dtype `weights.dtype`, or `dtype` without weights. Bins no value reaches hold 0.
    Raises:
      InvalidArgumentError: a negative value in arr (naming its position), weights of another
        shape, a negative minlength/maxlength or an unsupported dtype.
    """
    with name_scope(name, "bincount", [arr, weights, minlength, maxlength]):
        if isinstance(arr, (list, tuple)) and np.size(arr) == 0:
            arr = np.zeros(np.shape(arr), np.int32)     # [] is an empty int32 arr (TF converts it so)
        arr = convert_to_tensor(arr)
        # arr's dtype is checked before its values are read: a float (NaN, inf, 1e30) value must
        # never reach int() or a size computation
        if arr.dtype not in dtypes.INDEX:
            raise errors.invalid_input(errors.OpName("Bincount", name), "arr", f"dtype {arr.dtype.name} is not supported "
                                       "(attr Tarr: one of int32, int64)", cls=errors.DTypeError)
        weighted = weights is not None
        if weighted:
            weights = convert_to_tensor(weights)
            if not arr.shape.is_compatible_with(weights.shape):
                raise errors.invalid_input(errors.OpName("Bincount", name), "weights", f"shape {weights.shape} must equal "
                                           f"arr shape {arr.shape}")
        size = _bincount_size(arr, minlength, maxlength)
        if weights is None:
            weights = convert_to_tensor(np.zeros((0,), dtypes.as_dtype(dtype).as_numpy_dtype))
        return apply_op("Bincount", arr, size, weights, weighted=weighted)


def _bincount_size(arr, minlength, maxlength):
    """The number of bins: max(max(arr) + 1, minlength), capped at maxlength (an int32 scalar)."""
    values = _concrete(arr)
    lo, hi = _concrete(minlength), _concrete(maxlength)
    known = values is not None and (minlength is None or lo is not None) and (maxlength is None or hi is not None)
    if known:
        size = max(int(values.max()) + 1, 0) if values.size else 0  # negatives: the kernel names them
        if lo is not None:
            size = max(size, _int_value(lo, "minlength"))
        if hi is not None:
            size = min(size, _int_value(hi, "maxlength"))  # a negative maxlength reaches the op, which refuses it
        if size > _INT64_MAX:       # max(arr) = 2**63 - 1 and no maxlength: 2**63 bins
            raise errors.invalid_input(errors.OpName("Bincount", None), "arr", f"max(arr) + 1 = {size} bins do not fit "
                                       "in int64")
        return np.asarray(size, np.int64 if abs(size) >= 2**31 else np.int32)
    # In int64: max(arr) + 1 of an int64 arr (or of an int32 arr holding 2**31 - 1) never wraps;
    # max(arr) = 2**63 - 1 gives 2**63 - 1 bins, which only a maxlength makes small enough
    flat = cast_ops.cast(so.reshape(arr, [-1]), dtypes.int64)
    top = ro.reduce_max(join_ops.concat([flat, cast_ops.cast([-1], dtypes.int64)], 0))
    size = cw.add(cw.minimum(top, cast_ops.cast(_INT64_MAX - 1, dtypes.int64)), cast_ops.cast(1, dtypes.int64))
    if minlength is not None:
        size = cw.maximum(size, _as_int64(minlength, "minlength"))
    if maxlength is not None:
        size = cw.minimum(size, _as_int64(maxlength, "maxlength"))
    return size


def _as_int64(x, what):
    """minlength / maxlength as an int64 tensor; a value that is not an integer raises."""
    if isinstance(x, Tensor):
        if x.dtype not in dtypes.INDEX:
            raise errors.InvalidArgumentError(None, None, f"Bincount: input '{what}': must be int32 or int64, "
                                              f"not {x.dtype.name}")
        return cast_ops.cast(x, dtypes.int64)
    return convert_to_tensor(_int_value(x, what), dtype=dtypes.int64)


def _int_value(x, what):
    arr = np.asarray(x)
    if arr.ndim != 0 or arr.dtype.kind not in "iu":
        raise errors.InvalidArgumentError(None, None, f"Bincount: input '{what}': must be an integer scalar, "
                                          f"got {x!r}")
    return int(arr)

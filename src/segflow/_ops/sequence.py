"""Index sequences: range and invert_permutation."""

from __future__ import annotations

import numpy as np

from segflow._core import dtypes, errors
from segflow._core.registry import NotDifferentiable
from segflow._core.tensor import Tensor
from segflow._core import fold as tensor_util
from segflow._core.apply import apply_op
from segflow._core.registry import TensorSpec, register_op
from segflow.kernels import BadInput
from segflow._ops.cast import cast
from typing import Optional
from segflow._core.typing import DTypeLike, Name, TensorLike

__all__ = ["range", "invert_permutation"]

_py_range = range


def _infer_range(op, start, limit, delta):
    values = [tensor_util.constant_value(t) for t in (start, limit, delta)]
    for name, t in zip(("start", "limit", "delta"), (start, limit, delta)):
        if t.shape.rank not in (None, 0):
            raise errors.invalid_input(op, name, f"must be a scalar, got shape {t.shape}")
    if any(v is None for v in values):
        return [TensorSpec(start.dtype, [None])]
    s, l, d = (v.item() for v in values)
    problem = _range_problem(s, l, d)
    if problem:
        raise errors.invalid_input(op, *problem)
    return [TensorSpec(start.dtype, [_range_size(*values)])]


def _range_problem(s, l, d):
    """(input name, message) when start/limit/delta make no range (TF's checks), else None."""
    if d == 0:
        return "delta", "Requires delta != 0"
    if d > 0 and s > l:
        return "limit", f"Requires start <= limit when delta > 0: {s}/{l}"
    if d < 0 and s < l:
        return "limit", f"Requires start >= limit when delta < 0: {s}/{l}"
    return None


def _range_size(start, limit, delta):
    """TF's element count, computed in the op's dtype (float32 ranges count in float32)."""
    start, limit, delta = (np.asarray(v) for v in (start, limit, delta))
    if start.dtype.kind in "iu":
        s, l, d = start.item(), limit.item(), delta.item()
        return (abs(l - s) + abs(d) - 1) // abs(d)
    return int(np.ceil(np.abs((limit - start) / delta)))


def _range_kernel(start, limit, delta):
    s, l, d = start.item(), limit.item(), delta.item()
    problem = _range_problem(s, l, d)
    if problem:
        raise BadInput(*problem)
    # start + i * delta (not repeated addition, which drifts), in float64 or int64, then cast
    i = np.arange(_range_size(start, limit, delta), dtype=np.int64)
    wide = np.float64 if start.dtype.kind == "f" else np.int64
    return (wide(s) + i * wide(d)).astype(start.dtype)


register_op("Range", inputs=("start", "limit", "delta"), attrs={"Tidx": ("start", "limit", "delta")},
            allowed={"Tidx": dtypes.REAL_NUMERIC}, infer=_infer_range, kernel=_range_kernel)


def range(start: TensorLike, limit: Optional[TensorLike] = None, delta: TensorLike = 1,
          dtype: Optional[DTypeLike] = None, name: Name = "range") -> Tensor:
    """[start, start + delta, ...) up to `limit` (exclusive); `range(n)` counts from 0.

    Args:
      start, limit, delta: scalars (Python numbers or tensors); `delta` may be negative, not zero.
      dtype: the result's dtype; by default the widest of the tensor arguments' dtypes (floats over
        ints), else float32 if a Python float is given, else int32.
    Returns:
      A 1-D tensor of ceil((limit - start) / delta) elements start + i * delta.
    Raises:
      InvalidArgumentError: delta is 0 (input 'delta'), or limit lies on the wrong side of start for
        the sign of delta (input 'limit').
    """
    if limit is None:
        start, limit = 0, start
    if dtype is None:
        kinds = [t.dtype for t in (start, limit, delta) if isinstance(t, Tensor)]
        if kinds:
            dtype = max(kinds, key=lambda d: (d.is_floating, d.size))
        elif any(isinstance(v, float) for v in (start, limit, delta)):
            dtype = dtypes.float32
        else:
            dtype = dtypes.int32
    dtype = dtypes.as_dtype(dtype)
    args = [cast(v, dtype) if isinstance(v, Tensor) else np.asarray(v, dtype=dtype.as_numpy_dtype)
            for v in (start, limit, delta)]
    return apply_op("Range", *args, name=name)


def _infer_invert_permutation(op, x):
    return [TensorSpec(x.dtype, x.shape)]


def _invert_permutation_kernel(x):
    if x.ndim != 1:
        raise BadInput("x", f"must be 1-D, got shape {x.shape}")
    out = np.empty_like(x)
    if sorted(x.tolist()) != list(_py_range(x.size)):
        raise BadInput("x", f"{x.tolist()} is not a permutation of 0..{x.size - 1}")
    out[x] = np.arange(x.size, dtype=x.dtype)
    return out


register_op("InvertPermutation", inputs=("x",), attrs={"T": "x"}, allowed={"T": (dtypes.int32, dtypes.int64)},
            infer=_infer_invert_permutation, kernel=_invert_permutation_kernel)


def invert_permutation(x: TensorLike, name: Name = None) -> Tensor:
    """y with y[x[i]] = i."""
    return apply_op("InvertPermutation", x, name=name)


NotDifferentiable("Range")
NotDifferentiable("InvertPermutation")

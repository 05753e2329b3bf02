"""Cast: a tensor's values in another dtype (`cast`, `to_float`, ... ); IndexedSlices stay sparse."""

from __future__ import annotations

import numpy as np
from segflow._core import dtypes
from segflow._core.convert import convert_to_tensor
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.tensor import Tensor
from segflow._core.apply import apply_op
from segflow._core.registry import TensorSpec, hooks, register_op
from segflow._core.typing import DTypeLike, Name, TensorLike

__all__ = ["cast", "to_float", "to_double", "to_int32", "to_int64"]


def _infer_cast(op, x, DstT, Truncate=False):
    return [TensorSpec(DstT, x.shape)]


def _cast_kernel(x, DstT, Truncate=False):
    target = DstT.np
    if x.dtype == target:
        return x
    if x.dtype.kind == "c" and target.kind != "c":
        x = x.real
    with np.errstate(invalid="ignore", over="ignore"):
        return x.astype(target)


register_op("Cast", inputs=("x",), attrs={"SrcT": "x"}, infer=_infer_cast, kernel=_cast_kernel,
            defaults={"DstT": None, "Truncate": False})


def cast(x: TensorLike, dtype: DTypeLike, name: Name = None) -> Tensor:
    """`x` converted to `dtype` (complex -> real keeps the real part; IndexedSlices stay sparse)."""
    dtype = dtypes.as_dtype(dtype)
    if isinstance(x, IndexedSlices):
        return IndexedSlices(cast(x.values, dtype, name=name), x.indices, x.dense_shape)
    if not isinstance(x, Tensor):
        x = convert_to_tensor(x, preferred_dtype=dtype)
    if x.dtype == dtype:
        return x
    return apply_op("Cast", x, DstT=dtype, name=name)


def to_float(x: TensorLike, name: Name = "ToFloat") -> Tensor:
    """cast(x, float32)."""
    return cast(x, dtypes.float32, name=name)


def to_double(x: TensorLike, name: Name = "ToDouble") -> Tensor:
    """cast(x, float64)."""
    return cast(x, dtypes.float64, name=name)


def to_int32(x: TensorLike, name: Name = "ToInt32") -> Tensor:
    """cast(x, int32)."""
    return cast(x, dtypes.int32, name=name)


def to_int64(x: TensorLike, name: Name = "ToInt64") -> Tensor:
    """cast(x, int64)."""
    return cast(x, dtypes.int64, name=name)


hooks.cast = cast

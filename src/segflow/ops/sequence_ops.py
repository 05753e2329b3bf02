"""Index sequences: range and invert_permutation."""
import numpy as np

from segflow.framework import dtypes, errors, ops, tensor_shape, tensor_util
from segflow.framework.op_def import TensorSpec, apply_op, register_op

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
    if d == 0:
        raise errors.invalid_input(op, "delta", "must be non-zero")
    return [TensorSpec(start.dtype, [max(0, int(np.ceil((l - s) / d)))])]


def _range_kernel(start, limit, delta):
    if delta == 0:
        raise ValueError("Requires delta != 0")
    return np.arange(start, limit, delta, dtype=np.asarray(start).dtype)


register_op("Range", inputs=("start", "limit", "delta"), attrs={"Tidx": ("start", "limit", "delta")},
            allowed={"Tidx": dtypes.REAL_NUMERIC}, infer=_infer_range, kernel=_range_kernel)


def range(start, limit=None, delta=1, dtype=None, name="range"):
    """[start, start + delta, ...) up to `limit` (exclusive); `range(n)` counts from 0."""
    if limit is None:
        start, limit = 0, start
    if dtype is None:
        kinds = [t.dtype for t in (start, limit, delta) if isinstance(t, ops.Tensor)]
        if kinds:
            dtype = max(kinds, key=lambda d: (d.is_floating, d.size))
        elif any(isinstance(v, float) for v in (start, limit, delta)):
            dtype = dtypes.float32
        else:
            dtype = dtypes.int32
    from segflow.ops.cwise_ops import cast
    dtype = dtypes.as_dtype(dtype)
    args = [cast(v, dtype) if isinstance(v, ops.Tensor) else np.asarray(v, dtype=dtype.as_numpy_dtype)
            for v in (start, limit, delta)]
    return apply_op("Range", *args, name=name)


def _infer_invert_permutation(op, x):
    return [TensorSpec(x.dtype, x.shape)]


def _invert_permutation_kernel(x):
    out = np.empty_like(x)
    if sorted(x.tolist()) != list(_py_range(x.size)):
        raise ValueError(f"{x.tolist()} is not a permutation")
    out[x] = np.arange(x.size, dtype=x.dtype)
    return out


register_op("InvertPermutation", inputs=("x",), attrs={"T": "x"}, allowed={"T": (dtypes.int32, dtypes.int64)},
            infer=_infer_invert_permutation, kernel=_invert_permutation_kernel)


def invert_permutation(x, name=None):
    """y with y[x[i]] = i."""
    return apply_op("InvertPermutation", x, name=name)


ops.NotDifferentiable("Range")
ops.NotDifferentiable("InvertPermutation")

"""Conversion of Python values, NumPy arrays, variables and IndexedSlices to tensors."""
import numpy as np

from segflow._core import mode as context
from segflow._core import dtypes
from segflow._core.indexed_slices import IndexedSlices, _indexed_slices_to_tensor
from segflow._core.tensor import EagerTensor, Tensor

__all__ = ['index_array', 'convert_n_to_tensor', 'convert_to_tensor', 'convert_to_tensor_or_indexed_slices', 'internal_convert_n_to_tensor', 'internal_convert_to_tensor', 'register_tensor_conversion_function']

_ctx_state = context._state
_ctx_shared = context._shared

def index_array(x):
    """An index argument as int32 (int64 when needed) without truncating: a float or bool array is
    passed on as it is, for the op to refuse by dtype (TF's ops take int32/int64 only)."""
    arr = np.asarray(x)
    if arr.size == 0 and arr.dtype.kind not in "iu":
        return arr.astype(np.int32)
    if arr.dtype.kind not in "iu":
        return arr
    return arr.astype(np.int32 if not arr.size or (arr.min() >= -2**31 and arr.max() < 2**31) else np.int64)




# ----------------------------------------------------------------------------------------------
# Conversion

_conversion_functions = []   # (type, fn(value, dtype, name, as_ref)) registered by other modules


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    """Lets objects of `base_type` (e.g. Variable) convert to tensors: fn(value, dtype, name, as_ref)."""
    _conversion_functions.append((priority, base_type, conversion_func))
    _conversion_functions.sort(key=lambda e: e[0])


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, dtype_hint=None, as_ref=False):
    """A Tensor for `value`: a Tensor (checked against `dtype`), an IndexedSlices (densified, with a
    warning when large), a NumPy array, a Python scalar or nested list, or a registered type.

    In graph mode the result is a node of the default graph (a Const for plain values).
    """
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype != dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtype.name} for Tensor with dtype "
                             f"{value.dtype.name}: {value!r}")
        if isinstance(value, EagerTensor) and not (_ctx_shared.all_eager or _ctx_state.eager):
            from segflow._ops import constant as constant_op
            return constant_op.constant(value.numpy(), name=name)
        return value
    if isinstance(value, IndexedSlices):
        t = _indexed_slices_to_tensor(value, dtype, name)
        if dtype is not None and t.dtype != dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtype.name} for IndexedSlices with dtype "
                             f"{t.dtype.name}")
        return t
    for _, base_type, fn in _conversion_functions:
        if isinstance(value, base_type):
            result = fn(value, dtype=dtype, name=name, as_ref=as_ref)
            if result is not NotImplemented:
                return result
    from segflow._ops import constant as constant_op
    hint = preferred_dtype or dtype_hint
    if dtype is None and hint is not None and not _floats_for_integer_hint(value, hint):
        try:
            return constant_op.constant(value, dtype=hint, name=name, _strict=True)
        except (TypeError, ValueError):
            pass
    return constant_op.constant(value, dtype=dtype, name=name, _strict=True)


def _floats_for_integer_hint(value, hint):
    """True when Python floats (or bools) would be cast to an integer preferred dtype: TF refuses that
    conversion (`Expected int32, got 1.0 of type 'float'`) and falls back to the value's own dtype,
    so `scatter_nd([[1.0]], ...)` reports float indices instead of silently using index 1."""
    hint = dtypes.as_dtype(hint)
    if not (hint.is_integer or hint.is_bool):
        return False
    # floats never become integers or bools; bools never become integers (True is no index)
    refused = (float, complex) if hint.is_bool else (float, complex, bool)
    if isinstance(value, refused):
        return True
    if isinstance(value, (list, tuple)):
        stack = list(value)
        while stack:
            v = stack.pop()
            if isinstance(v, (list, tuple)):
                stack.extend(v)
            elif isinstance(v, refused):
                return True
    return False


def convert_n_to_tensor(values, dtype=None, name=None, preferred_dtype=None):
    return [convert_to_tensor(v, dtype=dtype, preferred_dtype=preferred_dtype,
                              name=None if name is None else f"{name}_{i}") for i, v in enumerate(values)]


def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None):
    if isinstance(value, IndexedSlices):
        if dtype is not None and value.dtype != dtypes.as_dtype(dtype):
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for "
                             f"IndexedSlices with dtype {value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


internal_convert_to_tensor = convert_to_tensor
internal_convert_n_to_tensor = convert_n_to_tensor

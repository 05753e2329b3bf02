"""Conversion of Python values, NumPy arrays, variables and IndexedSlices to tensors."""

from __future__ import annotations

from typing import Any, Optional, Sequence
import warnings

import numpy as np

from segflow._core import mode as context
from segflow._core import dtypes
from segflow._core import fold as tensor_util
from segflow._core.graph import get_default_graph
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.registry import hooks
from segflow._core.tensor import EagerTensor, Tensor
from segflow._core.typing import DTypeLike, GradientLike, Name

__all__ = ['index_array', 'small_index_tensor', 'scalar_tensor', 'shared_scalar', 'to_numpy', 'make_tensor_proto', 'is_tensor', 'convert_n_to_tensor', 'convert_to_tensor', 'convert_to_tensor_or_indexed_slices', 'internal_convert_n_to_tensor', 'internal_convert_to_tensor', 'register_tensor_conversion_function']

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


def small_index_tensor(values):
    """Eagerly, an op front end's index argument (an axis, a shape) given as a Python int or a list /
    tuple of Python ints in int32's range, as an int32 EagerTensor: the fresh array becomes the tensor
    without convert_to_tensor's checks and copy, so `apply_op` takes its all-tensor fast path. None
    for anything else and while building a graph (the caller's general path, which names the
    constant inside the op's scope)."""
    if not (_ctx_shared.all_eager or _ctx_state.eager):
        return None
    if type(values) is int:
        return scalar_tensor(values)
    if type(values) is list or type(values) is tuple:
        for v in values:
            if type(v) is not int or not -2**31 <= v < 2**31:
                return None
    else:
        return None
    return EagerTensor(np.array(values, np.int32))


# hint -> (the NumPy dtype of a Python int, of a Python float) beside a tensor of that dtype
# (None: the general path decides), for the hints whose conversion cannot fail or lose anything
_SCALAR_HINTS = {None: (np.int32, np.float32), dtypes.float32: (np.float32, np.float32),
                 dtypes.float64: (np.float64, np.float64), dtypes.int32: (np.int32, None),
                 dtypes.int64: (np.int64, None)}
_scalar_types_converted = False     # a registered conversion function takes Python scalars


def scalar_tensor(value, hint=None):
    """Eagerly, a Python int or float operand as an EagerTensor, as convert_to_tensor(value,
    preferred_dtype=hint) makes it (int -> int32, float -> float32, or the hint's dtype), without
    its general path (which costs 8 us a scalar, 45 us when the interpreter's caches are cold
    after a large kernel). None for anything else: bools, other hints, ints outside int32 (or the
    hint's integer range, or outside int64 beside a float hint), floats beside integer hints,
    graph mode."""
    if not (_ctx_shared.all_eager or _ctx_state.eager) or _scalar_types_converted:
        return None
    kinds = _SCALAR_HINTS.get(hint)
    if kinds is None:
        return None
    if type(value) is int:
        target = kinds[0]
        if not (-2**31 <= value < 2**31 if target is np.int32 else -2**63 <= value < 2**63):
            return None
    elif type(value) is float and kinds[1] is not None:
        target = kinds[1]
    else:
        return None
    return EagerTensor(np.array(value, target))


# (value, NumPy dtype) -> the read-only eager scalar `shared_scalar` made for it. Zeros are keyed
# by their repr (0.0 and -0.0 are equal keys); the cache is emptied when full.
_SHARED_SCALARS = {}
_SHARED_SCALARS_MAX = 1024


def shared_scalar(value, dtype):
    """The Python number `value` as a read-only eager scalar of `dtype` (a np.dtype), made once per
    (value, dtype) and shared: for constants that only ever feed ops (an operator's `y * 1.01` in a
    loop, the 2 in a gradient formula), where an array and a tensor cost more than the arithmetic
    they feed on small inputs. Never for what a caller gets back (it could not write to it)."""
    key = (value, dtype) if value else (repr(value), dtype)
    t = _SHARED_SCALARS.get(key)
    if t is None:
        with np.errstate(over="ignore"):      # a value past the dtype's range is inf, as a cast gives
            v = np.asarray(value, dtype)
        v.flags.writeable = False
        if len(_SHARED_SCALARS) >= _SHARED_SCALARS_MAX:
            _SHARED_SCALARS.clear()
        t = _SHARED_SCALARS[key] = EagerTensor(v)
    return t


# ----------------------------------------------------------------------------------------------
# Conversion

_conversion_functions = []   # (type, fn(value, dtype, name, as_ref)) registered by other modules


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    """Lets objects of `base_type` (e.g. Variable) convert to tensors: fn(value, dtype, name, as_ref)."""
    global _scalar_types_converted
    _conversion_functions.append((priority, base_type, conversion_func))
    types = base_type if isinstance(base_type, tuple) else (base_type,)
    if any(issubclass(int, t) or issubclass(float, t) for t in types):
        _scalar_types_converted = True
    _conversion_functions.sort(key=lambda e: e[0])


def convert_to_tensor(value: Any, dtype: Optional[DTypeLike] = None, name: Name = None,
                      preferred_dtype: Optional[DTypeLike] = None, dtype_hint: Optional[DTypeLike] = None,
                      as_ref: bool = False) -> Tensor:
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
            capture = getattr(get_default_graph(), "capture", None)
            if capture is not None:      # an sf.function's graph: fed the value at each call
                return capture(value)
            return hooks.constant(value._array(), name=name)
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
    hint = preferred_dtype or dtype_hint
    if dtype is None and hint is not None and not _floats_for_integer_hint(value, hint):
        try:
            return hooks.constant(value, dtype=hint, name=name, _strict=True)
        except (TypeError, ValueError):
            pass
    return hooks.constant(value, dtype=dtype, name=name, _strict=True)


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


def convert_n_to_tensor(values: Sequence[Any], dtype: Optional[DTypeLike] = None, name: Name = None,
                        preferred_dtype: Optional[DTypeLike] = None) -> list[Tensor]:
    return [convert_to_tensor(v, dtype=dtype, preferred_dtype=preferred_dtype,
                              name=None if name is None else f"{name}_{i}") for i, v in enumerate(values)]


def convert_to_tensor_or_indexed_slices(value: Any, dtype: Optional[DTypeLike] = None,
                                        name: Name = None) -> GradientLike:
    if isinstance(value, IndexedSlices):
        if dtype is not None and value.dtype != dtypes.as_dtype(dtype):
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for "
                             f"IndexedSlices with dtype {value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


internal_convert_to_tensor = convert_to_tensor
internal_convert_n_to_tensor = convert_n_to_tensor


# ----------------------------------------------------------------------------------------------
# Python values and NumPy arrays


def _python_dtype(value):
    """TF's default dtypes for Python values: float -> float32, int -> int32 (int64 if too big)."""
    if isinstance(value, bool):
        return np.bool_
    if isinstance(value, int):
        return np.int32 if -2**31 <= value < 2**31 else np.int64
    if isinstance(value, float):
        return np.float32
    if isinstance(value, complex):
        return np.complex128
    return None


def to_numpy(value, dtype=None, strict=False):
    """`value` as a NumPy array of `dtype` (a DType or None), with TF's conversion rules."""
    np_dtype = None if dtype is None else dtypes.as_dtype(dtype).as_numpy_dtype
    if isinstance(value, EagerTensor):
        arr = value._array()
    elif isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
        if arr.dtype.kind in "US":
            arr = utf8_array(arr)
        if not arr.dtype.isnative:
            # Big-endian (or other non-native) arrays: every kernel and dtype check works on native
            # dtypes, so the bytes are swapped once here (">f4" becomes float32 "<f4").
            arr = arr.astype(arr.dtype.newbyteorder("="))
    else:
        if isinstance(value, (list, tuple)):
            fast = flat_numbers(value) if np_dtype is None else None
            if fast is not None:
                return fast
            value = _unwrap(value)
        try:
            arr = np.asarray(value)
        except ValueError:  # NumPy >= 1.24 refuses ragged nests instead of making an object array
            raise ValueError(f"Can't convert non-rectangular Python sequence to Tensor: {value!r}") from None
        if arr.dtype == object:
            raise TypeError(f"Cannot convert {value!r} to a tensor: ragged or non-numeric nested values")
        if np_dtype is None:
            if arr.dtype.kind == "f":
                arr = arr.astype(np.float32)
            elif arr.dtype.kind in "iu":
                if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
                    # NumPy made uint64 for ints in [2**63, 2**64): int64 would wrap them to negatives
                    raise ValueError(f"Can't convert Python int {arr.max()} to a tensor: out of range for int64")
                arr = arr.astype(np.int32) if arr.size == 0 or (
                    arr.min() >= -2**31 and arr.max() < 2**31) else arr.astype(np.int64)
            elif arr.dtype.kind == "U" or arr.dtype.kind == "S":
                arr = utf8_array(arr)
    if np_dtype is not None and arr.dtype != np_dtype:
        target = np.dtype(np_dtype)
        if strict and not isinstance(value, (np.ndarray, np.generic, EagerTensor)):
            if target.kind in "iub" and arr.dtype.kind in "fc" and not np.all(np.mod(arr.real, 1) == 0):
                raise TypeError(f"Cannot convert {value!r} to EagerTensor of dtype {dtypes.as_dtype(dtype).name}")
            if target.kind == "b" and arr.dtype.kind != "b":
                raise TypeError(f"Cannot convert {value!r} to a tensor of dtype bool")
            if target.kind in "iu" and arr.size and (arr.min() < np.iinfo(target).min
                                                     or arr.max() > np.iinfo(target).max):
                raise TypeError(f"Cannot convert {value!r} to dtype {dtypes.as_dtype(dtype).name}: out of range")
        elif strict and isinstance(value, (np.ndarray, np.generic)) and not _widens_kind(arr.dtype, target):
            raise TypeError(f"Cannot convert a NumPy array of dtype {arr.dtype} to a tensor of dtype "
                            f"{dtypes.as_dtype(dtype).name}")
        arr = arr.astype(target)
    return arr


def flat_numbers(values):
    """A short flat list of Python ints (or of floats) in TF's default dtype, converted in one
    step (int32, int64 when one is past int32's range; float32), or None for anything else. The
    general path's conversion, nested unwrapping and range reductions cost ~10 us on `[1, 2, 3]`,
    more than the small op it feeds."""
    if not 0 < len(values) <= 64:
        return None
    kind = type(values[0])
    if kind is not int and kind is not float or any(type(v) is not kind for v in values):
        return None
    if kind is float:
        return np.array(values, np.float32)
    try:
        return np.array(values, np.int32)
    except OverflowError:     # NumPy 2 refuses Python ints past the dtype's range
        return to_numpy(np.array(values)) if all(-2**63 <= v < 2**63 for v in values) else None


def utf8_array(arr):
    """A NumPy str or bytes array as TF's string tensors hold it: an object array of bytes (str
    encoded as UTF-8)."""
    out = np.empty(arr.shape, dtype=object)
    out.reshape(-1)[:] = [v.encode("utf-8") if isinstance(v, str) else v for v in arr.reshape(-1).tolist()]
    return out


def _widens_kind(source, target):
    """Whether a NumPy array of dtype `source` converts to `target` as TF converts arrays: a float
    array to any float dtype, an integer one to a float, and a real or complex one to a complex."""
    if target.kind == "f":
        return source.kind in "fiu"
    if target.kind == "c":
        return source.kind in "fiuc"
    return False


def _unwrap(value):
    """Nested lists may hold eager tensors or NumPy scalars: turn them into plain values."""
    out = []
    for v in value:
        if isinstance(v, (list, tuple)):
            out.append(_unwrap(v))
        elif isinstance(v, EagerTensor):
            out.append(v._array())
        elif isinstance(v, Tensor):
            raise TypeError(f"Cannot convert a list holding symbolic tensor {v.name} to a constant; "
                            "use sf.stack")
        else:
            out.append(v)
    return out


def make_tensor_proto(values, dtype=None, shape=None):
    """TF's make_tensor_proto; here the NumPy array itself (TensorProto is NumPy's ndarray)."""
    arr = to_numpy(values, dtype)
    return arr.reshape(shape) if shape is not None else arr


def is_tensor(x: Any) -> bool:
    """True for Tensors, IndexedSlices and variables (what TF's is_tensor accepts)."""
    return isinstance(x, (Tensor, IndexedSlices)) or hasattr(x, "_dense_var_to_tensor")


# ----------------------------------------------------------------------------------------------
# IndexedSlices -> Tensor


_LARGE_DENSE_ELEMENTS = 100_000_000


def _indexed_slices_to_tensor(value, dtype=None, name=None):
    """Densifies an IndexedSlices with unsorted_segment_sum; warns when large or shape unknown."""
    if value.dense_shape is None:
        raise ValueError(f"Tensor conversion requested for IndexedSlices without dense_shape: {value!r}")
    made_by = _producer_text(value.values)
    shape = tensor_util.constant_value(value.dense_shape)
    if shape is None:
        warnings.warn(f"Converting sparse IndexedSlices{made_by} to a dense Tensor of unknown shape. "
                      "This may consume a large amount of memory.", stacklevel=3)
    elif int(np.prod(shape)) >= _LARGE_DENSE_ELEMENTS:
        warnings.warn(f"Converting sparse IndexedSlices{made_by} to a dense Tensor with {int(np.prod(shape))} "
                      "elements. This may consume a large amount of memory.", stacklevel=3)
    return hooks.densify(value, name=name)


def _producer_text(t):
    op = getattr(t, "_op", None)
    return f" (made by op '{op.name}' of type {op.type})" if op is not None else ""

"""`constant`: a tensor from a Python value or NumPy array (eager value, or a Const node)."""
import numpy as np

from segflow._core import mode as context
from segflow._core import dtypes, shapes as tensor_shape
from segflow._core.tensor import EagerTensor, Tensor
from segflow._core.apply import TensorSpec, apply_op, register_op

__all__ = ["constant", "to_numpy"]


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
        arr = value.numpy()
    elif isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
        if not arr.dtype.isnative:
            # Big-endian (or other non-native) arrays: every kernel and dtype check works on native
            # dtypes, so the bytes are swapped once here (">f4" becomes float32 "<f4").
            arr = arr.astype(arr.dtype.newbyteorder("="))
    else:
        if isinstance(value, (list, tuple)):
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
                arr = arr.astype(object)
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
        elif strict and isinstance(value, (np.ndarray, np.generic)):
            raise TypeError(f"Cannot convert a NumPy array of dtype {arr.dtype} to a tensor of dtype "
                            f"{dtypes.as_dtype(dtype).name}")
        arr = arr.astype(target)
    return arr


def _unwrap(value):
    """Nested lists may hold eager tensors or NumPy scalars: turn them into plain values."""
    out = []
    for v in value:
        if isinstance(v, (list, tuple)):
            out.append(_unwrap(v))
        elif isinstance(v, EagerTensor):
            out.append(v.numpy())
        elif isinstance(v, Tensor):
            raise TypeError(f"Cannot convert a list holding symbolic tensor {v.name} to a constant; "
                            "use sf.stack")
        else:
            out.append(v)
    return out


def _infer_const(op, value, dtype):
    return [TensorSpec(dtypes.from_numpy(value.dtype), value.shape)]


def _const_kernel(value, dtype):
    return value


register_op("Const", inputs=(), infer=_infer_const, kernel=_const_kernel,
            defaults={"value": None, "dtype": None}, constant_value=lambda op, inputs: op.get_attr("value"))


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False, _strict=False):
    """A constant tensor holding `value`.

    Args:
      value: a Python scalar, nested list, NumPy array or eager tensor.
      dtype: the result's dtype; default from the value (Python float -> float32, int -> int32).
      shape: optional; a scalar value is broadcast to it, an array of as many elements reshaped.
      name: node name in graph mode.
    Returns:
      An EagerTensor (eager) or the output of a Const node (graph mode).
    Raises:
      TypeError: the value cannot be represented in `dtype`.
      ValueError: the value cannot take `shape`.
    """
    if isinstance(value, Tensor) and not isinstance(value, EagerTensor):
        raise TypeError(f"constant() takes a value, not the symbolic tensor {value.name}")
    arr = to_numpy(value, dtype, strict=_strict or dtype is not None and not isinstance(value, (np.ndarray, np.generic, EagerTensor)))
    if shape is not None:
        shape = tuple(int(d) for d in tensor_shape.as_shape(shape).as_list())
        if arr.size == 1 and int(np.prod(shape)) != 1:
            arr = np.broadcast_to(arr.reshape(()), shape).copy()
        elif arr.size == int(np.prod(shape)):
            arr = arr.reshape(shape)
        else:
            raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tensor {value!r} "
                            f"(converted from {arr.shape}) has {arr.size} elements, but got `shape` {shape} "
                            f"with {int(np.prod(shape))} elements)")
    elif arr is value or (isinstance(value, np.ndarray) and np.shares_memory(arr, value)):
        arr = arr.copy()
    if context._state.eager:
        return EagerTensor(arr)
    return apply_op("Const", name=name, value=arr, dtype=dtypes.from_numpy(arr.dtype))


def eager_tensor(value, dtype=None):
    """`tensor.Tensor(value)`, the early eager API's constructor that some TF test code uses: an eager
    tensor holding `value` (same rules as `constant`)."""
    return constant(value, dtype=dtype)

"""`constant`: a tensor from a Python value or NumPy array (eager value, or a Const node)."""

from __future__ import annotations

from typing import Optional
import numpy as np

from segflow._core import mode as context
from segflow._core import dtypes, shapes as tensor_shape
from segflow._core.convert import to_numpy
from segflow._core.tensor import EagerTensor, Tensor
from segflow._core.apply import apply_op
from segflow._core.registry import TensorSpec, hooks, register_op
from segflow._core.typing import DTypeLike, Name, ShapeLike, TensorLike

__all__ = ["constant"]


def _infer_const(op, value, dtype):
    return [TensorSpec(dtypes.from_numpy(value.dtype), value.shape)]


def _const_kernel(value, dtype):
    return value


register_op("Const", inputs=(), infer=_infer_const, kernel=_const_kernel,
            defaults={"value": None, "dtype": None}, constant_value=lambda op, inputs: op.get_attr("value"))


def constant(value: TensorLike, dtype: Optional[DTypeLike] = None, shape: Optional[ShapeLike] = None,
             name: Name = "Const", verify_shape: bool = False, _strict: bool = False) -> Tensor:
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
    if context.executing_eagerly():
        return EagerTensor(arr)
    return apply_op("Const", name=name, value=arr, dtype=dtypes.from_numpy(arr.dtype))


def eager_tensor(value, dtype=None):
    """`tensor.Tensor(value)`, the early eager API's constructor that some TF test code uses: an eager
    tensor holding `value` (same rules as `constant`)."""
    return constant(value, dtype=dtype)


hooks.constant = constant

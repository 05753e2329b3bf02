"""TF1 / TF2 behaviour switches (`sf.compat.v1.disable_v2_behavior()` and kin): eager execution and
tensor equality together, as TF's `compat.v1` switches them."""
from segflow._core import mode
from segflow._core.shapes import disable_v2_tensorshape, enable_v2_tensorshape
from segflow._core.tensor import _EQUALITY, disable_tensor_equality, enable_tensor_equality

__all__ = ["disable_v2_behavior", "enable_v2_behavior", "disable_tensor_equality", "enable_tensor_equality",
           "tensor_equality_enabled", "disable_v2_tensorshape", "enable_v2_tensorshape"]


def disable_v2_behavior():
    """TF1 programs: graphs by default (no eager execution), `==` as identity and `shape[i]` a Dimension."""
    mode.disable_eager_execution()
    disable_tensor_equality()
    disable_v2_tensorshape()


def enable_v2_behavior():
    """TF2 (the default): eager execution, elementwise `==` and `shape[i]` an int or None."""
    mode.enable_eager_execution()
    enable_tensor_equality()
    enable_v2_tensorshape()


def tensor_equality_enabled():
    return _EQUALITY.on

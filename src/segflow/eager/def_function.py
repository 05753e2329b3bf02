"""TensorFlow's `def_function` module name: a face over segflow._ops.function."""
from segflow._ops.function import Function, function

__all__ = ["Function", "function"]

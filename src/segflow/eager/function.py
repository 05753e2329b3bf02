"""TensorFlow's `eager.function` module name: a face over segflow._ops.function."""
from segflow._ops.function import ConcreteFunction, Function, defun, function

__all__ = ["ConcreteFunction", "Function", "defun", "function"]

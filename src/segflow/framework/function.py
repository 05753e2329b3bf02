"""TensorFlow's `framework.function` module name (TF1's Defun): a face over segflow._ops.function."""
from segflow._ops.function import Defun

__all__ = ["Defun"]

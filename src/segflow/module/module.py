"""TensorFlow's `module.module` module name: a face over segflow._ops.module."""
from segflow._ops.module import Module

__all__ = ["Module"]

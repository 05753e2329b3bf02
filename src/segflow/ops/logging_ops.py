"""TensorFlow's `logging_ops` module name: a face over segflow._ops.debugging."""
from segflow._ops.debugging import print_v2

__all__ = ["print_v2"]

"""`sf.linalg` (TensorFlow's `tf.linalg`)."""
from segflow._ops.linalg import matmul

__all__ = ["matmul"]

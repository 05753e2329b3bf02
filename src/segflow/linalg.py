"""`sf.linalg` (TensorFlow's `tf.linalg`)."""
from segflow.ops.linalg_ops import matmul

__all__ = ["matmul"]

"""`sf.linalg` (TensorFlow's `tf.linalg`)."""
from segflow._ops.linalg import matmul
from segflow._ops.einsum import einsum, tensordot
from segflow._ops.clip import global_norm
from segflow._ops.norm import norm

__all__ = ["norm", "einsum", "tensordot", "global_norm", "matmul"]

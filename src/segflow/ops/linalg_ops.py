"""TensorFlow's `linalg_ops` module name: a face over segflow._ops.linalg."""
from segflow._ops.linalg import matmul

__all__ = [
    'matmul'
]

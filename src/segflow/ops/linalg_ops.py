"""TensorFlow's `linalg_ops` module name: a face over segflow._ops.linalg."""
from segflow._ops.linalg import matmul, diag, diag_part
from segflow._ops.norm import norm

__all__ = [
    'matmul', 'diag', 'diag_part', 'norm'
]

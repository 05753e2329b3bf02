"""TensorFlow's `constant_op` module name: a face over segflow._ops.constant."""
from segflow._ops.constant import constant, to_numpy, eager_tensor

__all__ = [
    'constant', 'to_numpy', 'eager_tensor'
]

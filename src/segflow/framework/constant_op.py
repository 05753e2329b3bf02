"""TensorFlow's `constant_op` module name: a face over segflow._ops.constant."""
from segflow._ops.constant import constant
from segflow._core.convert import to_numpy

__all__ = [
    'constant', 'to_numpy'
]

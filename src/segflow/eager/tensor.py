"""`tensor.Tensor(value)`: the early eager API's constructor (a face over segflow._ops.constant)."""
from segflow._ops.constant import eager_tensor

__all__ = [
    'eager_tensor'
]

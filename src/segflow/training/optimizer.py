"""TensorFlow's `optimizer` module name: a face over segflow._training.optimizer."""
from segflow._training.optimizer import Optimizer

__all__ = [
    'Optimizer'
]

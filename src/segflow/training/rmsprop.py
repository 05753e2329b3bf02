"""TensorFlow's `rmsprop` module name: a face over segflow._training.rmsprop."""
from segflow._training.rmsprop import RMSPropOptimizer

__all__ = [
    'RMSPropOptimizer'
]

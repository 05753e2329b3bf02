"""TensorFlow's `adam` module name: a face over segflow._training.adam."""
from segflow._training.adam import AdamOptimizer, LazyAdamOptimizer

__all__ = [
    'AdamOptimizer', 'LazyAdamOptimizer'
]

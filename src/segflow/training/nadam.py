"""TensorFlow's `nadam` module name: a face over segflow._training.nadam."""
from segflow._training.nadam import NadamOptimizer, LazyNadamOptimizer

__all__ = [
    'NadamOptimizer', 'LazyNadamOptimizer'
]

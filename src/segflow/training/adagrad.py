"""TensorFlow's `adagrad` module name: a face over segflow._training.adagrad."""
from segflow._training.adagrad import AdagradOptimizer

__all__ = [
    'AdagradOptimizer'
]

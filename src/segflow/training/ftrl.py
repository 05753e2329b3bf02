"""TensorFlow's `ftrl` module name: a face over segflow._training.ftrl."""
from segflow._training.ftrl import FtrlOptimizer

__all__ = [
    'FtrlOptimizer'
]

"""TensorFlow's `gradient_descent` module name: a face over segflow._training.gradient_descent."""
from segflow._training.gradient_descent import GradientDescentOptimizer

__all__ = [
    'GradientDescentOptimizer'
]

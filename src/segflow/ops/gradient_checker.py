"""TensorFlow's `gradient_checker` module name (graph mode): a face over segflow._ops.gradient_checker."""
from segflow._ops.gradient_checker import compute_gradient, compute_gradient_error

__all__ = [
    'compute_gradient', 'compute_gradient_error'
]

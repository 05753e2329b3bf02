"""TensorFlow's `gradient_checker_v2` module name (eager): a face over segflow._ops.gradient_checker_v2."""
from segflow._ops.gradient_checker_v2 import compute_gradient, max_error

__all__ = [
    'compute_gradient', 'max_error'
]

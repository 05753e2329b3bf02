"""TensorFlow's `custom_gradient` module name: a face over segflow._ops.custom_gradient."""
from segflow._ops.custom_gradient import (
    custom_gradient, get_dependent_variables, grad_pass_through, recompute_grad
)

__all__ = [
    'custom_gradient', 'get_dependent_variables', 'grad_pass_through', 'recompute_grad'
]

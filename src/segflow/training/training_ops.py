"""TensorFlow's `training_ops` module name: a face over segflow._training.training_ops."""
from segflow._training.training_ops import (
    resource_sparse_apply_adam, resource_sparse_apply_lazy_adam, check_gradient
)

__all__ = [
    'resource_sparse_apply_adam', 'resource_sparse_apply_lazy_adam', 'check_gradient'
]

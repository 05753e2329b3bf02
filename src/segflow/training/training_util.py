"""TensorFlow's `training_util` module name: a face over segflow._training.training_util."""
from segflow._training.training_util import (
    get_global_step, get_or_create_global_step, create_global_step, global_step
)

__all__ = [
    'get_global_step', 'get_or_create_global_step', 'create_global_step', 'global_step'
]

"""TensorFlow's `slot_creator` module name: a face over segflow._training.slot_creator."""
from segflow._training.slot_creator import (
    create_slot, create_slot_with_initializer, create_zeros_slot, colocate_with_variable
)

__all__ = [
    'create_slot', 'create_slot_with_initializer', 'create_zeros_slot', 'colocate_with_variable'
]

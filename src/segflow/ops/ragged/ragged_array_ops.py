"""TensorFlow's `ragged_array_ops` module name: a face over segflow._ops.ragged_math."""
from segflow._ops.ragged_math import boolean_mask, stack_dynamic_partitions

__all__ = ["boolean_mask", "stack_dynamic_partitions"]

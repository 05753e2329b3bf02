"""TensorFlow's `ragged_functional_ops` module name: a face over segflow._ops.ragged_math."""
from segflow._ops.ragged_math import map_flat_values

__all__ = ["map_flat_values"]

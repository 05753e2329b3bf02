"""TensorFlow's `ragged_functional_ops` module name: a face over segflow._ops.ragged."""
from segflow._ops.ragged import map_flat_values

__all__ = ["map_flat_values"]

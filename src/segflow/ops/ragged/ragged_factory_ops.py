"""TensorFlow's `ragged_factory_ops` module name: a face over segflow._ops.ragged."""
from segflow._ops.ragged import constant, constant_value

__all__ = ["constant", "constant_value"]

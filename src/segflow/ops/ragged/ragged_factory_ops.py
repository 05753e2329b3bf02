"""TensorFlow's `ragged_factory_ops` module name: a face over segflow._ops.ragged_factory."""
from segflow._ops.ragged_factory import constant, constant_value

__all__ = ["constant", "constant_value"]

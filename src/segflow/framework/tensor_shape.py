"""TensorFlow's module name for shapes: a face over segflow._core.shapes."""
from segflow._core.shapes import (  # noqa: F401
    Dimension, TensorShape, as_dimension, as_shape, unknown_shape, scalar, dimension_value,
    dimension_at_index, is_prefix, broadcast_shape, enable_v2_tensorshape, disable_v2_tensorshape,
)

__all__ = [
    'Dimension', 'TensorShape', 'as_dimension', 'as_shape', 'unknown_shape', 'scalar',
    'dimension_value', 'dimension_at_index', 'is_prefix', 'broadcast_shape', 'enable_v2_tensorshape',
    'disable_v2_tensorshape',
]

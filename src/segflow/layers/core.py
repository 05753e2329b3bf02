"""TensorFlow's `layers.core` module name: a face over segflow._ops.dense_layer."""
from segflow._ops.dense_layer import Dense, dense

__all__ = ['Dense', 'dense']

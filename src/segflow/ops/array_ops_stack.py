"""TensorFlow's `array_ops_stack` module name: a face over segflow._ops.join (stack, unstack)."""
from segflow._ops.join import stack, unstack

__all__ = ['stack', 'unstack']

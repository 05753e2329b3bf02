"""TensorFlow's `resources` module name: a face over segflow._ops.variables."""
from segflow._ops.variables import initialize_resources

__all__ = [
    'initialize_resources'
]

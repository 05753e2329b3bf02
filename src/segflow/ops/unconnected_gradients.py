"""TensorFlow's `unconnected_gradients` module name: a face over segflow._core.backward."""
from segflow._core.backward import UnconnectedGradients

__all__ = [
    'UnconnectedGradients'
]

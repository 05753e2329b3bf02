"""TensorFlow's `gradients_util` module name: a face over the backward walk's helpers."""
from segflow._core.gradients_util import (
    AggregationMethod, UnconnectedGradients, aggregate, is_backpropagatable, call_grad_fn,
    lookup_grad_fn
)

__all__ = [
    'AggregationMethod', 'UnconnectedGradients', 'aggregate', 'is_backpropagatable', 'call_grad_fn',
    'lookup_grad_fn'
]

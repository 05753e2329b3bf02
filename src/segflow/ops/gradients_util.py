"""TensorFlow's `gradients_util` module name: a face over the backward walk's helpers."""
from segflow._core.backward import (
    backward, graph_ops_between, dense_targets, check_unconnected, aggregate, call_grad_fn,
    lookup_grad_fn, is_backpropagatable, AggregationMethod, UnconnectedGradients
)

__all__ = [
    'backward', 'graph_ops_between', 'dense_targets', 'check_unconnected', 'aggregate',
    'call_grad_fn', 'lookup_grad_fn', 'is_backpropagatable', 'AggregationMethod',
    'UnconnectedGradients'
]

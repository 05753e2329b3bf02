"""TensorFlow's `gradients_impl` module name: a face over segflow._ops.gradients."""
from segflow._ops.gradients import gradients, hessians, AggregationMethod, UnconnectedGradients

__all__ = [
    'gradients', 'hessians', 'AggregationMethod', 'UnconnectedGradients'
]

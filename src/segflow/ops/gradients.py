"""TensorFlow's `gradients` module name: a face over segflow._ops.gradients."""
from segflow._ops.gradients import gradients, hessians, AggregationMethod, UnconnectedGradients
from segflow._ops.backprop import GradientTape

__all__ = [
    'gradients', 'hessians', 'AggregationMethod', 'UnconnectedGradients', 'GradientTape'
]

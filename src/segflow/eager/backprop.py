"""TensorFlow's `backprop` module name: a face over segflow._ops.backprop."""
from segflow._ops.backprop import (
    GradientTape, gradients_function, value_and_gradients_function, implicit_grad, imperative_grad,
    make_vjp, val_and_grad_function, implicit_val_and_grad, aggregate_indexed_slices_gradients,
    make_attr, op_attr_type
)

__all__ = [
    'GradientTape', 'gradients_function', 'value_and_gradients_function', 'implicit_grad',
    'imperative_grad', 'make_vjp', 'val_and_grad_function', 'implicit_val_and_grad',
    'aggregate_indexed_slices_gradients', 'make_attr', 'op_attr_type'
]

"""TensorFlow's `state_ops` module name: assignments and scatter updates of variables (a face over segflow._ops.state)."""
from segflow._ops.state import (
    assign, assign_add, assign_sub, scatter_update, scatter_add, scatter_sub, scatter_mul,
    scatter_div, scatter_min, scatter_max, scatter_nd_update, scatter_nd_add, scatter_nd_sub,
    batch_scatter_update, is_variable_initialized, variables_initializer, is_variable
)
from segflow._ops.variable import ResourceVariable, is_resource_variable
from segflow._ops.variable_ops import variable_shape

__all__ = [
    'assign', 'assign_add', 'assign_sub', 'scatter_update', 'scatter_add', 'scatter_sub',
    'scatter_mul', 'scatter_div', 'scatter_min', 'scatter_max', 'scatter_nd_update',
    'scatter_nd_add', 'scatter_nd_sub', 'batch_scatter_update', 'is_variable_initialized',
    'variables_initializer', 'is_variable', 'ResourceVariable', 'is_resource_variable',
    'variable_shape'
]

"""TensorFlow's `resource_variable_ops` module name: a face over segflow._ops.variable."""
from segflow._ops.variable import ResourceVariable, is_resource_variable
from segflow._ops.variable_ops import (
    read_variable_op, assign_variable_op, assign_add_variable_op, assign_sub_variable_op,
    resource_gather, variable_shape, var_is_initialized_op, resource_scatter_update,
    resource_scatter_add, resource_scatter_sub, resource_scatter_mul, resource_scatter_div,
    resource_scatter_min, resource_scatter_max, resource_scatter_nd_update, resource_scatter_nd_add,
    resource_scatter_nd_sub, report_uninitialized
)

__all__ = [
    'ResourceVariable', 'is_resource_variable', 'read_variable_op', 'assign_variable_op',
    'assign_add_variable_op', 'assign_sub_variable_op', 'resource_gather', 'variable_shape',
    'var_is_initialized_op', 'resource_scatter_update', 'resource_scatter_add',
    'resource_scatter_sub', 'resource_scatter_mul', 'resource_scatter_div', 'resource_scatter_min',
    'resource_scatter_max', 'resource_scatter_nd_update', 'resource_scatter_nd_add',
    'resource_scatter_nd_sub', 'report_uninitialized'
]

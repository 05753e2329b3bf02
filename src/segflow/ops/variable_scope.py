"""TensorFlow's `variable_scope` module name: a face over segflow._ops.variable_scope."""
from segflow._ops.variable_scope import (
    VariableScope, get_variable_scope, get_variable, get_local_variable, variable_scope,
    variable_op_scope, EagerVariableStore, with_variable_store, get_variable_scope_store,
    VariableSynchronization, VariableAggregation, _PartitionInfo, _pure_variable_scope, _get_default_variable_store,
    _get_partitioned_variable
)
from segflow._ops.variable_store import (
    AUTO_REUSE, no_regularizer, enable_resource_variables, disable_resource_variables, resource_variables_enabled,
    VariableStore as _VariableStore
)

__all__ = [
    'AUTO_REUSE', 'VariableScope', 'get_variable_scope', 'get_variable', 'get_local_variable', 'variable_scope',
    'variable_op_scope', 'no_regularizer', 'EagerVariableStore', 'with_variable_store', 'get_variable_scope_store',
    'enable_resource_variables', 'disable_resource_variables', 'resource_variables_enabled',
    'VariableSynchronization', 'VariableAggregation'
]

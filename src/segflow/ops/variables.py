"""TensorFlow's `variables` module name: a face over segflow._ops.variables."""
from segflow._ops.variables import (
    Variable, ResourceVariable, RefVariable, VariableV1, global_variables, local_variables,
    trainable_variables, model_variables, moving_average_variables, all_variables,
    global_variables_initializer, local_variables_initializer, variables_initializer,
    initialize_all_variables, initialize_variables, initialize_local_variables,
    is_variable_initialized, assert_variables_initialized, report_uninitialized_variables,
    VariableSynchronization, VariableAggregation, initialize_resources
)
from segflow._ops.partitioned_variables import PartitionedVariable

__all__ = [
    'Variable', 'ResourceVariable', 'RefVariable', 'VariableV1', 'global_variables',
    'local_variables', 'trainable_variables', 'model_variables', 'moving_average_variables',
    'all_variables', 'global_variables_initializer', 'local_variables_initializer',
    'variables_initializer', 'initialize_all_variables', 'initialize_variables',
    'initialize_local_variables', 'is_variable_initialized', 'assert_variables_initialized',
    'report_uninitialized_variables', 'VariableSynchronization', 'VariableAggregation',
    'initialize_resources', 'PartitionedVariable'
]

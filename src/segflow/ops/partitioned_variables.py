"""TensorFlow's `partitioned_variables` module name: a face over segflow._ops.partitioned_variables
(the partitioners) and segflow._ops.variable_scope (create_partitioned_variables)."""
from segflow._ops.partitioned_variables import (
    PartitionedVariable, fixed_size_partitioner, min_max_variable_partitioner, variable_axis_size_partitioner
)
from segflow._ops.variable_scope import create_partitioned_variables

__all__ = [
    'PartitionedVariable', 'fixed_size_partitioner', 'min_max_variable_partitioner',
    'variable_axis_size_partitioner', 'create_partitioned_variables'
]

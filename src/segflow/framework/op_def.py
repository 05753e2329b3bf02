"""Defining ops (`register_op`) and running them (`apply_op`): a face over segflow._core.apply."""
from segflow._core.apply import (
    register_op, lookup_op, apply_op, TensorSpec, OpDef, ExecState, list_ops, check_alloc,
    resource_exhausted, AllocationTooLarge, memory_limit, regroup_inputs
)

__all__ = [
    'register_op', 'lookup_op', 'apply_op', 'TensorSpec', 'OpDef', 'ExecState', 'list_ops',
    'check_alloc', 'resource_exhausted', 'AllocationTooLarge', 'memory_limit', 'regroup_inputs'
]

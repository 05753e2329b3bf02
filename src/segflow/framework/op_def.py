"""Defining ops (`register_op`) and running them (`apply_op`): a face over segflow._core.registry, segflow._core.apply and segflow._core.memory."""
from segflow._core.registry import register_op, lookup_op, list_ops, OpDef, TensorSpec, regroup_inputs
from segflow._core.apply import apply_op, ExecState
from segflow._core.memory import check_alloc, memory_limit, resource_exhausted, AllocationTooLarge

__all__ = [
    'register_op', 'lookup_op', 'list_ops', 'OpDef', 'TensorSpec', 'regroup_inputs', 'apply_op',
    'ExecState', 'check_alloc', 'memory_limit', 'resource_exhausted', 'AllocationTooLarge'
]

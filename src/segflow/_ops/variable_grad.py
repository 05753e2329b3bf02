"""Gradients of variable reads: the handle is the variable's gradient source (ReadVariableOp, ResourceGather)."""
import numpy as np

from segflow._core import dtypes, shapes as tensor_shape
from segflow._core.convert import convert_to_tensor
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.registry import NotDifferentiable, RegisterGradient
from segflow._core.tensor import EagerTensor
from segflow._ops import join as join_ops
from segflow._ops import shape as so
from segflow._ops.gather_grad import slices_dense_shape
from segflow._ops.variable_ops import SCATTER_OPS, handle_shape, variable_shape


# ----------------------------------------------------------------------------------------------
# Gradients of reads (the handle is the variable's gradient source)


@RegisterGradient("ReadVariableOp")
def _read_grad(op, grad):
    return grad


@RegisterGradient("ResourceGather")
def _resource_gather_grad(op, grad):
    # Only the gathered rows get gradient: an IndexedSlices over the table's shape.
    handle, indices = op.inputs
    if isinstance(grad, IndexedSlices):
        grad = convert_to_tensor(grad)
    if isinstance(handle, EagerTensor) and isinstance(indices, EagerTensor):
        # Eagerly the table's shape is known now: two reshapes and a constant dense_shape instead
        # of the five shape ops a graph needs (the same values and dtypes).
        dims = _table_shape(handle).as_list()
        dense = np.asarray(dims, np.int32 if all(d < 2**31 for d in dims) else np.int64)
        values = so.reshape(grad, [int(np.size(indices._value))] + dims[1:])
        return [IndexedSlices(values, so.reshape(indices, [-1]), convert_to_tensor(dense)), None]
    params_shape = variable_shape(handle, out_type=dtypes.int64)
    size = so.reshape(so.size(indices, out_type=dtypes.int64), [1])
    values = so.reshape(grad, join_ops.concat([size, params_shape[1:]], 0))
    return [IndexedSlices(values, so.reshape(indices, [-1]), slices_dense_shape(params_shape, _table_shape(handle))),
            None]


def _table_shape(handle):
    """The static shape of the variable behind `handle` (an eager one's current value's)."""
    if isinstance(handle, EagerTensor):
        value = handle.numpy().item().value
        return tensor_shape.TensorShape(value.shape) if value is not None else tensor_shape.unknown_shape()
    return handle_shape(handle)


for _name in ("VarHandleOp", "VariableShape", "VarIsInitializedOp", "AssignVariableOp", "AssignAddVariableOp",
              "AssignSubVariableOp", *SCATTER_OPS.values()):
    NotDifferentiable(_name)

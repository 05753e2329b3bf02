"""Static values of graph tensors: `constant_value` folds small constant subgraphs."""
import numpy as np

from segflow._core import shapes as tensor_shape
from segflow._core.registry import regroup_inputs
from segflow._core.tensor import EagerTensor, Tensor

__all__ = ["constant_value", "constant_value_as_shape", "make_ndarray"]

_FOLD_LIMIT = 1 << 16   # fold only small values: this runs while graphs are built
_NOT_CONSTANT = object()


def constant_value(tensor, partial=False):
    """The value of `tensor` as a NumPy array if it can be known before running, else None.

    Eager tensors give their value; Const nodes theirs; Shape/Size/Rank of statically known shapes,
    and any stateless op whose inputs are all known and small, are folded by running their kernel.
    """
    if isinstance(tensor, EagerTensor):
        return tensor._array()
    if isinstance(tensor, (np.ndarray, np.generic, int, float, bool, list, tuple)):
        return np.asarray(tensor)
    if not isinstance(tensor, Tensor):
        return None
    op = tensor.op
    cache = op._const_cache
    if cache is None:
        cache = _fold(op)
        op._const_cache = cache
    if cache is _NOT_CONSTANT:
        return None
    return cache[tensor.value_index]


def _fold(op):
    opdef = op.op_def
    if opdef is None or opdef.stateful:
        return _NOT_CONSTANT
    if opdef.constant_value is not None:
        value = opdef.constant_value(op, op.inputs)
        if value is None:
            return _NOT_CONSTANT
        return [value] if len(op.outputs) == 1 else value
    if opdef.name in ("Placeholder", "PlaceholderWithDefault") or not op.inputs:
        return _NOT_CONSTANT
    values = []
    for t in op.inputs:
        if t.shape.num_elements() is None or t.shape.num_elements() > _FOLD_LIMIT:
            return _NOT_CONSTANT
        v = constant_value(t)
        if v is None:
            return _NOT_CONSTANT
        values.append(v)
    try:
        out = opdef.kernel(*regroup_inputs(opdef, values, op._input_counts), **op._kernel_attrs)
    except Exception:
        return _NOT_CONSTANT
    outs = [out] if len(op.outputs) == 1 and not opdef.list_output else list(out)
    return [np.asarray(o) for o in outs]


def constant_value_as_shape(tensor):
    """A TensorShape from a 1-D shape tensor, with None where entries are unknown."""
    value = constant_value(tensor)
    if value is not None:
        return tensor_shape.TensorShape([int(d) if d >= 0 else None for d in np.asarray(value).reshape(-1)])
    if isinstance(tensor, Tensor) and not isinstance(tensor, EagerTensor):
        if tensor.op.type == "Shape":
            return tensor.op.inputs[0].shape
        if tensor.op.type == "Pack":
            dims = []
            for t in tensor.op.inputs:
                v = constant_value(t)
                dims.append(int(v) if v is not None and v >= 0 else None)
            return tensor_shape.TensorShape(dims)
        rank = tensor.shape.as_list()[0] if tensor.shape.rank == 1 else None
        return tensor_shape.unknown_shape(rank=rank)
    return tensor_shape.unknown_shape()


def make_ndarray(tensor):
    return np.asarray(tensor)


"""Gradients of the axis ops (transpose.py): transpose, expand_dims, squeeze, reverse."""
from segflow._core.convert import convert_to_tensor
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.registry import RegisterGradient
from segflow._ops import shape as so
from segflow._ops import transpose as transpose_ops
from segflow._ops.sequence import invert_permutation


@RegisterGradient("Transpose")
def _transpose_grad(op, grad):
    return transpose_ops.transpose(grad, invert_permutation(op.inputs[1])), None


def _reshape_back(op, grad):
    if isinstance(grad, IndexedSlices):
        grad = convert_to_tensor(grad)
    return so.reshape(grad, so.shape(op.inputs[0]))


@RegisterGradient("ExpandDims")
def _expand_dims_grad(op, grad):
    return _reshape_back(op, grad), None


@RegisterGradient("Squeeze")
def _squeeze_grad(op, grad):
    return _reshape_back(op, grad)


@RegisterGradient("ReverseV2")
def _reverse_grad(op, grad):
    return transpose_ops.reverse(convert_to_tensor(grad), op.inputs[1]), None

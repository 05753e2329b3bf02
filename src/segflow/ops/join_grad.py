"""Gradients of the ops in join_ops.py."""
import numpy as np

from segflow.framework import ops
from segflow.ops import cwise_ops as cw
from segflow.ops import join_ops as jo
from segflow.ops import shape_ops as so


@ops.RegisterGradient("Transpose")
def _transpose_grad(op, grad):
    from segflow.ops.math_ops import invert_permutation
    return jo.transpose(grad, invert_permutation(op.inputs[1])), None


def _reshape_back(op, grad):
    if isinstance(grad, ops.IndexedSlices):
        grad = ops.convert_to_tensor(grad)
    return so.reshape(grad, so.shape(op.inputs[0]))


@ops.RegisterGradient("ExpandDims")
def _expand_dims_grad(op, grad):
    return _reshape_back(op, grad), None


@ops.RegisterGradient("Squeeze")
def _squeeze_grad(op, grad):
    return _reshape_back(op, grad)


@ops.RegisterGradient("Unpack")
def _unpack_grad(op, *grads):
    return so.stack(list(grads), axis=op.get_attr("axis"))


@ops.RegisterGradient("Slice")
def _slice_grad(op, grad):
    x, begin, size = op.inputs
    out_shape = so.shape(op.outputs[0], out_type=begin.dtype)
    end = cw.add(begin, out_shape)
    return jo.apply_op("StridedSliceGrad", so.shape(x, out_type=begin.dtype), begin, end,
                       so.ones_like(begin), grad), None, None


_MASK_NAMES = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


@ops.RegisterGradient("StridedSlice")
def _strided_slice_grad(op, grad):
    x, begin, end, strides = op.inputs
    masks = {k: op.get_attr(k) for k in _MASK_NAMES}
    return (jo.apply_op("StridedSliceGrad", so.shape(x, out_type=begin.dtype), begin, end, strides, grad, **masks),
            None, None, None)


@ops.RegisterGradient("StridedSliceGrad")
def _strided_slice_grad_grad(op, grad):
    _, begin, end, strides, _ = op.inputs
    masks = {k: op.get_attr(k) for k in _MASK_NAMES}
    return None, None, None, None, jo.apply_op("StridedSlice", grad, begin, end, strides, **masks)

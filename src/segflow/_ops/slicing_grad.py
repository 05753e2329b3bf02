"""Gradients of the ops in join_ops.py."""
import numpy as np

from segflow._core.convert import convert_to_tensor
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.registry import RegisterGradient
from segflow._ops import elementwise as cw
from segflow._ops import slicing as jo
from segflow._ops import shape as so


@RegisterGradient("Slice")
def _slice_grad(op, grad):
    x, begin, size = op.inputs
    out_shape = so.shape(op.outputs[0], out_type=begin.dtype)
    end = cw.add(begin, out_shape)
    return jo.apply_op("StridedSliceGrad", so.shape(x, out_type=begin.dtype), begin, end,
                       so.ones_like(begin), grad), None, None


_MASK_NAMES = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


@RegisterGradient("StridedSlice")
def _strided_slice_grad(op, grad):
    x, begin, end, strides = op.inputs
    masks = {k: op.get_attr(k) for k in _MASK_NAMES}
    return (jo.apply_op("StridedSliceGrad", so.shape(x, out_type=begin.dtype), begin, end, strides, grad, **masks),
            None, None, None)


@RegisterGradient("StridedSliceGrad")
def _strided_slice_grad_grad(op, grad):
    _, begin, end, strides, _ = op.inputs
    masks = {k: op.get_attr(k) for k in _MASK_NAMES}
    return None, None, None, None, jo.apply_op("StridedSlice", grad, begin, end, strides, **masks)


def _pad_begin(paddings):
    return so.reshape(jo.slice(paddings, np.array([0, 0], np.int32), np.array([-1, 1], np.int32)), [-1])


@RegisterGradient("Pad")
def _pad_grad(op, grad):
    x, paddings = op.inputs[:2]
    if isinstance(grad, IndexedSlices):
        grad = convert_to_tensor(grad)
    begin = _pad_begin(paddings)
    x_grad = jo.slice(grad, begin, so.shape(x, out_type=begin.dtype))
    return (x_grad, None) if len(op.inputs) == 2 else (x_grad, None, None)


RegisterGradient("PadV2")(_pad_grad)


@RegisterGradient("MirrorPad")
def _mirror_pad_grad(op, grad):
    if isinstance(grad, IndexedSlices):
        grad = convert_to_tensor(grad)
    return jo.apply_op("MirrorPadGrad", grad, op.inputs[1], mode=op.get_attr("mode")), None


@RegisterGradient("MirrorPadGrad")
def _mirror_pad_grad_grad(op, grad):
    return jo.apply_op("MirrorPad", grad, op.inputs[1], mode=op.get_attr("mode")), None



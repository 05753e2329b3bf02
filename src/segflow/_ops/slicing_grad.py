"""Gradients of the ops in join_ops.py."""
import numpy as np

from segflow._core.convert import convert_to_tensor
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.registry import RegisterGradient
from segflow._ops import elementwise as cw
from segflow._ops import slicing as jo
from segflow._ops import shape as so
from segflow._ops import cast as cast_ops
from segflow._ops import join as join_ops
from segflow._ops import transpose as transpose_ops
from segflow._ops.sequence import invert_permutation
from segflow._ops.sequence import range as range_
from segflow._ops.reduce import reduce_sum
from segflow._ops.segment import unsorted_segment_sum


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


@RegisterGradient("Unpack")
def _unpack_grad(op, *grads):
    return join_ops.stack(list(grads), axis=op.get_attr("axis"))


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


@RegisterGradient("Split")
def _split_grad(op, *grads):
    return None, join_ops.concat(list(grads), op.inputs[0])


@RegisterGradient("SplitV")
def _split_v_grad(op, *grads):
    return join_ops.concat(list(grads), op.inputs[2]), None, None


@RegisterGradient("Tile")
def _tile_grad(op, grad):
    # Reshape grad to [m0, d0, m1, d1, ...] (each tiled dimension split into copies x size) and sum
    # the copy axes. An IndexedSlices gradient first folds its rows back onto the input's rows.
    x, multiples = op.inputs
    input_shape = so.shape(x, out_type=multiples.dtype)
    split_shape = so.reshape(transpose_ops.transpose(join_ops.stack([multiples, input_shape])), [-1])
    axes = range_(0, so.size(split_shape), 2)
    if isinstance(grad, IndexedSlices):
        rows = cast_ops.cast(input_shape[0], grad.indices.dtype)
        grad = unsorted_segment_sum(grad.values, cw.floormod(grad.indices, rows), rows)
        split_shape = join_ops.concat([so.ones([1], multiples.dtype), split_shape[1:]], 0)
    return reduce_sum(so.reshape(grad, split_shape), axes), None


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


@RegisterGradient("ReverseV2")
def _reverse_grad(op, grad):
    return transpose_ops.reverse(_dense(grad), op.inputs[1]), None


def _dense(grad):
    return convert_to_tensor(grad) if isinstance(grad, IndexedSlices) else grad

"""Gradients of joining and splitting (join.py): concat, stack, unstack, split, tile."""
from segflow._core.convert import convert_to_tensor
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.registry import RegisterGradient
from segflow._ops import slicing as slicing_ops
from segflow._ops import elementwise as cw
from segflow._ops import shape as so
from segflow._ops import cast as cast_ops
from segflow._ops import join as join_ops
from segflow._ops import transpose as transpose_ops
from segflow._ops.sequence import range as range_
from segflow._ops.reduce import reduce_sum
from segflow._ops.segment import unsorted_segment_sum


@RegisterGradient("Unpack")
def _unpack_grad(op, *grads):
    return join_ops.stack(list(grads), axis=op.get_attr("axis"))


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


@RegisterGradient("ConcatV2")
def _concat_grad(op, grad):
    values = op.inputs[:-1]
    axis = op.inputs[-1]
    sizes = [so.shape(v) for v in values]
    if isinstance(grad, IndexedSlices):
        grad = convert_to_tensor(grad)
    return slicing_ops.split_by_shapes(grad, sizes, axis) + [None]


@RegisterGradient("Pack")
def _pack_grad(op, grad):
    return join_ops.unstack(grad, num=len(op.inputs), axis=op.get_attr("axis"))

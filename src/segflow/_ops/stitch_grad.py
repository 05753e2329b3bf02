"""Gradients of the stitch family (dynamic_stitch, dynamic_partition); unique has none."""
from segflow._core import dtypes
from segflow._core.convert import convert_to_tensor
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.registry import RegisterGradient
from segflow._ops import elementwise as cw
from segflow._ops import gather as gather_ops
from segflow._ops import shape as so
from segflow._ops import stitch as stitch_ops
from segflow._ops import cast as cast_ops
from segflow._ops import join as join_ops
from segflow._ops.sequence import range as range_
from segflow._ops import segment as segment_ops



def _range(start, limit):
    return range_(start, limit)


@RegisterGradient("DynamicStitch")
@RegisterGradient("ParallelDynamicStitch")
def _dynamic_stitch_grad(op, grad):
    # data[i][j] reached the output only if it was the last writer of row indices[i][j]; it then
    # gets grad[indices[i][j]], otherwise 0. `winner` stitches each entry's flat position (its
    # place in the concatenation of all indices) into the output the same way the data was, so an
    # entry won exactly where winner[indices[i][j]] is its own position.
    n = len(op.inputs) // 2
    indices = [cast_ops.cast(op.inputs[i], dtypes.int32) if op.inputs[i].dtype != dtypes.int32 else op.inputs[i]
               for i in range(n)]
    if isinstance(grad, IndexedSlices):
        grad = segment_ops.unsorted_segment_sum(grad.values, grad.indices, so.shape(op.outputs[0])[0])
    positions, offset = [], 0
    for idx in indices:
        size = so.size(idx)
        end = cw.add(offset, size) if not isinstance(offset, int) or offset else size
        positions.append(so.reshape(_range(offset, end), so.shape(idx)))
        offset = end
    winner = stitch_ops.dynamic_stitch(indices, positions)
    grads = []
    for idx, pos in zip(indices, positions):
        g = gather_ops.gather(grad, idx)
        won = cw.equal(gather_ops.gather(winner, idx), pos)
        # won has idx's shape; append ones so it broadcasts over the rows' inner dimensions
        inner = so.shape(g)[so.rank(idx):] if idx.shape.rank is None else so.shape(g)[idx.shape.rank:]
        won = so.reshape(won, join_ops.concat([so.shape(idx), so.ones_like(inner)], 0))
        grads.append(cw.where_v2(won, g, so.zeros_like(g)))
    return [None] * n + grads


@RegisterGradient("DynamicPartition")
def _dynamic_partition_grad(op, *grads):
    # Output p holds the rows of data with partition p: stitch their gradients back to where the
    # rows came from (each row went to exactly one output).
    data, partitions = op.inputs
    num_partitions = op.get_attr("num_partitions")
    original = so.reshape(_range(0, so.size(partitions)), so.shape(partitions))
    positions = stitch_ops.dynamic_partition(original, partitions, num_partitions)
    grads = [so.zeros_like(o) if g is None else convert_to_tensor(g) for g, o in zip(grads, op.outputs)]
    stitched = stitch_ops.dynamic_stitch(positions, grads)
    return so.reshape(stitched, so.shape(data)), None

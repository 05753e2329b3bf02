"""Gradients of the segment family (segment_ops.py)."""
from segflow.framework import ops
from segflow.ops import cwise_ops as cw
from segflow.ops import shape_ops as so


def _rows_of(grad, ids, zero_where_negative=True):
    """grad[ids] with zeros for negative ids: row i of data went to segment ids[i]."""
    from segflow.ops.gather_ops import gather
    if not zero_where_negative:
        return gather(grad, ids)
    zero = cw.cast(0, ids.dtype)
    keep = cw.greater_equal(ids, zero)
    rows = gather(grad, cw.maximum(ids, zero))
    mask = so.reshape(keep, so.concat([so.shape(keep), so.ones_like(so.shape(rows))[so.rank(keep):]], 0))
    return cw.where(so.broadcast_to(mask, so.shape(rows)), rows, so.zeros_like(rows))


@ops.RegisterGradient("UnsortedSegmentSum")
def _unsorted_segment_sum_grad(op, grad):
    # Row i of data went to segment ids[i], so it gets grad[ids[i]]; dropped rows get zero.
    return _rows_of(grad, op.inputs[1]), None, None

"""Gradient of top_k (and so of sort, built on it): each value's gradient goes back to the input
position it was taken from; the indices get none."""
from segflow._core import dtypes
from segflow._core.convert import convert_to_tensor
from segflow._core.registry import RegisterGradient
from segflow._ops import scatter as scatter_ops
from segflow._ops import shape as so
from segflow._ops import cast as cast_ops
from segflow._ops import join as join_ops
from segflow._ops.sequence import range as range_
from segflow._ops.reduce import reduce_prod


def _range(start, limit, delta):
    return range_(start, limit, delta)


@RegisterGradient("TopKV2")
def _top_k_grad(op, grad, _):
    # Row r of the output took input[r, indices[r, j]]: flatten input to one axis (row offsets
    # r * n) and scatter the gradient there; within a row the indices are distinct.
    input_shape = so.shape(op.inputs[0], out_type=dtypes.int64)
    indices = cast_ops.cast(op.outputs[1], dtypes.int64)
    k = so.shape(indices, out_type=dtypes.int64)[-1]
    n = input_shape[-1]
    rows_2d = so.reshape(indices, join_ops.stack([convert_to_tensor(-1, dtype=dtypes.int64), k]))
    outer = so.shape(rows_2d, out_type=dtypes.int64)[0]
    offsets = so.reshape(_range(so.zeros([], dtypes.int64), outer * n, n), [-1, 1])
    flat = so.reshape(rows_2d + offsets, [-1, 1])
    total = so.reshape(reduce_prod(input_shape), [1])
    dense = scatter_ops.scatter_nd(flat, so.reshape(grad, [-1]), total)
    return so.reshape(dense, input_shape), None

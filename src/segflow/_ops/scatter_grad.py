"""Gradients of scatter_nd and tensor_scatter_nd_update / add / sub."""
from segflow._core.registry import RegisterGradient
from segflow._ops import elementwise as cw
from segflow._ops import gather as gather_ops
from segflow._ops import scatter as scatter_ops
from segflow._ops import shape as so
from segflow._ops.sequence import range as range_
from segflow._ops import slicing as slicing_ops
from segflow._ops import join as join_ops


@RegisterGradient("ScatterNd")
def _scatter_nd_grad(op, grad):
    # out[indices[i]] += updates[i]: each update gets the gradient of the slice it went to.
    indices = op.inputs[0]
    return None, gather_ops.gather_nd(grad, indices), None


@RegisterGradient("TensorScatterAdd")
def _tensor_scatter_add_grad(op, grad):
    return grad, None, gather_ops.gather_nd(grad, op.inputs[1])


@RegisterGradient("TensorScatterSub")
def _tensor_scatter_sub_grad(op, grad):
    return grad, None, cw.negative(gather_ops.gather_nd(grad, op.inputs[1]))


def _range(n):
    return range_(0, n)


@RegisterGradient("TensorScatterUpdate")
def _tensor_scatter_update_grad(op, grad):
    # The overwritten slices of `tensor` get no gradient; of duplicate updates only the last writer
    # (the one whose value is in the output) gets it. `winner` scatters each update's position the
    # same way, so update i won exactly where gather_nd(winner, indices)[i] == i.
    tensor, indices, updates = op.inputs
    tensor_grad = scatter_ops.tensor_scatter_nd_update(grad, indices, so.zeros_like(updates))
    lead = so.shape(indices)[:-1]
    positions = so.reshape(_range(so.size(indices) // so.shape(indices)[-1]), lead)
    depth = so.shape(indices)[-1:]
    outer = slicing_ops.slice(so.shape(tensor), [0], depth)
    winner = scatter_ops.tensor_scatter_nd_update(so.fill(outer, -1), indices, positions)
    won = cw.equal(gather_ops.gather_nd(winner, indices), positions)
    g = gather_ops.gather_nd(grad, indices)
    inner = so.shape(g)[so.size(lead):]
    won = so.reshape(won, join_ops.concat([lead, so.ones_like(inner)], 0))
    return tensor_grad, None, cw.where_v2(won, g, so.zeros_like(g))


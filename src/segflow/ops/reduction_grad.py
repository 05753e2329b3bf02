"""Gradients of the reductions: the upstream gradient is broadcast back over the reduced axes."""
from segflow.framework import ops
from segflow.ops import cwise_ops as cw
from segflow.ops import reduction_ops as ro
from segflow.ops import shape_ops as so


def _spread(grad, op):
    """`grad` reshaped to the keepdims shape and broadcast to the input's shape."""
    x, axes = op.inputs
    x_shape = so.shape(x)
    return so.broadcast_to(so.reshape(grad, ro.reduced_shape(x_shape, axes)), x_shape)


@ops.RegisterGradient("Sum")
def _sum_grad(op, grad):
    return _spread(grad, op), None


@ops.RegisterGradient("Mean")
def _mean_grad(op, grad):
    x = op.inputs[0]
    y = op.outputs[0]
    count = cw.truediv(so.size(x), cw.maximum(so.size(y), 1))
    return cw.realdiv(_spread(grad, op), cw.cast(count, grad.dtype)), None


def _extreme_grad(op, grad):
    # The gradient is split equally among the elements tied at the extreme.
    x, axes = op.inputs
    x_shape = so.shape(x)
    kept = ro.reduced_shape(x_shape, axes)
    y = so.reshape(op.outputs[0], kept)
    mask = cw.cast(cw.equal(x, y), grad.dtype)
    count = so.reshape(ro.reduce_sum(mask, axes), kept)
    return cw.realdiv(cw.multiply(mask, so.reshape(grad, kept)), count), None


ops.RegisterGradient("Max")(_extreme_grad)
ops.RegisterGradient("Min")(_extreme_grad)


@ops.RegisterGradient("Prod")
def _prod_grad(op, grad):
    # d prod / d x_i = product of the others: prod / x_i with no zero in the group; with exactly one
    # zero, the product of the non-zeros at the zero and 0 elsewhere; with two or more zeros, 0.
    x, axes = op.inputs
    x_shape = so.shape(x)
    kept = ro.reduced_shape(x_shape, axes)
    zero = so.zeros_like(x)
    is_zero = cw.equal(x, zero)
    zeros_in_group = so.reshape(ro.reduce_sum(cw.cast(is_zero, x.dtype), axes), kept)
    nonzero_prod = so.reshape(ro.reduce_prod(cw.where(is_zero, so.ones_like(x), x), axes), kept)
    one = cw.cast(1, x.dtype)
    no_zero = cw.realdiv(nonzero_prod, cw.where(is_zero, so.ones_like(x), x))
    at_single_zero = cw.where(is_zero, so.broadcast_to(nonzero_prod, x_shape), zero)
    others = cw.where(cw.equal(so.broadcast_to(zeros_in_group, x_shape), zero), no_zero,
                      cw.where(cw.equal(so.broadcast_to(zeros_in_group, x_shape), so.ones_like(x) * one),
                               at_single_zero, zero))
    return cw.multiply(so.broadcast_to(so.reshape(grad, kept), x_shape), cw.conj(others)), None


@ops.RegisterGradient("Cumsum")
def _cumsum_grad(op, grad):
    return ro.cumsum(grad, op.inputs[1], exclusive=op.get_attr("exclusive"),
                     reverse=not op.get_attr("reverse")), None


for _t in ("ArgMax", "ArgMin", "Any", "All", "ReducedShape"):
    ops.NotDifferentiable(_t)

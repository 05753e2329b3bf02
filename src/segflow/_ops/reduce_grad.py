"""Gradients of the reductions: the upstream gradient is broadcast back over the reduced axes."""
import math

import numpy as np

from segflow._core import fold
from segflow._core.registry import NotDifferentiable, RegisterGradient
from segflow._ops import elementwise as cw
from segflow._ops import reduce as ro
from segflow._ops import shape as so
from segflow._core.tensor import EagerTensor
from segflow._ops import cast as cast_ops
from segflow._ops.elementwise_grad import _scalar


def _static_shapes(op):
    """(input dims, keepdims dims) as Python lists when the input's shape and the axes are known
    when the gradient is built (always eagerly), else None."""
    x, axes = op.inputs
    if type(x) is EagerTensor and type(axes) is EagerTensor:     # eagerly: the arrays say it all
        dims, ax = list(x._value.shape), axes._value
    else:
        if not x.shape.is_fully_defined():
            return None
        ax = fold.constant_value(axes)
        if ax is None:
            return None
        dims = x.shape.as_list()
    reduced = {int(a) % len(dims) for a in np.atleast_1d(ax)} if dims else set()
    return dims, [1 if i in reduced else d for i, d in enumerate(dims)]


def _spread(grad, op, static=None):
    """`grad` reshaped to the keepdims shape and broadcast to the input's shape (from static
    shapes where known: two ops instead of four)."""
    if static is not None:
        dims, kept = static
        return so.broadcast_to(so.reshape(grad, kept), dims)
    x, axes = op.inputs
    x_shape = so.shape(x)
    return so.broadcast_to(so.reshape(grad, ro.reduced_shape(x_shape, axes)), x_shape)


@RegisterGradient("Sum")
def _sum_grad(op, grad):
    return _spread(grad, op, _static_shapes(op)), None


@RegisterGradient("Mean")
def _mean_grad(op, grad):
    static = _static_shapes(op)
    if static is not None:       # the count is a number (as TF does for known shapes)
        dims, kept = static
        count = math.prod(dims) // max(math.prod(kept), 1)
        # Divided before it is spread: each element gets the same quotient, computed once per
        # output element instead of once per input element.
        return _spread(cw.realdiv(grad, _scalar(count, grad.dtype)), op, static), None
    x = op.inputs[0]
    y = op.outputs[0]
    count = cw.truediv(so.size(x), cw.maximum(so.size(y), 1))
    return cw.realdiv(_spread(grad, op), cast_ops.cast(count, grad.dtype)), None


def _extreme_grad(op, grad):
    # The gradient is split equally among the elements tied at the extreme.
    x, axes = op.inputs
    x_shape = so.shape(x)
    kept = ro.reduced_shape(x_shape, axes)
    y = so.reshape(op.outputs[0], kept)
    mask = cast_ops.cast(cw.equal(x, y), grad.dtype)
    count = so.reshape(ro.reduce_sum(mask, axes), kept)
    return cw.realdiv(cw.multiply(mask, so.reshape(grad, kept)), count), None


RegisterGradient("Max")(_extreme_grad)
RegisterGradient("Min")(_extreme_grad)


@RegisterGradient("Prod")
def _prod_grad(op, grad):
    # d prod / d x_i is the product of the others. Per reduced group, with P the product of its non-zero
    # elements, S the sum of its zero elements (0 in value, but it carries their derivatives) and
    # xs = x with zeros replaced by 1:
    #   no zero:           P / x_i
    #   one zero z:        P at z;  (P / x_i) * S (= (P / x_i) * x_z) elsewhere
    #   two zeros z1, z2:  P * (S - x_i) (= P * x_other) at the zeros;  0 elsewhere
    #   three or more:     0
    # Written this way the gradient is exact to first order at zeros too, so second-order gradients
    # (Hessians) are right where a plain "0 when there is a zero" rule would make them wrong.
    x, axes = op.inputs
    x_shape = so.shape(x)
    kept = ro.reduced_shape(x_shape, axes)
    zero = so.zeros_like(x)
    one = so.ones_like(x)
    is_zero = cw.equal(x, zero)
    xs = cw.where(is_zero, one, x)

    def group(t):  # a per-group value, broadcast back over the group
        return so.broadcast_to(so.reshape(t, kept), x_shape)

    n_zero = group(ro.reduce_sum(cast_ops.cast(is_zero, x.dtype), axes))
    p = group(ro.reduce_prod(xs, axes))
    s = group(ro.reduce_sum(cw.where(is_zero, x, zero), axes))
    p_over_x = cw.realdiv(p, xs)
    others = cw.where(cw.equal(n_zero, zero), p_over_x,
                      cw.where(cw.equal(n_zero, one), cw.where(is_zero, p, cw.multiply(p_over_x, s)),
                               cw.where(cw.logical_and(cw.equal(n_zero, cw.add(one, one)), is_zero),
                                        cw.multiply(p, cw.subtract(s, x)), zero)))
    return cw.multiply(group(grad), cw.conj(others)), None


@RegisterGradient("EuclideanNorm")
def _euclidean_norm_grad(op, grad):
    # TF's _EuclideanNormGrad: x / (norm / grad), with no guard where the norm is 0 (0 / 0 = nan).
    x, axes = op.inputs
    output = op.outputs[0]
    if not op.get_attr("keep_dims"):
        kept = ro.reduced_shape(so.shape(x), axes)
        output = so.reshape(output, kept)
        grad = so.reshape(grad, kept)
    return cw.truediv(x, cw.truediv(output, grad)), None


@RegisterGradient("Cumsum")
def _cumsum_grad(op, grad):
    return ro.cumsum(grad, op.inputs[1], exclusive=op.get_attr("exclusive"),
                     reverse=not op.get_attr("reverse")), None


@RegisterGradient("Cumprod")
def _cumprod_grad(op, grad):
    x, axis = op.inputs
    exclusive, reverse = op.get_attr("exclusive"), op.get_attr("reverse")
    # d out_j / d x_i = out_j / x_i for each out_j that x_i enters: sum those against grad (conjugated
    # for complex x, as every gradient here). Not finite where x holds a zero (as TF's formula).
    out = ro.cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    summed = ro.cumsum(cw.multiply(grad, cw.conj(out)), axis, exclusive=exclusive, reverse=not reverse)
    return cw.truediv(summed, cw.conj(x)), None


for _t in ("ArgMax", "ArgMin", "Any", "All", "ReducedShape"):
    NotDifferentiable(_t)


@RegisterGradient("AddN")
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)

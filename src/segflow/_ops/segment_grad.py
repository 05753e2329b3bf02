"""Gradients of the segment family (segment_ops.py).

Every gradient is built from public ops (gather, where, equal, cast, unsorted_segment_sum/prod,
sparse_segment_*), so it runs eagerly, builds a graph, and can be differentiated again.
Unsorted ops drop rows with negative ids: those rows get a zero gradient. Sorted ops share the
same functions (their ids are all non-negative, so the masks are skipped).
"""
import numpy as np

from segflow._core import dtypes
from segflow._core.convert import convert_to_tensor
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.registry import NotDifferentiable, RegisterGradient
from segflow._core.tensor import EagerTensor
from segflow._core import fold as tensor_util
from segflow._ops import elementwise as cw
from segflow._ops import segment as sg
from segflow._ops import shape as so
from segflow._ops import cast as cast_ops
from segflow._ops import join as join_ops
from segflow._ops.gather import gather



def _gather(params, ids):
    return gather(params, ids)


def _expand(t, like):
    """t (shape S) reshaped to S + [1] * (rank(like) - rank(S)), to broadcast against `like`."""
    if t.shape.rank is not None and t.shape.rank == like.shape.rank:
        return t
    tail = so.ones_like(so.shape(like))[so.rank(t):]
    return so.reshape(t, join_ops.concat([so.shape(t), tail], 0))


def _may_drop(ids):
    """False when the ids are known now (eager, or a constant) and none is negative: the masks
    for dropped rows can then be skipped (fewer ops; the same result)."""
    value = ids._value if type(ids) is EagerTensor else tensor_util.constant_value(ids)
    if value is None:
        return True
    value = np.asarray(value)
    return bool(value.size) and bool(value.min() < 0)      # min: one pass, no boolean temporary


def _clip(ids, drop_negative):
    """The ids with negatives raised to 0 (so they gather something); masks hide those rows."""
    return cw.maximum(ids, cast_ops.cast(0, ids.dtype)) if drop_negative else ids


def _kept(ids, data):
    """ids >= 0, shaped to broadcast against `data` (rows with a negative id are dropped)."""
    return _expand(cw.greater_equal(ids, cast_ops.cast(0, ids.dtype)), data)


def _rows_of(grad, ids, drop_negative=True):
    """grad[ids] with zeros for negative ids: row i of data went to segment ids[i]."""
    rows = _gather(grad, _clip(ids, drop_negative))
    if not drop_negative:
        return rows
    return cw.where(so.broadcast_to(_kept(ids, rows), so.shape(rows)), rows, so.zeros_like(rows))


def _sorted_rows(op):
    """The number of segments of a sorted segment op (its output's first dimension)."""
    return so.shape(op.outputs[0])[0]


def _counts(ids, n, dtype, like):
    """Rows per segment as `dtype`, at least 1 (empty segments take no gradient), shaped to
    broadcast against `like` (the upstream gradient)."""
    ones = so.ones(so.shape(ids), dtypes.int32)
    counts = cw.maximum(sg.unsorted_segment_sum(ones, ids, n), 1)
    return _expand(cast_ops.cast(counts, dtype), like)


# ----------------------------------------------------------------------------------------------
# sum, mean, sqrt_n: linear, so the gradient is the upstream gradient gathered by id


@RegisterGradient("UnsortedSegmentSum")
def _unsorted_segment_sum_grad(op, grad):
    # Row i of data went to segment ids[i], so it gets grad[ids[i]]; dropped rows get zero.
    grad = convert_to_tensor(grad)
    return _rows_of(grad, op.inputs[1], _may_drop(op.inputs[1])), None, None


@RegisterGradient("SegmentSum")
def _segment_sum_grad(op, grad):
    grad = convert_to_tensor(grad)
    return _rows_of(grad, op.inputs[1], drop_negative=False), None


def _scaled_rows(op, grad, n, sqrt, drop_negative):
    # out[j] = sum(rows of j) / c_j (or / sqrt(c_j)): each row of j gets grad[j] / c_j.
    ids = op.inputs[1]
    counts = _counts(ids, n, grad.dtype, grad)
    if sqrt:
        counts = cw.sqrt(counts)
    return _rows_of(cw.realdiv(grad, counts), ids, drop_negative)


@RegisterGradient("UnsortedSegmentMean")
def _unsorted_segment_mean_grad(op, grad):
    grad = convert_to_tensor(grad)
    return _scaled_rows(op, grad, op.inputs[2], sqrt=False, drop_negative=_may_drop(op.inputs[1])), None, None


@RegisterGradient("UnsortedSegmentSqrtN")
def _unsorted_segment_sqrt_n_grad(op, grad):
    grad = convert_to_tensor(grad)
    return _scaled_rows(op, grad, op.inputs[2], sqrt=True, drop_negative=_may_drop(op.inputs[1])), None, None


@RegisterGradient("SegmentMean")
def _segment_mean_grad(op, grad):
    grad = convert_to_tensor(grad)
    return _scaled_rows(op, grad, _sorted_rows(op), sqrt=False, drop_negative=False), None


# ----------------------------------------------------------------------------------------------
# max, min: the gradient goes to the rows equal to their segment's result, split among ties


def _extreme_grad(op, grad, n, drop_negative):
    data, ids = op.inputs[0], op.inputs[1]
    clipped = _clip(ids, drop_negative)
    selected = cw.equal(data, _gather(op.outputs[0], clipped))
    if drop_negative:
        selected = cw.logical_and(selected, _kept(ids, data))
    num_selected = sg.unsorted_segment_sum(cast_ops.cast(selected, grad.dtype), ids, n)
    # div_no_nan: a segment with no selected row (empty, or all NaN) passes no gradient.
    share = _gather(cw.div_no_nan(grad, num_selected), clipped)
    return cw.where(selected, share, so.zeros_like(share))


@RegisterGradient("UnsortedSegmentMax")
def _unsorted_segment_max_grad(op, grad):
    grad = convert_to_tensor(grad)
    return _extreme_grad(op, grad, op.inputs[2], drop_negative=_may_drop(op.inputs[1])), None, None


@RegisterGradient("UnsortedSegmentMin")
def _unsorted_segment_min_grad(op, grad):
    grad = convert_to_tensor(grad)
    return _extreme_grad(op, grad, op.inputs[2], drop_negative=_may_drop(op.inputs[1])), None, None


@RegisterGradient("SegmentMax")
def _segment_max_grad(op, grad):
    grad = convert_to_tensor(grad)
    return _extreme_grad(op, grad, _sorted_rows(op), drop_negative=False), None


@RegisterGradient("SegmentMin")
def _segment_min_grad(op, grad):
    grad = convert_to_tensor(grad)
    return _extreme_grad(op, grad, _sorted_rows(op), drop_negative=False), None


# ----------------------------------------------------------------------------------------------
# prod


def _prod_grad(op, grad, n, drop_negative):
    # d prod / d x_i is the product of the other rows of i's segment. Per segment, with P the
    # product of its non-zero elements, S the sum of its zero elements (0 in value, but carrying
    # their derivatives) and xs = x with zeros replaced by 1:
    #   no zero:           P / x_i
    #   one zero z:        P at z;  (P / x_i) * S (= (P / x_i) * x_z) elsewhere
    #   two zeros z1, z2:  P * (S - x_i) (= P * x_other) at the zeros;  0 elsewhere
    #   three or more:     0
    # Written this way the gradient is exact to first order at zeros too, so second-order
    # gradients are right where a plain "0 when there are two zeros" rule would make them wrong.
    # (TF has no gradient for SegmentProd; this one serves both families.)
    x, ids = op.inputs[0], op.inputs[1]
    clipped = _clip(ids, drop_negative)
    zero = so.zeros_like(x)
    one = so.ones_like(x)
    is_zero = cw.equal(x, zero)
    xs = cw.where(is_zero, one, x)

    def per_segment(t):  # a per-segment value, gathered back to every row of the segment
        return _gather(t, clipped)

    n_zero = per_segment(sg.unsorted_segment_sum(cast_ops.cast(is_zero, dtypes.int32), ids, n))
    p = per_segment(sg.unsorted_segment_prod(xs, ids, n))
    s = per_segment(sg.unsorted_segment_sum(cw.where(is_zero, x, zero), ids, n))
    p_over_x = cw.realdiv(p, xs)
    others = cw.where(cw.equal(n_zero, 0), p_over_x,
                      cw.where(cw.equal(n_zero, 1), cw.where(is_zero, p, cw.multiply(p_over_x, s)),
                               cw.where(cw.logical_and(cw.equal(n_zero, 2), is_zero),
                                        cw.multiply(p, cw.subtract(s, x)), zero)))
    if x.dtype.is_complex:
        others = cw.conj(others)
    return cw.multiply(_rows_of(grad, ids, drop_negative), others)


@RegisterGradient("UnsortedSegmentProd")
def _unsorted_segment_prod_grad(op, grad):
    grad = convert_to_tensor(grad)
    return _prod_grad(op, grad, op.inputs[2], drop_negative=_may_drop(op.inputs[1])), None, None


@RegisterGradient("SegmentProd")
def _segment_prod_grad(op, grad):
    grad = convert_to_tensor(grad)
    return _prod_grad(op, grad, _sorted_rows(op), drop_negative=False), None


# ----------------------------------------------------------------------------------------------
# sparse segment ops: SparseSegment<K> and SparseSegment<K>Grad are each other's adjoints


def _sparse_grad(kind):
    def grad_fn(op, grad):
        grad = convert_to_tensor(grad)
        data, indices, ids = op.inputs[0], op.inputs[1], op.inputs[2]
        rows = so.shape(data, out_type=indices.dtype)[0]
        if op.get_attr("sparse_gradient"):
            values, unique = sg.sparse_segment_grad_v2(kind, grad, indices, ids, rows)
            dx = IndexedSlices(values, unique, so.shape(data, out_type=indices.dtype))
        else:
            dx = sg.sparse_segment_grad(kind, grad, indices, ids, rows)
        return [dx] + [None] * (len(op.inputs) - 1)
    return grad_fn


def _sparse_grad_grad(kind):
    # SparseSegment<K>Grad maps g to out[indices[i]] += g[ids[i]] * s_i with s_i set by the
    # segment of i; its adjoint sends G to row j += G[indices[i]] * s_i over the i of segment j:
    # the forward op again, with as many rows as g has.
    forward = {"sum": sg.sparse_segment_sum_with_num_segments,
               "mean": sg.sparse_segment_mean_with_num_segments,
               "sqrt_n": sg.sparse_segment_sqrt_n_with_num_segments}[kind]

    def grad_fn(op, grad):
        grad = convert_to_tensor(grad)
        g, indices, ids = op.inputs[0], op.inputs[1], op.inputs[2]
        return forward(grad, indices, ids, so.shape(g)[0]), None, None, None
    return grad_fn


for _kind, _name in (("sum", "SparseSegmentSum"), ("mean", "SparseSegmentMean"), ("sqrt_n", "SparseSegmentSqrtN")):
    RegisterGradient(_name)(_sparse_grad(_kind))
    RegisterGradient(_name + "WithNumSegments")(_sparse_grad(_kind))
    RegisterGradient(_name + "Grad")(_sparse_grad_grad(_kind))
    NotDifferentiable(_name + "GradV2")


# ----------------------------------------------------------------------------------------------
# bincount


@RegisterGradient("Bincount")
def _bincount_grad(op, grad):
    # Bin v sums the weights at arr == v, so weight k gets grad[arr[k]]; values >= size were
    # ignored and get 0 (they gather the zero row appended to grad).
    grad = convert_to_tensor(grad)
    arr, size = op.inputs[0], op.inputs[1]
    padded = join_ops.concat([grad, so.zeros([1], grad.dtype)], 0)
    return None, None, _gather(padded, cw.minimum(arr, cast_ops.cast(size, arr.dtype)))

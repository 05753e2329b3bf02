"""Gradients of gather and gather_nd. Axis-0 gather gives an IndexedSlices: the rows of the upstream
gradient with the gathered indices, never a dense tensor of params' size."""
from segflow._core import dtypes
from segflow._core.convert import convert_to_tensor
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.registry import RegisterGradient
from segflow._core import fold as tensor_util
from segflow._ops import elementwise as cw
from segflow._ops import shape as so
from segflow._ops import cast as cast_ops
from segflow._ops import transpose as transpose_ops
from segflow._ops import segment as segment_ops
from segflow._ops.gather import gather
from segflow._ops.reduce import reduce_prod
from segflow._ops.sequence import range as range_
from segflow._ops import scatter as scatter_ops
from segflow._ops import join as join_ops


def slices_dense_shape(params_shape, static):
    """The dense_shape of a gather gradient: int32 as TF makes it, unless a dimension of the table
    (static shape `static`) might not fit, where int64 is kept rather than wrapping."""
    dims = static.as_list() if static.rank is not None else None
    if dims is not None and all(d is not None and d < 2**31 for d in dims):
        return cast_ops.cast(params_shape, dtypes.int32)
    return params_shape


@RegisterGradient("GatherV2")
def _gather_grad(op, grad):
    params, indices, axis = op.inputs
    params_shape = so.shape(params, out_type=dtypes.int64)
    axis_value = tensor_util.constant_value(axis)
    batch_dims = op.get_attr("batch_dims")
    if batch_dims < 0:
        if indices.shape.rank is None:
            raise ValueError(f"Currently, it is unsupported to take the gradient of tf.gather when batch_dims < 0 "
                             f"and the rank of the indices is unknown (op '{op.name}', batch_dims={batch_dims}): "
                             "pass a non-negative batch_dims, or give indices a known rank (ensure_shape)")
        batch_dims += indices.shape.rank
    axis0 = axis_value is not None and int(axis_value) == 0 and batch_dims == 0
    if isinstance(grad, IndexedSlices):
        if axis0:
            # Rows grad.indices of the output came from rows indices[grad.indices] of params: the
            # gradient stays sparse (gather of a gather, as in embedding lookups).
            rows = gather(indices, grad.indices)
            size = so.reshape(so.size(rows, out_type=dtypes.int64), [1])
            values = so.reshape(grad.values, join_ops.concat([size, params_shape[1:]], 0))
            return [IndexedSlices(values, so.reshape(rows, [-1]), slices_dense_shape(params_shape, params.shape)),
                    None, None]
        grad = convert_to_tensor(grad)
    if axis0:
        size = so.reshape(so.size(indices, out_type=dtypes.int64), [1])
        values_shape = join_ops.concat([size, params_shape[1:]], 0)
        return [IndexedSlices(so.reshape(grad, values_shape), so.reshape(indices, [-1]),
                              slices_dense_shape(params_shape, params.shape)), None, None]
    # Other axes: move the gathered axis to the front, sum rows by index, move it back.
    rank = params.shape.rank
    if axis_value is None or rank is None or indices.shape.rank is None:
        return [_dynamic_gather_grad(params, indices, axis, axis_value, batch_dims, grad), None, None]
    a = int(axis_value) % rank
    bd = batch_dims
    if bd:
        return [_batched_gather_grad(op, grad, a, bd), None, None]
    idx_rank = indices.shape.rank
    # grad has shape params[:a] + indices.shape + params[a+1:]; put the indices dims first.
    perm = list(range(a, a + idx_rank)) + list(range(a)) + list(range(a + idx_rank, a + idx_rank + rank - a - 1))
    moved = transpose_ops.transpose(grad, perm)
    summed = segment_ops.unsorted_segment_sum(moved, indices, params_shape[a])
    inverse = list(range(1, a + 1)) + [0] + list(range(a + 1, rank))
    return [transpose_ops.transpose(summed, inverse), None, None]


def _batched_gather_grad(op, grad, a, bd):
    # Flatten the batch dims into the index: gather on the flattened params is a plain axis gather.
    params, indices, _ = op.inputs
    p_shape = so.shape(params, out_type=dtypes.int64)
    rank = params.shape.rank
    # Move axis a next to the batch dims, giving [batch..., n, rest...], where rest = params dims
    # between bd and a plus after a.
    perm_p = list(range(bd)) + [a] + list(range(bd, a)) + list(range(a + 1, rank))
    p_moved_shape = join_ops.stack([p_shape[i] for i in perm_p])
    batch = cast_ops.cast(so.reshape(ro_prod(p_shape[:bd]), [1]), dtypes.int64)
    n = p_shape[a]
    offsets = so.reshape(cw.multiply(cast_ops.cast(_range(batch[0]), dtypes.int64), n),
                         join_ops.concat([so.shape(indices, out_type=dtypes.int64)[:bd],
                                    so.ones([indices.shape.rank - bd], dtypes.int64)], 0))
    flat_idx = so.reshape(cw.add(cast_ops.cast(indices, dtypes.int64), offsets), [-1])
    idx_rank = indices.shape.rank - bd
    g_rank = grad.shape.rank
    # grad: [batch..., params[bd:a]..., indices[bd:]..., params[a+1:]...] -> [batch, idx..., bd..a, after]
    perm_g = list(range(bd)) + list(range(a, a + idx_rank)) + list(range(bd, a)) + list(range(a + idx_rank, g_rank))
    g_moved = transpose_ops.transpose(grad, perm_g)
    rest = so.shape(g_moved, out_type=dtypes.int64)[bd + idx_rank:]
    g_flat = so.reshape(g_moved, join_ops.concat([[-1], rest], 0))
    summed = segment_ops.unsorted_segment_sum(g_flat, flat_idx, cw.multiply(batch[0], n))
    summed = so.reshape(summed, p_moved_shape)
    inverse = [perm_p.index(i) for i in range(rank)]
    return transpose_ops.transpose(summed, inverse)


def _dynamic_gather_grad(params, indices, axis, axis_value, bd, grad):
    """The gradient for params when the rank of params or of indices, or the axis, is known only
    when the graph runs: the steps of the static paths, on shape tensors. grad, of shape
    params[:a] + indices[bd:] + params[a+1:], has the indices dims merged into one (N), that dim
    moved next to the batch dims, is summed by index (offset by batch number times params[a]),
    and moved back."""
    grad = convert_to_tensor(grad)
    i64 = dtypes.int64
    p_shape = so.shape(params, out_type=i64)
    r = so.size(p_shape, out_type=i64)
    if axis_value is not None and int(axis_value) >= 0:
        a = int(axis_value)
    else:   # a negative or unknown axis counts from the end
        a = cw.floormod(cast_ops.cast(axis if axis_value is None else int(axis_value), i64), r)

    def dims(lo, hi):
        return range_(lo, hi, dtype=i64)

    def vec(x):
        return so.reshape(cast_ops.cast(x, i64), [1])

    n = gather(p_shape, a)                                               # params.shape[a]
    values = so.reshape(grad, join_ops.concat([gather(p_shape, dims(0, a)), vec(-1),
                                               gather(p_shape, dims(a + 1, r))], 0))
    perm = join_ops.concat([dims(0, bd), vec(a), dims(bd, a), dims(a + 1, r)], 0)
    moved = transpose_ops.transpose(values, perm)      # [batch..., N, params[bd:a]..., params[a+1:]...]
    rest = gather(so.shape(moved, out_type=i64), dims(bd + 1, r))
    if bd == 0:
        summed = segment_ops.unsorted_segment_sum(moved, so.reshape(indices, [-1]), n)
    else:
        batch_shape = gather(p_shape, dims(0, bd))
        batch = reduce_prod(batch_shape)
        rows = so.reshape(moved, join_ops.concat([vec(-1), rest], 0))
        idx = so.reshape(cast_ops.cast(indices, i64), join_ops.concat([vec(batch), vec(-1)], 0))
        offsets = so.reshape(cw.multiply(range_(0, batch, dtype=i64), n), [-1, 1])
        flat_idx = so.reshape(cw.add(idx, offsets), [-1])
        summed = segment_ops.unsorted_segment_sum(rows, flat_idx, cw.multiply(batch, n))
        summed = so.reshape(summed, join_ops.concat([batch_shape, vec(n), rest], 0))
    inverse = join_ops.concat([dims(0, bd), dims(bd + 1, a + 1), vec(bd), dims(a + 1, r)], 0)
    return transpose_ops.transpose(summed, inverse)


def ro_prod(x):
    return reduce_prod(x)


def _range(n):
    return range_(0, n)


@RegisterGradient("GatherNd")
def _gather_nd_grad(op, grad):
    params, indices = op.inputs
    grad = convert_to_tensor(grad)
    shape = so.shape(params, out_type=indices.dtype)
    b = op.get_attr("batch_dims")
    if not b:
        return scatter_ops.scatter_nd(indices, grad, shape), None
    # batch_dims = b: fold the b batch dimensions into one, prepend each index's batch number to
    # it, scatter into the folded params, and unfold.
    batch = reduce_prod(shape[:b])
    flat_shape = join_ops.concat([transpose_ops.expand_dims(batch, 0), shape[b:]], 0)
    ishape = so.shape(indices, out_type=indices.dtype)
    flat_indices = so.reshape(indices, join_ops.concat([[-1], ishape[b:]], 0))
    flat_grad = so.reshape(grad, join_ops.concat([transpose_ops.expand_dims(batch, 0),
                                                  so.shape(grad, out_type=indices.dtype)[b:]], 0))
    rank = so.rank(flat_indices)
    ones = so.fill(transpose_ops.expand_dims(rank - 1, 0), cast_ops.cast(1, indices.dtype))
    numbers = so.reshape(range_(0, batch, dtype=indices.dtype), join_ops.concat([[-1], ones], 0))
    numbers = so.broadcast_to(numbers, join_ops.concat([so.shape(flat_indices, out_type=indices.dtype)[:-1],
                                                       [1]], 0))
    full = join_ops.concat([numbers, flat_indices], -1)
    return so.reshape(scatter_ops.scatter_nd(full, flat_grad, flat_shape), shape), None

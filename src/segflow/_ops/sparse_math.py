"""Arithmetic with SparseTensors: `sparse_reduce_sum` (TF's `tf.sparse.reduce_sum`) and the
multiplication dispatch `_mul_dispatch` (dense * dense, or dense * sparse keeping the sparsity).

The reductions sum the values a SparseTensor stands for; their gradient reaches the values through
the dense form (`to_dense` scatters the values, its gradient gathers them back).
"""
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._ops import elementwise as cw
from segflow._ops import gather as gather_ops
from segflow._ops import reduce as reduce_ops
from segflow._ops import shape as array_ops
from segflow._ops.sparse_tensor import SparseTensor, from_dense, to_dense

__all__ = ["sparse_reduce_sum", "sparse_reduce_sum_v2", "_mul_dispatch"]


def sparse_reduce_sum_v2(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
    """The sum of the elements of `sp_input` (zeros where it holds no value) over `axis` (all axes
    when None); `keepdims` keeps reduced axes with length 1. With `output_is_sparse` the result is
    a SparseTensor of its non-zero sums."""
    sp_input = SparseTensor.from_value(sp_input)
    keepdims = bool(keepdims)
    with name_scope(name, "SparseReduceSum"):
        if axis is None and not keepdims:
            total = reduce_ops.reduce_sum(sp_input.values)
        else:
            total = reduce_ops.reduce_sum(to_dense(sp_input), axis=axis, keepdims=keepdims)
        if output_is_sparse:
            return from_dense(total)
        return total


def sparse_reduce_sum(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None, name=None):
    """TF1's spelling of `sparse_reduce_sum_v2` (`reduction_axes`, `keep_dims` are old names)."""
    if reduction_axes is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'reduction_axes'")
        axis = reduction_axes
    if keep_dims is not None:
        if keepdims is not None:
            raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
        keepdims = keep_dims
    return sparse_reduce_sum_v2(sp_input, axis=axis, keepdims=keepdims, name=name)


def _mul_dispatch(x, y, name=None):
    """x * y: elementwise for dense operands; for a SparseTensor `y`, a SparseTensor with y's
    indices whose values are y's values times x (broadcast to y's dense shape) there."""
    if isinstance(y, SparseTensor):
        with name_scope(name, "SparseDenseCwiseMul"):
            dense_x = array_ops.broadcast_to(convert_to_tensor(x, dtype=y.dtype), y.dense_shape)
            picked = gather_ops.gather_nd(dense_x, y.indices)
            return SparseTensor(y.indices, cw.multiply(y.values, picked), y.dense_shape)
    return cw.multiply(x, y, name=name)

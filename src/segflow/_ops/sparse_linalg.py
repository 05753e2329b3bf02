"""The `tf.sparse` functions over SparseTensors that are segment reductions underneath:
`sparse_dense_matmul` (each stored value times a row of the dense operand, summed per output row:
a gather then an unsorted segment sum, so both gradients stay sparse-friendly), `reorder` (indices
in row-major order), and TF2's `sf.sparse.segment_sum / segment_mean / segment_sqrt_n` signatures
(`num_segments` before `name`)."""

from __future__ import annotations

from segflow._core import dtypes
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._core.tensor import Tensor
from segflow._ops import cast as cast_ops, elementwise as cw, gather as gather_ops, reduce as reduce_ops
from segflow._ops import segment as segment_ops, shape as shape_ops, sort as sort_ops, transpose as transpose_ops
from segflow._ops.sparse_tensor import SparseTensor
from typing import Optional
from segflow._core.typing import IntLike, Name, TensorLike

__all__ = ["sparse_dense_matmul", "reorder", "segment_sum", "segment_mean", "segment_sqrt_n"]


def _sparse(sp):
    if isinstance(sp, SparseTensor):
        return sp
    if hasattr(sp, "indices") and hasattr(sp, "dense_shape"):
        return SparseTensor.from_value(sp)
    raise TypeError(f"expected a SparseTensor, got {type(sp).__name__}")


def sparse_dense_matmul(sp_a: SparseTensor, b: TensorLike, adjoint_a: bool = False, adjoint_b: bool = False,
                        name: Name = None) -> Tensor:
    """The dense product `sp_a @ b` of a 2-D SparseTensor and a dense matrix (either adjointed).

    Duplicate indices in sp_a add up, as in the dense matrix they stand for.
    """
    sp_a = _sparse(sp_a)
    with name_scope(name, "SparseTensorDenseMatMul"):
        b = b if isinstance(b, Tensor) else convert_to_tensor(b, dtype=sp_a.dtype)
        if b.dtype != sp_a.dtype:
            raise TypeError(f"sparse_dense_matmul: sp_a has dtype {sp_a.dtype.name} and b {b.dtype.name}")
        if sp_a.indices.shape.rank == 2 and sp_a.indices.shape.as_list()[1] not in (None, 2):
            raise ValueError(f"sparse_dense_matmul: sp_a must be a matrix, got rank "
                             f"{sp_a.indices.shape.as_list()[1]}")
        if b.shape.rank not in (None, 2):
            raise ValueError(f"sparse_dense_matmul: b must be a matrix, got shape {b.shape}")
        if adjoint_b:
            b = transpose_ops.transpose(b, conjugate=True)
        rows, cols = sp_a.indices[:, 0], sp_a.indices[:, 1]
        out_rows = sp_a.dense_shape[0]
        values = sp_a.values
        if adjoint_a:
            rows, cols = cols, rows
            out_rows = sp_a.dense_shape[1]
            values = cw.conj(values) if values.dtype.is_complex else values
        picked = gather_ops.gather(b, cols)                                # [nnz, n]
        contrib = picked * shape_ops.reshape(values, [-1, 1])
        n = cast_ops.cast(out_rows, dtypes.int64)
        return segment_ops.unsorted_segment_sum(contrib, rows, n)


def reorder(sp_input: SparseTensor, name: Name = None) -> SparseTensor:
    """The same SparseTensor with its indices in row-major (lexicographic) order."""
    sp_input = _sparse(sp_input)
    with name_scope(name, "SparseReorder"):
        shape = sp_input.dense_shape
        strides = reduce_ops.cumprod(shape, exclusive=True, reverse=True)
        linear = reduce_ops.reduce_sum(sp_input.indices * shape_ops.reshape(strides, [1, -1]), 1)
        order = sort_ops.argsort(linear, stable=True)
        return SparseTensor(gather_ops.gather(sp_input.indices, order), gather_ops.gather(sp_input.values, order),
                            shape)


def segment_sum(data: TensorLike, indices: TensorLike, segment_ids: TensorLike, num_segments: Optional[IntLike] = None,
                name: Name = None) -> Tensor:
    """TF2's `tf.sparse.segment_sum`: sums of the rows `data[indices]` by sorted segment id."""
    return segment_ops.sparse_segment_sum(data, indices, segment_ids, name=name, num_segments=num_segments)


def segment_mean(data: TensorLike, indices: TensorLike, segment_ids: TensorLike, num_segments: Optional[IntLike] = None,
                 name: Name = None) -> Tensor:
    """TF2's `tf.sparse.segment_mean`."""
    return segment_ops.sparse_segment_mean(data, indices, segment_ids, name=name, num_segments=num_segments)


def segment_sqrt_n(data: TensorLike, indices: TensorLike, segment_ids: TensorLike,
                   num_segments: Optional[IntLike] = None, name: Name = None) -> Tensor:
    """TF2's `tf.sparse.segment_sqrt_n`."""
    return segment_ops.sparse_segment_sqrt_n(data, indices, segment_ids, name=name, num_segments=num_segments)

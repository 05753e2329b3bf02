"""TensorFlow's `sparse_ops` module name: a face over sparse_tensor and sparse_math (no logic of its own)."""
from segflow._ops.sparse_tensor import (
    SparseTensor, SparseTensorValue, from_dense, sparse_tensor_to_dense, to_dense
)
from segflow._ops.sparse_math import sparse_reduce_sum, sparse_reduce_sum_v2
from segflow._ops.sparse_linalg import reorder as sparse_reorder, sparse_dense_matmul as sparse_tensor_dense_matmul

__all__ = ["sparse_reorder", "sparse_tensor_dense_matmul", "SparseTensor", "SparseTensorValue", "from_dense", "sparse_tensor_to_dense", "to_dense",
           "sparse_reduce_sum", "sparse_reduce_sum_v2"]

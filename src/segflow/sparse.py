"""`sf.sparse` (TensorFlow's `tf.sparse`): SparseTensor and its conversions."""
from segflow._ops.sparse_tensor import (
    SparseTensor, SparseTensorValue, from_dense, is_sparse, sparse_tensor_to_dense, to_dense
)
from segflow._ops.sparse_linalg import reorder, segment_mean, segment_sqrt_n, segment_sum, sparse_dense_matmul
from segflow._ops.sparse_math import sparse_reduce_sum_v2 as reduce_sum

__all__ = ["reorder", "segment_mean", "segment_sqrt_n", "segment_sum", "sparse_dense_matmul", "reduce_sum", "SparseTensor", "SparseTensorValue", "from_dense", "is_sparse", "sparse_tensor_to_dense",
           "to_dense"]

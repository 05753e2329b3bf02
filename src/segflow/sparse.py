"""`sf.sparse` (TensorFlow's `tf.sparse`): SparseTensor and its conversions."""
from segflow._ops.sparse_tensor import (
    SparseTensor, SparseTensorValue, from_dense, is_sparse, sparse_tensor_to_dense, to_dense
)

__all__ = ["SparseTensor", "SparseTensorValue", "from_dense", "is_sparse", "sparse_tensor_to_dense",
           "to_dense"]

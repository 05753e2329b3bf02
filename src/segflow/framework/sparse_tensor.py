"""TensorFlow's `sparse_tensor` module name: a face over segflow._ops.sparse_tensor."""
from segflow._ops.sparse_tensor import (
    SparseTensor, SparseTensorValue, to_dense, from_dense, sparse_tensor_to_dense, is_sparse
)

__all__ = [
    'SparseTensor', 'SparseTensorValue', 'to_dense', 'from_dense', 'sparse_tensor_to_dense',
    'is_sparse'
]

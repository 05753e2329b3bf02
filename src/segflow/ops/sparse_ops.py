"""TensorFlow's `sparse_ops` module name: a face over sparse_tensor (no logic of its own)."""
from segflow._ops.sparse_tensor import (
    SparseTensor, SparseTensorValue, from_dense, sparse_tensor_to_dense, to_dense
)

__all__ = ["SparseTensor", "SparseTensorValue", "from_dense", "sparse_tensor_to_dense", "to_dense"]

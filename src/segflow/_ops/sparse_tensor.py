"""A minimal `SparseTensor(indices, values, dense_shape)` (TF's COO layout) and the conversions
`sparse.to_dense` / `sparse.from_dense`, enough for `embedding_lookup_sparse` and friends.

indices: int64 [N, rank], row-major sorted for the segment-based consumers; values: [N];
dense_shape: int64 [rank].
"""
import collections

import numpy as np

from segflow._core import dtypes, shapes as tensor_shape
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._core.mode import get_default_session
from segflow._core.tensor import Tensor
from segflow._core import fold as tensor_util
from segflow._ops import scatter as scatter_ops
from segflow._ops import elementwise as cwise_ops, gather as gather_ops
from segflow._ops import shape as so

__all__ = ["SparseTensor", "SparseTensorValue", "to_dense", "from_dense", "sparse_tensor_to_dense",
           "is_sparse"]

SparseTensorValue = collections.namedtuple("SparseTensorValue", ["indices", "values", "dense_shape"])


class SparseTensor:
    """A sparse tensor: `dense[indices[i]] = values[i]`, zero elsewhere (TF's `tf.sparse.SparseTensor`)."""

    @classmethod
    def from_value(cls, value):
        if isinstance(value, SparseTensor):
            return value
        return cls(value.indices, value.values, value.dense_shape)

    def __init__(self, indices, values, dense_shape):
        with name_scope(None, "SparseTensor"):
            self._indices = convert_to_tensor(indices, dtype=dtypes.int64, name="indices") \
                if not isinstance(indices, Tensor) else indices
            self._values = convert_to_tensor(values, name="values")
            self._dense_shape = convert_to_tensor(dense_shape, dtype=dtypes.int64, name="dense_shape") \
                if not isinstance(dense_shape, Tensor) else dense_shape
        if self._indices.dtype != dtypes.int64 or self._dense_shape.dtype != dtypes.int64:
            raise TypeError("SparseTensor indices and dense_shape must be int64, got "
                            f"{self._indices.dtype.name} and {self._dense_shape.dtype.name}")
        if self._indices.shape.rank not in (None, 2):
            raise ValueError(f"SparseTensor indices must be a matrix [N, rank], got shape {self._indices.shape}")
        if self._values.shape.rank not in (None, 1):
            raise ValueError(f"SparseTensor values must be a vector [N], got shape {self._values.shape}")

    @property
    def indices(self):
        return self._indices

    @property
    def values(self):
        return self._values

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def shape(self):
        known = tensor_util.constant_value(self._dense_shape)
        if known is not None:
            return tensor_shape.TensorShape([int(d) for d in np.asarray(known).reshape(-1)])
        rank = self._dense_shape.shape.as_list()[0] if self._dense_shape.shape.rank == 1 else None
        return tensor_shape.unknown_shape(rank=rank)

    def get_shape(self):
        return self.shape

    @property
    def op(self):
        return self._values.op

    @property
    def graph(self):
        return self._values.graph

    def with_values(self, new_values):
        return SparseTensor(self._indices, new_values, self._dense_shape)

    def _fetch_parts(self):
        """For Session.run: the tensors to fetch and how to rebuild the value from them."""
        return [self._indices, self._values, self._dense_shape], lambda parts: SparseTensorValue(*parts)

    def eval(self, feed_dict=None, session=None):
        session = session or get_default_session()
        return session.run(self, feed_dict)

    def numpy(self):
        return SparseTensorValue(self._indices.numpy(), self._values.numpy(), self._dense_shape.numpy())

    def __repr__(self):
        return f"SparseTensor(indices={self._indices!r}, values={self._values!r}, dense_shape={self._dense_shape!r})"


def is_sparse(x):
    return isinstance(x, (SparseTensor, SparseTensorValue))


def to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense tensor `sp_input` stands for; positions it does not name hold `default_value` (0).

    The gradient for the values is the dense gradient gathered at the indices.
    """
    sp_input = SparseTensor.from_value(sp_input)
    with name_scope(name, "SparseToDense"):
        if default_value is None:
            return scatter_ops.scatter_nd(sp_input.indices, sp_input.values, sp_input.dense_shape)
        base = so.fill(sp_input.dense_shape, convert_to_tensor(default_value, dtype=sp_input.dtype))
        return scatter_ops.tensor_scatter_nd_update(base, sp_input.indices, sp_input.values)


sparse_tensor_to_dense = to_dense


def from_dense(tensor, name=None):
    """The SparseTensor of the non-zero elements of `tensor` (row-major order)."""
    with name_scope(name, "dense_to_sparse"):
        tensor = convert_to_tensor(tensor)
        zero = so.zeros_like(tensor)
        indices = cwise_ops.where_v2(cwise_ops.not_equal(tensor, zero))
        values = gather_ops.gather_nd(tensor, indices)
        return SparseTensor(indices, values, so.shape(tensor, out_type=dtypes.int64))

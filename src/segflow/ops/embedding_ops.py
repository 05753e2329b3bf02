"""TensorFlow's `embedding_ops` module name: a face over segflow._ops.embedding."""
from segflow._ops.embedding import (
    embedding_lookup, embedding_lookup_v2, embedding_lookup_sparse, embedding_lookup_sparse_v2,
    safe_embedding_lookup_sparse, safe_embedding_lookup_sparse_v2, _embedding_lookup_and_transform
)

__all__ = [
    'embedding_lookup', 'embedding_lookup_v2', 'embedding_lookup_sparse',
    'embedding_lookup_sparse_v2', 'safe_embedding_lookup_sparse', 'safe_embedding_lookup_sparse_v2'
]

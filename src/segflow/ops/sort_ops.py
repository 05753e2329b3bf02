"""TensorFlow's `sort_ops` module name: a face over segflow._ops.sort."""
from segflow._ops.sort import top_k, sort, argsort, boolean_mask, TopKV2Output, top_k_kernel

__all__ = [
    'top_k', 'sort', 'argsort', 'boolean_mask', 'TopKV2Output', 'top_k_kernel'
]

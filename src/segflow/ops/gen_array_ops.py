"""TensorFlow's generated `gen_array_ops` module name (raw op wrappers): a face over segflow._ops."""
from segflow._ops.unique import unique, unique_with_counts, unique_v2, unique_with_counts_v2

__all__ = [
    'unique', 'unique_with_counts', 'unique_v2', 'unique_with_counts_v2'
]

"""TensorFlow's `indexed_slices` module name: a face over segflow._core.indexed_slices."""
from segflow._core.indexed_slices import IndexedSlices, IndexedSlicesValue
from segflow._core.convert import convert_to_tensor_or_indexed_slices

__all__ = [
    'IndexedSlices', 'IndexedSlicesValue', 'convert_to_tensor_or_indexed_slices'
]

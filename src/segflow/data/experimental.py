"""`sf.data.experimental` (TensorFlow's `tf.data.experimental`): the constants and the structure helpers."""
from segflow._data.dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, cardinality, get_structure

__all__ = ["AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY", "cardinality", "get_structure"]

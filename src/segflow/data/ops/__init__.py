"""`segflow.data.ops` (TensorFlow's `tensorflow.python.data.ops`): `dataset_ops`, `iterator_ops`."""
from segflow.data.ops import dataset_ops, iterator_ops

__all__ = ["dataset_ops", "iterator_ops"]

"""TensorFlow's `tensorflow.python.data.ops.iterator_ops` names over `segflow._data`: the graph
`Iterator` (TF1) and the eager `OwnedIterator`."""
from segflow._data.iterator import Iterator, OwnedIterator

__all__ = ["Iterator", "OwnedIterator"]

"""`sf.compat.v1.data` (TensorFlow 1's `tf.data`): `Dataset` is TF1's DatasetV1 (with
`make_one_shot_iterator` and `make_initializable_iterator` methods), `Iterator` the graph iterator."""
from segflow._data.dataset import (AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, DatasetV1 as Dataset,
                                   Options, get_output_classes, get_output_shapes, get_output_types)
from segflow._data.iterator import Iterator, make_initializable_iterator, make_one_shot_iterator
from segflow.data import experimental

__all__ = ["AUTOTUNE", "Dataset", "INFINITE_CARDINALITY", "Iterator", "Options", "UNKNOWN_CARDINALITY",
           "experimental", "get_output_classes", "get_output_shapes", "get_output_types",
           "make_initializable_iterator", "make_one_shot_iterator"]

"""TensorFlow's `tensorflow.python.data.ops.dataset_ops` names over `segflow._data`."""
from segflow._data.dataset import (AUTOTUNE, INFINITE_CARDINALITY as INFINITE, UNKNOWN_CARDINALITY as UNKNOWN,
                                   DatasetV1, DatasetV2, DatasetV2 as Dataset, Options, get_structure,
                                   get_output_classes as get_legacy_output_classes,
                                   get_output_shapes as get_legacy_output_shapes,
                                   get_output_types as get_legacy_output_types)
from segflow._data.iterator import make_initializable_iterator, make_one_shot_iterator

__all__ = ["AUTOTUNE", "Dataset", "DatasetV1", "DatasetV2", "INFINITE", "Options", "UNKNOWN",
           "get_legacy_output_classes", "get_legacy_output_shapes", "get_legacy_output_types", "get_structure", "make_initializable_iterator",
           "make_one_shot_iterator"]

"""`sf.data` (TensorFlow's `tf.data`): input pipelines over in-memory data (`Dataset`); see
`segflow._data.dataset` for what differs from TF on purpose."""
from segflow._data.dataset import (AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, DatasetV2 as Dataset,
                                   Options)
from segflow._data.iterator import OwnedIterator as Iterator
from segflow.data import experimental

__all__ = ["AUTOTUNE", "Dataset", "INFINITE_CARDINALITY", "Iterator", "Options", "UNKNOWN_CARDINALITY",
           "experimental"]

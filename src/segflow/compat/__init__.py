"""`sf.compat` (TensorFlow's `tf.compat`): `v1` holds the TF1 names; `dimension_value` and
`dimension_at_index` read a shape's entries the same way in TF1 and TF2 code."""
from segflow.compat import v1
from segflow._core.shapes import dimension_at_index, dimension_value

__all__ = ["v1", "dimension_at_index", "dimension_value"]

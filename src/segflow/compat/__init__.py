"""`sf.compat` (TensorFlow's `tf.compat`): `v1` holds the TF1 names."""
from segflow.compat import v1

__all__ = ["v1"]

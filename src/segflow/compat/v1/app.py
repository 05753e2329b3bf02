"""`sf.compat.v1.app` (TensorFlow's `tf.compat.v1.app`): `run`, TF1's entry point, and `flags`."""
from segflow._platform.app import run
from segflow.compat.v1 import flags

__all__ = ["flags", "run"]

"""`sf.compat.v1.metrics` (TensorFlow 1's `tf.metrics`): streaming metrics, each returning
(value, update_op) over local variables; graph mode only. The names of `segflow.ops.metrics`."""
from segflow.ops.metrics import *  # noqa: F401,F403
from segflow.ops.metrics import __all__  # noqa: F401

"""`sf.compat.v1.losses` (TensorFlow 1's `tf.losses`): the losses, `Reduction` and the loss collections,
the names of `segflow.ops.losses.losses`."""
from segflow.ops.losses.losses import *  # noqa: F401,F403
from segflow.ops.losses.losses import __all__  # noqa: F401

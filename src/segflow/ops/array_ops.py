"""TensorFlow's `array_ops` module name: a face over the op families (no logic of its own)."""
from segflow.ops.shape_ops import *  # noqa: F401,F403
from segflow.ops.shape_ops import identity_n  # noqa: F401
from segflow.ops.join_ops import *  # noqa: F401,F403
from segflow.ops.gather_ops import *  # noqa: F401,F403
from segflow.ops.random_ops import *  # noqa: F401,F403 - TF1's flat names: sf.random_normal, sf.set_random_seed
from segflow.ops.stitch_ops import *  # noqa: F401,F403
from segflow.ops.scatter_ops import *  # noqa: F401,F403
from segflow.ops.sort_ops import *  # noqa: F401,F403
from segflow.ops.cwise_ops import where, where_v2  # noqa: F401
from segflow.framework.constant_op import constant  # noqa: F401 - TF's array_ops.constant

newaxis = None

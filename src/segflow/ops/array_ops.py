"""TensorFlow's `array_ops` module name: a face over the op families (no logic of its own)."""
from segflow._ops.shape import *  # noqa: F401,F403
from segflow._ops.shape import identity_n  # noqa: F401
from segflow._ops.slicing import *  # noqa: F401,F403
from segflow._ops.gather import *  # noqa: F401,F403
from segflow._ops.random import *  # noqa: F401,F403 - TF1's flat names: sf.random_normal, sf.set_random_seed
from segflow._ops.stitch import *  # noqa: F401,F403
from segflow._ops.scatter import *  # noqa: F401,F403
from segflow._ops.sort import *  # noqa: F401,F403
from segflow._ops.elementwise import where, where_v2  # noqa: F401
from segflow._ops.constant import constant  # noqa: F401 - TF's array_ops.constant

newaxis = None

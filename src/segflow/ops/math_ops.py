"""TensorFlow's `math_ops` module name: a face over the op families (no logic of its own)."""
from segflow._ops.elementwise import *  # noqa: F401,F403
from segflow._ops.reduce import *  # noqa: F401,F403
from segflow._ops.linalg import *  # noqa: F401,F403
from segflow._ops.sequence import *  # noqa: F401,F403
from segflow._ops.segment import *  # noqa: F401,F403
from segflow._ops.shape import add_n, stop_gradient, zeros_like, ones_like  # noqa: F401
from segflow._ops.slicing import squeeze, transpose  # noqa: F401
from segflow._ops.reduce import reduced_shape  # noqa: F401
from segflow._ops.segment import densify_indexed_slices  # noqa: F401 - used by aggregation and conversion

"""TensorFlow's `math_ops` module name: a face over the op families (no logic of its own)."""
from segflow.ops.cwise_ops import *  # noqa: F401,F403
from segflow.ops.reduction_ops import *  # noqa: F401,F403
from segflow.ops.linalg_ops import *  # noqa: F401,F403
from segflow.ops.sequence_ops import *  # noqa: F401,F403
from segflow.ops.segment_ops import *  # noqa: F401,F403
from segflow.ops.shape_ops import add_n, stop_gradient, zeros_like, ones_like  # noqa: F401
from segflow.ops.join_ops import squeeze, transpose  # noqa: F401
from segflow.ops.reduction_ops import reduced_shape  # noqa: F401
from segflow.ops.segment_ops import densify_indexed_slices  # noqa: F401 - used by aggregation and conversion

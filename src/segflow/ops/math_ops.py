"""TensorFlow's `math_ops` module name: a face over the op families (no logic of its own)."""
from segflow.ops.cwise_ops import *  # noqa: F401,F403
from segflow.ops.reduction_ops import *  # noqa: F401,F403
from segflow.ops.linalg_ops import *  # noqa: F401,F403
from segflow.ops.sequence_ops import *  # noqa: F401,F403
from segflow.ops.segment_ops import *  # noqa: F401,F403
from segflow.ops.shape_ops import add_n, stop_gradient, zeros_like, ones_like  # noqa: F401
from segflow.ops.join_ops import squeeze, transpose  # noqa: F401
from segflow.ops.reduction_ops import reduced_shape  # noqa: F401
from segflow.framework import ops as _ops


def densify_indexed_slices(value, name=None):
    """The dense tensor an IndexedSlices stands for: its values summed into rows with
    unsorted_segment_sum (repeated indices add up)."""
    from segflow.ops.segment_ops import unsorted_segment_sum
    return unsorted_segment_sum(value.values, value.indices, value.dense_shape[0], name=name)


def _ops_convert_dense(value, dtype=None, name=None, as_ref=False):
    return NotImplemented

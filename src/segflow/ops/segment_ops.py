"""The segment-reduction family. Gradients in segment_grad.py; kernels in kernels/segment.py."""
import numpy as np

from segflow.framework import dtypes, errors, ops, tensor_shape, tensor_util
from segflow.framework.op_def import TensorSpec, apply_op, register_op
from segflow.kernels import segment

__all__ = ["unsorted_segment_sum"]

_INDEX = (dtypes.int32, dtypes.int64)


def _infer_unsorted_segment(op, data, segment_ids, num_segments):
    if segment_ids.dtype not in _INDEX:
        raise errors.invalid_input(op, "segment_ids", f"must be int32 or int64, not {segment_ids.dtype.name}")
    if num_segments.dtype not in _INDEX:
        raise errors.invalid_input(op, "num_segments", f"must be int32 or int64, not {num_segments.dtype.name}")
    if num_segments.shape.rank not in (None, 0):
        raise errors.invalid_input(op, "num_segments", f"must be a scalar, got shape {num_segments.shape}")
    if not tensor_shape.is_prefix(segment_ids.shape, data.shape):
        raise errors.invalid_input(op, "segment_ids", f"shape {segment_ids.shape} is not a prefix of data's "
                                   f"shape {data.shape}")
    n = tensor_util.constant_value(num_segments)
    if n is not None and int(n) < 0:
        raise errors.invalid_input(op, "num_segments", f"must be non-negative, got {int(n)}")
    rows = None if n is None else int(n)
    if data.shape.rank is None or segment_ids.shape.rank is None:
        return [TensorSpec(data.dtype, tensor_shape.unknown_shape())]
    return [TensorSpec(data.dtype, [rows] + data.shape.as_list()[segment_ids.shape.rank:])]


register_op("UnsortedSegmentSum", inputs=("data", "segment_ids", "num_segments"),
            attrs={"T": "data", "Tindices": "segment_ids", "Tnumsegments": "num_segments"},
            allowed={"Tindices": _INDEX, "Tnumsegments": _INDEX},
            infer=_infer_unsorted_segment,
            kernel=lambda data, ids, n: segment.unsorted_segment_reduce("sum", data, ids, n))


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Adds up the rows of `data` that share a segment id.

    Args:
      data: tensor whose leading dimensions have the shape of `segment_ids`.
      segment_ids: int32 or int64 ids of any shape that is a prefix of data's shape; rows with a
        negative id are dropped.
      num_segments: number of output rows (int or 0-D int tensor).
    Returns:
      Shape `[num_segments] + data.shape[segment_ids.ndim:]`; empty segments hold 0.
    Raises:
      InvalidArgumentError: an id >= num_segments (naming its position), bad shapes or dtypes.
    """
    return apply_op("UnsortedSegmentSum", data, segment_ids, num_segments, name=name)

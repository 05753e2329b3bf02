"""TensorFlow's `segment_id_ops` module name: a face over segflow._ops.ragged_ops."""
from segflow._ops.ragged_ops import row_splits_to_segment_ids, segment_ids_to_row_splits

__all__ = ["row_splits_to_segment_ids", "segment_ids_to_row_splits"]

"""`sf.ragged` (TensorFlow's `tf.ragged`): ragged tensors and the ops over them."""
from segflow._ops.ragged import RaggedTensorValue, is_ragged
from segflow._ops.ragged_factory import constant, constant_value
from segflow._ops.ragged_math import boolean_mask, map_flat_values, ragged_range as range, stack_dynamic_partitions  # noqa: A004
from segflow._ops.ragged_ops import row_splits_to_segment_ids, segment_ids_to_row_splits

__all__ = ["RaggedTensorValue", "boolean_mask", "constant", "constant_value", "is_ragged", "map_flat_values",
           "range", "row_splits_to_segment_ids", "segment_ids_to_row_splits", "stack_dynamic_partitions"]

"""`sf.ragged` (TensorFlow's `tf.ragged`): ragged tensors and the ops over them."""
from segflow._ops.ragged import (
    RaggedTensorValue, boolean_mask, constant, constant_value, is_ragged, map_flat_values,
    ragged_range as range, row_splits_to_segment_ids, segment_ids_to_row_splits, stack_dynamic_partitions
)  # noqa: A004

__all__ = ["RaggedTensorValue", "boolean_mask", "constant", "constant_value", "is_ragged", "map_flat_values",
           "range", "row_splits_to_segment_ids", "segment_ids_to_row_splits", "stack_dynamic_partitions"]

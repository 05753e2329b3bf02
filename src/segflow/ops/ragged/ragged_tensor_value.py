"""TensorFlow's `ragged_tensor_value` module name: a face over segflow._ops.ragged_value."""
from segflow._ops.ragged_value import RaggedTensorValue

__all__ = ["RaggedTensorValue"]

"""TensorFlow's `ragged_tensor` module name: a face over segflow._ops.ragged."""
from segflow._ops.ragged import RaggedTensor, RaggedTensorValue, is_ragged

__all__ = ["RaggedTensor", "RaggedTensorValue", "is_ragged"]

"""TensorFlow's `tensor_spec` module name: a face over segflow._core.tensor_spec."""
from segflow._core.tensor_spec import TensorSpec

__all__ = ["TensorSpec"]

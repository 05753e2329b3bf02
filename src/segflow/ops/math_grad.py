"""TensorFlow's `math_grad` module name: importing it registers the math families' gradients."""
from segflow.ops import cwise_grad, linalg_grad, reduction_grad, segment_grad  # noqa: F401

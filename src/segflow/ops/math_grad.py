"""TensorFlow's `math_grad` module name: importing it registers the math families' gradients."""
from segflow._ops import elementwise_grad as cwise_grad, linalg_grad, reduce_grad as reduction_grad, segment_grad  # noqa: F401

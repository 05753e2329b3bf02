"""TensorFlow's `array_grad` module name: importing it registers the array families' gradients."""
from segflow.ops import gather_grad, join_grad, shape_grad  # noqa: F401
from segflow.ops import stitch_grad  # noqa: F401
from segflow.ops import scatter_grad  # noqa: F401
from segflow.ops import sort_grad  # noqa: F401

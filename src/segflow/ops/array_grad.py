"""TensorFlow's `array_grad` module name: importing it registers the array families' gradients."""
from segflow._ops import gather_grad, slicing_grad as join_grad, shape_grad  # noqa: F401
from segflow._ops import stitch_grad  # noqa: F401
from segflow._ops import scatter_grad  # noqa: F401
from segflow._ops import sort_grad  # noqa: F401

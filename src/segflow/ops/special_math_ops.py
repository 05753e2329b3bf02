"""TensorFlow's `special_math_ops` module name: a face over segflow._ops.einsum."""
from segflow._ops.einsum import einsum

__all__ = ["einsum"]

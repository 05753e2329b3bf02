"""TensorFlow's `check_numerics_callback` module name: a face over segflow._ops.check_numerics."""
from segflow._ops.check_numerics import disable_check_numerics, enable_check_numerics

__all__ = ['disable_check_numerics', 'enable_check_numerics']

"""TensorFlow's `ragged_math_ops` module name: a face over segflow._ops.ragged_math."""
from segflow._ops.ragged_math import ragged_range as range, reduce_max, reduce_mean, reduce_min, reduce_prod, reduce_sum  # noqa: A004

__all__ = ["range", "reduce_max", "reduce_mean", "reduce_min", "reduce_prod", "reduce_sum"]

"""TensorFlow's `check_ops` module name: a face over segflow._ops.debugging."""
from segflow._ops.debugging import (
    assert_equal, assert_greater, assert_greater_equal, assert_less, assert_less_equal, assert_near,
    assert_negative, assert_non_negative, assert_non_positive, assert_none_equal, assert_positive, assert_rank,
    assert_rank_at_least, assert_type
)

__all__ = ["assert_equal", "assert_greater", "assert_greater_equal", "assert_less", "assert_less_equal",
           "assert_near", "assert_negative", "assert_non_negative", "assert_non_positive", "assert_none_equal",
           "assert_positive", "assert_rank", "assert_rank_at_least", "assert_type"]

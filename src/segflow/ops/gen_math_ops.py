"""TensorFlow's generated `gen_math_ops` module name (the raw op wrappers, by their snake_case op
names): a face over segflow's op families."""
from segflow._ops.elementwise import (
    abs, add, add_v2, cos, div, div_no_nan, equal, exp, floordiv as floor_div, floormod as floor_mod, greater,
    greater_equal, less, less_equal, log, logical_and, logical_not, logical_or, maximum, minimum, mul_no_nan,
    multiply as mul, negative as neg, nextafter as next_after, not_equal, realdiv as real_div, rsqrt, select,
    sigmoid, sign, sin, sqrt, square, squared_difference, subtract as sub, tanh, truncatediv as truncate_div,
    where_v2 as select_v2, xdivy, xlog1py, xlogy
)
from segflow._ops.cast import cast
from segflow._ops.reduce import cumprod, cumsum
from segflow._ops.linalg import matmul as mat_mul
from segflow._ops.bincount import bincount
from segflow._ops.segment import (
    segment_max, segment_mean, segment_min, segment_prod, segment_sum, sparse_segment_mean,
    sparse_segment_mean_with_num_segments, sparse_segment_sqrt_n, sparse_segment_sqrt_n_with_num_segments,
    sparse_segment_sum, sparse_segment_sum_with_num_segments, unsorted_segment_max, unsorted_segment_min,
    unsorted_segment_prod, unsorted_segment_sum
)

__all__ = [
    "abs", "add", "add_v2", "bincount", "cast", "cos", "cumprod", "cumsum", "div", "div_no_nan", "equal", "exp",
    "floor_div", "floor_mod", "greater", "greater_equal", "less", "less_equal", "log", "logical_and",
    "logical_not", "logical_or", "mat_mul", "maximum", "minimum", "mul", "mul_no_nan", "neg", "next_after",
    "not_equal", "real_div", "rsqrt", "segment_max", "segment_mean", "segment_min", "segment_prod", "segment_sum",
    "select", "select_v2", "sigmoid", "sign", "sin", "sparse_segment_mean", "sparse_segment_mean_with_num_segments",
    "sparse_segment_sqrt_n", "sparse_segment_sqrt_n_with_num_segments", "sparse_segment_sum",
    "sparse_segment_sum_with_num_segments", "sqrt", "square", "squared_difference", "sub", "tanh",
    "truncate_div", "unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod",
    "unsorted_segment_sum", "xdivy", "xlog1py", "xlogy",
]

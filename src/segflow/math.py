"""`sf.math` (TensorFlow's `tf.math`): elementwise, reduction, segment and sequence ops."""
from segflow._ops.elementwise import (
    abs, acos, add, add_v2, angle, asin, atan, ceil, complex, conj, cos, cosh, div, div_no_nan, divide,
    equal, erf, exp, expm1, floor, floor_div, floordiv, floormod, greater, greater_equal, imag,
    is_finite, is_inf, is_nan, less, less_equal, log, log1p, logical_and, logical_not, logical_or,
    logical_xor, maximum, minimum, mod, mul, multiply, neg, negative, not_equal, pow, real, realdiv,
    reciprocal, round, rsqrt, scalar_mul, select, sigmoid, sign, sin, sinh, softplus, sqrt, square,
    squared_difference, sub, subtract, sum_to_shape, tan, tanh, truediv, truncatediv, where, where_v2,
    multiply_no_nan, nextafter, xdivy, xlog1py, xlogy
)
from segflow._ops.cast import cast, to_double, to_float, to_int32, to_int64
from segflow._ops.reduce import (
    argmax, argmin, count_nonzero, cumsum, cumprod, reduce_all, reduce_any, reduce_logsumexp, reduce_max,
    reduce_mean, reduce_min, reduce_prod, reduce_sum, reduce_euclidean_norm
)
from segflow._ops.bincount import bincount
from segflow._ops.segment import (
    segment_max, segment_mean, segment_min, segment_prod, segment_sum, sparse_segment_mean,
    sparse_segment_mean_with_num_segments, sparse_segment_sqrt_n,
    sparse_segment_sqrt_n_with_num_segments, sparse_segment_sum, sparse_segment_sum_with_num_segments,
    unsorted_segment_max, unsorted_segment_mean, unsorted_segment_min, unsorted_segment_prod,
    unsorted_segment_sqrt_n, unsorted_segment_sum
)
from segflow._ops.linalg import matmul
from segflow._ops.sequence import invert_permutation, range
from segflow._ops.reduce import add_n
from segflow._ops.sort import top_k
from segflow._ops.elementwise import div_no_nan as divide_no_nan
from segflow._ops.search import searchsorted
from segflow._ops.einsum import tensordot

__all__ = ["divide_no_nan", "searchsorted", "tensordot", "abs", "acos", "add", "add_n", "add_v2", "angle", "argmax", "argmin", "asin", "atan", "bincount",
           "cast", "ceil", "complex", "conj", "cos", "cosh", "count_nonzero", "cumsum", "cumprod", "div", "div_no_nan",
           "divide", "equal", "erf", "exp", "expm1", "floor", "floor_div", "floordiv", "floormod", "greater",
           "greater_equal", "imag", "invert_permutation", "is_finite", "is_inf", "is_nan", "less",
           "less_equal", "log", "log1p", "logical_and", "logical_not", "logical_or", "logical_xor", "matmul",
           "maximum", "minimum", "mod", "mul", "multiply", "neg", "negative", "not_equal", "pow", "range",
           "real", "realdiv", "reciprocal", "reduce_all", "reduce_any", "reduce_logsumexp", "reduce_max",
           "reduce_mean", "reduce_min", "reduce_prod", "reduce_sum", "round", "rsqrt", "scalar_mul",
           "segment_max", "segment_mean", "segment_min", "segment_prod", "segment_sum", "select", "sigmoid",
           "sign", "sin", "sinh", "softplus", "sparse_segment_mean", "sparse_segment_mean_with_num_segments",
           "sparse_segment_sqrt_n", "sparse_segment_sqrt_n_with_num_segments", "sparse_segment_sum",
           "sparse_segment_sum_with_num_segments", "sqrt", "square", "squared_difference", "sub", "subtract",
           "sum_to_shape", "tan", "tanh", "to_double", "to_float", "to_int32", "to_int64", "top_k",
           "truediv", "truncatediv", "unsorted_segment_max", "unsorted_segment_mean", "unsorted_segment_min",
           "unsorted_segment_prod", "unsorted_segment_sqrt_n", "unsorted_segment_sum", "where", "where_v2",
           "multiply_no_nan", "nextafter", "reduce_euclidean_norm", "xdivy", "xlog1py", "xlogy"]

"""TensorFlow's `math_ops` module name: a face over the math op families."""
from segflow._ops.elementwise import (
    add, subtract, multiply, divide, truediv, realdiv, div, div_no_nan, floordiv, floor_div, mod,
    floormod, truncatediv, pow, negative, abs, sign, sqrt, rsqrt, square, exp, expm1, log, log1p,
    sin, cos, tan, tanh, sigmoid, reciprocal, maximum, minimum, squared_difference, equal,
    not_equal, less, less_equal, greater, greater_equal, logical_and, logical_or, logical_not,
    logical_xor, where, where_v2, select, conj, real, imag, angle, floor, ceil, round, is_nan,
    is_inf, is_finite, sum_to_shape, erf, atan, asin, acos, sinh, cosh, softplus, scalar_mul,
    add_v2, neg, sub, mul, complex, xlogy, xlog1py, xdivy, mul_no_nan, multiply_no_nan, nextafter
)
from segflow._ops.cast import cast, to_float, to_double, to_int32, to_int64
from segflow._ops.reduce import (
    reduce_sum, reduce_mean, reduce_max, reduce_min, reduce_prod, reduce_any, reduce_all, argmax,
    argmin, cumsum, cumprod, count_nonzero, reduce_logsumexp, add_n, reduce_euclidean_norm, reduced_shape
)
from segflow._ops.linalg import matmul, diag, diag_part
from segflow._ops.sequence import range, invert_permutation
from segflow._ops.segment import (
    unsorted_segment_sum, unsorted_segment_prod, unsorted_segment_max, unsorted_segment_min,
    unsorted_segment_mean, unsorted_segment_sqrt_n, segment_sum, segment_prod, segment_max,
    segment_min, segment_mean, sparse_segment_sum, sparse_segment_mean, sparse_segment_sqrt_n,
    sparse_segment_sum_with_num_segments, sparse_segment_mean_with_num_segments,
    sparse_segment_sqrt_n_with_num_segments, static_count, sparse_segment_grad,
    sparse_segment_sum_grad, sparse_segment_mean_grad, sparse_segment_sqrt_n_grad,
    sparse_segment_grad_v2, sparse_segment_sum_grad_v2, sparse_segment_mean_grad_v2,
    sparse_segment_sqrt_n_grad_v2, densify_indexed_slices
)
from segflow._ops.bincount import bincount
from segflow._ops.shape import stop_gradient, zeros_like, ones_like
from segflow._ops.transpose import squeeze, transpose
from segflow._ops.gather import _as_indexed_slices
from segflow._ops.sparse_math import _mul_dispatch

__all__ = [
    'add', 'subtract', 'multiply', 'divide', 'truediv', 'realdiv', 'div', 'div_no_nan', 'floordiv',
    'floor_div', 'mod', 'floormod', 'truncatediv', 'pow', 'negative', 'abs', 'sign', 'sqrt',
    'rsqrt', 'square', 'exp', 'expm1', 'log', 'log1p', 'sin', 'cos', 'tan', 'tanh', 'sigmoid',
    'reciprocal', 'maximum', 'minimum', 'squared_difference', 'equal', 'not_equal', 'less',
    'less_equal', 'greater', 'greater_equal', 'logical_and', 'logical_or', 'logical_not',
    'logical_xor', 'where', 'where_v2', 'select', 'conj', 'real', 'imag', 'angle', 'floor', 'ceil',
    'round', 'is_nan', 'is_inf', 'is_finite', 'sum_to_shape', 'erf', 'atan', 'asin', 'acos', 'sinh',
    'cosh', 'softplus', 'scalar_mul', 'add_v2', 'neg', 'sub', 'mul', 'complex', 'xlogy', 'xlog1py',
    'xdivy', 'mul_no_nan', 'multiply_no_nan', 'nextafter', 'cast', 'to_float', 'to_double',
    'to_int32', 'to_int64', 'reduce_sum', 'reduce_mean', 'reduce_max', 'reduce_min', 'reduce_prod',
    'reduce_any', 'reduce_all', 'argmax', 'argmin', 'cumsum', 'cumprod', 'count_nonzero', 'reduce_logsumexp',
    'add_n', 'reduce_euclidean_norm', 'reduced_shape', 'matmul', 'diag', 'diag_part', 'range',
    'invert_permutation', 'unsorted_segment_sum', 'unsorted_segment_prod', 'unsorted_segment_max',
    'unsorted_segment_min', 'unsorted_segment_mean', 'unsorted_segment_sqrt_n', 'segment_sum',
    'segment_prod', 'segment_max', 'segment_min', 'segment_mean', 'sparse_segment_sum',
    'sparse_segment_mean', 'sparse_segment_sqrt_n', 'sparse_segment_sum_with_num_segments',
    'sparse_segment_mean_with_num_segments', 'sparse_segment_sqrt_n_with_num_segments',
    'static_count', 'sparse_segment_grad', 'sparse_segment_sum_grad', 'sparse_segment_mean_grad',
    'sparse_segment_sqrt_n_grad', 'sparse_segment_grad_v2', 'sparse_segment_sum_grad_v2',
    'sparse_segment_mean_grad_v2', 'sparse_segment_sqrt_n_grad_v2', 'densify_indexed_slices',
    'bincount', 'stop_gradient', 'zeros_like', 'ones_like', 'squeeze', 'transpose'
]

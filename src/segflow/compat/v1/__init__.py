"""`sf.compat.v1` (TensorFlow's `tf.compat.v1`): the TF1 names - graphs, sessions, placeholders,
variables and their initializers, the `train` optimizers - beside the flat ops."""
from segflow import debugging, linalg, math, ragged, random, sparse, train
from segflow.compat.v1 import nn
from segflow._core import dtypes
from segflow.framework import errors
from segflow._core.dtypes import (DType, as_dtype, bfloat16, bool, complex128, complex64, double, float16,
                                      float32, float64, half, int16, int32, int64, int8, resource, string,
                                      uint16, uint32, uint64, uint8, variant)
from segflow.framework.tensor_shape import Dimension, TensorShape, dimension_at_index, dimension_value
from segflow.framework.ops import (Graph, GraphKeys, IndexedSlices, IndexedSlicesValue, NoGradient,
                                   NotDifferentiable, Operation, RegisterGradient, Tensor, add_to_collection,
                                   colocate_with, control_dependencies, convert_to_tensor, device,
                                   get_collection, get_collection_ref, get_default_graph, name_scope,
                                   no_gradient, reset_default_graph)
from segflow._ops.constant import constant
from segflow._core.apply import apply_op
from segflow._core.registry import register_op
from segflow._core.tensor_spec import TensorSpec
from segflow._ops.function import function
from segflow._ops.control_flow import case, cond, switch_case, while_loop
from segflow._ops.ragged import RaggedTensor
from segflow._ops.clip import clip_by_average_norm, clip_by_global_norm, clip_by_norm, clip_by_value, global_norm
from segflow._ops.einsum import einsum, tensordot
from segflow._ops.search import searchsorted
from segflow._ops.norm import norm
from segflow._core.convert import is_tensor
from segflow._core.fold import constant_value as get_static_value
from segflow._core.behavior import (disable_tensor_equality, disable_v2_behavior, disable_v2_tensorshape,
                                    enable_tensor_equality, enable_v2_behavior, enable_v2_tensorshape)
from segflow._ops.debugging import (
    Assert, assert_equal, assert_greater, assert_greater_equal, assert_less, assert_less_equal, assert_negative,
    assert_non_negative, assert_non_positive, assert_none_equal, assert_positive, assert_rank, check_numerics,
    print_v2 as print
)  # noqa: A004
from segflow._ops.module import Module
from segflow.eager.context import disable_eager_execution, enable_eager_execution, executing_eagerly
from segflow._ops.backprop import GradientTape
from segflow._core.session import InteractiveSession, Session
from segflow._ops.gradients import AggregationMethod, UnconnectedGradients, gradients, hessians
from segflow._ops.elementwise import (
    abs, acos, add, add_v2, angle, asin, atan, ceil, complex, conj, cos, cosh, div, div_no_nan, divide,
    equal, erf, exp, expm1, floor, floor_div, floordiv, floormod, greater, greater_equal, imag,
    is_finite, is_inf, is_nan, less, less_equal, log, log1p, logical_and, logical_not, logical_or,
    logical_xor, maximum, minimum, mod, mul, multiply, neg, negative, not_equal, pow, real, realdiv,
    reciprocal, round, rsqrt, scalar_mul, select, sigmoid, sign, sin, sinh, softplus, sqrt, square,
    squared_difference, sub, subtract, sum_to_shape, tan, tanh, truediv, truncatediv, where, where_v2
)
from segflow._ops.cast import cast, to_double, to_float, to_int32, to_int64
from segflow._ops.reduce import (
    argmax, argmin, count_nonzero, cumprod, cumsum, reduce_all, reduce_any, reduce_logsumexp, reduce_max,
    reduce_mean, reduce_min, reduce_prod, reduce_sum, reduced_shape
)
from segflow._ops.bincount import bincount
from segflow._ops.segment import (
    densify_indexed_slices, segment_max, segment_mean, segment_min, segment_prod, segment_sum,
    sparse_segment_mean, sparse_segment_mean_with_num_segments, sparse_segment_sqrt_n,
    sparse_segment_sqrt_n_with_num_segments, sparse_segment_sum, sparse_segment_sum_with_num_segments,
    unsorted_segment_max, unsorted_segment_mean, unsorted_segment_min, unsorted_segment_prod,
    unsorted_segment_sqrt_n, unsorted_segment_sum
)
from segflow._ops.linalg import matmul
from segflow._ops.sequence import invert_permutation, range
from segflow._ops.reduce import add_n
from segflow._ops.shape import (
    broadcast_to, fill, identity, identity_n, ones, ones_like, placeholder, placeholder_with_default,
    prevent_gradient, rank, reshape, shape, shape_n, size, stop_gradient, zeros, zeros_like
)
from segflow._ops.join import concat, stack
from segflow._ops.one_hot import one_hot
from segflow._ops.transpose import expand_dims, reverse, reverse_v2, squeeze, transpose
from segflow._ops.slicing import pad, slice, split_by_shapes, strided_slice
from segflow._ops.join import split, tile, unstack
from segflow._ops.gather import batch_gather, gather, gather_nd, gather_v2
from segflow._ops.scatter import (
    scatter_nd, tensor_scatter_add, tensor_scatter_nd_add, tensor_scatter_nd_sub,
    tensor_scatter_nd_update, tensor_scatter_sub, tensor_scatter_update
)
from segflow._ops.stitch import dynamic_partition, dynamic_stitch, parallel_dynamic_stitch
from segflow._ops.unique import unique, unique_with_counts
from segflow._ops.sort import TopKV2Output, argsort, boolean_mask, sort, top_k
from segflow._ops.random import (
    get_seed, multinomial, random_normal, random_shuffle, random_uniform, set_random_seed,
    truncated_normal
)
from segflow._ops.sparse_tensor import SparseTensor
from segflow._ops.custom_gradient import custom_gradient
from segflow._ops.control import group, no_op, tuple, with_dependencies
from segflow._ops.variables import (
    RefVariable, Variable, VariableAggregation, VariableSynchronization, VariableV1, all_variables,
    assert_variables_initialized, global_variables, global_variables_initializer,
    initialize_all_variables, initialize_local_variables, initialize_variables, is_variable_initialized,
    local_variables, local_variables_initializer, model_variables, moving_average_variables,
    report_uninitialized_variables, trainable_variables, variables_initializer
)
from segflow._ops.variable import ResourceVariable
from segflow.ops.state_ops import (assign, assign_add, assign_sub, scatter_add, scatter_div, scatter_max,
                                   scatter_min, scatter_mul, scatter_nd_add, scatter_nd_sub,
                                   scatter_nd_update, scatter_sub, scatter_update)
from segflow.ops.array_ops import newaxis
from segflow import initializers
from segflow._ops.init_ops import (
    constant_initializer, glorot_normal_initializer, glorot_uniform_initializer, ones_initializer,
    orthogonal_initializer, random_normal_initializer, random_uniform_initializer,
    truncated_normal_initializer, uniform_unit_scaling_initializer, variance_scaling_initializer,
    zeros_initializer
)
from segflow._ops.variable_store import (
    AUTO_REUSE, disable_resource_variables, enable_resource_variables, no_regularizer,
    resource_variables_enabled
)
from segflow._ops.variable_scope import (
    VariableScope, create_partitioned_variables, get_local_variable, get_variable, get_variable_scope,
    variable_op_scope, variable_scope
)
from segflow._ops.partitioned_variables import (fixed_size_partitioner, min_max_variable_partitioner,
                                                variable_axis_size_partitioner)
# py_func family; app / flags / logging (issue 13 items 5 and 6)
from segflow._ops.script_ops import numpy_function, py_func, py_function
from segflow._platform.tf_logging import get_logger
from segflow.compat.v1 import app, flags, logging
# summary: RunOptions / RunMetadata, ConfigProto (the summary module itself loads on first use)
from segflow._core.run_config import (ConfigProto, GPUOptions, GraphOptions, OptimizerOptions, RunMetadata,
                                      RunOptions)
from segflow._ops.summary_proto import Event, SessionLog, Summary
# data, summary, losses, metrics: submodules loaded on first use (segflow._lazy)
from segflow._lazy import v1_getattr as __getattr__  # noqa: F401

__all__ = ["data",  # sf.compat.v1.data
           "AggregationMethod", "DType", "Dimension", "GradientTape", "Graph", "GraphKeys", "IndexedSlices",
           "disable_v2_tensorshape", "enable_v2_tensorshape", "get_static_value", "dimension_at_index",
           "dimension_value",
           "app", "flags", "get_logger", "logging", "numpy_function", "py_func", "py_function",  # issue 13 items 5, 6
           "IndexedSlicesValue", "InteractiveSession", "NoGradient", "NotDifferentiable", "Operation",
           "RaggedTensor", "RefVariable", "RegisterGradient", "ResourceVariable", "Session", "SparseTensor", "Tensor",
           "TensorShape", "TensorSpec", "TopKV2Output", "UnconnectedGradients", "Variable",
           "VariableAggregation", "VariableSynchronization", "VariableV1", "abs", "acos", "add", "add_n",
           "add_to_collection", "add_v2", "all_variables", "angle", "apply_op", "argmax", "argmin",
           "argsort", "as_dtype", "asin", "assert_variables_initialized", "assign", "assign_add",
           "assign_sub", "atan", "batch_gather", "bfloat16", "bincount", "bool", "boolean_mask",
           "broadcast_to", "cast", "ceil", "colocate_with", "complex", "complex128", "complex64", "concat",
           "conj", "constant", "control_dependencies", "convert_to_tensor", "cos", "cosh", "count_nonzero",
           "Assert", "Module", "disable_tensor_equality", "disable_v2_behavior", "enable_tensor_equality", "enable_v2_behavior", "assert_equal", "assert_greater", "assert_greater_equal", "assert_less", "assert_less_equal", "assert_negative", "assert_non_negative", "assert_non_positive", "assert_none_equal", "assert_positive", "assert_rank", "check_numerics", "debugging", "print", "case", "clip_by_average_norm", "clip_by_global_norm", "clip_by_norm", "clip_by_value", "cond", "einsum", "global_norm", "is_tensor", "norm", "searchsorted", "tensordot", "cumprod", "cumsum", "custom_gradient", "function", "ragged", "switch_case", "while_loop", "densify_indexed_slices", "device", "disable_eager_execution", "div",
           "div_no_nan", "divide", "double", "dtypes", "dynamic_partition", "dynamic_stitch",
           "enable_eager_execution", "equal", "erf", "errors", "executing_eagerly", "exp", "expand_dims",
           "expm1", "fill", "float16", "float32", "float64", "floor", "floor_div", "floordiv", "floormod",
           "gather", "gather_nd", "gather_v2", "get_collection", "get_collection_ref", "get_default_graph",
           "get_seed", "global_variables", "global_variables_initializer", "gradients", "greater",
           "greater_equal", "group", "half", "hessians", "identity", "identity_n", "imag",
           "initialize_all_variables", "initialize_local_variables", "initialize_variables", "int16",
           "int32", "int64", "int8", "invert_permutation", "is_finite", "is_inf", "is_nan",
           "is_variable_initialized", "less", "less_equal", "linalg", "local_variables",
           "local_variables_initializer", "log", "log1p", "logical_and", "logical_not", "logical_or",
           "logical_xor", "math", "matmul", "maximum", "minimum", "mod", "model_variables",
           "moving_average_variables", "mul", "multinomial", "multiply", "name_scope", "neg", "negative",
           "newaxis", "nn", "no_gradient", "no_op", "not_equal", "one_hot", "ones", "ones_like", "pad",
           "parallel_dynamic_stitch", "placeholder", "placeholder_with_default", "pow", "prevent_gradient",
           "random", "random_normal", "random_shuffle", "random_uniform", "range", "rank", "real", "realdiv",
           "reciprocal", "reduce_all", "reduce_any", "reduce_logsumexp", "reduce_max", "reduce_mean",
           "reduce_min", "reduce_prod", "reduce_sum", "reduced_shape", "register_op",
           "report_uninitialized_variables", "reset_default_graph", "reshape", "resource", "reverse",
           "reverse_v2", "round", "rsqrt", "scalar_mul", "scatter_add", "scatter_div", "scatter_max",
           "scatter_min", "scatter_mul", "scatter_nd", "scatter_nd_add", "scatter_nd_sub",
           "scatter_nd_update", "scatter_sub", "scatter_update", "segment_max", "segment_mean",
           "segment_min", "segment_prod", "segment_sum", "select", "set_random_seed", "shape", "shape_n",
           "sigmoid", "sign", "sin", "sinh", "size", "slice", "softplus", "sort", "sparse",
           "sparse_segment_mean", "sparse_segment_mean_with_num_segments", "sparse_segment_sqrt_n",
           "sparse_segment_sqrt_n_with_num_segments", "sparse_segment_sum",
           "sparse_segment_sum_with_num_segments", "split", "split_by_shapes", "sqrt", "square",
           "squared_difference", "squeeze", "stack", "stop_gradient", "strided_slice", "string", "sub",
           "subtract", "sum_to_shape", "tan", "tanh", "tensor_scatter_add", "tensor_scatter_nd_add",
           "tensor_scatter_nd_sub", "tensor_scatter_nd_update", "tensor_scatter_sub",
           "tensor_scatter_update", "tile", "to_double", "to_float", "to_int32", "to_int64", "top_k",
           "train", "trainable_variables", "transpose", "truediv", "truncated_normal", "truncatediv",
           "tuple", "uint16", "uint32", "uint64", "uint8", "unique", "unique_with_counts",
           "unsorted_segment_max", "unsorted_segment_mean", "unsorted_segment_min", "unsorted_segment_prod",
           "unsorted_segment_sqrt_n", "unsorted_segment_sum", "unstack", "variables_initializer", "variant",
           "where", "where_v2", "with_dependencies", "zeros", "zeros_like",
           "initializers", "constant_initializer", "glorot_normal_initializer", "glorot_uniform_initializer",
           "ones_initializer", "orthogonal_initializer", "random_normal_initializer", "random_uniform_initializer",
           "truncated_normal_initializer", "uniform_unit_scaling_initializer", "variance_scaling_initializer",
           "zeros_initializer", "AUTO_REUSE", "VariableScope", "create_partitioned_variables",
           "disable_resource_variables", "enable_resource_variables", "get_local_variable", "get_variable",
           "get_variable_scope", "no_regularizer", "resource_variables_enabled", "variable_op_scope",
           "variable_scope", "fixed_size_partitioner", "min_max_variable_partitioner",
           "variable_axis_size_partitioner",
           # summary: TF1 summaries, RunOptions / RunMetadata, ConfigProto
           "summary", "ConfigProto", "GPUOptions", "GraphOptions", "OptimizerOptions", "RunMetadata", "RunOptions",
           "Event", "SessionLog", "Summary",
           "losses", "metrics"]  # smallops

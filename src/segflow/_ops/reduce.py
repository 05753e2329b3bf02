"""Reductions over axes (sum, mean, max, min, prod, any, all, euclidean norm; logsumexp and count_nonzero built on
them), argmax/argmin and cumsum. Gradients in reduction_grad.py.

An axis argument is None (all axes), an int or a list of ints, negative counting from the end; an
empty list reduces nothing. Axes are int32/int64 and are checked against the input's rank (at graph
build when known, else when run).
"""

from __future__ import annotations

from typing import Optional, Sequence
import math

import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.convert import convert_to_tensor, small_index_tensor
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.tensor import Tensor
from segflow._core import fold as tensor_util
from segflow._core.apply import apply_op
from segflow._core.registry import TensorSpec, hooks, register_op
from segflow.kernels import BadInput
from segflow._ops import elementwise as math_ops
from segflow._ops import cast as cast_ops
from segflow._ops import sequence as sequence_ops
from segflow._ops import shape as so
from segflow._ops import transpose as transpose_ops
from segflow._core.typing import AxisLike, DTypeLike, Name, TensorLike

__all__ = ["cumprod", "reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_any",
           "reduce_all", "argmax", "argmin", "cumsum", "count_nonzero", "reduce_logsumexp", "add_n",
           "reduce_euclidean_norm"]


def _axis_list(axis):
    """The axes of a reduction's integer `axis` argument as Python ints (a scalar, a sequence or an
    array)."""
    if type(axis) is int:
        return (axis,)
    if type(axis) is np.ndarray and axis.ndim == 0:
        return (int(axis),)
    return np.asarray(axis).reshape(-1).tolist()


def _axes(axis, rank, listed=None):
    """The sorted distinct non-negative axes (`listed`: `_axis_list(axis)` when already made)."""
    return tuple(sorted({a % rank if rank else 0 for a in (_axis_list(axis) if listed is None else listed)}))


def _infer_reduce(op, input, reduction_indices, keep_dims=False):
    if reduction_indices.dtype not in (dtypes.int32, dtypes.int64):
        raise errors.invalid_input(op, "reduction_indices", f"must be int32 or int64, not {reduction_indices.dtype.name}")
    axis = tensor_util.constant_value(reduction_indices)
    rank = input.shape.rank
    if axis is None or rank is None:
        out_rank = rank if keep_dims else None
        return [TensorSpec(input.dtype, tensor_shape.unknown_shape(out_rank))]
    for a in np.asarray(axis).reshape(-1):
        if not -rank <= a < rank:
            raise errors.invalid_input(op, "reduction_indices", f"axis {int(a)} is out of range for rank {rank} "
                                       f"(input shape {input.shape})")
    axes = _axes(axis, rank)
    dims = input.shape.as_list()
    out = [1 if i in axes else d for i, d in enumerate(dims)] if keep_dims else \
        [d for i, d in enumerate(dims) if i not in axes]
    return [TensorSpec(input.dtype, out)]


def _reducer(np_fn, wide=False):
    """A reduction kernel; `wide` accumulates float16/float32 in float64 (sums over many values)."""
    def kernel(x, axis, keep_dims=False):
        ndim = x.ndim
        listed = _axis_list(axis)
        for a in listed:
            if not -ndim <= a < ndim:
                raise BadInput("reduction_indices", f"axis {a} is out of range for rank {ndim} "
                                                    f"(input shape {x.shape})")
        axes = _axes(axis, ndim, listed) if ndim else None
        if wide and x.dtype.kind == "f" and x.dtype.itemsize < 8:
            return np.asarray(np_fn(x, axis=axes, keepdims=keep_dims, dtype=np.float64)).astype(x.dtype)
        out = np.asarray(np_fn(x, axis=axes, keepdims=keep_dims))
        return out.astype(x.dtype, copy=False) if out.dtype != x.dtype else out
    return kernel


def _mean(x, axis=None, keepdims=False, dtype=None):
    if x.dtype.kind in "iu":
        # TF divides integer sums with C semantics: the quotient is truncated toward zero.
        n = int(np.prod([x.shape[a] for a in (axis if axis is not None else range(x.ndim))])) or 1
        s = np.sum(x, axis=axis, keepdims=keepdims)
        return (np.sign(s) * (np.abs(s) // n)).astype(x.dtype)
    if x.size == 0 or (axis is not None and any(x.shape[a] == 0 for a in axis)):
        with np.errstate(all="ignore"):  # an empty mean is nan, quietly
            return np.full(np.sum(x, axis=axis, keepdims=keepdims).shape, np.nan, dtype or x.dtype)
    # the sum and one division by the (non-zero) count: what np.mean does, without its overhead
    count = x.size if axis is None else math.prod(x.shape[a] for a in axis)
    total = np.add.reduce(x, axis=axis, dtype=dtype, keepdims=keepdims)
    return np.true_divide(total, count, dtype=total.dtype if total.dtype.kind in "fc" else None)


def _max(x, axis=None, keepdims=False):
    if x.size == 0:
        init = -np.inf if x.dtype.kind == "f" or x.dtype.name == "bfloat16" else np.iinfo(x.dtype).min
        return np.max(x, axis=axis, keepdims=keepdims, initial=init)
    return np.max(x, axis=axis, keepdims=keepdims)


def _min(x, axis=None, keepdims=False):
    if x.size == 0:
        init = np.inf if x.dtype.kind == "f" or x.dtype.name == "bfloat16" else np.iinfo(x.dtype).max
        return np.min(x, axis=axis, keepdims=keepdims, initial=init)
    return np.min(x, axis=axis, keepdims=keepdims)


def _euclidean_norm(x, axis=None, keepdims=False):
    """TF's EuclideanNorm kernel: sqrt(sum(x * conj(x))) with the squares and the result in x's dtype
    (so a float32 square that overflows is inf, as in TF; bfloat16 in float32, as TF's kernel); the
    sums accumulate in float64 (complex128).
    Integers: the sum of squares wraps in x's dtype, and its square root is taken in double and
    truncated (C++'s std::sqrt on an integer): [[1, 2, 3], [1, 1, 1]] gives 4. A signed sum that
    wrapped negative has no root; C++ converts the NaN as x86 does (int32/int64 minimum, 0 for
    int8/int16), and so does this."""
    if x.dtype.kind in "iu":
        s = np.sum(np.multiply(x, x, dtype=x.dtype), axis=axis, keepdims=keepdims, dtype=x.dtype)
        with np.errstate(all="ignore"):
            r = np.sqrt(np.asarray(s, np.float64))
        if x.dtype.kind == "u":
            return r.astype(x.dtype)
        via = np.int64 if x.dtype.itemsize == 8 else np.int32
        r = np.where(np.isnan(r), np.iinfo(via).min, np.nan_to_num(r)).astype(via)
        return r.astype(x.dtype)
    if x.dtype.name == "bfloat16":  # TF's bfloat16 specialization squares and sums in float32
        x = x.astype(np.float32)
    wide = np.complex128 if x.dtype.kind == "c" else np.float64
    with np.errstate(all="ignore"):
        sq = x * np.conj(x) if x.dtype.kind == "c" else x * x
        s = np.asarray(np.sum(sq, axis=axis, keepdims=keepdims, dtype=wide)).astype(x.dtype)
        return np.sqrt(s)


for _name, _fn, _allowed in (("Sum", _reducer(np.sum, wide=True), dtypes.NUMERIC),
                             ("EuclideanNorm", _reducer(_euclidean_norm), dtypes.NUMERIC),
                             ("Mean", _reducer(_mean, wide=True), dtypes.NUMERIC),
                             ("Max", _reducer(_max), dtypes.REAL_NUMERIC), ("Min", _reducer(_min), dtypes.REAL_NUMERIC),
                             ("Prod", _reducer(np.prod), dtypes.NUMERIC), ("Any", _reducer(np.any), (dtypes.bool,)),
                             ("All", _reducer(np.all), (dtypes.bool,))):
    register_op(_name, inputs=("input", "reduction_indices"), attrs={"T": "input", "Tidx": "reduction_indices"},
                allowed={"T": _allowed, "Tidx": dtypes.INDEX}, infer=_infer_reduce, kernel=_fn,
                defaults={"keep_dims": False})


def _axis_arg(input_tensor, axis):
    if axis is None:
        r = input_tensor.ndim
        if r is not None:
            fast = small_index_tensor(list(range(r)))
            return np.arange(r, dtype=np.int32) if fast is None else fast
        return sequence_ops.range(0, apply_op("Rank", input_tensor))
    if isinstance(axis, Tensor):
        return axis
    fast = small_index_tensor(axis)        # Python ints, the common case
    if fast is not None:
        return fast
    return np.asarray(axis, dtype=np.int32 if np.max(np.abs(np.asarray(axis, dtype=np.int64)), initial=0) < 2**31
                      else np.int64)


# Reductions of composite tensors: type -> {op type: fn(x, axis, keepdims, name)}. A module defining a
# composite registers its reductions here (ragged_math: RaggedTensor), so reduce_sum(rt, 1) works as in TF.
DISPATCH = {}


def _reduce(op_type, input_tensor, axis, keepdims, name, reduction_indices=None, keep_dims=None):
    if reduction_indices is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'reduction_indices'.")
        axis = reduction_indices
    if keep_dims is not None:
        keepdims = keep_dims
    if not isinstance(input_tensor, Tensor):
        table = DISPATCH.get(type(input_tensor))
        if table is not None and op_type in table:
            return table[op_type](input_tensor, axis, keepdims, name)
        input_tensor = convert_to_tensor(input_tensor)
    return apply_op(op_type, input_tensor, _axis_arg(input_tensor, axis), keep_dims=bool(keepdims), name=name)


def reduce_sum(input_tensor: TensorLike, axis: Optional[AxisLike] = None, keepdims: bool = False, name: Name = None,
               reduction_indices: Optional[AxisLike] = None, keep_dims: Optional[bool] = None) -> Tensor:
    """Sum over `axis` (all axes when None); `keepdims` keeps reduced axes with length 1."""
    return _reduce("Sum", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_mean(input_tensor: TensorLike, axis: Optional[AxisLike] = None, keepdims: bool = False, name: Name = None,
                reduction_indices: Optional[AxisLike] = None, keep_dims: Optional[bool] = None) -> Tensor:
    """Mean over `axis` (all axes when None); integer inputs give the mean truncated toward zero, as
    in TF; an empty reduction gives nan."""
    return _reduce("Mean", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_max(input_tensor: TensorLike, axis: Optional[AxisLike] = None, keepdims: bool = False, name: Name = None,
               reduction_indices: Optional[AxisLike] = None, keep_dims: Optional[bool] = None) -> Tensor:
    """Maximum over `axis`; an empty reduction gives -inf (floats) or the dtype's lowest value (integers). The gradient is split
    equally among tied maxima."""
    return _reduce("Max", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_min(input_tensor: TensorLike, axis: Optional[AxisLike] = None, keepdims: bool = False, name: Name = None,
               reduction_indices: Optional[AxisLike] = None, keep_dims: Optional[bool] = None) -> Tensor:
    """Minimum over `axis`; an empty reduction gives +inf (floats) or the dtype's largest value (integers). The gradient is split
    equally among tied minima."""
    return _reduce("Min", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_prod(input_tensor: TensorLike, axis: Optional[AxisLike] = None, keepdims: bool = False, name: Name = None,
                reduction_indices: Optional[AxisLike] = None, keep_dims: Optional[bool] = None) -> Tensor:
    """Product over `axis` (all axes when None); an empty reduction gives 1. The gradient is right for
    inputs with zeros (one zero, several), to second order."""
    return _reduce("Prod", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_any(input_tensor: TensorLike, axis: Optional[AxisLike] = None, keepdims: bool = False, name: Name = None,
               reduction_indices: Optional[AxisLike] = None, keep_dims: Optional[bool] = None) -> Tensor:
    """Logical OR of a bool tensor over `axis`; an empty reduction gives False."""
    return _reduce("Any", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_all(input_tensor: TensorLike, axis: Optional[AxisLike] = None, keepdims: bool = False, name: Name = None,
               reduction_indices: Optional[AxisLike] = None, keep_dims: Optional[bool] = None) -> Tensor:
    """Logical AND of a bool tensor over `axis`; an empty reduction gives True."""
    return _reduce("All", input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_euclidean_norm(input_tensor: TensorLike, axis: Optional[AxisLike] = None, keepdims: bool = False,
                          name: Name = None) -> Tensor:
    """sqrt(sum(x * conj(x))) over `axis` (all axes when None), in the input's dtype (complex input,
    complex output with zero imaginary part). Integers give the root truncated, as in TF
    (see `_euclidean_norm`). The gradient is x * grad / norm, nan where the norm is 0 (as in TF)."""
    return _reduce("EuclideanNorm", input_tensor, axis, keepdims, name)


def reduce_logsumexp(input_tensor: TensorLike, axis: Optional[AxisLike] = None, keepdims: bool = False,
                     name: Name = None) -> Tensor:
    """log(sum(exp(x))) over `axis`, computed stably (the maximum is subtracted first)."""
    m = reduce_max(input_tensor, axis, keepdims=True)
    m = so.stop_gradient(math_ops.where(math_ops.is_finite(m), m, so.zeros_like(m)))
    out = math_ops.log(reduce_sum(math_ops.exp(input_tensor - m), axis, keepdims=True)) + m
    if not keepdims:
        out = transpose_ops.squeeze(out, axis=axis if axis is not None else None)
    return out


def count_nonzero(input_tensor: TensorLike, axis: Optional[AxisLike] = None, keepdims: bool = False,
                  dtype: DTypeLike = dtypes.int64, name: Name = None) -> Tensor:
    """The number of non-zero elements over `axis`, as `dtype` (int64 by default)."""
    nz = cast_ops.cast(math_ops.not_equal(input_tensor, so.zeros_like(input_tensor)), dtype)
    return reduce_sum(nz, axis, keepdims, name=name)


# -- argmax / argmin
def _infer_arg(op, input, dimension, output_type=dtypes.int64):
    a = tensor_util.constant_value(dimension)
    rank = input.shape.rank
    if a is None or rank is None:
        return [TensorSpec(output_type, tensor_shape.unknown_shape(None if rank is None else rank - 1))]
    a = int(a)
    if not -rank <= a < rank:
        raise errors.invalid_input(op, "dimension", f"axis {a} is out of range for rank {rank}")
    dims = input.shape.as_list()
    del dims[a % rank]
    return [TensorSpec(output_type, dims)]


def _arg_kernel(np_fn):
    def kernel(x, dimension, output_type=dtypes.int64):
        a = int(dimension)
        if not -x.ndim <= a < x.ndim:
            raise BadInput("dimension", f"axis {a} is out of range for rank {x.ndim}")
        if x.shape[a] == 0:
            raise BadInput("input", f"reduction axis {a} is empty in shape {x.shape}")
        return np_fn(x, axis=a).astype(output_type.np)
    return kernel


register_op("ArgMax", inputs=("input", "dimension"), attrs={"T": "input", "Tidx": "dimension"},
            allowed={"T": dtypes.REAL_NUMERIC, "Tidx": dtypes.INDEX}, infer=_infer_arg, kernel=_arg_kernel(np.argmax),
            defaults={"output_type": dtypes.int64})
register_op("ArgMin", inputs=("input", "dimension"), attrs={"T": "input", "Tidx": "dimension"},
            allowed={"T": dtypes.REAL_NUMERIC, "Tidx": dtypes.INDEX}, infer=_infer_arg, kernel=_arg_kernel(np.argmin),
            defaults={"output_type": dtypes.int64})


def argmax(input: TensorLike, axis: Optional[AxisLike] = None, name: Name = None, dimension: Optional[AxisLike] = None,
           output_type: DTypeLike = dtypes.int64) -> Tensor:
    """Index of the largest value along `axis` (default 0); the first one on ties."""
    axis = dimension if axis is None else axis
    return apply_op("ArgMax", input, 0 if axis is None else axis, output_type=dtypes.as_dtype(output_type), name=name)


def argmin(input: TensorLike, axis: Optional[AxisLike] = None, name: Name = None, dimension: Optional[AxisLike] = None,
           output_type: DTypeLike = dtypes.int64) -> Tensor:
    """Index of the smallest value along `axis` (default 0); the first one on ties."""
    axis = dimension if axis is None else axis
    return apply_op("ArgMin", input, 0 if axis is None else axis, output_type=dtypes.as_dtype(output_type), name=name)


# -- cumsum / cumprod
def _infer_cumulative(op, x, axis, exclusive=False, reverse=False):
    a = tensor_util.constant_value(axis)
    if a is not None and x.shape.rank is not None and not -x.shape.rank <= int(a) < x.shape.rank:
        raise errors.invalid_input(op, "axis", f"axis {int(a)} is out of range for rank {x.shape.rank}")
    return [TensorSpec(x.dtype, x.shape)]


def _cumulative_kernel(np_fn, identity):
    def kernel(x, axis, exclusive=False, reverse=False):
        a = int(axis)
        if not -x.ndim <= a < x.ndim:
            raise BadInput("axis", f"axis {a} is out of range for rank {x.ndim}")
        if reverse:
            x = np.flip(x, a)
        out = np_fn(x, axis=a, dtype=x.dtype)
        if exclusive and x.shape[a]:
            first = np.full_like(np.take(out, [0], axis=a), identity)
            out = np.concatenate([first, np.take(out, range(x.shape[a] - 1), axis=a)], axis=a)
        if reverse:
            out = np.flip(out, a)
        return np.ascontiguousarray(out)
    return kernel


register_op("Cumsum", inputs=("x", "axis"), attrs={"T": "x", "Tidx": "axis"},
            allowed={"T": dtypes.NUMERIC, "Tidx": dtypes.INDEX},
            infer=_infer_cumulative, kernel=_cumulative_kernel(np.cumsum, 0),
            defaults={"exclusive": False, "reverse": False})
register_op("Cumprod", inputs=("x", "axis"), attrs={"T": "x", "Tidx": "axis"},
            allowed={"T": dtypes.NUMERIC, "Tidx": dtypes.INDEX},
            infer=_infer_cumulative, kernel=_cumulative_kernel(np.cumprod, 1),
            defaults={"exclusive": False, "reverse": False})


def cumsum(x: TensorLike, axis: AxisLike = 0, exclusive: bool = False, reverse: bool = False,
           name: Name = None) -> Tensor:
    """Running sum along `axis`; `exclusive` starts from 0, `reverse` runs from the end."""
    return apply_op("Cumsum", x, axis, exclusive=exclusive, reverse=reverse, name=name)


def cumprod(x: TensorLike, axis: AxisLike = 0, exclusive: bool = False, reverse: bool = False,
            name: Name = None) -> Tensor:
    """Running product along `axis`; `exclusive` starts from 1, `reverse` runs from the end.

    Its gradient divides by `x` (as TF's): it is not finite where x holds a zero.
    """
    return apply_op("Cumprod", x, axis, exclusive=exclusive, reverse=reverse, name=name)


# -- the shape a reduction keeps with keepdims (a gradient helper)
def _infer_reduced_shape(op, input_shape, axes):
    return [TensorSpec(input_shape.dtype, input_shape.shape)]


def _reduced_shape_kernel(input_shape, axes):
    out = np.array(input_shape, copy=True)
    if out.size:
        out[np.asarray(_axes(axes, out.size), dtype=np.int64)] = 1
    return out


register_op("ReducedShape", inputs=("input_shape", "axes"), attrs={"T": "input_shape", "Tidx": "axes"},
            infer=_infer_reduced_shape, kernel=_reduced_shape_kernel)


def reduced_shape(input_shape, axes):
    """`input_shape` with the entries at `axes` set to 1."""
    return apply_op("ReducedShape", input_shape, axes)



def _infer_add_n(op, inputs):
    if not inputs:
        raise errors.invalid_input(op, "inputs", "needs at least one tensor")
    shape = tensor_shape.unknown_shape()
    for v in inputs:
        if not shape.is_compatible_with(v.shape):
            raise errors.invalid_input(op, "inputs", f"shapes differ: {[str(x.shape) for x in inputs]}")
        shape = shape.merge_with(v.shape)
    return [TensorSpec(inputs[0].dtype, shape)]


def _add_n_kernel(inputs):
    shape = inputs[0].shape
    for x in inputs:
        if x.shape != shape:       # (np.add would broadcast them)
            i = next(i for i, x in enumerate(inputs) if x.shape != shape)
            raise BadInput("inputs", f"must all have one shape: input 0 has shape {list(shape)}, "
                                     f"input {i} {list(x.shape)}")
    out = np.add(inputs[0], inputs[1]) if len(inputs) > 1 else np.array(inputs[0], copy=True)
    if type(out) is not np.ndarray:  # 0-d inputs give a NumPy scalar, which `out=` cannot take
        out = np.asarray(out)
    for x in inputs[2:]:
        np.add(out, x, out=out)
    return out


register_op("AddN", inputs=("inputs*",), attrs={"T": "inputs"}, infer=_infer_add_n, kernel=_add_n_kernel)


def add_n(inputs: Sequence[TensorLike], name: Name = None) -> Tensor:
    """The elementwise sum of a list of same-shaped tensors (IndexedSlices are densified)."""
    inputs = list(inputs)
    if not inputs:
        raise ValueError("inputs must be a non-empty list of tensors")
    inputs = [convert_to_tensor(x) if isinstance(x, IndexedSlices) else x for x in inputs]
    if len(inputs) == 1:
        x = inputs[0]
        return convert_to_tensor(x) if not isinstance(x, Tensor) else x
    return apply_op("AddN", inputs, name=name)


hooks.add_n = add_n

"""Unique: the distinct values of a tensor in order of first appearance (Unique, UniqueWithCounts),
and of its slices along an axis (UniqueV2, UniqueWithCountsV2). No gradient, as in TF."""

from __future__ import annotations

import collections

import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core import fold as tensor_util
from segflow._core.apply import apply_op
from segflow._core.tensor import Tensor
from segflow._core.registry import NotDifferentiable, TensorSpec, register_op
from segflow.kernels import BadInput
from segflow.kernels import unique as _unique_kernels
from segflow._core.typing import AxisLike, DTypeLike, Name, TensorLike

__all__ = ["unique", "unique_with_counts", "unique_v2", "unique_with_counts_v2"]

UniqueOutput = collections.namedtuple("UniqueOutput", ["y", "idx"])
UniqueWithCountsOutput = collections.namedtuple("UniqueWithCountsOutput", ["y", "idx", "count"])


# ----------------------------------------------------------------------------------------------
# Unique


def unique_first_appearance(x, out_idx=np.int32):
    """(y, idx, count): the distinct values of 1-D `x` in order of first appearance, the position in
    y of each element of x, and how often each value occurs."""
    if x.ndim != 1:
        raise BadInput("x", f"unique expects a 1D vector: x must be 1-D, got shape {x.shape}")
    out_idx = np.dtype(out_idx)
    if x.size == 0:
        return x.copy(), np.zeros(0, out_idx), np.zeros(0, out_idx)
    if _unique_kernels.HAVE_NUMBA and x.dtype in (np.int32, np.int64):
        return _unique_kernels.unique_int(x, out_idx)     # one hashing pass: 10-20x faster than sorting
    nan = _nan_mask(x)
    if nan is None:
        _, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
    else:
        # NaN != NaN: every NaN is a value of its own (TF's hash map never finds one again), and
        # sorting NaNs is unreliable (bfloat16), so only the other values go through np.unique
        keep = np.flatnonzero(~nan)
        at_nan = np.flatnonzero(nan)
        _, first_k, inverse_k, counts_k = np.unique(x[keep], return_index=True, return_inverse=True,
                                                    return_counts=True)
        first = np.concatenate([keep[first_k], at_nan])
        counts = np.concatenate([counts_k, np.ones(at_nan.size, counts_k.dtype)])
        inverse = np.empty(x.size, np.int64)
        inverse[keep] = inverse_k.reshape(-1)
        inverse[at_nan] = first_k.size + np.arange(at_nan.size)
    order = np.argsort(first, kind="stable")          # sorted-unique rank -> first-appearance rank
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    return x[first[order]], rank[inverse].astype(out_idx), counts[order].astype(out_idx)


def _nan_mask(x):
    """Where 1-D `x` holds NaN (float, bfloat16 or complex), or None when it holds none."""
    if x.dtype.kind not in "fc" and x.dtype.name != "bfloat16":
        return None
    nan = np.isnan(x)
    return nan if nan.any() else None


def _infer_unique(op, x, out_idx=dtypes.int32, counts=False):
    if x.shape.rank not in (None, 1):
        raise errors.invalid_input(op, "x", f"Shape must be rank 1 but is rank {x.shape.rank}: x must be 1-D, got "
                                            f"shape {x.shape}")
    out_idx = _check_out_idx(op, out_idx)
    specs = [TensorSpec(x.dtype, (None,)), TensorSpec(out_idx, x.shape)]
    if counts:
        specs.append(TensorSpec(out_idx, (None,)))
    return specs


def _check_out_idx(op, out_idx):
    """out_idx as a DType; anything but int32 / int64 raises (TF: a TypeError-compatible dtype error)."""
    try:
        dt = dtypes.as_dtype(out_idx)
    except TypeError:
        dt = None
    if dt not in dtypes.INDEX:
        got = dt.name if dt is not None else repr(out_idx)
        raise errors.invalid_op(op, f"attr 'out_idx' must be int32 or int64, not {got}", cls=errors.DTypeError)
    return dt


def _unique_kernel(x, out_idx=dtypes.int32, counts=False):
    dt = dtypes.as_dtype(out_idx)
    if dt not in dtypes.INDEX:
        raise BadInput("out_idx", f"attr out_idx must be int32 or int64, not {dt.name}")
    y, idx, count = unique_first_appearance(x, dt.as_numpy_dtype)
    return (y, idx, count) if counts else (y, idx)


register_op("Unique", inputs=("x",), attrs={"T": "x"}, infer=_infer_unique, kernel=_unique_kernel, num_outputs=2,
            defaults={"out_idx": dtypes.int32})
register_op("UniqueWithCounts", inputs=("x",), attrs={"T": "x"}, infer=_infer_unique, kernel=_unique_kernel,
            num_outputs=3, defaults={"out_idx": dtypes.int32, "counts": True})


def unique(x: TensorLike, out_idx: DTypeLike = dtypes.int32, name: Name = None) -> UniqueOutput:
    """The distinct values of 1-D `x` in order of first appearance, and where each element went.

    Returns:
      UniqueOutput(y, idx): `y` holds the distinct values; `idx` (dtype `out_idx`, shape of x) gives
      for each element of x its position in y, so `x == gather(y, idx)`. NaN != NaN: every NaN is
      a distinct value of its own, as in TensorFlow (0.0 and -0.0 are one value).
    Raises:
      InvalidArgumentError: x is not 1-D.
    """
    out_idx = _check_out_idx(errors.OpName("Unique", name), out_idx)
    y, idx = apply_op("Unique", x, out_idx=out_idx, name=name)
    return UniqueOutput(y, idx)


def unique_with_counts(x: TensorLike, out_idx: DTypeLike = dtypes.int32, name: Name = None) -> UniqueWithCountsOutput:
    """Like `unique`, with `count[j]`: how many elements of x equal y[j]."""
    out_idx = _check_out_idx(errors.OpName("UniqueWithCounts", name), out_idx)
    y, idx, count = apply_op("UniqueWithCounts", x, out_idx=out_idx, name=name)
    return UniqueWithCountsOutput(y, idx, count)


# ----------------------------------------------------------------------------------------------
# UniqueV2: unique slices along one axis (an empty axis: the flattened values, as Unique)


def _axis_value(op, axis):
    a = tensor_util.constant_value(axis)
    if a is None:
        return None
    a = np.asarray(a)
    if a.ndim > 1:
        raise ValueError(f"{op.type}: axis expects a 1D vector, got shape {list(a.shape)}")
    if a.size > 1:
        raise errors.invalid_input(op, "axis", f"axis does not support input tensors larger than 1 elements: at "
                                               f"most one axis is supported, got {a.tolist()}")
    return None if a.size == 0 else int(a.reshape(-1)[0])


def _axis_problem(a, rank):
    return f"axis {a} is out of range for x of rank {rank}: axis expects to be in the range [{-rank}, {rank})"


def _infer_unique_v2(op, x, axis, out_idx=dtypes.int32, counts=False):
    out_idx = _check_out_idx(op, out_idx)
    if axis.shape.rank not in (None, 1):
        raise ValueError(f"{op.type}: axis expects a 1D vector, got shape {axis.shape}")
    a = _axis_value(op, axis)
    rank = x.shape.rank
    if a is None:
        if tensor_util.constant_value(axis) is not None:         # axis []: x flattened, as Unique
            if rank not in (None, 1):
                raise errors.invalid_input(op, "x", f"x expects a 1D vector when axis is empty, got shape {x.shape}")
            specs = [TensorSpec(x.dtype, (None,)), TensorSpec(out_idx, x.shape)]
        else:
            specs = [TensorSpec(x.dtype, tensor_shape.unknown_shape(rank)), TensorSpec(out_idx, (None,))]
    else:
        if rank is not None and not -rank <= a < rank:
            raise errors.invalid_input(op, "axis", _axis_problem(a, rank))
        if rank is None:
            specs = [TensorSpec(x.dtype, tensor_shape.unknown_shape()), TensorSpec(out_idx, (None,))]
        else:
            a %= rank
            dims = x.shape.as_list()
            y_dims = dims[:a] + [None] + dims[a + 1:]
            specs = [TensorSpec(x.dtype, y_dims), TensorSpec(out_idx, (dims[a],))]
    if counts:
        specs.append(TensorSpec(out_idx, (None,)))
    return specs


def _unique_v2_kernel(x, axis, out_idx=dtypes.int32, counts=False):
    dt = dtypes.as_dtype(out_idx)
    axis = np.asarray(axis).reshape(-1)
    if axis.size == 0:
        if x.ndim != 1:
            raise BadInput("x", f"x expects a 1D vector when axis is empty, got shape {x.shape}")
        y, idx, count = unique_first_appearance(x, dt.as_numpy_dtype)
        return (y, idx, count) if counts else (y, idx)
    a = int(axis[0])
    if not -x.ndim <= a < x.ndim:
        raise BadInput("axis", _axis_problem(a, x.ndim))
    a %= x.ndim
    moved = np.moveaxis(x, a, 0)
    rows = moved.reshape(moved.shape[0], -1)
    if rows.shape[0] == 0:
        y = np.moveaxis(moved[:0], 0, a)
        empty = np.zeros(0, dt.np)
        return (y, empty, empty) if counts else (y, empty)
    _, first, inverse, count = np.unique(rows, axis=0, return_index=True, return_inverse=True, return_counts=True)
    order = np.argsort(first, kind="stable")         # sorted rank -> first-appearance rank
    rank = np.empty(order.size, np.int64)
    rank[order] = np.arange(order.size)
    y = np.moveaxis(moved[first[order]], 0, a)
    idx = rank[inverse.reshape(-1)].astype(dt.np)
    return (y, idx, count[order].astype(dt.np)) if counts else (y, idx)


register_op("UniqueV2", inputs=("x", "axis"), attrs={"T": "x", "Taxis": "axis"}, allowed={"Taxis": dtypes.INDEX},
            infer=_infer_unique_v2, kernel=_unique_v2_kernel, num_outputs=2, defaults={"out_idx": dtypes.int32})
register_op("UniqueWithCountsV2", inputs=("x", "axis"), attrs={"T": "x", "Taxis": "axis"},
            allowed={"Taxis": dtypes.INDEX}, infer=_infer_unique_v2, kernel=_unique_v2_kernel, num_outputs=3,
            defaults={"out_idx": dtypes.int32, "counts": True})
for _t in ("Unique", "UniqueWithCounts", "UniqueV2", "UniqueWithCountsV2"):
    NotDifferentiable(_t)


def _axis_arg(axis):
    if isinstance(axis, Tensor):
        return axis
    a = np.asarray(axis)
    return a.astype(np.int32) if a.size == 0 or a.dtype.kind not in "iu" else a


def unique_v2(x: TensorLike, axis: AxisLike, out_idx: DTypeLike = dtypes.int32, name: Name = None) -> UniqueOutput:
    """The distinct slices of `x` along `axis` (a 1-element vector; [] for the distinct values of
    a 1-D x), in order of first appearance, and where each slice went (TF's UniqueV2)."""
    out_idx = _check_out_idx(errors.OpName("UniqueV2", name), out_idx)
    y, idx = apply_op("UniqueV2", x, _axis_arg(axis), out_idx=out_idx, name=name)
    return UniqueOutput(y, idx)


def unique_with_counts_v2(x: TensorLike, axis: AxisLike, out_idx: DTypeLike = dtypes.int32,
                          name: Name = None) -> UniqueWithCountsOutput:
    """unique_v2 with `count[j]`: how many slices of x equal y[j] (TF's UniqueWithCountsV2)."""
    out_idx = _check_out_idx(errors.OpName("UniqueWithCountsV2", name), out_idx)
    y, idx, count = apply_op("UniqueWithCountsV2", x, _axis_arg(axis), out_idx=out_idx, name=name)
    return UniqueWithCountsOutput(y, idx, count)

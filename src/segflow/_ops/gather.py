"""Row selection: gather (any axis, batch_dims) and gather_nd. Gradients in gather_grad.py
(the axis-0 gradient of gather is an IndexedSlices)."""

from __future__ import annotations

from typing import Optional
import math

import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.convert import convert_to_tensor, flat_numbers, scalar_tensor
from segflow._core.mode import executing_eagerly
from segflow._core.tensor import EagerTensor, Tensor
from segflow._core import fold as tensor_util
from segflow._core.apply import apply_op
from segflow._core.registry import TensorSpec, register_op
from segflow.kernels import BadInput, ids
from segflow.kernels import gather as gather_kernels
from segflow._core.indexed_slices import IndexedSlices
from segflow._ops import sequence as sequence_ops, shape as so
from segflow._core.typing import AxisLike, Name, TensorLike

__all__ = ["gather", "gather_v2", "gather_nd", "batch_gather"]


_GATHER_INDEX = (dtypes.int16,) + dtypes.INDEX     # TF's GatherV2 takes int16 indices too
_GATHER_INDEX_NP = tuple(d.np for d in _GATHER_INDEX)


def _infer_gather(op, params, indices, axis, batch_dims=0):
    if indices.dtype not in _GATHER_INDEX:
        raise errors.invalid_input(op, "indices", f"must be int16, int32 or int64, not {indices.dtype.name}")
    if axis.shape.rank not in (None, 0):
        raise errors.invalid_input(op, "axis", f"must be a scalar, got shape {axis.shape}")
    a = tensor_util.constant_value(axis)
    if a is not None and np.ndim(a) != 0:
        raise errors.invalid_input(op, "axis", f"must be a scalar, got shape {list(np.shape(a))}")
    irank = indices.shape.rank
    if irank is not None:
        bd = batch_dims if batch_dims >= 0 else batch_dims + irank
        if not 0 <= bd <= irank:       # the kernel's rule (TF: batch_dims in [-rank(indices), rank(indices)])
            raise errors.invalid_input(op, "indices", f"batch_dims ({batch_dims}) must be in [{-irank}, {irank}] "
                                                      f"for indices of rank {irank}")
    if params.shape.rank is None or irank is None:
        return [TensorSpec(params.dtype, tensor_shape.unknown_shape())]
    rank = params.shape.rank
    if a is None:       # axis known only at run time: the rank of the result is known, its dims are not
        return [TensorSpec(params.dtype, tensor_shape.unknown_shape(rank + irank - 1 - bd))]
    a = int(a)
    if not -rank <= a < rank:
        raise errors.invalid_input(op, "axis", _axis_problem(a, rank))
    a %= rank
    if bd > a:
        raise errors.invalid_input(op, "axis", f"batch_dims ({batch_dims}) must be <= axis ({a})")
    p = params.shape.as_list()
    i = indices.shape.as_list()
    for k in range(bd):
        if p[k] is not None and i[k] is not None and p[k] != i[k]:
            raise errors.invalid_input(op, "indices", f"batch dimension {k} of params ({p[k]}) and indices "
                                       f"({i[k]}) differ")
    return [TensorSpec(params.dtype, p[:a] + i[bd:] + p[a + 1:])]


def _axis_problem(a, rank):
    """The message for an axis outside [-rank, rank), with TF's phrase for it."""
    need = a + 1 if a >= 0 else -a
    return f"axis {a} is out of range for params of rank {rank}: Shape must be at least rank {need} but is rank {rank}"


def take_rows(params, indices, axis=0, batch_dims=0):
    """params gathered at `indices` along `axis`; raises BadInput for an index out of range."""
    ids.check_index_dtype(indices, allowed=_GATHER_INDEX_NP)  # never a float (or NaN) index reaching np.take
    axis = np.asarray(axis)
    if axis.ndim != 0:
        raise BadInput("axis", f"must be a scalar, got shape {list(axis.shape)}")
    ids.check_index_dtype(axis, "axis")
    rank = params.ndim
    axis = int(axis)
    if not -rank <= axis < rank:
        raise BadInput("axis", _axis_problem(axis, rank))
    axis %= rank
    bd = batch_dims if batch_dims >= 0 else batch_dims + indices.ndim
    if not 0 <= bd <= min(axis, indices.ndim):
        raise BadInput("axis", f"batch_dims ({batch_dims}) must be in [0, min(axis, indices rank)] = "
                               f"[0, {min(axis, indices.ndim)}] (axis {axis})")
    if params.shape[:bd] != indices.shape[:bd]:
        raise BadInput("indices", f"batch dimensions of params {params.shape[:bd]} and indices "
                                  f"{indices.shape[:bd]} differ")
    ids.check_in_range(indices, 0, params.shape[axis], phrase=ids.NOT_IN)
    if batch_dims == 0:
        if axis == 0:    # whole rows, copied by parallel threads when large
            return gather_kernels.take_rows(params, indices.reshape(-1)).reshape(indices.shape + params.shape[1:])
        return np.take(params, indices, axis=axis)
    batch_shape = params.shape[:bd]
    b = int(np.prod(batch_shape))
    p = params.reshape((b,) + params.shape[bd:])
    ind = indices.reshape((b,) + indices.shape[bd:])
    out = np.stack([np.take(p[k], ind[k], axis=axis - bd) for k in range(b)]) if b else \
        np.zeros((0,) + params.shape[bd:axis] + indices.shape[bd:] + params.shape[axis + 1:], params.dtype)
    return out.reshape(batch_shape + out.shape[1:])


register_op("GatherV2", inputs=("params", "indices", "axis"),
            attrs={"Tparams": "params", "Tindices": "indices", "Taxis": "axis"},
            allowed={"Tindices": _GATHER_INDEX, "Taxis": dtypes.INDEX}, infer=_infer_gather, kernel=take_rows,
            defaults={"batch_dims": 0})


def gather(params: TensorLike, indices: TensorLike, validate_indices: Optional[bool] = None, name: Name = None,
           axis: Optional[AxisLike] = None, batch_dims: int = 0) -> Tensor:
    """Slices of `params` along `axis` (default 0) at `indices`.

    Returns shape `params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis+1:]`.
    An index outside [0, params.shape[axis]) raises InvalidArgumentError. The gradient for params
    is an IndexedSlices when axis is 0 and batch_dims is 0. `batch_dims=None` means 0, as in TF.
    """
    if batch_dims is None:
        batch_dims = 0
    if axis is None:
        axis = batch_dims
    if hasattr(params, "sparse_read") and axis == 0 and batch_dims == 0:
        return params.sparse_read(indices, name=name)
    # Eagerly, a Python int axis as the shared scalar tensor and a short list of int indices as a
    # tensor: all-tensor inputs take the op's fast path (6.7 us against 10.7 for a 4 x 4 gather)
    if type(axis) is int:
        fast = scalar_tensor(axis)
        axis = axis if fast is None else fast
    if type(indices) is list and executing_eagerly():
        arr = flat_numbers(indices)
        if arr is not None and arr.dtype.kind == "i":
            indices = EagerTensor(arr)
    return apply_op("GatherV2", params, indices, axis, batch_dims=batch_dims, name=name)


gather_v2 = gather


def batch_gather(params: TensorLike, indices: TensorLike, name: Name = None) -> Tensor:
    """TF1's batch_gather: gather along the last axis of `indices`, batched over its leading axes."""
    if not isinstance(indices, Tensor):
        indices = convert_to_tensor(indices)
    r = indices.shape.rank
    if r is None:
        raise ValueError("batch_gather needs indices of known rank")
    return gather(params, indices, axis=r - 1, batch_dims=r - 1, name=name)


def _infer_gather_nd(op, params, indices, batch_dims=0):
    if indices.dtype not in dtypes.INDEX:
        raise errors.invalid_input(op, "indices", f"must be int32 or int64, not {indices.dtype.name}")
    if indices.shape.rank == 0:
        raise errors.invalid_input(op, "indices", "indices must have rank >= 1, got a scalar")
    if batch_dims < 0:
        raise errors.invalid_op(op, f"batch_dims must be non-negative, got {batch_dims}")
    if indices.shape.rank is not None and batch_dims >= indices.shape.rank:
        raise errors.invalid_input(op, "indices", f"batch_dims ({batch_dims}) must be less than the rank of "
                                   f"indices {indices.shape}")
    if params.shape.rank is not None and batch_dims > params.shape.rank:
        raise errors.invalid_input(op, "params", f"batch_dims ({batch_dims}) must be at most the rank of "
                                   f"params {params.shape}")
    if params.shape.rank is None or indices.shape.rank is None:
        return [TensorSpec(params.dtype, tensor_shape.unknown_shape())]
    i = indices.shape.as_list()
    depth = i[-1]
    if depth is None:
        return [TensorSpec(params.dtype, tensor_shape.unknown_shape())]
    if depth > params.shape.rank - batch_dims:
        raise errors.invalid_input(op, "indices", f"index depth {depth} exceeds the rank of params {params.shape}"
                                   + (f" less batch_dims {batch_dims}" if batch_dims else ""))
    p = params.shape.as_list()
    for k in range(batch_dims):
        if p[k] is not None and i[k] is not None and p[k] != i[k]:
            raise errors.invalid_input(op, "indices", f"batch dimension {k} of params ({p[k]}) and indices "
                                       f"({i[k]}) differ")
    return [TensorSpec(params.dtype, i[:-1] + p[batch_dims + depth:])]


def _gather_nd_kernel(params, indices, batch_dims=0):
    """params at the multi-indices along the last axis of `indices` (validated by kernels.ids), the
    first `batch_dims` axes of params and indices walked together."""
    ids.check_index_dtype(indices)
    if indices.ndim == 0:
        raise BadInput("indices", "indices must have rank >= 1, got a scalar")
    bd = int(batch_dims)
    if not 0 <= bd < indices.ndim or bd > params.ndim:
        raise BadInput("indices", f"batch_dims ({bd}) must be in [0, {min(indices.ndim - 1, params.ndim)}] for "
                                  f"params of shape {list(params.shape)} and indices of shape {list(indices.shape)}")
    if params.shape[:bd] != indices.shape[:bd]:
        raise BadInput("indices", f"batch dimensions of params {list(params.shape[:bd])} and indices "
                                  f"{list(indices.shape[:bd])} differ")
    inner = params.shape[bd:]
    if indices.shape[-1] == 0:    # every row addresses the whole of params[batch]
        rows, depth = np.zeros(math.prod(indices.shape[:-1]), np.int64), 0
    else:
        rows, depth = ids.checked_nd_rows(inner, indices, "indices", "params" if not bd else "params[batch]")
    lead = math.prod(inner[:depth])
    tail = inner[depth:]
    b = math.prod(params.shape[:bd])
    if bd and rows.size:
        rows = rows + np.repeat(np.arange(b, dtype=np.int64) * lead, rows.size // b)
    table = params.reshape((b * lead,) + tail)
    out = gather_kernels.take_rows(table, rows) if table.shape[0] else np.zeros((rows.size,) + tail, params.dtype)
    return np.ascontiguousarray(out).reshape(indices.shape[:-1] + tail)  # 0-d stays 0-d


register_op("GatherNd", inputs=("params", "indices"), attrs={"Tparams": "params", "Tindices": "indices"},
            allowed={"Tindices": dtypes.INDEX},
            infer=_infer_gather_nd, kernel=_gather_nd_kernel, defaults={"batch_dims": 0})


def gather_nd(params: TensorLike, indices: TensorLike, name: Name = None, batch_dims: int = 0) -> Tensor:
    """Slices of `params` addressed by the last dimension of `indices` (a multi-index per row)."""
    return apply_op("GatherNd", params, indices, batch_dims=batch_dims, name=name)


def as_indexed_slices(x, optimize=True):
    """A tensor as an IndexedSlices of all its rows (TF's math_ops._as_indexed_slices); an
    IndexedSlices is returned as it is."""
    if isinstance(x, IndexedSlices):
        return x
    x = convert_to_tensor(x)
    shape = so.shape(x)
    return IndexedSlices(x, sequence_ops.range(0, shape[0]), shape)


_as_indexed_slices = as_indexed_slices   # TF's math_ops name

"""Taking parts of a tensor and padding it: slice, strided_slice (`t[1:, ::2]`), split_by_shapes, pad.
Gradients in slicing_grad.py."""

from __future__ import annotations

import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.convert import index_array
from segflow._core.mode import executing_eagerly
from segflow._core.tensor import EagerTensor, Tensor
from segflow._core import fold as tensor_util
from segflow._core.apply import apply_op
from segflow._core.registry import TensorSpec, register_op
from segflow.kernels import BadInput
from segflow._ops import shape as so
from segflow._ops import cast as cast_ops
from segflow._ops import join as join_ops
from segflow._ops import elementwise as cw
from segflow._ops.reduce import cumsum
from segflow._ops.gather import gather
from segflow._ops.sort import boolean_mask
from segflow._ops.sequence import range as range_
from segflow._ops.cast import cast
from typing import Any, Optional
from segflow._core.typing import Name, TensorLike


__all__ = ["slice", "strided_slice", "split_by_shapes", "pad"]


# -- slice
def _infer_slice(op, input, begin, size):
    b, s = tensor_util.constant_value(begin), tensor_util.constant_value(size)
    if input.shape.rank is None or b is None or s is None:
        return [TensorSpec(input.dtype, tensor_shape.unknown_shape(input.shape.rank))]
    dims = input.shape.as_list()
    out = []
    for i, (d, bi, si) in enumerate(zip(dims, np.asarray(b).reshape(-1), np.asarray(s).reshape(-1))):
        bi, si = int(bi), int(si)
        if d is not None and (bi < 0 or bi > d or (si != -1 and bi + si > d)):
            raise errors.invalid_input(op, "size", f"slice [{bi}, {bi + si}) of dimension {i} is out of range [0, {d}]")
        out.append((d - bi if d is not None else None) if si == -1 else si)
    return [TensorSpec(input.dtype, out)]


_py_slice = slice


def _slice_kernel(x, begin, size):
    idx = []
    for d, b, s in zip(x.shape, begin, size):
        b, s = int(b), int(s)
        e = d if s == -1 else b + s
        if b < 0 or e > d or e < b:
            raise ValueError(f"slice [{b}, {e}) is out of range for dimension of size {d}")
        idx.append(_py_slice(b, e))
    return np.ascontiguousarray(x[tuple(idx)]) if x.ndim else np.asarray(x).copy()


register_op("Slice", inputs=("input", "begin", "size"), attrs={"T": "input", "Index": ("begin", "size")},
            allowed={"Index": dtypes.INDEX}, infer=_infer_slice, kernel=_slice_kernel)


def slice(input_: TensorLike, begin: TensorLike, size: TensorLike, name: Name = None) -> Tensor:
    """The part of `input_` starting at `begin` with `size` (-1: to the end) in each dimension."""
    return apply_op("Slice", input_, so._shape_arg(begin) if not isinstance(begin, Tensor) else begin,
                    so._shape_arg(size) if not isinstance(size, Tensor) else size, name=name)


def split_by_shapes(value, shapes, axis):
    """Pieces of `value` along `axis` (negative counts from the end) with the sizes that `shapes`
    (shape tensors) give on that axis."""
    rank = so.rank(value)
    if isinstance(axis, int):
        sizes = join_ops.stack([s[axis] for s in shapes])
        axis = axis % value.shape.rank if value.shape.rank is not None else cw.floormod(axis, rank)
    else:
        axis = cw.floormod(cast_ops.cast(axis, dtypes.int32), rank)
        sizes = join_ops.stack([gather(s, axis) for s in shapes])
    starts = cumsum(sizes, exclusive=True)
    vshape = so.shape(value, out_type=sizes.dtype)
    onehot = cast_ops.cast(cw.equal(range_(0, rank), axis), sizes.dtype)
    keep = cw.multiply(cw.subtract(cast_ops.cast(1, sizes.dtype), onehot), vshape)
    pieces = []
    for i in range(len(shapes)):
        begin = cw.multiply(onehot, starts[i])
        size = cw.add(cw.multiply(onehot, sizes[i]), keep)
        pieces.append(apply_op("Slice", value, begin, size))
    return pieces


# -- strided slice
def _slices(shape, begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask):
    """The NumPy index tuple that a StridedSlice spec means."""
    idx = []
    for i in range(len(begin)):
        bit = 1 << i
        if ellipsis_mask & bit:
            idx.append(Ellipsis)
        elif new_axis_mask & bit:
            idx.append(None)
        elif shrink_axis_mask & bit:
            idx.append(int(begin[i]))
        else:
            b = None if begin_mask & bit else int(begin[i])
            e = None if end_mask & bit else int(end[i])
            idx.append(_py_slice(b, e, int(strides[i])))
    return tuple(idx)


def _check_shrink(x_shape, idx):
    axis = 0
    for item in idx:
        if item is Ellipsis:
            axis = len(x_shape) - sum(1 for j in idx if j is not None and j is not Ellipsis) + \
                sum(1 for j in idx[:idx.index(Ellipsis)] if j is not None and j is not Ellipsis)
            continue
        if item is None:
            continue
        if isinstance(item, int):
            d = x_shape[axis]
            if not -d <= item < d:
                raise IndexError(f"slice index {item} of dimension {axis} out of bounds (size {d})")
        axis += 1


def _strided_slice_kernel(x, begin, end, strides, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                          shrink_axis_mask=0):
    if 0 in np.asarray(strides).reshape(-1).tolist():
        raise ValueError("strides must be non-zero")
    idx = _slices(x.shape, begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)
    _check_shrink(x.shape, idx)
    out = x[idx]
    return np.ascontiguousarray(out) if isinstance(out, np.ndarray) and out.ndim else np.array(out)  # 0-d: a copy


def _infer_strided_slice(op, input, begin, end, strides, **masks):
    b, e, s = (tensor_util.constant_value(t) for t in (begin, end, strides))
    if input.shape.rank is None or b is None or e is None or s is None:
        return [TensorSpec(input.dtype, tensor_shape.unknown_shape())]
    dims = input.shape.as_list()
    dummy = np.broadcast_to(np.empty((), np.int8), [1 if d is None else d for d in dims])
    try:
        out = _strided_slice_kernel(dummy, b, e, s, **masks)
    except (IndexError, ValueError) as exc:
        if all(d is not None for d in dims):
            raise errors.invalid_input(op, "begin", f"slice of shape {input.shape} failed: {exc}") from None
        return [TensorSpec(input.dtype, tensor_shape.unknown_shape())]
    if all(d is not None for d in dims):
        return [TensorSpec(input.dtype, out.shape)]
    return [TensorSpec(input.dtype, tensor_shape.unknown_shape(out.ndim))]


_MASKS = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 0}
register_op("StridedSlice", inputs=("input", "begin", "end", "strides"),
            attrs={"T": "input", "Index": ("begin", "end", "strides")}, allowed={"Index": dtypes.INDEX},
            infer=_infer_strided_slice, kernel=_strided_slice_kernel, defaults=_MASKS)


def _infer_strided_slice_grad(op, shape, begin, end, strides, dy, **masks):
    return [TensorSpec(dy.dtype, tensor_util.constant_value_as_shape(shape))]


def _strided_slice_grad_kernel(shape, begin, end, strides, dy, **masks):
    out = np.zeros(tuple(int(d) for d in shape), dtype=dy.dtype)
    out[_slices(out.shape, begin, end, strides, **masks)] = dy
    return out


register_op("StridedSliceGrad", inputs=("shape", "begin", "end", "strides", "dy"),
            attrs={"T": "dy", "Index": ("shape", "begin", "end", "strides")}, allowed={"Index": dtypes.INDEX},
            infer=_infer_strided_slice_grad, kernel=_strided_slice_grad_kernel, defaults=_MASKS)


def strided_slice(input_: TensorLike, begin: TensorLike, end: TensorLike, strides: Optional[TensorLike] = None,
                  begin_mask: int = 0, end_mask: int = 0, ellipsis_mask: int = 0, new_axis_mask: int = 0,
                  shrink_axis_mask: int = 0, var: Any = None, name: Name = None) -> Tensor:
    """TF's StridedSlice: `input_[begin:end:strides]` per dimension, with the masks' meanings."""
    if strides is None:
        strides = [1] * len(begin)
    if type(begin) is list and type(end) is list and type(strides) is list:
        ints = begin + end + strides
        if all(type(x) is int for x in ints):      # a[1:3]: three arrays, no NumPy reductions
            dt = np.int32 if -2**31 < min(ints, default=0) and max(ints, default=0) < 2**31 else np.int64
            args = [np.array(begin, dt), np.array(end, dt), np.array(strides, dt)]
            return _apply_strided_slice(input_, args, begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                                        shrink_axis_mask, name)
    args = []
    for v in (begin, end, strides):
        if isinstance(v, Tensor):
            args.append(v)
        elif isinstance(v, (list, tuple)) and any(isinstance(x, Tensor) for x in v):
            wide = any(isinstance(x, Tensor) and x.dtype == dtypes.int64 for x in v)
            dt = dtypes.int64 if wide else dtypes.int32
            args.append(join_ops.stack([(x if x.dtype == dt else cast(x, dt)) if isinstance(x, Tensor)
                                  else np.asarray(x, dt.as_numpy_dtype) for x in v]))
        else:
            args.append(np.asarray(v, dtype=np.int32) if np.max(np.abs(np.asarray(v, dtype=np.int64)), initial=0) < 2**31
                        else np.asarray(v, dtype=np.int64))
    if len({a.dtype if isinstance(a, Tensor) else dtypes.from_numpy(a.dtype) for a in args}) > 1:
        args = [cast(a, dtypes.int64) if isinstance(a, Tensor) else a.astype(np.int64) for a in args]
    return _apply_strided_slice(input_, args, begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                                shrink_axis_mask, name)


def _apply_strided_slice(input_, args, begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                         shrink_axis_mask, name):
    if executing_eagerly():     # arrays made here: tensors at once (the op's fast path, no borrowing)
        args = [EagerTensor(a) if type(a) is np.ndarray else a for a in args]
    return apply_op("StridedSlice", input_, *args, begin_mask=begin_mask, end_mask=end_mask,
                    ellipsis_mask=ellipsis_mask, new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask,
                    name=name)


def _slice_helper(tensor, slice_spec, var=None):
    """`tensor[spec]` with ints, slices (of ints, tensors or None), `...`, None (new axis) and scalar
    int tensors. A bool tensor or array alone (`t[t > 0]`) is boolean_mask, as in TF; an int
    tensor index is rejected (use gather)."""
    if (isinstance(slice_spec, Tensor) and slice_spec.dtype == dtypes.bool) or \
            (isinstance(slice_spec, np.ndarray) and slice_spec.dtype == np.bool_):
        return boolean_mask(tensor, slice_spec)
    if not isinstance(slice_spec, (list, tuple)) or isinstance(slice_spec, list):
        if isinstance(slice_spec, list):
            raise TypeError("Indexing with a Python list is not supported; use sf.gather")
        slice_spec = (slice_spec,)
    begin, end, strides = [], [], []
    begin_mask = end_mask = ellipsis_mask = new_axis_mask = shrink_axis_mask = 0
    for i, s in enumerate(slice_spec):
        bit = 1 << i
        if isinstance(s, _py_slice):
            for part in (s.start, s.stop, s.step):
                if part is not None and type(part) is not int and not _is_int_like(part):
                    raise TypeError(f"slice indices must be integers or None or int tensors, got {part!r}")
            begin.append(0 if s.start is None else s.start)
            end.append(0 if s.stop is None else s.stop)
            strides.append(1 if s.step is None else s.step)
            if s.start is None:
                begin_mask |= bit
            if s.stop is None:
                end_mask |= bit
        elif s is Ellipsis:
            begin.append(0), end.append(0), strides.append(1)
            ellipsis_mask |= bit
        elif s is None:
            begin.append(0), end.append(0), strides.append(1)
            new_axis_mask |= bit
        elif type(s) is int or _is_int_like(s):     # (type: bools are not ints here)
            begin.append(s)
            end.append(s + 1 if not isinstance(s, Tensor) else s + 1)
            strides.append(1)
            shrink_axis_mask |= bit
        else:
            raise TypeError(f"Only integers, slices (`:`), ellipsis (`...`), sf.newaxis (`None`) and scalar "
                            f"int32/int64 tensors are valid indices, got {s!r}")
    return strided_slice(tensor, begin, end, strides, begin_mask=begin_mask, end_mask=end_mask,
                         ellipsis_mask=ellipsis_mask, new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask)


def _is_int_like(x):
    if isinstance(x, bool):
        return False
    if isinstance(x, (int, np.integer)):
        return True
    if isinstance(x, Tensor):
        return x.dtype.is_integer and x.shape.rank in (0, None)
    return False


Tensor._override_operator("__getitem__", _slice_helper)


# -- pad
def _infer_pad(op, input, paddings, constant_values=None, mode=None):
    if paddings.dtype not in (dtypes.int32, dtypes.int64):
        raise errors.invalid_input(op, "paddings", f"must be int32 or int64, not {paddings.dtype.name}")
    if constant_values is not None and constant_values.shape.rank not in (None, 0):
        raise errors.invalid_input(op, "constant_values", f"must be a scalar, got shape {constant_values.shape}")
    rank = input.shape.rank
    if paddings.shape.rank not in (None, 2) or (paddings.shape.rank == 2 and paddings.shape.as_list()[1] not in (None, 2)):
        raise errors.invalid_input(op, "paddings", f"must have shape [rank, 2], got {paddings.shape}")
    p = tensor_util.constant_value(paddings)
    if p is None:
        return [TensorSpec(input.dtype, tensor_shape.unknown_shape(rank))]
    if rank is not None and p.shape[0] != rank:
        raise errors.invalid_input(op, "paddings", f"must have shape [{rank}, 2] for input of shape "
                                   f"{input.shape}, got {list(p.shape)}")
    if np.any(p < 0):
        raise errors.invalid_input(op, "paddings", f"must be non-negative, got {p.tolist()}")
    if rank is None:
        return [TensorSpec(input.dtype, tensor_shape.unknown_shape(p.shape[0]))]
    dims = input.shape.as_list()
    if mode is not None:
        limit_offset = 0 if mode == "SYMMETRIC" else 1
        for i, (d, (a, b)) in enumerate(zip(dims, p)):
            if d is not None and max(a, b) > d - limit_offset:
                raise errors.invalid_input(op, "paddings", f"{mode} padding of dimension {i} (size {d}) by "
                                           f"{[int(a), int(b)]} must be at most {d - limit_offset}")
    return [TensorSpec(input.dtype, [None if d is None else d + int(a) + int(b) for d, (a, b) in zip(dims, p)])]


def _check_paddings(x, paddings):
    p = np.asarray(paddings)
    if p.shape != (x.ndim, 2):
        raise BadInput("paddings", f"must have shape [{x.ndim}, 2] for input of shape {x.shape}, got {list(p.shape)}")
    if np.any(p < 0):
        raise BadInput("paddings", f"must be non-negative, got {p.tolist()}")
    return [(int(a), int(b)) for a, b in p]


def _pad_kernel(input, paddings, constant_values=None):
    pads = _check_paddings(input, paddings)
    if constant_values is not None and np.ndim(constant_values) != 0:
        raise BadInput("constant_values", f"must be a scalar, got shape {np.shape(constant_values)}")
    value = 0 if constant_values is None else constant_values
    return np.pad(input, pads, mode="constant", constant_values=value) if input.ndim else np.array(input, copy=True)


def _mirror_pads(x, paddings, mode):
    pads = _check_paddings(x, paddings)
    limit_offset = 0 if mode == "SYMMETRIC" else 1
    for i, (d, (a, b)) in enumerate(zip(x.shape, pads)):
        if max(a, b) > d - limit_offset:
            raise BadInput("paddings", f"{mode} padding of dimension {i} (size {d}) by {[a, b]} must be at most "
                                       f"{d - limit_offset}")
    return pads


def _mirror_pad_kernel(input, paddings, mode="REFLECT"):
    pads = _mirror_pads(input, paddings, mode)
    return np.pad(input, pads, mode="reflect" if mode == "REFLECT" else "symmetric")


def _mirror_pad_grad_kernel(input, paddings, mode="REFLECT"):
    """The adjoint of MirrorPad: each padded entry is added back onto the entry it mirrors."""
    p = np.asarray(paddings)
    out = input
    for axis, (a, b) in enumerate(p):
        n = out.shape[axis] - int(a) - int(b)
        if n < 0 or max(a, b) > n - (0 if mode == "SYMMETRIC" else 1):
            raise BadInput("paddings", f"{mode} padding {[int(a), int(b)]} does not fit dimension {axis} of "
                                       f"the gradient's shape {input.shape}")
        source = np.pad(np.arange(n), (int(a), int(b)), mode="reflect" if mode == "REFLECT" else "symmetric")
        moved = np.moveaxis(out, axis, 0)
        acc = np.zeros((n,) + moved.shape[1:], dtype=input.dtype)
        np.add.at(acc, source, moved)
        out = np.moveaxis(acc, 0, axis)
    return np.ascontiguousarray(out)


def _infer_mirror_pad_grad(op, input, paddings, mode="REFLECT"):
    p = tensor_util.constant_value(paddings)
    if p is None or input.shape.rank is None:
        return [TensorSpec(input.dtype, tensor_shape.unknown_shape(input.shape.rank))]
    return [TensorSpec(input.dtype, [None if d is None else d - int(a) - int(b)
                                     for d, (a, b) in zip(input.shape.as_list(), p)])]


_PAD_ATTRS = {"T": "input", "Tpaddings": "paddings"}
_PAD_ALLOWED = {"Tpaddings": dtypes.INDEX}
register_op("Pad", inputs=("input", "paddings"), attrs=_PAD_ATTRS, allowed=_PAD_ALLOWED,
            infer=_infer_pad, kernel=_pad_kernel)
register_op("PadV2", inputs=("input", "paddings", "constant_values"),
            attrs={"T": ("input", "constant_values"), "Tpaddings": "paddings"}, allowed=_PAD_ALLOWED,
            infer=_infer_pad, kernel=_pad_kernel)
register_op("MirrorPad", inputs=("input", "paddings"), attrs=_PAD_ATTRS, allowed=_PAD_ALLOWED,
            infer=_infer_pad, kernel=_mirror_pad_kernel, defaults={"mode": "REFLECT"})
register_op("MirrorPadGrad", inputs=("input", "paddings"), attrs=_PAD_ATTRS, allowed=_PAD_ALLOWED,
            infer=_infer_mirror_pad_grad, kernel=_mirror_pad_grad_kernel, defaults={"mode": "REFLECT"})


def pad(tensor: TensorLike, paddings: TensorLike, mode: str = "CONSTANT", constant_values: TensorLike = 0,
        name: Name = None) -> Tensor:
    """`tensor` padded by `paddings[i] = [before, after]` entries in dimension i.

    Args:
      tensor: any tensor.
      paddings: int32/int64 of shape [rank, 2], non-negative.
      mode: "CONSTANT" (fill with `constant_values`), "REFLECT" (mirror without the edge; pads must
        be < the dimension) or "SYMMETRIC" (mirror with the edge; pads <= the dimension). Any case.
      constant_values: scalar of tensor's dtype, for CONSTANT mode.
    Returns:
      Shape `tensor.shape + paddings.sum(axis=1)`.
    Raises:
      InvalidArgumentError: paddings of the wrong shape, negative, or too large for a mirror mode.
    """
    mode = str(mode).upper()
    if not isinstance(paddings, Tensor):
        paddings = np.asarray(paddings)
        if paddings.size == 0:
            paddings = paddings.reshape(0, 2)
        paddings = index_array(paddings)
    if mode == "CONSTANT":
        if not isinstance(constant_values, Tensor) and np.ndim(constant_values) == 0 and constant_values == 0:
            return apply_op("Pad", tensor, paddings, name=name)
        return apply_op("PadV2", tensor, paddings, constant_values, name=name)
    if mode in ("REFLECT", "SYMMETRIC"):
        return apply_op("MirrorPad", tensor, paddings, mode=mode, name=name)
    raise ValueError(f"pad: unknown mode {mode!r}; use 'CONSTANT', 'REFLECT' or 'SYMMETRIC'")



"""Rearranging ops: transpose, expand_dims, squeeze, unstack, slice, strided_slice (`t[1:, ::2]`).
Gradients in join_grad.py."""
import numpy as np

from segflow.framework import dtypes, errors, ops, tensor_shape, tensor_util
from segflow.framework.op_def import TensorSpec, apply_op, register_op
from segflow.ops import shape_ops as so

__all__ = ["transpose", "expand_dims", "squeeze", "unstack", "slice", "strided_slice", "split_by_shapes"]


# -- transpose
def _infer_transpose(op, x, perm):
    p = tensor_util.constant_value(perm)
    if x.shape.rank is None or p is None:
        return [TensorSpec(x.dtype, tensor_shape.unknown_shape(x.shape.rank))]
    p = [int(i) for i in np.asarray(p).reshape(-1)]
    if sorted(p) != list(range(x.shape.rank)):
        raise errors.invalid_input(op, "perm", f"{p} is not a permutation of the {x.shape.rank} dimensions of {x.shape}")
    dims = x.shape.as_list()
    return [TensorSpec(x.dtype, [dims[i] for i in p])]


register_op("Transpose", inputs=("x", "perm"), attrs={"T": "x", "Tperm": "perm"}, infer=_infer_transpose,
            kernel=lambda x, perm: np.ascontiguousarray(np.transpose(x, [int(i) for i in perm])))


def transpose(a, perm=None, name="transpose", conjugate=False):
    """Permutes dimensions (reverses them when `perm` is None)."""
    if not isinstance(a, ops.Tensor):
        a = ops.convert_to_tensor(a)
    if perm is None:
        if a.shape.rank is None:
            from segflow.ops.math_ops import range as range_
            r = so.rank(a)
            perm = range_(r - 1, -1, -1)
        else:
            perm = np.arange(a.shape.rank - 1, -1, -1, dtype=np.int32)
    elif not isinstance(perm, ops.Tensor):
        perm = np.asarray(perm, dtype=np.int32)
    out = apply_op("Transpose", a, perm, name=name)
    if conjugate:
        from segflow.ops.cwise_ops import conj
        out = conj(out)
    return out


# -- expand_dims / squeeze
def _infer_expand_dims(op, input, dim):
    d = tensor_util.constant_value(dim)
    if input.shape.rank is None or d is None:
        return [TensorSpec(input.dtype, tensor_shape.unknown_shape())]
    r = input.shape.rank
    d = int(np.asarray(d).reshape(-1)[0])
    if not -r - 1 <= d <= r:
        raise errors.invalid_input(op, "dim", f"axis {d} is out of range for rank {r}")
    dims = input.shape.as_list()
    dims.insert(d % (r + 1), 1)
    return [TensorSpec(input.dtype, dims)]


register_op("ExpandDims", inputs=("input", "dim"), attrs={"T": "input", "Tdim": "dim"}, infer=_infer_expand_dims,
            kernel=lambda x, dim: np.expand_dims(x, int(np.asarray(dim).reshape(-1)[0])))


def expand_dims(input, axis=None, name=None, dim=None):
    """Inserts a dimension of length 1 at `axis`."""
    axis = dim if axis is None else axis
    if axis is None:
        raise ValueError("expand_dims needs an axis")
    return apply_op("ExpandDims", input, axis, name=name)


def _squeeze_axes(shape, squeeze_dims):
    if squeeze_dims:
        return sorted({int(a) % len(shape) for a in squeeze_dims})
    return [i for i, d in enumerate(shape) if d == 1]


def _infer_squeeze(op, input, squeeze_dims=()):
    if input.shape.rank is None:
        return [TensorSpec(input.dtype, tensor_shape.unknown_shape())]
    dims = input.shape.as_list()
    r = len(dims)
    for a in squeeze_dims or ():
        if not -r <= a < r:
            raise errors.invalid_input(op, "input", f"squeeze axis {a} is out of range for shape {input.shape}")
        if dims[a] is not None and dims[a] != 1:
            raise errors.invalid_input(op, "input", f"cannot squeeze dim[{a % r}] of shape {input.shape}: "
                                       f"expected a dimension of 1, got {dims[a]}")
    if not squeeze_dims and any(d is None for d in dims):
        return [TensorSpec(input.dtype, tensor_shape.unknown_shape())]
    axes = _squeeze_axes(dims, squeeze_dims)
    return [TensorSpec(input.dtype, [d for i, d in enumerate(dims) if i not in axes])]


def _squeeze_kernel(x, squeeze_dims=()):
    axes = _squeeze_axes(x.shape, squeeze_dims)
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"cannot squeeze dim[{a}] of shape {x.shape}: expected a dimension of 1")
    return np.squeeze(x, axis=tuple(axes)) if axes else x


register_op("Squeeze", inputs=("input",), attrs={"T": "input"}, infer=_infer_squeeze, kernel=_squeeze_kernel,
            defaults={"squeeze_dims": ()})


def squeeze(input, axis=None, name=None, squeeze_dims=None):
    """Removes dimensions of length 1 (only those in `axis` when given)."""
    axis = squeeze_dims if axis is None else axis
    if axis is None:
        axis = ()
    elif isinstance(axis, int):
        axis = (axis,)
    return apply_op("Squeeze", input, squeeze_dims=tuple(int(a) for a in axis), name=name)


# -- unstack
def _infer_unpack(op, value, num, axis=0):
    if value.shape.rank is None:
        return [TensorSpec(value.dtype, tensor_shape.unknown_shape())] * num
    dims = value.shape.as_list()
    a = axis % len(dims)
    if dims[a] is not None and dims[a] != num:
        raise errors.invalid_input(op, "value", f"dimension {a} of {value.shape} is not {num}")
    del dims[a]
    return [TensorSpec(value.dtype, dims)] * num


def _unpack_kernel(x, num, axis=0):
    if x.shape[axis] != num:
        raise ValueError(f"dimension {axis} of shape {x.shape} is not {num}")
    return [np.ascontiguousarray(np.take(x, i, axis=axis)) for i in range(num)]


register_op("Unpack", inputs=("value",), attrs={"T": "value"}, infer=_infer_unpack, kernel=_unpack_kernel,
            defaults={"num": None, "axis": 0}, num_outputs=lambda attrs, counts: attrs["num"], list_output=True)


def unstack(value, num=None, axis=0, name="unstack"):
    """Splits `value` along `axis` into a list of tensors of one less rank."""
    if not isinstance(value, ops.Tensor):
        value = ops.convert_to_tensor(value)
    if num is None:
        if value.shape.rank is None or value.shape.as_list()[axis] is None:
            raise ValueError(f"Cannot infer argument `num` from shape {value.shape}")
        num = value.shape.as_list()[axis]
    return apply_op("Unpack", value, num=num, axis=axis, name=name)


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
    return np.ascontiguousarray(x[tuple(idx)])


register_op("Slice", inputs=("input", "begin", "size"), attrs={"T": "input", "Index": ("begin", "size")},
            infer=_infer_slice, kernel=_slice_kernel)


def slice(input_, begin, size, name=None):
    """The part of `input_` starting at `begin` with `size` (-1: to the end) in each dimension."""
    return apply_op("Slice", input_, so._shape_arg(begin) if not isinstance(begin, ops.Tensor) else begin,
                    so._shape_arg(size) if not isinstance(size, ops.Tensor) else size, name=name)


def split_by_shapes(value, shapes, axis):
    """Pieces of `value` along `axis` with the sizes that `shapes` (shape tensors) give on that axis."""
    from segflow.ops import cwise_ops as cw
    from segflow.ops.reduction_ops import cumsum
    sizes = so.stack([s[axis] if isinstance(axis, int) else _gather_scalar(s, axis) for s in shapes])
    starts = cumsum(sizes, exclusive=True)
    rank = so.rank(value)
    pieces = []
    vshape = so.shape(value, out_type=sizes.dtype)
    for i in range(len(shapes)):
        onehot = cw.cast(cw.equal(_range(rank), cw.cast(axis, dtypes.int32) % rank), sizes.dtype)
        begin = cw.multiply(onehot, starts[i])
        size = cw.add(cw.multiply(onehot, sizes[i]), cw.multiply(cw.subtract(cw.cast(1, sizes.dtype), onehot), vshape))
        pieces.append(apply_op("Slice", value, begin, size))
    return pieces


def _gather_scalar(s, axis):
    from segflow.ops.gather_ops import gather
    return gather(s, axis)


def _range(n):
    from segflow.ops.math_ops import range as range_
    return range_(0, n)


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
    if np.any(np.asarray(strides) == 0):
        raise ValueError("strides must be non-zero")
    idx = _slices(x.shape, begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)
    _check_shrink(x.shape, idx)
    out = x[idx]
    return np.ascontiguousarray(out) if isinstance(out, np.ndarray) else np.asarray(out)


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
            attrs={"T": "input", "Index": ("begin", "end", "strides")},
            infer=_infer_strided_slice, kernel=_strided_slice_kernel, defaults=_MASKS)


def _infer_strided_slice_grad(op, shape, begin, end, strides, dy, **masks):
    return [TensorSpec(dy.dtype, tensor_util.constant_value_as_shape(shape))]


def _strided_slice_grad_kernel(shape, begin, end, strides, dy, **masks):
    out = np.zeros(tuple(int(d) for d in shape), dtype=dy.dtype)
    out[_slices(out.shape, begin, end, strides, **masks)] = dy
    return out


register_op("StridedSliceGrad", inputs=("shape", "begin", "end", "strides", "dy"),
            attrs={"T": "dy", "Index": ("shape", "begin", "end", "strides")},
            infer=_infer_strided_slice_grad, kernel=_strided_slice_grad_kernel, defaults=_MASKS)


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0, new_axis_mask=0,
                  shrink_axis_mask=0, var=None, name=None):
    """TF's StridedSlice: `input_[begin:end:strides]` per dimension, with the masks' meanings."""
    if strides is None:
        strides = [1] * len(begin)
    args = []
    for v in (begin, end, strides):
        if isinstance(v, ops.Tensor):
            args.append(v)
        elif isinstance(v, (list, tuple)) and any(isinstance(x, ops.Tensor) for x in v):
            args.append(so.stack([x if isinstance(x, ops.Tensor) else np.asarray(x, np.int32) for x in v]))
        else:
            args.append(np.asarray(v, dtype=np.int32) if np.max(np.abs(np.asarray(v, dtype=np.int64)), initial=0) < 2**31
                        else np.asarray(v, dtype=np.int64))
    dts = {a.dtype if isinstance(a, ops.Tensor) else dtypes.from_numpy(a.dtype) for a in args}
    if len(dts) > 1:
        from segflow.ops.cwise_ops import cast
        args = [cast(a, dtypes.int64) if isinstance(a, ops.Tensor) else a.astype(np.int64) for a in args]
    return apply_op("StridedSlice", input_, *args, begin_mask=begin_mask, end_mask=end_mask,
                    ellipsis_mask=ellipsis_mask, new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask,
                    name=name)


def _slice_helper(tensor, slice_spec, var=None):
    """`tensor[spec]` with ints, slices (of ints, tensors or None), `...`, None (new axis) and scalar
    int tensors; a bool or int tensor index is rejected (use boolean_mask / gather)."""
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
                if part is not None and not _is_int_like(part):
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
        elif _is_int_like(s):
            begin.append(s)
            end.append(s + 1 if not isinstance(s, ops.Tensor) else s + 1)
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
    if isinstance(x, ops.Tensor):
        return x.dtype.is_integer and x.shape.rank in (0, None)
    return False


ops.Tensor._override_operator("__getitem__", _slice_helper)

"""Rearranging ops: transpose, expand_dims, squeeze, unstack, slice, strided_slice (`t[1:, ::2]`),
split, tile, pad. Gradients in join_grad.py."""
import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow.framework import ops
from segflow._core import fold as tensor_util
from segflow._core.apply import TensorSpec, apply_op, register_op
from segflow.kernels import BadInput
from segflow._ops import shape as so

_INDEX = (dtypes.int32, dtypes.int64)

__all__ = ["transpose", "expand_dims", "squeeze", "unstack", "slice", "strided_slice", "split_by_shapes", "split",
           "tile", "pad", "reverse", "reverse_v2"]


def _int_array(x):
    """An index argument as int32 (int64 when needed) without truncating: a float or bool array is
    passed on as it is, for the op to refuse by dtype (TF's ops take int32/int64 only)."""
    arr = np.asarray(x)
    if arr.size == 0 and arr.dtype.kind not in "iu":
        return arr.astype(np.int32)
    if arr.dtype.kind not in "iu":
        return arr
    return arr.astype(np.int32 if not arr.size or (arr.min() >= -2**31 and arr.max() < 2**31) else np.int64)


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


register_op("Transpose", inputs=("x", "perm"), attrs={"T": "x", "Tperm": "perm"}, allowed={"Tperm": _INDEX},
            infer=_infer_transpose,
            kernel=lambda x, perm: np.transpose(x, [int(i) for i in perm]).copy())  # copy(): C order, 0-d kept


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
        perm = _int_array(perm)
    out = apply_op("Transpose", a, perm, name=name)
    if conjugate:
        from segflow._ops.elementwise import conj
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


register_op("ExpandDims", inputs=("input", "dim"), attrs={"T": "input", "Tdim": "dim"}, allowed={"Tdim": _INDEX},
            infer=_infer_expand_dims,
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
    for a in squeeze_dims or ():
        if not -x.ndim <= a < x.ndim:
            raise BadInput("input", f"squeeze axis {a} is out of range for shape {x.shape}")
    axes = _squeeze_axes(x.shape, squeeze_dims)
    for a in axes:
        if x.shape[a] != 1:
            raise BadInput("input", f"cannot squeeze dim[{a}] of shape {x.shape}: expected a dimension of 1, "
                                    f"got {x.shape[a]}")
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
    if not -len(dims) <= axis < len(dims):
        raise errors.invalid_input(op, "value", f"axis {axis} is out of range for shape {value.shape}")
    a = axis % len(dims)
    if dims[a] is not None and dims[a] != num:
        raise errors.invalid_input(op, "value", f"dimension {a} of {value.shape} is not {num}")
    del dims[a]
    return [TensorSpec(value.dtype, dims)] * num


def _unpack_kernel(x, num, axis=0):
    if not -x.ndim <= axis < x.ndim:
        raise BadInput("value", f"axis {axis} is out of range for shape {x.shape}")
    if x.shape[axis] != num:
        raise ValueError(f"dimension {axis} of shape {x.shape} is not {num}")
    # np.take copies (contiguous already); np.asarray keeps a 0-d result 0-d, which ascontiguousarray would not
    return [np.asarray(np.take(x, i, axis=axis)) for i in range(num)]


register_op("Unpack", inputs=("value",), attrs={"T": "value"}, infer=_infer_unpack, kernel=_unpack_kernel,
            defaults={"num": None, "axis": 0}, num_outputs=lambda attrs, counts: attrs["num"], list_output=True)


def unstack(value, num=None, axis=0, name="unstack"):
    """Splits `value` along `axis` into a list of tensors of one less rank."""
    if not isinstance(value, ops.Tensor):
        value = ops.convert_to_tensor(value)
    if num is None:
        r = value.shape.rank
        if r is not None and not -r <= axis < r:
            raise ValueError(f"unstack: axis {axis} is out of range for shape {value.shape}")
        if r is None or value.shape.as_list()[axis] is None:
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
    return np.ascontiguousarray(x[tuple(idx)]) if x.ndim else np.asarray(x).copy()


register_op("Slice", inputs=("input", "begin", "size"), attrs={"T": "input", "Index": ("begin", "size")},
            allowed={"Index": _INDEX}, infer=_infer_slice, kernel=_slice_kernel)


def slice(input_, begin, size, name=None):
    """The part of `input_` starting at `begin` with `size` (-1: to the end) in each dimension."""
    return apply_op("Slice", input_, so._shape_arg(begin) if not isinstance(begin, ops.Tensor) else begin,
                    so._shape_arg(size) if not isinstance(size, ops.Tensor) else size, name=name)


def split_by_shapes(value, shapes, axis):
    """Pieces of `value` along `axis` with the sizes that `shapes` (shape tensors) give on that axis."""
    from segflow._ops import elementwise as cw
    from segflow._ops.reduce import cumsum
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
    from segflow._ops.gather import gather
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
            attrs={"T": "input", "Index": ("begin", "end", "strides")}, allowed={"Index": _INDEX},
            infer=_infer_strided_slice, kernel=_strided_slice_kernel, defaults=_MASKS)


def _infer_strided_slice_grad(op, shape, begin, end, strides, dy, **masks):
    return [TensorSpec(dy.dtype, tensor_util.constant_value_as_shape(shape))]


def _strided_slice_grad_kernel(shape, begin, end, strides, dy, **masks):
    out = np.zeros(tuple(int(d) for d in shape), dtype=dy.dtype)
    out[_slices(out.shape, begin, end, strides, **masks)] = dy
    return out


register_op("StridedSliceGrad", inputs=("shape", "begin", "end", "strides", "dy"),
            attrs={"T": "dy", "Index": ("shape", "begin", "end", "strides")}, allowed={"Index": _INDEX},
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
            wide = any(isinstance(x, ops.Tensor) and x.dtype == dtypes.int64 for x in v)
            dt = dtypes.int64 if wide else dtypes.int32
            from segflow._ops.elementwise import cast
            args.append(so.stack([(x if x.dtype == dt else cast(x, dt)) if isinstance(x, ops.Tensor)
                                  else np.asarray(x, dt.as_numpy_dtype) for x in v]))
        else:
            args.append(np.asarray(v, dtype=np.int32) if np.max(np.abs(np.asarray(v, dtype=np.int64)), initial=0) < 2**31
                        else np.asarray(v, dtype=np.int64))
    dts = {a.dtype if isinstance(a, ops.Tensor) else dtypes.from_numpy(a.dtype) for a in args}
    if len(dts) > 1:
        from segflow._ops.elementwise import cast
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


# -- split
def _const_axis(op, axis, rank, input_name):
    a = tensor_util.constant_value(axis)
    if a is None or rank is None:
        return None
    if np.ndim(a) != 0:
        raise errors.invalid_input(op, input_name, f"must be a scalar, got shape {np.shape(a)}")
    a = int(a)
    if not -rank <= a < rank:
        raise errors.invalid_input(op, input_name, f"axis {a} is out of range for rank {rank}")
    return a % rank


def _infer_split(op, split_dim, value, num_split):
    if split_dim.dtype != dtypes.int32:
        raise errors.invalid_input(op, "split_dim", f"must be int32, not {split_dim.dtype.name}")
    a = _const_axis(op, split_dim, value.shape.rank, "split_dim")
    if a is None:
        return [TensorSpec(value.dtype, tensor_shape.unknown_shape(value.shape.rank))] * num_split
    dims = value.shape.as_list()
    if dims[a] is not None:
        if dims[a] % num_split:
            raise errors.invalid_input(op, "value", f"dimension {a} of shape {value.shape} does not split evenly "
                                       f"into {num_split} pieces")
        dims[a] //= num_split
    return [TensorSpec(value.dtype, dims)] * num_split


def _check_axis(axis, ndim, input_name):
    a = int(axis)
    if not -ndim <= a < max(ndim, 1) or ndim == 0:
        raise BadInput(input_name, f"axis {a} is out of range for rank {ndim}")
    return a % ndim


def _split_kernel(split_dim, value, num_split):
    a = _check_axis(split_dim, value.ndim, "split_dim")
    if value.shape[a] % num_split:
        raise BadInput("value", f"dimension {a} of shape {value.shape} does not split evenly into {num_split} pieces")
    return [np.ascontiguousarray(p) for p in np.split(value, num_split, axis=a)]


register_op("Split", inputs=("split_dim", "value"), attrs={"T": "value"}, infer=_infer_split,
            kernel=_split_kernel, defaults={"num_split": 1},
            num_outputs=lambda attrs, counts: attrs["num_split"], list_output=True)


def _resolve_sizes(sizes, dim):
    """size_splits with its one -1 filled in from `dim` (None when dim is unknown), or an error text."""
    sizes = [int(v) for v in sizes]
    if sum(1 for v in sizes if v == -1) > 1:
        return None, f"can have at most one -1, got {sizes}"
    if any(v < -1 for v in sizes):
        return None, f"sizes must be non-negative (or one -1), got {sizes}"
    if dim is None:
        return [None if v == -1 else v for v in sizes], None
    known = sum(v for v in sizes if v != -1)
    if -1 in sizes:
        if known > dim:
            return None, f"sizes {sizes} add up to more than the dimension's size {dim}"
        return [dim - known if v == -1 else v for v in sizes], None
    if known != dim:
        return None, f"sizes {sizes} add up to {known}, not to the dimension's size {dim}"
    return sizes, None


def _infer_split_v(op, value, size_splits, split_dim, num_split):
    if split_dim.dtype != dtypes.int32:
        raise errors.invalid_input(op, "split_dim", f"must be int32, not {split_dim.dtype.name}")
    if size_splits.dtype not in (dtypes.int32, dtypes.int64):
        raise errors.invalid_input(op, "size_splits", f"must be int32 or int64, not {size_splits.dtype.name}")
    a = _const_axis(op, split_dim, value.shape.rank, "split_dim")
    sizes = tensor_util.constant_value(size_splits)
    if a is None:
        return [TensorSpec(value.dtype, tensor_shape.unknown_shape(value.shape.rank))] * num_split
    dims = value.shape.as_list()
    if sizes is None:
        return [TensorSpec(value.dtype, dims[:a] + [None] + dims[a + 1:])] * num_split
    sizes = np.asarray(sizes).reshape(-1)
    if sizes.size != num_split:
        raise errors.invalid_input(op, "size_splits", f"has {sizes.size} entries, expected num_split = {num_split}")
    sizes, problem = _resolve_sizes(sizes, dims[a])
    if problem:
        raise errors.invalid_input(op, "size_splits", problem)
    return [TensorSpec(value.dtype, dims[:a] + [s] + dims[a + 1:]) for s in sizes]


def _split_v_kernel(value, size_splits, split_dim, num_split):
    a = _check_axis(split_dim, value.ndim, "split_dim")
    if np.ndim(size_splits) != 1 or len(size_splits) != num_split:
        raise BadInput("size_splits", f"must be a vector of {num_split} sizes, got shape {np.shape(size_splits)}")
    sizes, problem = _resolve_sizes(size_splits, value.shape[a])
    if problem:
        raise BadInput("size_splits", problem)
    return [np.ascontiguousarray(p) for p in np.split(value, np.cumsum(sizes)[:-1], axis=a)]


register_op("SplitV", inputs=("value", "size_splits", "split_dim"), attrs={"T": "value", "Tlen": "size_splits"},
            allowed={"Tlen": _INDEX}, infer=_infer_split_v, kernel=_split_v_kernel, defaults={"num_split": 1},
            num_outputs=lambda attrs, counts: attrs["num_split"], list_output=True)


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """Splits `value` along `axis` into a list of tensors.

    Args:
      value: the tensor to split.
      num_or_size_splits: an int n (n equal pieces: "Split") or a 1-D list/tensor of sizes, one of
        which may be -1 for the rest ("SplitV").
      axis: scalar int32, the dimension to split (negative counts from the end).
      num: the number of pieces when `num_or_size_splits` is a tensor of unknown length.
    Returns:
      A list of tensors.
    Raises:
      InvalidArgumentError: n does not divide the dimension, sizes do not add up, axis out of range.
    """
    if not isinstance(axis, ops.Tensor):
        axis = np.asarray(axis, np.int32)
    if isinstance(num_or_size_splits, ops.Tensor) and num_or_size_splits.shape.rank == 0:
        n = tensor_util.constant_value(num_or_size_splits)
        if n is None:
            raise ValueError("split: a scalar num_or_size_splits must be known when the graph is built")
        num_or_size_splits = int(n)
    if isinstance(num_or_size_splits, (int, np.integer)) and not isinstance(num_or_size_splits, bool):
        n = int(num_or_size_splits)
        if n < 1:
            raise ValueError(f"num_or_size_splits must be >= 1, got {n}")
        return apply_op("Split", axis, value, num_split=n, name=name)
    sizes = num_or_size_splits
    if isinstance(sizes, ops.Tensor):
        if num is None:
            if sizes.shape.rank != 1 or sizes.shape.as_list()[0] is None:
                raise ValueError(f"Cannot infer argument `num` from shape {sizes.shape}")
            num = sizes.shape.as_list()[0]
    else:
        sizes = np.asarray(sizes)
        if sizes.ndim != 1 or sizes.dtype.kind not in "iu":
            raise ValueError(f"num_or_size_splits must be an int or a 1-D list of ints, got {num_or_size_splits!r}")
        sizes = sizes.astype(np.int32 if np.all(np.abs(sizes) < 2**31) else np.int64)
        num = sizes.size
    return apply_op("SplitV", value, sizes, axis, num_split=int(num), name=name)


# -- tile
def _infer_tile(op, input, multiples):
    if multiples.dtype not in (dtypes.int32, dtypes.int64):
        raise errors.invalid_input(op, "multiples", f"must be int32 or int64, not {multiples.dtype.name}")
    m = tensor_util.constant_value(multiples)
    rank = input.shape.rank
    if m is None:
        return [TensorSpec(input.dtype, tensor_shape.unknown_shape(rank))]
    m = np.asarray(m).reshape(-1)
    if rank is not None and m.size != rank:
        raise errors.invalid_input(op, "multiples", f"has {m.size} entries, expected one per dimension of "
                                   f"{input.shape}")
    if np.any(m < 0):
        raise errors.invalid_input(op, "multiples", f"must be non-negative, got {m.tolist()}")
    if rank is None:
        return [TensorSpec(input.dtype, tensor_shape.unknown_shape(m.size))]
    return [TensorSpec(input.dtype, [None if d is None else d * int(k) for d, k in zip(input.shape.as_list(), m)])]


def _tile_kernel(input, multiples):
    m = np.asarray(multiples)
    if m.dtype.kind not in "iu":
        raise BadInput("multiples", f"must be int32 or int64, not {m.dtype}")
    m = m.reshape(-1)
    if m.size != input.ndim:
        raise BadInput("multiples", f"has {m.size} entries, expected one per dimension of shape {input.shape}")
    if np.any(m < 0):
        raise BadInput("multiples", f"must be non-negative, got {m.tolist()}")
    reps = tuple(int(k) for k in m)
    shape = [d * k for d, k in zip(input.shape, reps)]
    if so.check_output_shape(shape, input.dtype, "multiples") == 0:
        return np.zeros(shape, input.dtype)    # an empty result: np.tile would build (and allocate) the rest
    return np.tile(input, reps) if input.ndim else np.array(input, copy=True)


register_op("Tile", inputs=("input", "multiples"), attrs={"T": "input", "Tmultiples": "multiples"},
            allowed={"Tmultiples": _INDEX}, infer=_infer_tile, kernel=_tile_kernel)


def tile(input, multiples, name=None):
    """`input` repeated `multiples[i]` times along dimension i (shape `input.shape * multiples`)."""
    if not isinstance(multiples, ops.Tensor):
        multiples = so._shape_arg(multiples)
    return apply_op("Tile", input, multiples, name=name)


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
_PAD_ALLOWED = {"Tpaddings": _INDEX}
register_op("Pad", inputs=("input", "paddings"), attrs=_PAD_ATTRS, allowed=_PAD_ALLOWED,
            infer=_infer_pad, kernel=_pad_kernel)
register_op("PadV2", inputs=("input", "paddings", "constant_values"),
            attrs={"T": ("input", "constant_values"), "Tpaddings": "paddings"}, allowed=_PAD_ALLOWED,
            infer=_infer_pad, kernel=_pad_kernel)
register_op("MirrorPad", inputs=("input", "paddings"), attrs=_PAD_ATTRS, allowed=_PAD_ALLOWED,
            infer=_infer_pad, kernel=_mirror_pad_kernel, defaults={"mode": "REFLECT"})
register_op("MirrorPadGrad", inputs=("input", "paddings"), attrs=_PAD_ATTRS, allowed=_PAD_ALLOWED,
            infer=_infer_mirror_pad_grad, kernel=_mirror_pad_grad_kernel, defaults={"mode": "REFLECT"})


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
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
    if not isinstance(paddings, ops.Tensor):
        paddings = np.asarray(paddings)
        if paddings.size == 0:
            paddings = paddings.reshape(0, 2)
        paddings = _int_array(paddings)
    if mode == "CONSTANT":
        if not isinstance(constant_values, ops.Tensor) and np.ndim(constant_values) == 0 and constant_values == 0:
            return apply_op("Pad", tensor, paddings, name=name)
        return apply_op("PadV2", tensor, paddings, constant_values, name=name)
    if mode in ("REFLECT", "SYMMETRIC"):
        return apply_op("MirrorPad", tensor, paddings, mode=mode, name=name)
    raise ValueError(f"pad: unknown mode {mode!r}; use 'CONSTANT', 'REFLECT' or 'SYMMETRIC'")


# -- reverse
def _infer_reverse(op, tensor, axis):
    if axis.dtype not in (dtypes.int32, dtypes.int64):
        raise errors.invalid_input(op, "axis", f"must be int32 or int64, not {axis.dtype.name}")
    a = tensor_util.constant_value(axis)
    rank = tensor.shape.rank
    if a is not None and rank is not None:
        a = np.asarray(a).reshape(-1)
        if np.any((a < -rank) | (a >= rank)):
            raise errors.invalid_input(op, "axis", f"{a.tolist()} is out of range for rank {rank}")
        if len(set((a % max(rank, 1)).tolist())) != a.size:
            raise errors.invalid_input(op, "axis", f"{a.tolist()} names an axis twice")
    return [TensorSpec(tensor.dtype, tensor.shape)]


def _reverse_kernel(tensor, axis):
    a = np.asarray(axis).reshape(-1)
    r = tensor.ndim
    if np.any((a < -r) | (a >= r)):
        raise BadInput("axis", f"{a.tolist()} is out of range for rank {r}")
    axes = (a % max(r, 1)).tolist()
    if len(set(axes)) != len(axes):
        raise BadInput("axis", f"{a.tolist()} names an axis twice")
    return np.ascontiguousarray(np.flip(tensor, axis=tuple(axes))) if axes else np.array(tensor, copy=True)


register_op("ReverseV2", inputs=("tensor", "axis"), attrs={"T": "tensor", "Tidx": "axis"}, allowed={"Tidx": _INDEX},
            infer=_infer_reverse,
            kernel=_reverse_kernel)


def reverse(tensor, axis, name=None):
    """`tensor` with the order of its entries reversed along each dimension in `axis` (a list)."""
    if not isinstance(axis, ops.Tensor):
        axis = _int_array(axis).reshape(-1)
    return apply_op("ReverseV2", tensor, axis, name=name)


reverse_v2 = reverse

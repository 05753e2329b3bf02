"""Ops about shapes and plain copies: placeholder, identity, stop_gradient, zeros/ones(_like), fill,
shape, size, rank, reshape, broadcast_to, concat, stack, one_hot. Gradients are in shape_grad.py."""
import numpy as np

from segflow._core import mode as context
from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow.framework import ops
from segflow._core import fold as tensor_util
from segflow._core.apply import TensorSpec, _DTypeError, _OpStub as _Stub, apply_op, check_alloc, register_op, resource_exhausted
from segflow.kernels import BadInput, ids

__all__ = ["placeholder", "placeholder_with_default", "identity", "stop_gradient", "zeros", "ones",
           "zeros_like", "ones_like", "fill", "shape", "shape_n", "size", "rank", "reshape", "broadcast_to",
           "concat", "stack", "add_n", "one_hot", "prevent_gradient"]

_INDEX = (dtypes.int32, dtypes.int64)


# -- placeholder
def _infer_placeholder(op, dtype, shape):
    return [TensorSpec(dtype, shape)]


def _placeholder_kernel(dtype, shape):
    raise errors.InvalidArgumentError(None, None, "You must feed a value for placeholder tensor "
                                      f"(dtype {dtype.name}, shape {shape})")


register_op("Placeholder", inputs=(), infer=_infer_placeholder, kernel=_placeholder_kernel,
            defaults={"dtype": None, "shape": None}, stateful=False)


def placeholder(dtype, shape=None, name=None):
    """A graph input to feed at `Session.run` (graph mode only); `shape` may have None dimensions."""
    if context.executing_eagerly():
        raise RuntimeError("sf.placeholder() is not compatible with eager execution.")
    shape = tensor_shape.as_shape(shape) if shape is not None else tensor_shape.unknown_shape()
    return apply_op("Placeholder", name=name, dtype=dtypes.as_dtype(dtype), shape=shape)


def _infer_placeholder_with_default(op, input, shape):
    given = tensor_shape.as_shape(shape)
    if not given.is_compatible_with(input.shape):
        raise errors.invalid_input(op, "input", f"default of shape {input.shape} does not fit shape {given}")
    return [TensorSpec(input.dtype, given)]


register_op("PlaceholderWithDefault", inputs=("input",), attrs={"dtype": "input"},
            infer=_infer_placeholder_with_default, kernel=lambda x, shape: x, defaults={"shape": None})


def placeholder_with_default(input, shape, name=None):
    """Passes `input` through unless a value is fed in its place."""
    return apply_op("PlaceholderWithDefault", input, shape=tensor_shape.as_shape(shape), name=name)


# -- identity family
def _infer_same(op, input, **attrs):
    return [TensorSpec(input.dtype, input.shape)]


def _pass(x):
    return x


register_op("Identity", inputs=("input",), attrs={"T": "input"}, infer=_infer_same, kernel=_pass)
register_op("StopGradient", inputs=("input",), attrs={"T": "input"}, infer=_infer_same, kernel=_pass)
register_op("PreventGradient", inputs=("input",), attrs={"T": "input"}, infer=_infer_same, kernel=lambda x, message="": x,
            defaults={"message": ""})


def _infer_identity_n(op, input):
    return [TensorSpec(t.dtype, t.shape) for t in input]


register_op("IdentityN", inputs=("input*",), infer=_infer_identity_n, kernel=lambda xs: list(xs),
            num_outputs=lambda attrs, counts: counts[0], list_output=True)


def identity(input, name=None):
    """The same value as a new tensor (graph: a new node)."""
    if hasattr(input, "_dense_var_to_tensor"):
        input = input.read_value() if hasattr(input, "read_value") else ops.convert_to_tensor(input)
    return apply_op("Identity", input, name=name)


def stop_gradient(input, name=None):
    """The same value, but no gradient flows through it (it is a constant to differentiation)."""
    return apply_op("StopGradient", input, name=name)


def prevent_gradient(input, message="", name=None):
    """The same value; asking for its gradient raises LookupError with `message`."""
    return apply_op("PreventGradient", input, message=message, name=name)


def identity_n(input, name=None):
    return apply_op("IdentityN", list(input), name=name)


# -- output shapes
_INT64_MAX = 2**63 - 1


def check_output_shape(shape, dtype, input_name):
    """Call before allocating an output of `shape` and `dtype`: check_alloc (more than 2**63 - 1
    elements: BadInput; more bytes than memory: ResourceExhausted), and what an empty output
    needs as well. TF answers an empty shape with huge dimensions, and so does this, as long as
    NumPy can represent it: each dimension must fit in int64, and the non-zero dimensions times
    the item size must not exceed 2**63 - 1 bytes (NumPy's limit, which TF's own int64 element
    count would pass). Returns the number of elements."""
    dims = [int(d) for d in shape]
    for d in dims:
        if d > _INT64_MAX:
            raise BadInput(input_name, f"dimension {d} of the output shape {dims} does not fit in int64")
    n = check_alloc(dims, dtype, input_name)
    if n == 0:
        itemsize = max(np.dtype(dtype).itemsize, 1)
        nonzero = 1
        for d in dims:
            if d:
                nonzero *= d
        if nonzero * itemsize > _INT64_MAX:
            raise BadInput(input_name, f"the output shape {dims} is empty, but its non-zero dimensions multiply to "
                                       f"{nonzero} elements of {itemsize} bytes: more than 2**63 - 1 bytes, "
                                       "which an array cannot describe")
    return n


# -- zeros / ones / fill
def _infer_fill(op, dims, value):
    if dims.dtype not in _INDEX:
        raise errors.invalid_input(op, "dims", f"must be int32 or int64, not {dims.dtype.name}")
    if value.shape.rank not in (None, 0):
        raise errors.invalid_input(op, "value", f"must be a scalar, got shape {value.shape}")
    return [TensorSpec(value.dtype, tensor_util.constant_value_as_shape(dims))]


def _fill_kernel(dims, value):
    if np.ndim(value) != 0:
        raise BadInput("value", f"must be a scalar, got shape {np.shape(value)}")
    if np.ndim(dims) != 1:
        raise BadInput("dims", f"must be a vector, got shape {np.shape(dims)}")
    if np.asarray(dims).dtype.kind not in "iu":
        raise BadInput("dims", f"must be int32 or int64, not {np.asarray(dims).dtype}")
    dims = tuple(int(d) for d in np.asarray(dims).reshape(-1))
    if any(d < 0 for d in dims):
        raise BadInput("dims", f"must be non-negative, got {list(dims)}")
    value = np.asarray(value)
    check_output_shape(dims, value.dtype, "dims")
    return np.full(dims, value, dtype=value.dtype)


register_op("Fill", inputs=("dims", "value"), attrs={"T": "value", "index_type": "dims"},
            allowed={"index_type": _INDEX}, infer=_infer_fill, kernel=_fill_kernel)


def fill(dims, value, name=None):
    """A tensor of shape `dims` filled with the scalar `value`."""
    return apply_op("Fill", _shape_arg(dims), value, name=name)


def _is_int(d):
    return isinstance(d, (int, np.integer)) and not isinstance(d, (bool, np.bool_))


def _shape_arg(shape):
    """A shape argument (list, tuple, TensorShape, array or tensor) as an int32 (int64 when needed)
    tensor. Dimensions are never truncated: a float or bool shape stays float/bool, so the op it
    goes to refuses it by dtype, as TensorFlow's ops do."""
    if isinstance(shape, ops.Tensor):
        return shape
    if isinstance(shape, tensor_shape.TensorShape):
        shape = shape.as_list()
    if isinstance(shape, (list, tuple)) and any(isinstance(d, ops.Tensor) for d in shape):
        parts = [d for d in shape if isinstance(d, ops.Tensor)]
        dt = parts[0].dtype if parts[0].dtype in _INDEX else dtypes.int32
        return stack([d if isinstance(d, ops.Tensor) else ops.convert_to_tensor(
            int(d) if _is_int(d) else np.asarray(d), dtype=dt if _is_int(d) else None) for d in shape])
    if isinstance(shape, (list, tuple)) and shape and all(_is_int(d) for d in shape):
        arr = np.asarray([int(d) for d in shape])
    else:
        arr = np.asarray(shape)
    if arr.size == 0 and arr.dtype.kind not in "iu":
        arr = arr.astype(np.int32)          # [] or ()
    if arr.dtype.kind not in "iu":      # float32 for Python floats, as TF converts them
        return ops.convert_to_tensor(shape if isinstance(shape, (list, tuple)) else arr)
    if arr.size and (arr.max() >= 2**31 or arr.min() < -2**31):
        return ops.convert_to_tensor(arr.astype(np.int64))
    return ops.convert_to_tensor(arr.astype(np.int32))


def _filled(shape, dtype, value, name):
    """A tensor of `shape` holding `value`: built directly eagerly, a Fill node in a graph."""
    dtype = dtypes.as_dtype(dtype)
    scalar = np.full((), value, dtype.as_numpy_dtype)
    if context._state.eager and not isinstance(shape, ops.Tensor):
        dims = shape.as_list() if isinstance(shape, tensor_shape.TensorShape) else shape
        dims = dims if isinstance(dims, (list, tuple)) else np.asarray(dims).reshape(-1).tolist()
        # negative, float or unknown dims go to Fill, which names the error
        if all(_is_int(d) and d >= 0 for d in dims) and np.ndim(shape) <= 1:
            dims = tuple(int(d) for d in dims)
            try:
                check_output_shape(dims, scalar.dtype, "dims")
                lazy = value == 0 and scalar.dtype != object        # calloc: pages are touched on use
                return ops.EagerTensor(np.zeros(dims, scalar.dtype) if lazy else np.full(dims, scalar))
            except MemoryError as e:
                raise resource_exhausted("Fill", name, e) from None
            except BadInput as e:
                raise errors.invalid_input(_Stub("Fill", name), e.input_name, e.message) from None
    return fill(shape, scalar, name=name)


def zeros(shape, dtype=dtypes.float32, name=None):
    """A tensor of zeros of the given shape and dtype."""
    return _filled(shape, dtype, 0, name or "zeros")


def ones(shape, dtype=dtypes.float32, name=None):
    """A tensor of ones of the given shape and dtype."""
    return _filled(shape, dtype, 1, name or "ones")


def _infer_like(op, x, **attrs):
    return [TensorSpec(x.dtype, x.shape)]


register_op("ZerosLike", inputs=("x",), attrs={"T": "x"}, infer=_infer_like, kernel=np.zeros_like)
register_op("OnesLike", inputs=("x",), attrs={"T": "x"}, infer=_infer_like, kernel=np.ones_like)


def zeros_like(tensor, dtype=None, name=None, optimize=True):
    """Zeros with the shape (and, unless `dtype` is given, the dtype) of `tensor`."""
    if isinstance(tensor, ops.IndexedSlices):
        tensor = ops.convert_to_tensor(tensor)
    out = apply_op("ZerosLike", tensor, name=name)
    if dtype is not None and out.dtype != dtypes.as_dtype(dtype):
        from segflow._ops.elementwise import cast
        out = cast(out, dtype)
    return out


def ones_like(tensor, dtype=None, name=None, optimize=True):
    """Ones with the shape (and, unless `dtype` is given, the dtype) of `tensor`."""
    out = apply_op("OnesLike", tensor, name=name)
    if dtype is not None and out.dtype != dtypes.as_dtype(dtype):
        from segflow._ops.elementwise import cast
        out = cast(out, dtype)
    return out


# -- shape, size, rank
def _infer_shape(op, input, out_type=dtypes.int32):
    return [TensorSpec(out_type, (input.shape.rank,))]


def _shape_const(op, inputs):
    shape = inputs[0].shape
    if shape.is_fully_defined():
        return np.asarray(shape.as_list(), dtype=op.get_attr("out_type").np)
    return None


register_op("Shape", inputs=("input",), attrs={"T": "input"}, infer=_infer_shape,
            kernel=lambda x, out_type: np.asarray(np.shape(x), dtype=out_type.np), defaults={"out_type": dtypes.int32},
            constant_value=_shape_const)


def shape(input, name=None, out_type=dtypes.int32):
    """The shape of `input` as a 1-D int tensor."""
    if isinstance(input, ops.IndexedSlices):
        return input.dense_shape
    if hasattr(input, "_dense_var_to_tensor") and hasattr(input, "shape") and input.shape.is_fully_defined() \
            and context.executing_eagerly():
        return ops.EagerTensor(np.asarray(input.shape.as_list(), dtype=dtypes.as_dtype(out_type).np))
    return apply_op("Shape", input, out_type=dtypes.as_dtype(out_type), name=name)


def shape_n(input, out_type=dtypes.int32, name=None):
    return [shape(x, out_type=out_type) for x in input]


def _infer_scalar_int(op, input, out_type=dtypes.int32):
    return [TensorSpec(out_type, ())]


def _size_const(op, inputs):
    n = inputs[0].shape.num_elements()
    return None if n is None else np.asarray(n, dtype=op.get_attr("out_type").np)


def _rank_const(op, inputs):
    r = inputs[0].shape.rank
    return None if r is None else np.asarray(r, dtype=np.int32)


register_op("Size", inputs=("input",), attrs={"T": "input"}, infer=_infer_scalar_int,
            kernel=lambda x, out_type: np.asarray(np.size(x), dtype=out_type.np), defaults={"out_type": dtypes.int32},
            constant_value=_size_const)
register_op("Rank", inputs=("input",), attrs={"T": "input"}, infer=lambda op, input: [TensorSpec(dtypes.int32, ())],
            kernel=lambda x: np.asarray(np.ndim(x), dtype=np.int32), constant_value=_rank_const)


def size(input, name=None, out_type=dtypes.int32):
    """The number of elements of `input` (a scalar)."""
    return apply_op("Size", input, out_type=dtypes.as_dtype(out_type), name=name)


def rank(input, name=None):
    """The number of dimensions of `input` (a scalar int32)."""
    return apply_op("Rank", input, name=name)


# -- reshape, broadcast_to
def _reshape_target(n, target, input_shape):
    """The output shape of reshaping a tensor of `n` elements (None: not known yet) and shape
    `input_shape` to `target` (a list of ints); an unknown -1 stays None. Raises BadInput("shape"):
    TF allows one -1 (the dimension to infer) and no other negative size."""
    if target.count(-1) > 1:
        raise BadInput("shape", f"can only have one -1 dimension, got {target}")
    for i, d in enumerate(target):
        if d < -1:
            raise BadInput("shape", f"size {i} of {target} is {d}: sizes must be non-negative, or -1 for the one "
                                    "dimension to infer")
    known = 1
    for d in target:
        if d != -1:
            known *= d
    if -1 in target:
        if n is None:
            return [None if d == -1 else d for d in target]
        if known == 0 or n % known:
            raise BadInput("shape", f"cannot reshape a tensor of {n} elements ({input_shape}) to {target}: the "
                                    f"known sizes multiply to {known}, so the -1 cannot be inferred")
        return [n // known if d == -1 else d for d in target]
    if n is not None and known != n:
        raise BadInput("shape", f"cannot reshape a tensor of {n} elements ({input_shape}) to shape {target} "
                                f"({known} elements)")
    return target


def _infer_reshape(op, tensor, shape):
    if shape.dtype not in _INDEX:
        raise errors.invalid_input(op, "shape", f"must be int32 or int64, not {shape.dtype.name}")
    if shape.shape.rank not in (None, 1):
        raise errors.invalid_input(op, "shape", f"must be a vector, got shape {shape.shape}")
    target = tensor_util.constant_value(shape)
    if target is None:
        return [TensorSpec(tensor.dtype, tensor_util.constant_value_as_shape(shape))]
    target = [int(d) for d in np.asarray(target).reshape(-1)]
    try:
        out = _reshape_target(tensor.shape.num_elements(), target, tensor.shape)
    except BadInput as e:
        raise errors.invalid_input(op, e.input_name, e.message) from None
    return [TensorSpec(tensor.dtype, out)]


def _reshape_kernel(x, shape):
    shape = np.asarray(shape)
    if shape.ndim != 1:
        raise BadInput("shape", f"must be a vector, got shape {list(shape.shape)}")
    out = _reshape_target(x.size, [int(d) for d in shape], list(x.shape))
    check_output_shape(out, x.dtype, "shape")
    return np.reshape(x, tuple(out))


register_op("Reshape", inputs=("tensor", "shape"), attrs={"T": "tensor", "Tshape": "shape"},
            allowed={"Tshape": _INDEX}, infer=_infer_reshape, kernel=_reshape_kernel)


def reshape(tensor, shape, name=None):
    """`tensor` with a new shape of the same number of elements (one dimension may be -1)."""
    return apply_op("Reshape", tensor, _shape_arg(shape), name=name)


def _infer_broadcast_to(op, input, shape):
    target = tensor_util.constant_value_as_shape(shape)
    try:
        out = tensor_shape.broadcast_shape(input.shape, target)
    except ValueError:
        raise errors.invalid_input(op, "shape", f"cannot broadcast {input.shape} to {target}") from None
    if target.rank is not None and out.rank is not None and out.rank != target.rank:
        raise errors.invalid_input(op, "shape", f"cannot broadcast {input.shape} to {target}")
    return [TensorSpec(input.dtype, target.merge_with(out) if target.rank is not None else out)]


register_op("BroadcastTo", inputs=("input", "shape"), attrs={"T": "input", "Tidx": "shape"}, allowed={"Tidx": _INDEX},
            infer=_infer_broadcast_to,
            kernel=lambda x, shape: np.broadcast_to(x, tuple(int(d) for d in shape)).copy())  # copy(): C order, 0-d kept


def broadcast_to(input, shape, name=None):
    """`input` broadcast (NumPy rules) to `shape`."""
    return apply_op("BroadcastTo", input, _shape_arg(shape), name=name)


# -- concat, stack, add_n
def _normalize_axis(op, axis, rank, input_name="axis"):
    if rank is None:
        return axis
    if not -rank <= axis < max(rank, 1):
        raise errors.invalid_input(op, input_name, f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def _infer_concat(op, values, axis):
    if not values:
        raise errors.invalid_input(op, "values", "needs at least one tensor")
    a = tensor_util.constant_value(axis)
    ranks = {v.shape.rank for v in values if v.shape.rank is not None}
    if len(ranks) > 1:
        raise errors.invalid_input(op, "values", f"ranks differ: {[str(v.shape) for v in values]}")
    rank = ranks.pop() if ranks else None
    if a is None or rank is None:
        return [TensorSpec(values[0].dtype, tensor_shape.unknown_shape(rank))]
    a = _normalize_axis(op, int(a), rank)
    dims = [None] * rank
    total = 0
    for v in values:
        vd = v.shape.as_list() if v.shape.rank is not None else [None] * rank
        for i in range(rank):
            if i == a:
                continue
            if dims[i] is None:
                dims[i] = vd[i]
            elif vd[i] is not None and vd[i] != dims[i]:
                raise errors.invalid_input(op, "values", f"dimension {i} differs: shapes "
                                           f"{[str(x.shape) for x in values]} (concatenating on axis {a})")
        total = None if total is None or vd[a] is None else total + vd[a]
    dims[a] = total
    return [TensorSpec(values[0].dtype, dims)]


register_op("ConcatV2", inputs=("values*", "axis"), attrs={"T": "values", "Tidx": "axis"}, allowed={"Tidx": _INDEX},
            infer=_infer_concat, kernel=lambda values, axis: np.concatenate(values, axis=int(axis)))


def concat(values, axis, name="concat"):
    """Joins tensors along `axis`."""
    values = list(values)
    if len(values) == 1 and not context._state.eager:
        return identity(values[0], name=name)
    return apply_op("ConcatV2", values, axis, name=name)


def _infer_pack(op, values, axis=0):
    if not values:
        raise errors.invalid_input(op, "values", "needs at least one tensor")
    shape = tensor_shape.unknown_shape()
    for v in values:
        if not shape.is_compatible_with(v.shape):
            raise errors.invalid_input(op, "values", f"shapes differ: {[str(x.shape) for x in values]}")
        shape = shape.merge_with(v.shape)
    if shape.rank is None:
        return [TensorSpec(values[0].dtype, tensor_shape.unknown_shape())]
    dims = shape.as_list()
    a = _normalize_axis(op, axis, len(dims) + 1)
    dims.insert(a, len(values))
    return [TensorSpec(values[0].dtype, dims)]


register_op("Pack", inputs=("values*",), attrs={"T": "values"}, infer=_infer_pack,
            kernel=lambda values, axis=0: np.stack(values, axis=axis), defaults={"axis": 0})


def stack(values, axis=0, name="stack"):
    """Stacks same-shaped tensors along a new `axis`."""
    return apply_op("Pack", list(values), axis=axis, name=name)


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
    out = np.add(inputs[0], inputs[1]) if len(inputs) > 1 else np.array(inputs[0], copy=True)
    if type(out) is not np.ndarray:  # 0-d inputs give a NumPy scalar, which `out=` cannot take
        out = np.asarray(out)
    for x in inputs[2:]:
        np.add(out, x, out=out)
    return out


register_op("AddN", inputs=("inputs*",), attrs={"T": "inputs"}, infer=_infer_add_n, kernel=_add_n_kernel)


def add_n(inputs, name=None):
    """The elementwise sum of a list of same-shaped tensors (IndexedSlices are densified)."""
    inputs = list(inputs)
    if not inputs:
        raise ValueError("inputs must be a non-empty list of tensors")
    inputs = [ops.convert_to_tensor(x) if isinstance(x, ops.IndexedSlices) else x for x in inputs]
    if len(inputs) == 1:
        x = inputs[0]
        return ops.convert_to_tensor(x) if not isinstance(x, ops.Tensor) else x
    return apply_op("AddN", inputs, name=name)


# -- one_hot
def _infer_one_hot(op, indices, depth, on_value, off_value, axis=-1):
    if indices.dtype not in (dtypes.uint8,) + _INDEX:
        raise errors.invalid_input(op, "indices", f"must be uint8, int32 or int64, not {indices.dtype.name}")
    if depth.dtype not in _ONE_HOT_DEPTH or depth.shape.rank not in (None, 0):
        raise errors.invalid_input(op, "depth", f"must be a scalar int32, got {depth.dtype.name} of shape "
                                   f"{depth.shape}")
    for name, v in (("on_value", on_value), ("off_value", off_value)):
        if v.shape.rank not in (None, 0):
            raise errors.invalid_input(op, name, f"must be a scalar, got shape {v.shape}")
    d = tensor_util.constant_value(depth)
    if d is not None and int(d) < 0:
        raise errors.invalid_input(op, "depth", f"must be non-negative, got {int(d)}")
    if d is not None and int(d) > _INT32_MAX:
        raise errors.invalid_input(op, "depth", f"depth = {int(d)} does not fit in int32")
    if indices.shape.rank is None:
        return [TensorSpec(on_value.dtype, tensor_shape.unknown_shape())]
    dims = indices.shape.as_list()
    r = len(dims)
    if not -1 <= axis <= r:
        raise errors.invalid_input(op, "indices", f"axis {axis} is out of range [-1, {r}] for indices of rank {r}")
    dims.insert(r if axis == -1 else axis, None if d is None else int(d))
    return [TensorSpec(on_value.dtype, dims)]


def _one_hot_kernel(indices, depth, on_value, off_value, axis=-1):
    """The output filled with off_value, then on_value written at each in-range index: about 1x the
    output's memory (plus a few index-sized temporaries). Negative or too-large indices (and
    uint8 indices >= depth) leave their row all off, as TensorFlow does."""
    ids.check_index_dtype(indices, "indices", allowed=_ONE_HOT_INDEX)
    depth_arr = np.asarray(depth)
    if depth_arr.ndim != 0 or depth_arr.dtype.kind not in "iu":
        raise BadInput("depth", f"must be a scalar int32, got {depth_arr.dtype} of shape {list(depth_arr.shape)}")
    depth = int(depth_arr)
    if depth < 0:
        raise BadInput("depth", f"must be non-negative, got {depth}")
    if depth > _INT32_MAX:      # an int64 depth known only at run time: never wrapped to int32
        raise BadInput("depth", f"depth = {depth} does not fit in int32")
    for label, v in (("on_value", on_value), ("off_value", off_value)):
        if np.ndim(v) != 0:
            raise BadInput(label, f"must be a scalar, got shape {list(np.shape(v))}")
    on = np.asarray(on_value)
    r = indices.ndim
    axis = r if axis == -1 else axis
    if not 0 <= axis <= r:
        raise BadInput("indices", f"axis {axis} is out of range [-1, {r}] for indices of rank {r}")
    shape = indices.shape[:axis] + (depth,) + indices.shape[axis:]
    check_alloc(shape, on.dtype, "depth")
    out = np.empty(shape, on.dtype)
    out.fill(off_value)
    if out.size == 0:
        return out
    outer = int(np.prod(indices.shape[:axis], dtype=np.int64))
    inner = int(np.prod(indices.shape[axis:], dtype=np.int64))
    flat = indices.reshape(-1)
    hot = np.flatnonzero(flat < depth) if flat.dtype.kind == "u" else np.flatnonzero((flat >= 0) & (flat < depth))
    # index k = o * inner + i (o over indices.shape[:axis], i over the rest) goes to out[o, v, i]
    o, i = np.divmod(hot, inner) if inner > 1 else (hot, 0)
    dest = (o * depth + flat[hot].astype(np.int64)) * inner + i
    out.reshape(outer * depth * inner)[dest] = on
    return out


_ONE_HOT_INDEX = (np.dtype(np.uint8), np.dtype(np.int32), np.dtype(np.int64))
# TF's depth is int32; an int64 or uint8 depth tensor is taken too, its value checked by the kernel
_ONE_HOT_DEPTH = (dtypes.int32, dtypes.int64, dtypes.uint8)
_INT32_MAX = 2**31 - 1


register_op("OneHot", inputs=("indices", "depth", "on_value", "off_value"),
            attrs={"TI": "indices", "T": ("on_value", "off_value")},
            allowed={"TI": (dtypes.uint8,) + _INDEX}, infer=_infer_one_hot,
            kernel=_one_hot_kernel, defaults={"axis": -1})


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """A one-hot tensor: `on_value` where the new `axis` (default: last) equals `indices`, else `off_value`.

    Args:
      indices: uint8/int32/int64 tensor; an index outside [0, depth) gives a row of `off_value`.
      depth: scalar int, the length of the new axis.
      on_value, off_value: scalars (default 1 and 0) of the output dtype.
      axis: where the new axis goes (-1: last).
      dtype: output dtype; default the dtype of `on_value`/`off_value`, else float32.
    Returns:
      Shape `indices.shape` with `depth` inserted at `axis`.
    Raises:
      InvalidArgumentError: non-integer indices, a negative, float or beyond-int32 depth (also
        one known only at run time), non-scalar on/off values.
      ResourceExhaustedError: the output would not fit in memory (checked before allocating).
    """
    if dtype is None:
        for v in (on_value, off_value):
            if isinstance(v, ops.Tensor):
                dtype = v.dtype
                break
            if isinstance(v, (np.ndarray, np.generic)):
                dtype = dtypes.from_numpy(v.dtype)
                break
        if dtype is None:
            given = [v for v in (on_value, off_value) if v is not None]
            dtype = dtypes.as_dtype(ops.convert_to_tensor(given[0]).dtype) if given else dtypes.float32
    dtype = dtypes.as_dtype(dtype)
    on = ops.convert_to_tensor(1 if on_value is None else on_value, dtype=dtype)
    off = ops.convert_to_tensor(0 if off_value is None else off_value, dtype=dtype)
    if not isinstance(depth, ops.Tensor):
        depth = _one_hot_depth(depth, name)
    return apply_op("OneHot", indices, depth, on, off, axis=-1 if axis is None else int(axis), name=name)


def _one_hot_depth(depth, name):
    """A Python or NumPy depth as an int32 array: a float (even an integral one: 4.0), bool,
    non-numeric or out-of-int32 depth raises, as TensorFlow refuses it (TypeError: "Value passed
    to parameter 'depth' has DataType float32 not in list of allowed values: int32")."""
    arr = np.asarray(depth)
    stub = _Stub("OneHot", name)
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind in "fcb":     # a Python float is float32 to TF
            dt = "float32" if isinstance(depth, float) else dtypes.as_dtype(arr.dtype).name
            got = f"{depth!r} of DataType {dt}"
        else:
            got = repr(depth)
        raise errors.invalid_input(stub, "depth", f"must be an int32 scalar, got {got}", cls=_DTypeError)
    if arr.size and not (arr.min() >= -2**31 and arr.max() < 2**31):
        raise errors.invalid_input(stub, "depth", f"depth = {arr.reshape(-1)[0] if arr.size == 1 else arr.tolist()} "
                                                  "does not fit in int32")
    return arr.astype(np.int32)

"""Ops about shapes and plain copies: placeholder, identity, stop_gradient, zeros/ones(_like), fill,
shape, size, rank, reshape, broadcast_to, concat, stack, one_hot. Gradients are in shape_grad.py."""

from __future__ import annotations

from typing import Optional, Sequence
import numpy as np

from segflow._core import mode as context
from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.convert import convert_to_tensor, small_index_tensor
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.tensor import EagerTensor, Tensor
from segflow._core import fold as tensor_util
from segflow._core.apply import apply_op
from segflow._core.memory import check_alloc, resource_exhausted
from segflow._core.registry import TensorSpec, hooks, register_op
from segflow.kernels import BadInput
from segflow._ops.cast import cast
from segflow._core.typing import DTypeLike, Name, ShapeLike, TensorLike

__all__ = ["placeholder", "placeholder_with_default", "identity", "stop_gradient", "zeros", "ones",
           "zeros_like", "ones_like", "fill", "shape", "shape_n", "size", "rank", "reshape", "broadcast_to",
           "prevent_gradient", "identity_n", "check_output_shape", "newaxis"]

newaxis = None   # `t[:, newaxis]` inserts an axis, as np.newaxis


# -- placeholder
def _infer_placeholder(op, dtype, shape):
    return [TensorSpec(dtype, shape)]


def _placeholder_kernel(dtype, shape):
    raise errors.InvalidArgumentError(None, None, "You must feed a value for placeholder tensor "
                                      f"(dtype {dtype.name}, shape {shape})")


register_op("Placeholder", inputs=(), infer=_infer_placeholder, kernel=_placeholder_kernel,
            defaults={"dtype": None, "shape": None}, stateful=False)


def placeholder(dtype: DTypeLike, shape: Optional[ShapeLike] = None, name: Name = None) -> Tensor:
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


def placeholder_with_default(input: TensorLike, shape: ShapeLike, name: Name = None) -> Tensor:
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


def identity(input: TensorLike, name: Name = None) -> Tensor:
    """The same value as a new tensor (graph: a new node)."""
    if hasattr(input, "_dense_var_to_tensor"):
        input = input.read_value() if hasattr(input, "read_value") else convert_to_tensor(input)
    return apply_op("Identity", input, name=name)


def stop_gradient(input: TensorLike, name: Name = None) -> Tensor:
    """The same value, but no gradient flows through it (it is a constant to differentiation)."""
    return apply_op("StopGradient", input, name=name)


def prevent_gradient(input: TensorLike, message: str = "", name: Name = None) -> Tensor:
    """The same value; asking for its gradient raises LookupError with `message`."""
    return apply_op("PreventGradient", input, message=message, name=name)


def identity_n(input: Sequence[TensorLike], name: Name = None) -> list[Tensor]:
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
    if dims.dtype not in dtypes.INDEX:
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
            allowed={"index_type": dtypes.INDEX}, infer=_infer_fill, kernel=_fill_kernel)


def fill(dims: TensorLike, value: TensorLike, name: Name = None) -> Tensor:
    """A tensor of shape `dims` filled with the scalar `value`."""
    return apply_op("Fill", _shape_arg(dims), value, name=name)


def _is_int(d):
    return isinstance(d, (int, np.integer)) and not isinstance(d, (bool, np.bool_))


def _plain_dims(shape):
    """`shape` with Dimension objects (`x.shape[0]`) replaced by their values."""
    if isinstance(shape, tensor_shape.Dimension):
        return shape.value
    if isinstance(shape, (list, tuple)) and any(isinstance(d, tensor_shape.Dimension) for d in shape):
        return [d.value if isinstance(d, tensor_shape.Dimension) else d for d in shape]
    return shape


def _shape_arg(shape):
    """A shape argument (list, tuple, TensorShape, Dimension, array or tensor) as an int32 (int64
    when needed) tensor. Dimensions are never truncated: a float or bool shape stays float/bool, so
    the op it goes to refuses it by dtype, as TensorFlow's ops do."""
    if isinstance(shape, Tensor):
        return shape
    fast = small_index_tensor(shape)       # Python ints, the common case
    if fast is not None:
        return fast
    if isinstance(shape, tensor_shape.TensorShape):
        shape = shape.as_list()
    shape = _plain_dims(shape)
    if isinstance(shape, (list, tuple)) and any(isinstance(d, Tensor) for d in shape):
        parts = [d for d in shape if isinstance(d, Tensor)]
        dt = parts[0].dtype if parts[0].dtype in dtypes.INDEX else dtypes.int32
        return apply_op("Pack", [d if isinstance(d, Tensor) else convert_to_tensor(
            int(d) if _is_int(d) else np.asarray(d), dtype=dt if _is_int(d) else None) for d in shape], axis=0)
    if isinstance(shape, (list, tuple)) and shape and all(_is_int(d) for d in shape):
        arr = np.asarray([int(d) for d in shape])
    else:
        arr = np.asarray(shape)
    if arr.size == 0 and arr.dtype.kind not in "iu":
        arr = arr.astype(np.int32)          # [] or ()
    if arr.dtype.kind not in "iu":      # float32 for Python floats, as TF converts them
        return convert_to_tensor(shape if isinstance(shape, (list, tuple)) else arr)
    if arr.size and (arr.max() >= 2**31 or arr.min() < -2**31):
        return convert_to_tensor(arr.astype(np.int64))
    return convert_to_tensor(arr.astype(np.int32))


def _filled(shape, dtype, value, name):
    """A tensor of `shape` holding `value`: built directly eagerly, a Fill node in a graph."""
    dtype = dtypes.as_dtype(dtype)
    scalar = np.full((), value, dtype.as_numpy_dtype)
    shape = _plain_dims(shape)
    if context.executing_eagerly() and not isinstance(shape, Tensor):
        dims = shape.as_list() if isinstance(shape, tensor_shape.TensorShape) else shape
        dims = dims if isinstance(dims, (list, tuple)) else np.asarray(dims).reshape(-1).tolist()
        # negative, float or unknown dims go to Fill, which names the error
        if all(_is_int(d) and d >= 0 for d in dims) and np.ndim(shape) <= 1:
            dims = tuple(int(d) for d in dims)
            try:
                check_output_shape(dims, scalar.dtype, "dims")
                lazy = value == 0 and scalar.dtype != object        # calloc: pages are touched on use
                return EagerTensor(np.zeros(dims, scalar.dtype) if lazy else np.full(dims, scalar))
            except MemoryError as e:
                raise resource_exhausted("Fill", name, e) from None
            except BadInput as e:
                raise errors.invalid_input(errors.OpName("Fill", name), e.input_name, e.message) from None
    shape = _shape_arg(shape)
    if shape.shape.rank == 0:   # zeros(8) is zeros([8]), as in TF (Fill itself takes a vector)
        shape = reshape(shape, [-1])
    return fill(shape, scalar, name=name)


def zeros(shape: ShapeLike, dtype: DTypeLike = dtypes.float32, name: Name = None) -> Tensor:
    """A tensor of zeros of the given shape and dtype."""
    return _filled(shape, dtype, 0, name or "zeros")


def ones(shape: ShapeLike, dtype: DTypeLike = dtypes.float32, name: Name = None) -> Tensor:
    """A tensor of ones of the given shape and dtype."""
    return _filled(shape, dtype, 1, name or "ones")


def _infer_like(op, x, **attrs):
    return [TensorSpec(x.dtype, x.shape)]


register_op("ZerosLike", inputs=("x",), attrs={"T": "x"}, infer=_infer_like, kernel=np.zeros_like)
register_op("OnesLike", inputs=("x",), attrs={"T": "x"}, infer=_infer_like, kernel=np.ones_like)


def zeros_like(tensor: TensorLike, dtype: Optional[DTypeLike] = None, name: Name = None,
               optimize: bool = True) -> Tensor:
    """Zeros with the shape (and, unless `dtype` is given, the dtype) of `tensor`."""
    if isinstance(tensor, IndexedSlices):
        tensor = convert_to_tensor(tensor)
    out = apply_op("ZerosLike", tensor, name=name)
    if dtype is not None and out.dtype != dtypes.as_dtype(dtype):
        out = cast(out, dtype)
    return out


def ones_like(tensor: TensorLike, dtype: Optional[DTypeLike] = None, name: Name = None,
              optimize: bool = True) -> Tensor:
    """Ones with the shape (and, unless `dtype` is given, the dtype) of `tensor`."""
    out = apply_op("OnesLike", tensor, name=name)
    if dtype is not None and out.dtype != dtypes.as_dtype(dtype):
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


def shape(input: TensorLike, name: Name = None, out_type: DTypeLike = dtypes.int32) -> Tensor:
    """The shape of `input` as a 1-D int tensor."""
    if isinstance(input, IndexedSlices):
        return input.dense_shape
    if _is_sparse_tensor(input):
        return cast(input.dense_shape, out_type, name=name)
    if hasattr(input, "_dense_var_to_tensor") and hasattr(input, "shape") and input.shape.is_fully_defined() \
            and context.executing_eagerly():
        return EagerTensor(np.asarray(input.shape.as_list(), dtype=dtypes.as_dtype(out_type).np))
    return apply_op("Shape", input, out_type=dtypes.as_dtype(out_type), name=name)


def shape_n(input: Sequence[TensorLike], out_type: DTypeLike = dtypes.int32, name: Name = None) -> list[Tensor]:
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


def _is_sparse_tensor(x):
    """A SparseTensor (or its value): it has indices, values and a dense_shape (this module comes
    before sparse_tensor.py, so the test is by its fields)."""
    return not isinstance(x, (Tensor, IndexedSlices)) and hasattr(x, "dense_shape") and hasattr(x, "indices") \
        and hasattr(x, "values")


def size(input: TensorLike, name: Name = None, out_type: DTypeLike = dtypes.int32) -> Tensor:
    """The number of elements of `input` (a scalar); of a SparseTensor, the product of its dense
    shape."""
    if _is_sparse_tensor(input):
        return apply_op("Prod", cast(input.dense_shape, out_type), np.int32(0), name=name, keep_dims=False)
    return apply_op("Size", input, out_type=dtypes.as_dtype(out_type), name=name)


def rank(input: TensorLike, name: Name = None) -> Tensor:
    """The number of dimensions of `input` (a scalar int32); of a SparseTensor, the length of its
    dense shape."""
    if _is_sparse_tensor(input):
        return apply_op("Size", input.dense_shape, out_type=dtypes.int32, name=name)
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
        if known == 0 and n == 0 and input_shape is not None and None not in input_shape:
            # TF's rule for empty tensors: the -1 is what the input's non-zero dimensions leave
            # after the target's non-zero sizes (reshape(zeros([0, 3]), [0, -1]) has shape [0, 3])
            have = 1
            for d in input_shape:
                if d:
                    have *= d
            want = 1
            for d in target:
                if d not in (0, -1):
                    want *= d
            return [have // want if d == -1 else d for d in target]
        if known == 0 or n % known:
            raise BadInput("shape", f"cannot reshape a tensor of {n} elements ({input_shape}) to {target}: the "
                                    f"known sizes multiply to {known}, so the -1 cannot be inferred")
        return [n // known if d == -1 else d for d in target]
    if n is not None and known != n:
        raise BadInput("shape", f"cannot reshape a tensor of {n} elements ({input_shape}) to shape {target} "
                                f"({known} elements)")
    return target


def _infer_reshape(op, tensor, shape):
    if shape.dtype not in dtypes.INDEX:
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
    out = _reshape_target(x.size, shape.tolist(), list(x.shape))    # (tolist: Python ints, in C)
    if x.size == 0:     # a view of the same elements: only an empty shape can be unrepresentable
        check_output_shape(out, x.dtype, "shape")
    return x.reshape(out)


register_op("Reshape", inputs=("tensor", "shape"), attrs={"T": "tensor", "Tshape": "shape"},
            allowed={"Tshape": dtypes.INDEX}, infer=_infer_reshape, kernel=_reshape_kernel)


def reshape(tensor: TensorLike, shape: ShapeLike, name: Name = None) -> Tensor:
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


def _broadcast_to_kernel(x, shape):
    # a new C-order array filled by np.copyto's broadcasting: np.broadcast_to(x, shape).copy() in
    # a third of the time on small tensors (np.broadcast_to is Python); both refuse the same shapes
    out = np.empty(tuple(int(d) for d in shape), x.dtype)
    np.copyto(out, x)
    return out


register_op("BroadcastTo", inputs=("input", "shape"), attrs={"T": "input", "Tidx": "shape"}, allowed={"Tidx": dtypes.INDEX},
            infer=_infer_broadcast_to,
            kernel=_broadcast_to_kernel)


def broadcast_to(input: TensorLike, shape: ShapeLike, name: Name = None) -> Tensor:
    """`input` broadcast (NumPy rules) to `shape`."""
    return apply_op("BroadcastTo", input, _shape_arg(shape), name=name)


hooks.zeros_like = zeros_like

"""Element structures of `sf.data`: nested tuples, namedtuples and dicts of tensors (a Python list
is one tensor, as in tf.data), their `TensorSpec`s, and the flat lists of NumPy arrays the pipeline
passes between its stages.

A dataset's source value is kept as a NumPy array (Python values get TF's dtype rules through
`convert_to_tensor`), or, in graph mode, as the symbolic Tensor itself: its value is taken when an
iterator's initializer runs (a placeholder fed there, for instance).
"""
import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core import mode as context
from segflow._core.convert import convert_to_tensor
from segflow._core.tensor import EagerTensor, Tensor
from segflow._core.tensor_spec import TensorSpec
from segflow.util import nest

__all__ = ["normalize", "normalize_output", "spec_of", "flat_specs", "pack", "to_eager", "is_symbolic",
           "batched_spec", "unbatched_spec", "checker", "packer", "same_structure", "Mismatch",
           "flatten_up_to"]


def is_symbolic(x):
    return isinstance(x, Tensor) and not isinstance(x, EagerTensor)


def _is_structure(x):
    return isinstance(x, (tuple, dict))


def _leaf(value, what):
    """A source leaf: a NumPy array (copied from a caller's array) or a symbolic graph Tensor."""
    if is_symbolic(value):
        return value
    if isinstance(value, EagerTensor):
        return value._value if isinstance(value._value, np.ndarray) else np.asarray(value._value)
    if context.executing_eagerly() or isinstance(value, (np.ndarray, np.generic, int, float, bool, complex,
                                                         str, bytes, list)):
        try:
            with context.eager_mode():
                t = convert_to_tensor(value)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{what}: cannot convert {type(value).__name__} to a tensor: {e}") from None
        arr = t._value if isinstance(t._value, np.ndarray) else np.asarray(t._value)
        if isinstance(value, np.ndarray) and np.may_share_memory(arr, value):
            arr = arr.copy()     # a later change to the caller's array must not change the dataset
        return arr
    t = convert_to_tensor(value)    # a variable in graph mode: its read, evaluated at initialization
    return t if is_symbolic(t) else _leaf(t, what)


def normalize(value, what):
    """A dataset source structure: tuples, namedtuples and dicts kept, every other value one leaf."""
    if value is None:
        raise TypeError(f"{what}: None is not a valid element component")
    if isinstance(value, dict):
        return type(value)((k, normalize(v, what)) for k, v in value.items())
    if isinstance(value, tuple):
        items = [normalize(v, what) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    return _leaf(value, what)


def normalize_output(value, what):
    """What a user function returned, as tensors: lists become tuples (as tf.data does)."""
    if value is None:      # TF: InvalidArgumentError (a function with no outputs)
        raise errors.InvalidArgumentError(None, None, f"{what}: the function returned None; it must return "
                                          "tensors")
    if isinstance(value, dict):
        return type(value)((k, normalize_output(v, what)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        items = [normalize_output(v, what) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, Tensor):
        return value
    try:
        return convert_to_tensor(value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what}: the function returned a {type(value).__name__} that is no tensor: {e}") \
            from None


def _dtype_of(leaf):
    if isinstance(leaf, Tensor):
        return leaf.dtype
    if leaf.dtype == object:
        return dtypes.string
    return dtypes.as_dtype(leaf.dtype)


def spec_of(structure):
    """The TensorSpec structure of a structure of leaves (arrays or tensors)."""
    if isinstance(structure, (TensorSpec,)):
        return structure
    if _is_structure(structure):
        return nest.map_structure(spec_of, structure) if structure else structure
    return TensorSpec(tensor_shape.as_shape(structure.shape), _dtype_of(structure))


def flat_specs(spec):
    return nest.flatten(spec) if _is_structure(spec) else [spec]


def pack(spec, flat):
    return nest.pack_sequence_as(spec, flat) if _is_structure(spec) else flat[0]


def to_eager(pack_fn, flat):
    """The element as eager tensors, nested by `pack_fn` (a `packer`)."""
    return pack_fn([EagerTensor(_array(v)) for v in flat])


def _array(v):
    if isinstance(v, (np.ndarray, np.generic)):
        return v
    return np.asarray(v, dtype=object if isinstance(v, (bytes, str)) else None)


def batched_spec(spec, size):
    """The spec of a batch of `size` elements (None: not known)."""
    return nest.map_structure(lambda s: TensorSpec(tensor_shape.TensorShape([size]).concatenate(s.shape),
                                                   s.dtype), spec) if _is_structure(spec) else \
        TensorSpec(tensor_shape.TensorShape([size]).concatenate(spec.shape), spec.dtype)


def _drop_first(s, what):
    if s.shape.rank == 0:
        raise ValueError(f"{what}: an element component of shape () cannot be split; it needs rank >= 1")
    return TensorSpec(s.shape[1:] if s.shape.rank is not None else tensor_shape.unknown_shape(), s.dtype)


def unbatched_spec(spec, what):
    return nest.map_structure(lambda s: _drop_first(s, what), spec) if _is_structure(spec) else \
        _drop_first(spec, what)


def same_structure(a, b):
    """Whether two spec structures have the same nesting (types and dict keys)."""
    if isinstance(a, dict) or isinstance(b, dict):
        return isinstance(a, dict) and isinstance(b, dict) and sorted(a, key=str) == sorted(b, key=str) and \
            all(same_structure(a[k], b[k]) for k in a)
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and \
            all(same_structure(x, y) for x, y in zip(a, b))
    return True


class Mismatch(ValueError):
    """A value does not have the structure it should."""


def flatten_up_to(shallow, value):
    """`value` flattened as far as the structure of `shallow` goes (a shape, or a yielded value,
    may itself be a tuple or list); Mismatch where the structures differ."""
    if isinstance(shallow, dict):
        if not isinstance(value, dict) or set(value) != set(shallow):
            raise Mismatch(f"expected a dict with keys {sorted(shallow, key=str)}, got {value!r}")
        return [x for k in sorted(shallow, key=nest._sort_key) for x in flatten_up_to(shallow[k], value[k])]
    if isinstance(shallow, tuple):
        if not isinstance(value, (tuple, list)) or len(value) != len(shallow):
            raise Mismatch(f"expected a sequence of {len(shallow)}, got {value!r}")
        return [x for t, v in zip(shallow, value) for x in flatten_up_to(t, v)]
    return [value]


def checker(specs):
    """A fast check of a function's flat output arrays against the flat specs it was traced to."""
    digest = [(s.dtype, np.dtype(object) if s.dtype == dtypes.string else np.dtype(s.dtype.as_numpy_dtype),
               None if s.shape.rank is None else tuple(s.shape.as_list())) for s in specs]

    def check(what, values):
        if len(values) != len(digest):
            raise errors.InvalidArgumentError(None, None, f"{what}: the function returned {len(values)} "
                                              f"components, but was traced to return {len(digest)}")
        for i, ((dt, npdt, dims), v) in enumerate(zip(digest, values)):
            if v.dtype != npdt:
                got = dtypes.string.name if v.dtype == object else dtypes.as_dtype(v.dtype).name
                raise errors.InvalidArgumentError(None, None, f"{what}: component {i} has dtype {got}, but the "
                                                  f"function was traced to return {dt.name}")
            if dims is not None:
                shape = v.shape
                if len(shape) != len(dims) or any(d is not None and d != n for d, n in zip(dims, shape)):
                    raise errors.InvalidArgumentError(None, None, f"{what}: component {i} has shape "
                                                      f"{list(shape)}, incompatible with the traced shape "
                                                      f"{list(dims)}")
    return check


def packer(spec):
    """A fast `pack(spec, flat)` for this spec."""
    if not _is_structure(spec):
        return lambda flat: flat[0]
    if type(spec) is tuple and not any(_is_structure(s) for s in spec):
        return tuple
    return lambda flat: nest.pack_sequence_as(spec, flat)

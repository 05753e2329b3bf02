"""The stages that start a pipeline: `from_tensor_slices`, `from_tensors`, `range`, `from_generator`."""
import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.tensor_spec import TensorSpec
from segflow._data import structure
from segflow._data.node import Node, UNKNOWN
from segflow.util import nest

__all__ = ["TensorSlices", "Tensors", "Range", "Generator"]

_RANGE_BLOCK = 1 << 16    # a range is produced in blocks of this many elements


def _flat_leaves(value):
    return nest.flatten(value) if isinstance(value, (tuple, dict)) else [value]


class TensorSlices(Node):
    """The slices of tensors along their first dimension."""

    def __init__(self, tensors):
        value = structure.normalize(tensors, "from_tensor_slices")
        self.leaves_ = _flat_leaves(value)
        if not self.leaves_:
            raise ValueError("from_tensor_slices: needs at least one tensor")
        full = structure.spec_of(value)
        self.symbolic = tuple(x for x in self.leaves_ if structure.is_symbolic(x))
        rows = tensor_shape.Dimension(None)
        for s in structure.flat_specs(full):
            if s.shape.rank == 0:
                raise ValueError("from_tensor_slices: Unbatching a tensor is only supported for rank >= 1")
            if s.shape.rank is not None:
                if not rows.is_compatible_with(s.shape[0]):
                    raise ValueError(f"from_tensor_slices: Dimensions {rows.value} and {tensor_shape.dimension_value(s.shape[0])} are "
                                     "not compatible: every component must have the same first dimension")
                rows = rows.merge_with(s.shape[0])
        self.rows = rows.value
        self.spec = structure.unbatched_spec(full, "from_tensor_slices")
        super().__init__()

    def cardinality(self, ctx):
        if ctx is None:
            return UNKNOWN if self.rows is None else self.rows
        return len(self._arrays(ctx)[0])

    def _arrays(self, ctx):
        arrays = [ctx.value(x, "from_tensor_slices") for x in self.leaves_]
        n = {a.shape[0] if a.ndim else None for a in arrays}
        if len(n) != 1 or None in n:
            shapes = [list(a.shape) for a in arrays]
            raise errors.InvalidArgumentError(None, None, "from_tensor_slices: every component must have the "
                                              f"same first dimension (rank >= 1), got shapes {shapes}")
        return arrays

    def chunks(self, ctx):
        arrays = self._arrays(ctx)
        if len(arrays[0]):
            yield arrays


class Tensors(Node):
    """One element: the given tensors."""

    def __init__(self, tensors):
        value = structure.normalize(tensors, "from_tensors")
        self.leaves_ = _flat_leaves(value)
        self.symbolic = tuple(x for x in self.leaves_ if structure.is_symbolic(x))
        self.spec = structure.spec_of(value)
        super().__init__()

    def cardinality(self, ctx):
        return 1

    def elements(self, ctx):
        yield [ctx.value(x, "from_tensors") for x in self.leaves_]


def _int_arg(x, arg):
    if structure.is_symbolic(x):
        raise TypeError(f"range: {arg} must be a Python or eager integer, not the graph tensor {x.name}")
    v = np.asarray(x._value if hasattr(x, "_value") else x)
    if v.ndim != 0 or v.dtype.kind not in "iub":
        raise TypeError(f"range: {arg} must be an integer scalar, got {v!r}")
    return int(v)


class Range(Node):
    """start, start + step, ... before stop, as `output_type` (int64 by default)."""

    def __init__(self, args, output_type=dtypes.int64):
        if not 1 <= len(args) <= 3:
            raise ValueError(f"range: takes 1 to 3 positional arguments (stop, or start, stop[, step]), "
                             f"got {len(args)}")
        names = ("stop",) if len(args) == 1 else ("start", "stop", "step")
        vals = [_int_arg(a, n) for a, n in zip(args, names)]
        start, stop, step = (0, vals[0], 1) if len(vals) == 1 else (vals + [1])[:3]
        if step == 0:
            raise errors.InvalidArgumentError(None, None, "range: step must be a non-zero integer.")
        self.range = range(start, stop, step)
        self.dtype = dtypes.as_dtype(output_type)
        if not (self.dtype.is_integer or self.dtype.is_floating):
            raise TypeError(f"range: output_type must be an integer or floating type, got {self.dtype.name}")
        self.spec = TensorSpec([], self.dtype)
        super().__init__()

    def cardinality(self, ctx):
        return len(self.range)

    def chunks(self, ctx):
        r = self.range
        for lo in range(0, len(r), _RANGE_BLOCK):
            part = r[lo:lo + _RANGE_BLOCK]
            yield [np.arange(part.start, part.stop, part.step, dtype=np.int64).astype(self.dtype.as_numpy_dtype,
                                                                                        copy=False)]


def _generator_spec(output_types, output_shapes, output_signature):
    if output_signature is not None:
        if output_types is not None or output_shapes is not None:
            raise TypeError("from_generator: give `output_signature`, or `output_types` (and `output_shapes`), "
                            "not both")
        for s in structure.flat_specs(output_signature):
            if not isinstance(s, TensorSpec):
                raise TypeError(f"from_generator: output_signature must hold TensorSpecs, got {type(s).__name__}")
        return output_signature
    if output_types is None:
        raise TypeError("from_generator: `output_signature` (or `output_types`) is required")
    if isinstance(output_types, list):
        output_types = tuple(output_types)
    types = structure.flat_specs(output_types) if isinstance(output_types, (tuple, dict)) else [output_types]
    try:
        shapes = [None] * len(types) if output_shapes is None else structure.flatten_up_to(output_types, output_shapes)
    except structure.Mismatch:
        raise ValueError("from_generator: `output_shapes` must have the structure of `output_types`") from None
    specs = [TensorSpec(tensor_shape.as_shape(s) if s is not None else None, dtypes.as_dtype(t))
             for t, s in zip(types, shapes)]
    return structure.pack(output_types, specs) if isinstance(output_types, (tuple, dict)) else specs[0]


class Generator(Node):
    """The values `generator(*args)` yields, converted to the element spec (each pass calls it anew)."""

    def __init__(self, generator, output_types=None, output_shapes=None, args=None, output_signature=None):
        if not callable(generator):
            raise TypeError("from_generator: `generator` must be a callable that returns an iterator")
        self.generator, self.args = generator, tuple(args or ())
        self.spec = _generator_spec(output_types, output_shapes, output_signature)
        super().__init__()
        self.np_types = [object if s.dtype == dtypes.string else s.dtype.as_numpy_dtype for s in self.flat]

    def elements(self, ctx):
        args = [a.numpy() if hasattr(a, "numpy") else a for a in self.args]
        for value in self.generator(*args):
            try:
                flat = structure.flatten_up_to(self.spec, value)
            except structure.Mismatch:
                raise TypeError(f"from_generator: `generator` yielded an element {value!r} that does not match the "
                                f"expected structure {self.spec}") from None
            out = []
            for v, s, t in zip(flat, self.flat, self.np_types):
                try:
                    a = np.asarray(v._value if hasattr(v, "_value") else v, dtype=t)
                except (TypeError, ValueError):
                    raise TypeError(f"from_generator: `generator` yielded an element that could not be converted "
                                    f"to the expected type {s.dtype.name}: {v!r}") from None
                if not s.shape.is_compatible_with(a.shape):
                    raise errors.InvalidArgumentError(
                        None, None, f"from_generator: `generator` yielded an element of shape {a.shape} where an "
                        f"element of shape {tuple(s.shape.as_list()) if s.shape.rank is not None else '?'} was "
                        "expected.")
                out.append(a)
            yield out

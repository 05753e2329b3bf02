"""The stages that run user functions: map, filter, flat_map.

A function is traced once, into a scratch graph on placeholders of the element spec, only to learn
what it returns (structure, dtypes, static shapes): the element spec of the new dataset. It then runs
per element, in Python, on eager tensors, in every mode (inside an iterator's kernel in a
Session). A function that cannot be traced (it reads values with `.numpy()`, branches on them in
Python) is run on the first element instead, where the data is in memory, and its output shapes are
taken as unknown but for their rank.
"""
import numpy as np

from segflow._core import dtypes, errors, mode as context
from segflow._core.graph import Graph
from segflow._core.tensor import EagerTensor, Tensor
from segflow._core.tensor_spec import TensorSpec
from segflow._core import shapes as tensor_shape
from segflow._data import structure
from segflow._data.instance import Instance
from segflow._data.node import Node, UNKNOWN
from segflow._ops.shape import placeholder
from segflow.util import nest

__all__ = ["Map", "Filter", "FlatMap", "call"]


def call(fn, element):
    """fn(*element) for a plain tuple (as tf.data unpacks it), else fn(element)."""
    return fn(*element) if type(element) is tuple else fn(element)


def _trace(fn, spec, what):
    """The (normalized) value `fn` returns on placeholders shaped like `spec`, in a scratch graph."""
    g = Graph()
    with g.as_default():
        args = structure.pack(spec, [placeholder(s.dtype, s.shape) for s in structure.flat_specs(spec)])
        return call(fn, args)


def _sample(fn, node, what):
    """What `fn` returns on the first element (eagerly), when its data is in memory."""
    ctx = Instance()
    with context.eager_mode():
        for e in node.elements(ctx):
            return call(fn, structure.to_eager(node.pack, e))
    raise ValueError(f"{what}: the function could not be traced, and the dataset has no element to run it on")


def _output(fn, node, what):
    """(value fn returns on the element spec, whether its shapes are only known by rank)."""
    try:
        return _trace(fn, node.spec, what), False
    except Exception as traced:     # noqa: BLE001 - any failure of a user function while tracing
        if isinstance(traced, ValueError) and "different graph" in str(traced):
            raise ValueError(f"{what}: {traced}. The function captures a tensor of a graph: segflow runs "
                             "dataset functions per element on eager tensors, so they cannot capture graph "
                             "tensors or variables; use NumPy values or eager tensors instead") from None
        if node.leaves():
            raise
        try:
            return _sample(fn, node, what), True
        except Exception:           # noqa: BLE001 - report the tracing failure, the first one
            raise traced from None


def _spec_of_output(out, what, loose):
    value = structure.normalize_output(out, what)
    specs = [TensorSpec(tensor_shape.TensorShape([None] * t.shape.rank) if loose and t.shape.rank is not None
                        else t.shape, t.dtype) for t in structure.flat_specs(_spec_tree(value))]
    return structure.pack(_spec_tree(value), specs)


def _spec_tree(value):
    if isinstance(value, (tuple, dict)):
        return nest.map_structure(lambda t: TensorSpec(t.shape, t.dtype), value) if value else value
    return TensorSpec(value.shape, value.dtype)


def _flat_arrays(out, what):
    if type(out) is EagerTensor:                    # the common cases, without the general walk
        return [_value(out)]
    if type(out) is tuple and all(type(t) is EagerTensor for t in out):
        return [_value(t) for t in out]
    value = structure.normalize_output(out, what)
    flat = nest.flatten(value) if isinstance(value, (tuple, dict)) else [value]
    arrays = []
    for t in flat:
        if not isinstance(t, EagerTensor):
            raise TypeError(f"{what}: the function returned the graph tensor {t.name}; at run time it gets eager "
                            "tensors and must return values computed from them")
        arrays.append(_value(t))
    return arrays


def _value(t):
    v = t._value
    return v if isinstance(v, (np.ndarray, np.generic)) else np.asarray(v)


class _Fn(Node):
    def __init__(self, child, fn, what):
        if not callable(fn):
            raise ValueError(f"{what}: Argument `func` must be a callable. Received func={fn!r} (of type "
                             f"{type(fn)})")
        self.child, self.fn, self.what = child, fn, what
        self.inputs = (child,)

    def _calls(self, ctx):
        # No context manager stays open across a yield: a suspended generator would hold it.
        pack, fn = self.child.pack, self.fn
        for e in self.child.elements(ctx):
            if context.executing_eagerly():
                out = call(fn, structure.to_eager(pack, e))
            else:
                with context.eager_mode():
                    out = call(fn, structure.to_eager(pack, e))
            yield e, out


class Map(_Fn):
    def __init__(self, child, fn):
        super().__init__(child, fn, "map")
        out, loose = _output(fn, child, "map")
        self.spec = _spec_of_output(out, "map", loose)
        Node.__init__(self)

    def cardinality(self, ctx):
        return self.child.cardinality(ctx)

    def elements(self, ctx):
        check = structure.checker(self.flat)
        for _, out in self._calls(ctx):
            arrays = _flat_arrays(out, "map")
            check("map", arrays)
            yield arrays


def _predicate_error(got):
    return ValueError(f"filter: Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor, but its "
                      f"return type is {got}.")


class Filter(_Fn):
    def __init__(self, child, predicate):
        super().__init__(child, predicate, "filter")
        out, _ = _output(predicate, child, "filter")
        if not isinstance(out, Tensor):
            out = structure.normalize_output(out, "filter")
        if not isinstance(out, Tensor) or out.dtype != dtypes.bool or out.shape.rank not in (None, 0):
            raise _predicate_error(_spec_tree(out) if isinstance(out, (Tensor, tuple, dict)) else type(out))
        self.spec = child.spec
        Node.__init__(self)

    def elements(self, ctx):
        for e, out in self._calls(ctx):
            v = np.asarray(out._value if isinstance(out, EagerTensor) else out)
            if v.dtype != np.bool_ or v.ndim:
                raise errors.InvalidArgumentError(None, None, f"filter: the predicate must return a bool scalar, "
                                                  f"got {v.dtype} of shape {list(v.shape)}")
            if v:
                yield e


class FlatMap(_Fn):
    """fn returns a Dataset (anything with `_node`) per element; their elements, in order."""

    def __init__(self, child, fn):
        super().__init__(child, fn, "flat_map")
        out, loose = _output(fn, child, "flat_map")
        node = getattr(out, "_node", None)
        if node is None:
            raise TypeError(f"flat_map: the function must return a Dataset, got {type(out).__name__}")
        self.spec = node.spec if not loose else structure.pack(node.spec, [
            TensorSpec(tensor_shape.TensorShape([None] * s.shape.rank) if s.shape.rank is not None else s.shape,
                       s.dtype) for s in node.flat])
        Node.__init__(self)

    def cardinality(self, ctx):
        return UNKNOWN

    def elements(self, ctx):
        check = structure.checker(self.flat)
        for _, out in self._calls(ctx):
            node = getattr(out, "_node", None)
            if node is None:
                raise TypeError(f"flat_map: the function must return a Dataset, got {type(out).__name__}")
            for e in node.elements(Instance()):
                check("flat_map", e)
                yield e

"""Iterators over datasets: the eager one (`iter(dataset)`) and TF1's graph `Iterator`, whose
`get_next()` is a stateful `IteratorGetNext` op and whose `initializer` is a `MakeIterator` op.

The running pipeline lives in the Session's resources under the iterator's key: `MakeIterator`'s
kernel evaluates the dataset's symbolic sources (its inputs, a fed placeholder for instance) and
starts a fresh run; each run of `IteratorGetNext` advances it by one element (every fetch of its
outputs in one `sess.run` is the same element) and raises `OutOfRangeError` at the end. A one-shot
iterator starts its run when its `get_next()` first runs.
"""
import itertools

import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core import mode as context
from segflow._core.apply import apply_op
from segflow._core.registry import NotDifferentiable, register_op
from segflow._core.tensor import Tensor
from segflow._core.tensor_spec import TensorSpec
from segflow._ops.constant import constant
from segflow._data import structure
from segflow._data.instance import EAGER, Instance
from segflow._data.node import UNKNOWN
from segflow.util.nest import flatten as nest_flatten

__all__ = ["OwnedIterator", "Iterator", "make_one_shot_iterator", "make_initializable_iterator",
           "cardinality_tensor"]

_keys = itertools.count()


class OwnedIterator:
    """The eager iterator `iter(dataset)` returns: yields elements as eager tensors."""

    def __init__(self, dataset, numpy=False):
        node = dataset._node
        self._spec = node.spec
        self._pack = node.pack
        self._numpy = numpy
        self._it = node.elements(EAGER)

    @property
    def element_spec(self):
        return self._spec

    def __iter__(self):
        return self

    def __next__(self):
        flat = next(self._it)
        if self._numpy:       # as TF: NumPy scalars (bytes for strings) and arrays
            return self._pack([v[()] if isinstance(v, np.ndarray) and v.ndim == 0 else v for v in flat])
        return structure.to_eager(self._pack, flat)

    next = __next__

    def get_next(self, name=None):
        """The next element; OutOfRangeError at the end."""
        try:
            return self.__next__()
        except StopIteration:
            raise errors.OutOfRangeError(None, None, "End of sequence") from None


# ----------------------------------------------------------------------------------------------
# Graph ops


class _Run:
    def __init__(self, node, ctx):
        self.node, self.ctx = node, ctx
        self.it = node.elements(ctx)


def _instance(node, leaves, values):
    return Instance({id(t): v for t, v in zip(leaves, values)}, keep=tuple(leaves))


def _make_iterator_kernel(state, sources, iterator=None, node=None):
    state.resources[iterator.key] = _Run(node, _instance(node, node.leaves(), sources))
    return ()


def _infer_make_iterator(op, sources, iterator=None, node=None):
    return []


register_op("MakeIterator", inputs=("sources*",), infer=_infer_make_iterator, kernel=_make_iterator_kernel,
            stateful=True, num_outputs=0, defaults={"iterator": None, "node": None})


def _get_next_kernel(state, sources, iterator=None, node=None):
    run = state.resources.get(iterator.key)
    if run is None:
        if node is None:
            raise errors.FailedPreconditionError(
                None, None, "GetNext() failed because the iterator has not been initialized. Ensure that you "
                "have run the initializer operation for this iterator before getting the next element.")
        run = state.resources[iterator.key] = _Run(node, _instance(node, node.leaves(), sources))
    with context.eager_mode():
        try:
            flat = next(run.it)
        except StopIteration:
            run.it = iter(())
            raise errors.OutOfRangeError(None, None, "End of sequence") from None
    # a view of a source array is copied: what sess.run hands out must not alias the dataset
    return [v if isinstance(v, np.generic) or (isinstance(v, np.ndarray) and v.base is None) else np.array(v)
            for v in flat]


def _infer_get_next(op, sources, iterator=None, node=None):
    return [TensorSpec(s.shape, s.dtype) for s in iterator.flat]


register_op("IteratorGetNext", inputs=("sources*",), infer=_infer_get_next, kernel=_get_next_kernel,
            stateful=True, num_outputs=lambda attrs, counts: len(attrs["iterator"].flat), list_output=True,
            defaults={"iterator": None, "node": None})


def _cardinality_kernel(state, sources, node=None):
    return np.int64(node.cardinality(_instance(node, node.leaves(), sources)))


register_op("DatasetCardinality", inputs=("sources*",), infer=lambda op, sources, node=None: [TensorSpec([], "int64")],
            kernel=_cardinality_kernel, stateful=True, defaults={"node": None})


for _op_type in ("MakeIterator", "IteratorGetNext", "DatasetCardinality"):
    NotDifferentiable(_op_type)


def cardinality_tensor(node):
    """The cardinality as an int64 scalar tensor: a constant when known now, else an op that
    computes it from the values of the dataset's graph tensors."""
    c = node.cardinality(None)
    leaves = node.leaves()
    if c != UNKNOWN or not leaves:
        return constant(np.int64(c))
    return apply_op("DatasetCardinality", list(leaves), node=node, name="DatasetCardinality")


class Iterator:
    """TF1's graph iterator (`tf.compat.v1.data.Iterator`)."""

    def __init__(self, spec, node=None, one_shot=False, name=None):
        self._spec = spec
        self.flat = structure.flat_specs(spec)
        self.key = ("data.iterator", next(_keys))
        self._one_shot_node = node if one_shot else None
        self._initializer = None
        if node is not None and not one_shot:
            self._initializer = self.make_initializer_for(node)

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None, output_classes=None):
        """An iterator not bound to a dataset: `make_initializer(dataset)` binds one (each such
        initializer restarts it on its dataset)."""
        types = tuple(output_types) if isinstance(output_types, list) else output_types
        flat_types = nest_flatten(types) if isinstance(types, (tuple, dict)) else [types]
        try:
            shapes = [None] * len(flat_types) if output_shapes is None else \
                structure.flatten_up_to(types, output_shapes)
        except structure.Mismatch as e:
            raise TypeError(f"Iterator.from_structure: output_shapes must have the structure of output_types: "
                            f"{e}") from None
        specs = [TensorSpec(tensor_shape.as_shape(s) if s is not None else None, dtypes.as_dtype(t))
                 for t, s in zip(flat_types, shapes)]
        spec = structure.pack(types, specs) if isinstance(types, (tuple, dict)) else specs[0]
        return Iterator(spec)

    @property
    def element_spec(self):
        return self._spec

    @property
    def output_types(self):
        return structure.pack(self._spec, [s.dtype for s in self.flat])

    @property
    def output_shapes(self):
        return structure.pack(self._spec, [s.shape for s in self.flat])

    @property
    def output_classes(self):
        return structure.pack(self._spec, [Tensor for _ in self.flat])

    @property
    def initializer(self):
        if self._initializer is None:
            raise ValueError("The iterator does not have an initializer. This means it was likely created using "
                             "`tf.data.Dataset.make_one_shot_iterator()`. For an initializable iterator, use "
                             "`tf.data.Dataset.make_initializable_iterator()` instead.")
        return self._initializer

    def make_initializer_for(self, node, name=None):
        if not structure.same_structure(self._spec, node.spec) or \
                len(node.flat) != len(self.flat) or \
                any(a.dtype != b.dtype or not a.shape.is_compatible_with(b.shape)
                    for a, b in zip(self.flat, node.flat)):
            raise TypeError(f"Expected output types/shapes {self._spec} but got dataset with {node.spec}")
        return apply_op("MakeIterator", list(node.leaves()), iterator=self, node=node, name=name or "MakeIterator")

    def make_initializer(self, dataset, name=None):
        """An op that (re)starts this iterator on `dataset`."""
        return self.make_initializer_for(dataset._node, name)

    def get_next(self, name=None):
        """The next element as tensors nested like the element; each run of them advances once."""
        node = self._one_shot_node
        sources = list(node.leaves()) if node is not None else []
        outs = apply_op("IteratorGetNext", sources, iterator=self, node=node, name=name or "IteratorGetNext")
        outs = outs if isinstance(outs, list) else [outs]
        return structure.pack(self._spec, outs)

    def string_handle(self, name=None):
        raise NotImplementedError("Iterator.string_handle: feedable iterators by string handle are not supported; "
                                  "use Iterator.from_structure and make_initializer")


def make_one_shot_iterator(dataset):
    """An iterator that starts at its first `get_next()` run and cannot be restarted (eagerly: the
    dataset's eager iterator)."""
    if context.executing_eagerly():
        return OwnedIterator(dataset)
    node = dataset._node
    for t in node.leaves():
        if t.op.type == "Placeholder":
            raise ValueError(f"make_one_shot_iterator: the dataset reads the placeholder {t.name}, which a "
                             "one-shot iterator cannot capture; use make_initializable_iterator and feed it to "
                             "the initializer")
    return Iterator(node.spec, node, one_shot=True)


def make_initializable_iterator(dataset, shared_name=None):
    """An iterator whose `initializer` op (re)starts it, evaluating the dataset's graph tensors then."""
    if context.executing_eagerly():
        raise RuntimeError("dataset.make_initializable_iterator is not supported when eager execution is "
                           "enabled. Use `for element in dataset` instead.")
    node = dataset._node
    return Iterator(node.spec, node)

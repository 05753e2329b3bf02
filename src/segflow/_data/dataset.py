"""`sf.data.Dataset`: input pipelines over in-memory data, as TensorFlow 2.21's `tf.data.Dataset`.

    ds = sf.data.Dataset.from_tensor_slices((x, y)).shuffle(1000, seed=1).batch(32)
    for xb, yb in ds:            # eager tensors
        ...
    it = sf.compat.v1.data.make_one_shot_iterator(ds)      # graph mode
    xb, yb = it.get_next()       # sess.run((xb, yb)) until OutOfRangeError

Differences from TensorFlow, on purpose:
- Functions given to `map`, `filter` and `flat_map` are traced once only to learn their output
  (the new element spec); they then run per element in Python on eager tensors, in graph mode
  too (inside the iterator's kernel, in the Session). TF runs the traced graph instead. So a
  function may use Python freely, but in graph mode it cannot capture graph tensors or variables
  of the user's graph (it sees eager tensors only). `num_parallel_calls` and `deterministic` are
  accepted; elements are made in order, one at a time.
- Iterating a dataset inside an `sf.function` being traced is not supported (iterate eagerly, or
  use a graph iterator); in graph mode `for x in ds` raises RuntimeError, as in TF.
- `prefetch` and `Options` are accepted and change nothing (there is no background thread);
  `cache(filename)` keeps the data in memory whatever the file name.
- `shuffle` follows TF's buffer (and reshuffling) semantics with NumPy's generator: the orders are
  reproducible for a seed but are not TF's.
- Datasets made from NumPy arrays keep them as arrays (a copy), not as graph constants.
"""
import numpy as np

from segflow._core import dtypes, fold
from segflow._core import mode as context
from segflow._core.tensor import Tensor
from segflow._data import functions, sources, structure, transforms
from segflow._data.instance import INFINITE, UNKNOWN
from segflow._data.iterator import (OwnedIterator, cardinality_tensor, make_initializable_iterator,
                                    make_one_shot_iterator)
from segflow._ops.random import get_seed
from segflow.util import nest

__all__ = ["DatasetV2", "DatasetV1", "Options", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY",
           "get_structure", "get_output_types", "get_output_shapes", "get_output_classes", "cardinality"]

AUTOTUNE = -1
INFINITE_CARDINALITY = INFINITE
UNKNOWN_CARDINALITY = UNKNOWN


def _scalar(x, what, arg):
    """An int, or a graph tensor read when the pipeline starts (constant ones are read now)."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{what}: {arg} must be an integer, got {x!r}")
    if isinstance(x, (int, np.integer)):
        return int(x)
    if structure.is_symbolic(x):
        try:
            from_graph = fold.constant_value(x)
        except Exception:     # noqa: BLE001 - not foldable: read at run time
            from_graph = None
        if from_graph is not None:
            return _scalar(np.asarray(from_graph).item(), what, arg)
        if not x.dtype.is_integer:
            raise TypeError(f"{what}: {arg} must be an integer tensor, got {x.dtype.name}")
        return x
    v = np.asarray(x._value if hasattr(x, "_value") else x)
    if v.ndim != 0 or v.dtype.kind not in "iu":
        raise TypeError(f"{what}: {arg} must be an integer scalar, got {x!r}")
    return int(v)


class Options:
    """Accepted for compatibility; segflow's pipelines have no options to set."""

    def __init__(self):
        object.__setattr__(self, "_values", {})

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self._values.setdefault(name, _OptionGroup())

    def __setattr__(self, name, value):
        self._values[name] = value

    def merge(self, options):
        out = Options()
        out._values.update(self._values)
        out._values.update(options._values)
        return out


class _OptionGroup(Options):
    pass


class DatasetV2:
    """A sequence of elements, each a (nested) structure of tensors; see the module docstring."""

    def __init__(self, node, options=None):
        self._node = node
        self._options = options

    def _wrap(self, node):
        return type(self)(node, self._options)

    # -- what it holds
    @property
    def element_spec(self):
        """The TensorSpec structure of one element."""
        return self._node.spec

    def cardinality(self):
        """The number of elements as an int64 scalar tensor; INFINITE_CARDINALITY (-1) or
        UNKNOWN_CARDINALITY (-2) where it is infinite or not known (after a filter, say)."""
        return cardinality_tensor(self._node)

    def __len__(self):
        n = self._node.cardinality(None)
        if n == INFINITE:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN:
            if not context.executing_eagerly():
                raise TypeError("`tf.data.Dataset` only supports `len` in eager mode. Use "
                                "`tf.data.Dataset.cardinality()` instead.")
            raise TypeError("The dataset length is unknown.")
        return n

    def __bool__(self):
        return True

    def __iter__(self):
        if not context.executing_eagerly():
            raise RuntimeError("`tf.data.Dataset` only supports Python-style iteration in eager mode (segflow: "
                               "not inside sf.function either; in a graph use "
                               "sf.compat.v1.data.make_one_shot_iterator(dataset).get_next()).")
        return OwnedIterator(self)

    def as_numpy_iterator(self):
        """The elements as NumPy values (eager only)."""
        if not context.executing_eagerly():
            raise RuntimeError("`tf.data.Dataset.as_numpy_iterator()` is only supported in eager mode.")
        return OwnedIterator(self, numpy=True)

    def __repr__(self):
        return f"<{type(self).__name__} element_spec={self.element_spec}>"

    # -- sources
    @classmethod
    def from_tensor_slices(cls, tensors, name=None):
        """The slices of `tensors` (a nested structure; Python lists are one tensor) along their
        first dimension, which all components share."""
        return cls(sources.TensorSlices(tensors))

    @classmethod
    def from_tensors(cls, tensors, name=None):
        """One element: `tensors`."""
        return cls(sources.Tensors(tensors))

    @classmethod
    def from_generator(cls, generator, output_types=None, output_shapes=None, args=None, output_signature=None,
                       name=None):
        """The values `generator(*args)` yields (called anew each pass; in Python, also in graph
        mode), converted to `output_signature` (TensorSpecs) or `output_types`/`output_shapes`."""
        return cls(sources.Generator(generator, output_types, output_shapes, args, output_signature))

    @classmethod
    def range(cls, *args, output_type=dtypes.int64, name=None):
        """range(stop), range(start, stop[, step]) as `output_type` scalars (int64)."""
        return cls(sources.Range(args, output_type))

    @classmethod
    def zip(cls, *args, datasets=None, name=None):
        """Elements of several datasets side by side, nested like `datasets` (a tuple or dict of
        datasets, or the datasets as arguments); as long as the shortest."""
        if datasets is None:
            datasets = args[0] if len(args) == 1 else tuple(args)
        elif args:
            raise TypeError("zip: give the datasets as arguments or as `datasets`, not both")
        if isinstance(datasets, DatasetV2):
            return datasets
        if not isinstance(datasets, (tuple, dict)) or not nest.flatten(datasets):
            raise TypeError(f"zip: expected a (nested) tuple or dict of datasets, got {type(datasets).__name__}")
        flat = nest.flatten(datasets)
        for d in flat:
            if not isinstance(d, DatasetV2):
                raise TypeError(f"zip: every item must be a Dataset, got {type(d).__name__}")
        spec = nest.pack_sequence_as(datasets, [d.element_spec for d in flat])
        return cls(transforms.Zip([d._node for d in flat], spec))

    # -- transformations
    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None, deterministic=None, name=None):
        """Consecutive elements stacked into batches of `batch_size` (the last may be smaller
        unless `drop_remainder`, which also makes the batch dimension static)."""
        return self._wrap(transforms.Batch(self._node, _scalar(batch_size, "batch", "batch_size"), drop_remainder))

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None, drop_remainder=False, name=None):
        """Batches of elements padded (with `padding_values`, 0 by default) to `padded_shapes`
        (None or -1 dimensions: the largest in the batch)."""
        return self._wrap(transforms.PaddedBatch(self._node, _scalar(batch_size, "padded_batch", "batch_size"),
                                                 padded_shapes, padding_values, drop_remainder))

    def unbatch(self, name=None):
        """Splits each element along its first dimension."""
        return self._wrap(transforms.Unbatch(self._node))

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """Shuffled through a buffer of `buffer_size` elements (a uniform permutation when it holds
        the whole dataset). With `reshuffle_each_iteration` each pass has a new order."""
        s1, s2 = get_seed(seed)
        seeds = None if s1 is None else (int(s1), int(s2))
        size = _scalar(buffer_size, "shuffle", "buffer_size")
        if reshuffle_each_iteration is None:
            reshuffle_each_iteration = True
        return self._wrap(transforms.Shuffle(self._node, size, seeds, reshuffle_each_iteration))

    def repeat(self, count=None, name=None):
        """The dataset `count` times (None or -1: forever)."""
        return self._wrap(transforms.Repeat(self._node, -1 if count is None else _scalar(count, "repeat", "count")))

    def take(self, count, name=None):
        """The first `count` elements (-1: all)."""
        return self._wrap(transforms.Take(self._node, _scalar(count, "take", "count")))

    def skip(self, count, name=None):
        """All but the first `count` elements (-1: none)."""
        return self._wrap(transforms.Skip(self._node, _scalar(count, "skip", "count")))

    def shard(self, num_shards, index, name=None):
        """Elements index, index + num_shards, index + 2 * num_shards, ..."""
        return self._wrap(transforms.Shard(self._node, _scalar(num_shards, "shard", "num_shards"),
                                           _scalar(index, "shard", "index")))

    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """map_func(*element) for tuple elements, map_func(element) otherwise, on each element."""
        return self._wrap(functions.Map(self._node, map_func))

    def filter(self, predicate, name=None):
        """The elements for which `predicate` (a bool scalar) is true."""
        return self._wrap(functions.Filter(self._node, predicate))

    def flat_map(self, map_func, name=None):
        """The elements of the datasets `map_func` returns for each element, in order."""
        return self._wrap(functions.FlatMap(self._node, map_func))

    def enumerate(self, start=0, name=None):
        """(index, element) pairs, the index an int64 from `start`."""
        return self._wrap(transforms.Enumerate(self._node, start))

    def concatenate(self, dataset, name=None):
        """This dataset's elements, then `dataset`'s (same structure and dtypes)."""
        if not isinstance(dataset, DatasetV2):
            raise TypeError(f"concatenate: expected a Dataset, got {type(dataset).__name__}")
        return self._wrap(transforms.Concatenate(self._node, dataset._node))

    def cache(self, filename="", name=None):
        """Keeps the elements in memory after the first full pass."""
        return self._wrap(transforms.Cache(self._node))

    def prefetch(self, buffer_size, name=None):
        """Accepted; elements are made when asked for."""
        return self._wrap(self._node)

    def apply(self, transformation_func):
        return transformation_func(self)

    def with_options(self, options, name=None):
        merged = options if self._options is None else self._options.merge(options)
        return type(self)(self._node, merged)

    def options(self):
        return self._options if self._options is not None else Options()


class DatasetV1(DatasetV2):
    """TF1's dataset (`sf.compat.v1.data.Dataset`): a DatasetV2 with the graph iterators as methods."""

    def make_one_shot_iterator(self):
        return make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name=None):
        return make_initializable_iterator(self, shared_name)

    @property
    def output_types(self):
        return get_output_types(self)

    @property
    def output_shapes(self):
        return get_output_shapes(self)

    @property
    def output_classes(self):
        return get_output_classes(self)


def cardinality(dataset):
    """`dataset.cardinality()` (TF's `tf.data.experimental.cardinality`)."""
    return dataset.cardinality()


def get_structure(dataset_or_iterator):
    """The element spec of a dataset or iterator."""
    return dataset_or_iterator.element_spec


def _each(dataset_or_iterator, fn):
    spec = dataset_or_iterator.element_spec
    return structure.pack(spec, [fn(s) for s in structure.flat_specs(spec)])


def get_output_types(dataset_or_iterator):
    return _each(dataset_or_iterator, lambda s: s.dtype)


def get_output_shapes(dataset_or_iterator):
    return _each(dataset_or_iterator, lambda s: s.shape)


def get_output_classes(dataset_or_iterator):
    return _each(dataset_or_iterator, lambda s: Tensor)


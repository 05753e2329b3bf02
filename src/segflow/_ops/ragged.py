"""RaggedTensor: rows of different lengths, stored as flat values plus row partitions (TF's
`tf.RaggedTensor`).

A RaggedTensor of ragged rank 1 is `values` (a tensor whose first dimension is all rows' elements
laid end to end) and `row_splits` (int64 or int32, `nrows + 1` entries, starting at 0, never
decreasing, ending at `len(values)`): row i is `values[row_splits[i]:row_splits[i + 1]]`. A higher
ragged rank nests: `values` is itself a RaggedTensor. Every row-partition encoding TF accepts
(`from_row_lengths`, `from_value_rowids`, `from_row_starts`, `from_row_limits`, nested forms,
`from_tensor`, `from_sparse`) is converted to row_splits once, at construction; a partition whose
values are known then is checked then, any other by an op when it runs.

Everything is built from ops (`ragged_ops`), so it works eagerly, in graphs and under a tape; the
gradient of a result with respect to `flat_values` flows through those ops. The ops over ragged
tensors (reductions, boolean_mask, range, ...) are in `ragged_math`, `constant` in `ragged_factory`.
"""
import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core import mode as context
from segflow._core.apply import apply_op
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._core.tensor import EagerTensor, Tensor
from segflow._core import fold as tensor_util
from segflow.kernels import BadInput
from segflow._ops import cast as cast_ops, elementwise as cw, join as join_ops
from segflow._ops import reduce as reduce_ops, scatter as scatter_ops
from segflow._ops import shape as shape_ops, sort as sort_ops
from segflow._ops.ragged_ops import SPLITS_DTYPES as _SPLITS, as_index as _as_index, check_ragged_right, \
    check_splits, row_splits_to_segment_ids, segment_ids_to_row_splits, validate_splits
from segflow._ops.ragged_value import RaggedTensorValue, RowPartitioned
from segflow._ops.sequence import range as range_
from segflow._ops.sparse_tensor import SparseTensor

__all__ = ["RaggedTensor", "RaggedTensorValue", "is_ragged", "check_same_partition"]


# ----------------------------------------------------------------------------------------------
# RaggedTensor

def is_ragged(x):
    return isinstance(x, (RaggedTensor, RaggedTensorValue))


def _nrows_of(values, out_type):
    if isinstance(values, RaggedTensor):
        return values.nrows(out_type=out_type)
    return shape_ops.shape(values, out_type=out_type)[0]


def _static_dim0(values):
    shape = values.shape
    return None if shape.rank is None or shape.rank == 0 else shape.as_list()[0]


class RaggedTensor(RowPartitioned):
    """A tensor with ragged (variable-length) dimensions: TF's `tf.RaggedTensor`.

    Build one with a `from_*` factory or `sf.ragged.constant`; the constructor is internal.
    """

    def __init__(self, values, row_splits, internal=False, _validate=True):
        if not internal:
            raise ValueError("RaggedTensor constructor is private; please use one of the factory methods "
                             "instead (e.g., RaggedTensor.from_row_lengths())")
        if not isinstance(values, (RaggedTensor, Tensor)):
            values = convert_to_tensor(values)
        if values.shape.rank == 0:
            raise ValueError("values must have rank >= 1")
        self._values = values
        self._row_splits = row_splits
        if isinstance(values, RaggedTensor) and values.row_splits.dtype != row_splits.dtype:
            raise ValueError("dtype mismatch: the row_splits of nested ragged dimensions differ "
                             f"({row_splits.dtype.name} and {values.row_splits.dtype.name}); use "
                             "with_row_splits_dtype to convert")
        if _validate:
            self._validate()

    def _validate(self):
        """Checks the row partition now where its values are known, else adds an op that checks it
        when it runs (TF's validate=True)."""
        splits = self._row_splits
        if splits.shape.rank not in (None, 1):
            raise ValueError(f"row_splits must be a vector, got shape {splits.shape}")
        n = _static_dim0(self._values)
        known = _known(splits)
        if known is not None:
            try:
                check_splits(np.asarray(known), nvals=n)
            except BadInput as e:
                raise errors.InvalidArgumentError(None, None, f"RaggedTensor: {e}") from None
        if known is None or n is None:
            self._row_splits = validate_splits(splits, _nrows_of(self._values, splits.dtype))

    # ---------------------------------------------------------------- factories
    @classmethod
    def _make(cls, values, splits, validate=True):
        return cls(values, splits, internal=True, _validate=validate)

    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True):
        """Row i is `values[row_splits[i]:row_splits[i + 1]]`."""
        with name_scope(name, "RaggedFromRowSplits"):
            values = _as_values(values)
            row_splits = _as_index(row_splits, "row_splits")
            return cls._make(values, row_splits, validate)

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True):
        """Row i holds the next `row_lengths[i]` values."""
        with name_scope(name, "RaggedFromRowLengths"):
            values = _as_values(values)
            lengths = _as_index(row_lengths, "row_lengths")
            if validate and isinstance(lengths, EagerTensor) and lengths.numpy().size \
                    and lengths.numpy().min() < 0:
                raise errors.InvalidArgumentError(None, None, "RaggedTensor: row_lengths must be non-negative")
            splits = join_ops.concat([convert_to_tensor([0], dtype=lengths.dtype),
                                      reduce_ops.cumsum(lengths)], 0)
            return cls._make(values, splits, validate)

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None, validate=True):
        """Value j belongs to row `value_rowids[j]` (sorted); `nrows` rows (default: last id + 1)."""
        with name_scope(name, "RaggedFromValueRowIds"):
            values = _as_values(values)
            rowids = _as_index(value_rowids, "value_rowids")
            if nrows is not None:
                nrows = _as_index(nrows, "nrows", rowids.dtype)
            splits = segment_ids_to_row_splits(rowids, nrows, out_type=rowids.dtype)
            return cls._make(values, splits, validate)

    @classmethod
    def from_row_starts(cls, values, row_starts, name=None, validate=True):
        with name_scope(name, "RaggedFromRowStarts"):
            values = _as_values(values)
            starts = _as_index(row_starts, "row_starts")
            n = cast_ops.cast(_nrows_of(values, dtypes.int64), starts.dtype)
            splits = join_ops.concat([starts, shape_ops.reshape(n, [1])], 0)
            return cls._make(values, splits, validate)

    @classmethod
    def from_row_limits(cls, values, row_limits, name=None, validate=True):
        with name_scope(name, "RaggedFromRowLimits"):
            values = _as_values(values)
            limits = _as_index(row_limits, "row_limits")
            splits = join_ops.concat([convert_to_tensor([0], dtype=limits.dtype), limits], 0)
            return cls._make(values, splits, validate)

    @classmethod
    def from_uniform_row_length(cls, values, uniform_row_length, nrows=None, validate=True, name=None):
        with name_scope(name, "RaggedFromUniformRowLength"):
            values = _as_values(values)
            width = _as_index(uniform_row_length, "uniform_row_length")
            nvals = cast_ops.cast(_nrows_of(values, dtypes.int64), width.dtype)
            if nrows is None:
                nrows = cw.floordiv(nvals, cw.maximum(width, convert_to_tensor(1, dtype=width.dtype)))
            nrows = _as_index(nrows, "nrows", width.dtype)
            splits = cw.multiply(range_(0, nrows + 1, dtype=width.dtype), width)
            return cls._make(values, splits, validate)

    @classmethod
    def from_nested_row_splits(cls, flat_values, nested_row_splits, name=None, validate=True):
        if isinstance(nested_row_splits, (Tensor, np.ndarray)):
            raise TypeError("nested_row_splits must be a list of Tensors")
        with name_scope(name, "RaggedFromNestedRowSplits"):
            result = flat_values
            for splits in reversed(list(nested_row_splits)):
                result = cls.from_row_splits(result, splits, validate=validate)
            return result

    @classmethod
    def from_nested_row_lengths(cls, flat_values, nested_row_lengths, name=None, validate=True):
        with name_scope(name, "RaggedFromNestedRowlengths"):
            result = flat_values
            for lengths in reversed(list(nested_row_lengths)):
                result = cls.from_row_lengths(result, lengths, validate=validate)
            return result

    @classmethod
    def from_nested_value_rowids(cls, flat_values, nested_value_rowids, nested_nrows=None, name=None,
                                 validate=True):
        nested_value_rowids = list(nested_value_rowids)
        nested_nrows = [None] * len(nested_value_rowids) if nested_nrows is None else list(nested_nrows)
        if len(nested_nrows) != len(nested_value_rowids):
            raise ValueError("nested_nrows must have the same length as nested_value_rowids")
        with name_scope(name, "RaggedFromNestedValueRowIds"):
            result = flat_values
            for rowids, nrows in reversed(list(zip(nested_value_rowids, nested_nrows))):
                result = cls.from_value_rowids(result, rowids, nrows, validate=validate)
            return result

    @classmethod
    def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank=1, name=None,
                    row_splits_dtype=dtypes.int64):
        """The ragged tensor of a dense one: each row of dimension 1 cut to `lengths[i]`, or to the
        position after its last element that is not `padding` (all of it, with neither)."""
        row_splits_dtype = dtypes.as_dtype(row_splits_dtype)
        if lengths is not None and padding is not None:
            raise ValueError("Specify lengths or padding, but not both")
        if not isinstance(ragged_rank, int) or ragged_rank < 1:
            raise ValueError(f"ragged_rank must be a positive integer, got {ragged_rank!r}")
        with name_scope(name, "RaggedFromTensor"):
            tensor = convert_to_tensor(tensor)
            rank = tensor.shape.rank
            if rank is not None and rank <= ragged_rank:
                raise ValueError(f"ragged_rank must be smaller than the rank of the tensor ({rank}), got "
                                 f"{ragged_rank}")
            if ragged_rank > 1:   # dimensions 0 and 1 merged; `lengths` are of the innermost rows
                dims = shape_ops.shape(tensor, out_type=row_splits_dtype)
                nrows, ncols = dims[0], dims[1]
                merged = shape_ops.reshape(tensor, join_ops.concat([shape_ops.reshape(nrows * ncols, [1]),
                                                                    dims[2:]], 0))
                inner = cls.from_tensor(merged, lengths, padding, ragged_rank - 1,
                                        row_splits_dtype=row_splits_dtype)
                splits = cw.multiply(range_(0, nrows + 1, dtype=row_splits_dtype), ncols)
                return cls._make(inner, splits, validate=False)
            dims = shape_ops.shape(tensor, out_type=row_splits_dtype)
            nrows, ncols = dims[0], dims[1]
            if lengths is None and padding is None:
                values = shape_ops.reshape(tensor, join_ops.concat([shape_ops.reshape(nrows * ncols, [1]),
                                                                    dims[2:]], 0))
                splits = cw.multiply(range_(0, nrows + 1, dtype=row_splits_dtype), ncols)
                return cls._make(values, splits, validate=False)
            positions = range_(0, ncols, dtype=row_splits_dtype)
            if padding is not None:
                padding = convert_to_tensor(padding, dtype=tensor.dtype)
                kept = cw.not_equal(tensor, padding)
                if rank is None or rank > 2:
                    axes = range_(2, shape_ops.rank(tensor))
                    kept = reduce_ops.reduce_any(kept, axes)
                # a row's length: one past its last element that is not padding
                lengths = reduce_ops.reduce_max(
                    cw.where_v2(kept, positions + 1, shape_ops.zeros_like(positions)), 1)
            else:
                lengths = _as_index(lengths, "lengths", row_splits_dtype)
                if lengths.shape.rank not in (None, 1):
                    raise ValueError(f"lengths must be a vector, got shape {lengths.shape}")
            # negative lengths count as 0, longer ones as the whole row (and a row of no columns,
            # whose reduce_max above is the dtype's lowest value, as 0)
            lengths = cw.minimum(cw.maximum(lengths, convert_to_tensor(0, dtype=row_splits_dtype)), ncols)
            mask = cw.less(shape_ops.reshape(positions, [1, -1]), shape_ops.reshape(lengths, [-1, 1]))
            values = sort_ops.boolean_mask(tensor, mask)
            splits = join_ops.concat([convert_to_tensor([0], dtype=row_splits_dtype),
                                      reduce_ops.cumsum(lengths)], 0)
            return cls._make(values, splits, validate=False)

    @classmethod
    def from_sparse(cls, st_input, name=None, row_splits_dtype=dtypes.int64):
        """The ragged tensor of a 2-D "ragged-right" SparseTensor (row-major indices, each row's
        values at columns 0, 1, ...; InvalidArgumentError otherwise): row i holds sparse row i."""
        row_splits_dtype = dtypes.as_dtype(row_splits_dtype)
        if not isinstance(st_input, SparseTensor):
            raise TypeError(f"st_input must be a SparseTensor, got {type(st_input).__name__}")
        rank = st_input.indices.shape.as_list()[1] if st_input.indices.shape.rank == 2 else None
        if rank is None:
            rank = st_input.dense_shape.shape.as_list()[0] if st_input.dense_shape.shape.rank == 1 else None
        if rank is None or rank != 2:
            raise ValueError("rank(st_input) must be 2.")
        with name_scope(name, "RaggedFromSparse"):
            rowids = cast_ops.cast(check_ragged_right(st_input.indices)[:, 0], row_splits_dtype)
            nrows = cast_ops.cast(st_input.dense_shape[0], row_splits_dtype)
            splits = segment_ids_to_row_splits(rowids, nrows, out_type=row_splits_dtype)
            return cls._make(st_input.values, splits, validate=False)

    # ---------------------------------------------------------------- structure (values, row_splits,
    # flat_values, nested_row_splits, ragged_rank and dtype come from RowPartitioned)
    @property
    def row_splits_dtype(self):
        return self._row_splits.dtype

    @property
    def shape(self):
        """[nrows, None (ragged), ..., the flat values' inner dimensions]."""
        n = self._row_splits.shape.as_list()[0] if self._row_splits.shape.rank == 1 else None
        nrows = None if n is None else n - 1
        inner = self._values.shape
        if inner.rank is None:
            return tensor_shape.unknown_shape()
        return tensor_shape.TensorShape([nrows, None]).concatenate(inner[1:])

    def get_shape(self):
        return self.shape

    @property
    def graph(self):
        return self._row_splits.graph

    @property
    def op(self):
        return self.flat_values.op

    def nrows(self, out_type=None, name=None):
        out_type = self._row_splits.dtype if out_type is None else dtypes.as_dtype(out_type)
        with name_scope(name, "RaggedNRows"):
            n = shape_ops.shape(self._row_splits, out_type=out_type)[0] - 1
            return n

    def row_lengths(self, axis=1, name=None):
        if axis == 0:
            return self.nrows()
        if axis != 1:
            if not isinstance(self._values, RaggedTensor):
                raise ValueError(f"axis={axis} out of bounds: expected 0 <= axis < 2 for a ragged tensor "
                                 "of ragged rank 1")
            return self.with_values(self._values.row_lengths(axis - 1))
        with name_scope(name, "RaggedRowLengths"):
            return self._row_splits[1:] - self._row_splits[:-1]

    def value_rowids(self, name=None):
        return row_splits_to_segment_ids(self._row_splits, name=name)

    def row_starts(self, name=None):
        return self._row_splits[:-1]

    def row_limits(self, name=None):
        return self._row_splits[1:]

    def nested_row_lengths(self, name=None):
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt.row_lengths())
            rt = rt.values
        return tuple(out)

    def nested_value_rowids(self, name=None):
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt.value_rowids())
            rt = rt.values
        return tuple(out)

    def bounding_shape(self, axis=None, name=None, out_type=None):
        """The smallest dense shape that holds every row: [nrows, longest row, ...]."""
        out_type = self._row_splits.dtype if out_type is None else dtypes.as_dtype(out_type)
        with name_scope(name, "RaggedBoundingBox"):
            dims = [cast_ops.cast(self.nrows(), out_type)]
            rt = self
            while isinstance(rt, RaggedTensor):
                lengths = rt.row_lengths()
                longest = reduce_ops.reduce_max(join_ops.concat([lengths, convert_to_tensor(
                    [0], dtype=lengths.dtype)], 0))
                dims.append(cast_ops.cast(longest, out_type))
                rt = rt.values
            inner = shape_ops.shape(rt, out_type=out_type)[1:]
            shape = join_ops.concat([join_ops.stack(dims), inner], 0)
            if axis is not None:
                return shape[axis]
            return shape

    def with_values(self, new_values):
        return RaggedTensor._make(new_values, self._row_splits, validate=False)

    def with_flat_values(self, new_values):
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    def with_row_splits_dtype(self, dtype):
        dtype = dtypes.as_dtype(dtype)
        if dtype not in _SPLITS:
            raise ValueError(f"dtype must be int32 or int64, got {dtype.name}")
        values = self._values
        if isinstance(values, RaggedTensor):
            values = values.with_row_splits_dtype(dtype)
        splits = self._row_splits if self._row_splits.dtype == dtype else cast_ops.cast(self._row_splits, dtype)
        return RaggedTensor._make(values, splits, validate=False)

    # ---------------------------------------------------------------- conversions
    def to_sparse(self, name=None):
        """The SparseTensor with an element at [row, position in row, ...] for every value."""
        with name_scope(name, "RaggedToSparse"):
            indices, values, dense_shape = apply_op("RaggedTensorToSparse", list(self.nested_row_splits),
                                                    self.flat_values)
            return SparseTensor(indices, values, dense_shape)

    def to_tensor(self, default_value=None, name=None, shape=None):
        """The dense tensor of bounding_shape() (or `shape`), short rows padded with `default_value`
        (0); rows or values beyond `shape` are dropped."""
        with name_scope(name, "RaggedToTensor"):
            sparse = self.to_sparse()
            dense_shape = sparse.dense_shape
            indices, values = sparse.indices, sparse.values
            if shape is not None:
                target = _shape_vector(shape, dense_shape)
                keep = reduce_ops.reduce_all(cw.less(indices, shape_ops.reshape(target, [1, -1])), 1)
                indices = sort_ops.boolean_mask(indices, keep)
                values = sort_ops.boolean_mask(values, keep)
                dense_shape = target
            # default_value: a scalar, or anything that broadcasts to the flat values' inner shape
            fill = convert_to_tensor(0 if default_value is None else default_value, dtype=self.dtype)
            base = shape_ops.broadcast_to(fill, dense_shape)
            out = scatter_ops.tensor_scatter_nd_update(base, indices, values)
            static = self.shape if shape is None else _static_shape(shape)
            if not context.executing_eagerly() and static.rank is not None and \
                    out.shape.is_compatible_with(static):
                out.set_shape(out.shape.merge_with(static))
            return out

    def to_list(self):
        """Nested Python lists of the values (eager only)."""
        if not context.executing_eagerly() or not isinstance(self.flat_values, EagerTensor):
            raise ValueError("RaggedTensor.to_list() is only supported in eager mode; in graph mode, "
                             "evaluate the RaggedTensor first and then use RaggedTensorValue.to_list().")
        return self.numpy_value().to_list()

    def numpy_value(self):
        return RaggedTensorValue(_eager_numpy(self._values), self._row_splits.numpy())

    def numpy(self):
        """An object array of the rows (each a NumPy array, or for nested rows another object array)."""
        return self.numpy_value().numpy()

    def _fetch_parts(self):
        """For Session.run: the tensors to fetch and how to rebuild the value from them."""
        splits = list(self.nested_row_splits)
        parts = splits + [self.flat_values]

        def build(values):
            rt = values[-1]
            for s in reversed(values[:-1]):
                rt = RaggedTensorValue(rt, s)
            return rt
        return parts, build

    def eval(self, feed_dict=None, session=None):
        session = session or context.get_default_session()
        return session.run(self, feed_dict)

    # ---------------------------------------------------------------- indexing
    def __getitem__(self, key):
        if isinstance(key, tuple):
            if not key:
                return self
            first, rest = key[0], key[1:]
            if isinstance(first, slice) and rest:
                raise ValueError("RaggedTensor indexing of inner dimensions after a slice of rows is not "
                                 "supported; index rows first")
            row = self[first]
            return row[rest] if rest else row
        if isinstance(key, slice):
            return self._row_slice(key)
        if isinstance(key, (Tensor, int, np.integer)):
            i = key
            if isinstance(i, (int, np.integer)) and i < 0:
                start, limit = self._row_splits[i - 1], self._row_splits[i]
            else:
                start, limit = self._row_splits[i], self._row_splits[i + 1]
            return self._values[start:limit]
        raise TypeError(f"RaggedTensor indices must be integers, slices or tuples of them, not "
                        f"{type(key).__name__}")

    def _row_slice(self, key):
        """Rows a:b (Python's clipping of a slice's bounds; no step)."""
        if key.step not in (None, 1):
            raise ValueError("RaggedTensor row slices with a step are not supported")
        n = self._row_splits.shape.as_list()[0] if self._row_splits.shape.rank == 1 else None
        if n is not None and not isinstance(key.start, Tensor) and not isinstance(key.stop, Tensor):
            a, b, _ = key.indices(n - 1)
            b = max(a, b)
        else:
            a, b = _clip_bound(key.start, 0, self.nrows()), _clip_bound(key.stop, None, self.nrows())
            b = cw.maximum(b, a)
        sub = self._row_splits[a:b + 1]
        start, end = sub[0], sub[-1]
        return RaggedTensor._make(self._values[start:end], sub - start, validate=False)

    # ---------------------------------------------------------------- elementwise operators
    def _binary(self, other, fn, reverse=False):
        if isinstance(other, RaggedTensor):
            check_same_partition(self, other)
            a, b = self.flat_values, other.flat_values
        else:
            other = convert_to_tensor(other, dtype=self.dtype) if not isinstance(other, Tensor) else other
            if other.shape.rank not in (0,):
                raise ValueError("RaggedTensor elementwise ops take a scalar or a RaggedTensor with the same "
                                 f"row partition; got a tensor of shape {other.shape}")
            a, b = self.flat_values, other
        if reverse:
            a, b = b, a
        return self.with_flat_values(fn(a, b))

    __hash__ = None

    def __bool__(self):
        raise TypeError("A RaggedTensor has no truth value")

    def __repr__(self):
        if isinstance(self.flat_values, EagerTensor):
            return f"<sf.RaggedTensor {self.to_list()}>"
        return f"sf.RaggedTensor(values={self._values!r}, row_splits={self._row_splits!r})"

    __str__ = __repr__


def _operator(fn, reverse=False):
    return lambda self, other: self._binary(other, fn, reverse)


for _name, _fn in (("add", cw.add), ("sub", cw.subtract), ("mul", cw.multiply), ("truediv", cw.truediv),
                   ("floordiv", cw.floordiv), ("mod", cw.floormod), ("pow", cw.pow), ("and", cw.logical_and),
                   ("or", cw.logical_or), ("xor", cw.logical_xor)):
    setattr(RaggedTensor, f"__{_name}__", _operator(_fn))
    setattr(RaggedTensor, f"__r{_name}__", _operator(_fn, True))
for _name, _fn in (("lt", cw.less), ("le", cw.less_equal), ("gt", cw.greater), ("ge", cw.greater_equal)):
    setattr(RaggedTensor, f"__{_name}__", _operator(_fn))
for _name, _fn in (("neg", cw.negative), ("abs", cw.abs), ("invert", cw.logical_not)):
    setattr(RaggedTensor, f"__{_name}__", lambda self, fn=_fn: self.with_flat_values(fn(self.flat_values)))


def _eager_numpy(values):
    if isinstance(values, RaggedTensor):
        return values.numpy_value()
    return values.numpy()


def _as_values(values):
    if isinstance(values, (RaggedTensor, Tensor)):
        return values
    if isinstance(values, RaggedTensorValue):
        return RaggedTensor.from_row_splits(values.values, values.row_splits, validate=False)
    return convert_to_tensor(values)


def _shape_vector(shape, like):
    if isinstance(shape, tensor_shape.TensorShape):
        shape = shape.as_list()
    if isinstance(shape, (list, tuple)):
        parts = [like[i] if d is None or (isinstance(d, int) and d < 0) else
                 convert_to_tensor(d, dtype=dtypes.int64) for i, d in enumerate(shape)]
        return join_ops.stack([cast_ops.cast(p, dtypes.int64) for p in parts])
    return cast_ops.cast(convert_to_tensor(shape), dtypes.int64)


def _clip_bound(i, default, n):
    """A slice bound as a tensor in [0, n] (None: `default`, or n); negative counts from n."""
    if i is None:
        return n if default is None else cast_ops.cast(convert_to_tensor(default), n.dtype)
    i = cast_ops.cast(convert_to_tensor(i), n.dtype)
    i = cw.where_v2(cw.less(i, shape_ops.zeros_like(i)), i + n, i)
    return cw.minimum(cw.maximum(i, shape_ops.zeros_like(i)), n)


def _static_shape(shape):
    """What a to_tensor `shape` argument says statically (None or a negative size: unknown)."""
    if isinstance(shape, tensor_shape.TensorShape):
        return shape
    if isinstance(shape, (list, tuple)):
        return tensor_shape.TensorShape([d if isinstance(d, (int, np.integer)) and d >= 0 else None for d in shape])
    return tensor_shape.unknown_shape()


def _known(t):
    return t.numpy() if isinstance(t, EagerTensor) else tensor_util.constant_value(t)


def check_same_partition(a, b, depth=None):
    """Raises InvalidArgumentError where the (first `depth`) row partitions of ragged tensors a and
    b are known and differ; ValueError where their ragged ranks differ (depth None)."""
    sa, sb = a.nested_row_splits, b.nested_row_splits
    if depth is None and len(sa) != len(sb):
        raise ValueError(f"RaggedTensors of ragged rank {len(sa)} and {len(sb)} cannot be combined elementwise")
    for x, y in list(zip(sa, sb))[:depth]:
        if x is y:
            continue
        kx, ky = _known(x), _known(y)
        if kx is not None and ky is not None and (np.shape(kx) != np.shape(ky) or not np.array_equal(kx, ky)):
            raise errors.InvalidArgumentError(None, None, "Inputs must have identical ragged splits")

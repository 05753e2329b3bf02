"""`constant` and `constant_value` (TF's `ragged_factory_ops`): a RaggedTensor, or its NumPy value,
from nested Python lists."""
import numpy as np

from segflow._core import dtypes
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._ops import shape as shape_ops
from segflow._ops.ragged import RaggedTensor
from segflow._ops.ragged_value import RaggedTensorValue

__all__ = ["constant", "constant_value"]


def _nested(x):
    return isinstance(x, (list, tuple)) or (isinstance(x, np.ndarray) and x.ndim > 0)


def _depth(x):
    return 1 + max((_depth(e) for e in x), default=0) if _nested(x) else 0


def _scalar_depths(x, d, out):
    if _nested(x):
        for e in x:
            _scalar_depths(e, d + 1, out)
    else:
        out.add(d)


def _ragged_parts(pylist, ragged_rank, inner_shape):
    """(the flat values as a list, the nested splits as int lists, inner_shape) of `pylist`."""
    depths = set()
    _scalar_depths(pylist, 0, depths)
    max_depth = _depth(pylist)
    if len(depths) > 1 or (depths and depths != {max_depth}):
        raise ValueError(f"all scalar values must have the same nesting depth, got depths {sorted(depths)}")
    scalar_depth = depths.pop() if depths else None
    if ragged_rank is not None and (not isinstance(ragged_rank, (int, np.integer)) or ragged_rank < 0):
        raise ValueError(f"ragged_rank must be a non-negative integer, got {ragged_rank!r}")
    inner_rank = None if inner_shape is None else len(inner_shape)
    if ragged_rank is None:
        ragged_rank = max(1, max_depth - 1 - (inner_rank or 0) if scalar_depth is not None else max_depth - 1)
    if inner_rank is None:
        inner_rank = max(0, max_depth - 1 - ragged_rank)
    if scalar_depth is not None and scalar_depth <= ragged_rank:
        raise ValueError(f"pylist has scalar values at depth {scalar_depth}, but ragged_rank={ragged_rank} needs "
                         f"them at a depth greater than {ragged_rank}")
    level, splits = [pylist], []
    for _ in range(ragged_rank + 1):
        row_splits, nxt = [0], []
        for row in level:
            if not _nested(row):
                raise ValueError(f"pylist is not nested deeply enough for ragged_rank={ragged_rank}")
            nxt.extend(row)
            row_splits.append(len(nxt))
        splits.append(row_splits)
        level = nxt
    # the first level is the single-row wrapper added above
    return level, splits[1:], inner_rank, inner_shape


def _flat_array(flat, inner_shape, inner_rank, dtype):
    """The flat values as one NumPy array of shape [len(flat)] + inner shape."""
    if not flat:
        shape = [0] + list(inner_shape if inner_shape is not None else [0] * inner_rank)
        return np.zeros(shape, dtype if dtype is not None else np.float32)
    try:
        arr = np.array(flat, dtype=dtype)
    except ValueError:
        raise ValueError("the inner values of pylist have inconsistent shapes") from None
    if arr.dtype == object:
        raise ValueError("the inner values of pylist have inconsistent shapes")
    if inner_shape is not None and list(arr.shape[1:]) != list(inner_shape):
        want = [len(flat)] + list(inner_shape)
        if arr.size != int(np.prod(want)):
            raise ValueError(f"the inner values of pylist have shape {list(arr.shape[1:])}, which does not fit "
                             f"inner_shape {list(inner_shape)}")
        arr = arr.reshape(want)
    return arr


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None, row_splits_dtype=dtypes.int64):
    """A RaggedTensor from nested Python lists: `constant([[1, 2], [3]])` has rows [1, 2] and [3].

    The last `len(inner_shape)` dimensions are uniform (each flat value an array of that shape);
    the others, but the first, are ragged. A pylist with no nesting gives a plain tensor.
    Raises ValueError for inconsistent nesting (scalars at different depths).
    """
    row_splits_dtype = dtypes.as_dtype(row_splits_dtype)
    if isinstance(pylist, RaggedTensorValue):
        pylist = pylist.to_list()
    with name_scope(name, "RaggedConstant"):
        if _depth(pylist) == 0:
            return convert_to_tensor(pylist, dtype=dtype)
        flat, splits, inner_rank, inner_shape = _ragged_parts(pylist, ragged_rank, inner_shape)
        np_dtype = None if dtype is None else dtypes.as_dtype(dtype).as_numpy_dtype
        arr = _flat_array(flat, inner_shape, inner_rank, np_dtype)     # checks the inner shapes
        if flat:   # Python values take convert_to_tensor's default dtypes (int32, float32)
            values = convert_to_tensor(flat, dtype=dtype)
            if values.shape.as_list() != list(arr.shape):
                values = shape_ops.reshape(values, list(arr.shape))
        else:
            values = convert_to_tensor(arr)
        nested = [convert_to_tensor(np.asarray(s, row_splits_dtype.as_numpy_dtype)) for s in splits]
        return RaggedTensor.from_nested_row_splits(values, nested, validate=False)


def constant_value(pylist, dtype=None, ragged_rank=None, inner_shape=None, row_splits_dtype="int64"):
    """constant() as a RaggedTensorValue of NumPy arrays (NumPy's default dtypes: int64, float64)."""
    np_dtype = None if dtype is None else dtypes.as_dtype(dtype).as_numpy_dtype
    if _depth(pylist) == 0:
        return np.asarray(pylist, np_dtype)
    flat, splits, inner_rank, inner_shape = _ragged_parts(pylist, ragged_rank, inner_shape)
    out = _flat_array(flat, inner_shape, inner_rank, np_dtype if flat or np_dtype else np.float64)
    splits_dtype = dtypes.as_dtype(row_splits_dtype).as_numpy_dtype
    for s in reversed(splits):
        out = RaggedTensorValue(out, np.asarray(s, splits_dtype))
    return out

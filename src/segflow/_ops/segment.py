"""The segment-reduction family: unsorted, sorted and sparse segment reductions.

Each op is one `register_op` call; kin ops share an inference function and differ in name and
kernel (kernels/segment/). Gradients are in segment_grad.py.

- Unsorted (UnsortedSegment{Sum,Prod,Max,Min,Mean,SqrtN}): ids of any shape that is a prefix of
  data's shape, in any order; negative ids drop their rows; `num_segments` output rows.
- Sorted (Segment{Sum,Prod,Max,Min,Mean}): 1-D ids, one per row of data, non-decreasing and
  non-negative; last id + 1 output rows.
- Sparse (SparseSegment{Sum,Mean,SqrtN}[WithNumSegments]): rows data[indices[i]] reduced by sorted
  segment_ids[i]; the *Grad ops are their gradients (each the other's adjoint, so they differentiate
  to any order).

Empty segments hold: 0 (sum, mean, sqrt_n; sorted max/min), 1 (prod), the dtype's lowest finite
value (unsorted max) or highest finite value (unsorted min) - TensorFlow's rules.
"""

from __future__ import annotations

from typing import Optional
from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core import fold as tensor_util
from segflow._core.apply import apply_op
from segflow._core.memory import check_alloc
from segflow._core.registry import TensorSpec, hooks, register_op
from segflow._core.tensor import Tensor
from segflow.kernels import segment
from segflow._core.typing import GradientLike, IntLike, Name, TensorLike

__all__ = [
    "unsorted_segment_sum", "unsorted_segment_prod", "unsorted_segment_max", "unsorted_segment_min",
    "unsorted_segment_mean", "unsorted_segment_sqrt_n",
    "segment_sum", "segment_prod", "segment_max", "segment_min", "segment_mean",
    "sparse_segment_sum", "sparse_segment_mean", "sparse_segment_sqrt_n",
    "sparse_segment_sum_with_num_segments", "sparse_segment_mean_with_num_segments",
    "sparse_segment_sqrt_n_with_num_segments",
]

_SUM_TYPES = dtypes.NUMERIC                       # sum, prod, mean: floats, ints, uints, complex
_EXTREME_TYPES = dtypes.REAL_NUMERIC              # max, min
_SQRT_N_TYPES = dtypes.FLOATING + dtypes.COMPLEX  # sqrt_n (TF's sqrt refuses integers)
_SPARSE_SUM_TYPES = dtypes.REAL_NUMERIC           # TF's SparseSegmentSum: real numbers
_SPARSE_MEAN_TYPES = dtypes.FLOATING              # TF's SparseSegmentMean / SqrtN: floats
_UNSORTED_IDS = (dtypes.int16,) + dtypes.INDEX    # TF's unsorted ops take int16 segment ids too
# TF's sparse ops convert Python lists of indices and segment ids as int32 (their attrs' default),
# so `indices=[]` is an empty int32 vector, not float32.
_SPARSE_ID_HINTS = {"_dtype_hints": {1: dtypes.int32, 2: dtypes.int32}}


def _sparse_hints(indices, segment_ids):
    return {} if isinstance(indices, Tensor) and isinstance(segment_ids, Tensor) else _SPARSE_ID_HINTS


# ----------------------------------------------------------------------------------------------
# Inference


def static_count(op, t, name):
    """The value of a scalar count input (int, or None until run time); checks dtype and rank."""
    if t.dtype not in dtypes.INDEX:
        raise errors.invalid_input(op, name, f"must be int32 or int64, not {t.dtype.name}")
    if t.shape.rank not in (None, 0):
        raise errors.invalid_input(op, name, f"must be a scalar, got shape {t.shape}")
    n = tensor_util.constant_value(t)
    if n is None:
        return None
    n = int(n)
    if n < 0:
        raise errors.invalid_input(op, name, f"Cannot specify a negative value for {name}: {name} = {n} must not "
                                             "be negative")
    return n


def _tail(data, lead):
    return data.shape.as_list()[lead:]


def _unsorted_output_dtype(op, data):
    """data's dtype; for the mean of integers, the float dtype of TF's true division sum / count."""
    if op.type == "UnsortedSegmentMean" and data.dtype.is_integer:
        return dtypes.from_numpy(segment.true_division_dtype(data.dtype.np))
    return data.dtype


def _infer_unsorted_segment(op, data, segment_ids, num_segments):
    if segment_ids.dtype not in _UNSORTED_IDS:
        raise errors.invalid_input(op, "segment_ids", f"must be int16, int32 or int64, not {segment_ids.dtype.name}")
    if not tensor_shape.is_prefix(segment_ids.shape, data.shape):
        raise errors.invalid_input(op, "segment_ids", f"shape {segment_ids.shape} is not a prefix of data's "
                                   f"shape {data.shape}")
    rows = static_count(op, num_segments, "num_segments")
    dtype = _unsorted_output_dtype(op, data)
    if data.shape.rank is None or segment_ids.shape.rank is None:
        return [TensorSpec(dtype, tensor_shape.unknown_shape())]
    return [TensorSpec(dtype, [rows] + _tail(data, segment_ids.shape.rank))]


def _sorted_rows(segment_ids):
    """The static row count of a sorted or sparse segment op without num_segments: unknown, as
    TF's shape function says (the rows come from the last id when the op runs), except for an
    empty id vector (0 rows)."""
    return 0 if segment_ids.shape.rank == 1 and segment_ids.shape.as_list() == [0] else None


def _check_rows_input(op, data, name="data"):
    if data.shape.rank == 0:
        raise errors.invalid_input(op, name, f"Shape must be at least rank 1 but is rank 0: {name} is a scalar, "
                                             "but segments are taken along its first dimension")


def _infer_sorted_segment(op, data, segment_ids):
    if segment_ids.dtype not in dtypes.INDEX:
        raise errors.invalid_input(op, "segment_ids", f"must be int32 or int64, not {segment_ids.dtype.name}")
    _check_rows_input(op, data)
    if segment_ids.shape.rank not in (None, 1):
        raise errors.invalid_input(op, "segment_ids", f"must be 1-D, got shape {segment_ids.shape}")
    # A length of segment_ids that differs from data's first dimension is refused when the op runs
    # ("segment_ids should be the same size as dimension 0 of data"), as TF's shape function leaves it.
    if data.shape.rank is None:
        return [TensorSpec(data.dtype, tensor_shape.unknown_shape())]
    return [TensorSpec(data.dtype, [_sorted_rows(segment_ids)] + _tail(data, 1))]


def _check_sparse_index_inputs(op, indices, segment_ids):
    for name, t in (("indices", indices), ("segment_ids", segment_ids)):
        if t.dtype not in dtypes.INDEX:
            raise errors.invalid_input(op, name, f"must be int32 or int64, not {t.dtype.name}")
        if t.shape.rank not in (None, 1):
            raise errors.invalid_input(op, name, f"must be 1-D, got shape {t.shape}")
    if indices.shape.rank == 1 and segment_ids.shape.rank == 1:
        a, b = indices.shape.as_list()[0], segment_ids.shape.as_list()[0]
        if a is not None and b is not None and a != b:
            raise errors.invalid_input(op, "segment_ids", f"shape {segment_ids.shape} must be 1-D and equal to "
                                       f"indices shape {indices.shape}")


def _infer_sparse_segment(op, data, indices, segment_ids, num_segments=None, sparse_gradient=False):
    _check_rows_input(op, data)
    _check_sparse_index_inputs(op, indices, segment_ids)
    if num_segments is not None:
        rows = static_count(op, num_segments, "num_segments")
    else:
        rows = _sorted_rows(segment_ids)
    if data.shape.rank is None:
        return [TensorSpec(data.dtype, tensor_shape.unknown_shape())]
    return [TensorSpec(data.dtype, [rows] + _tail(data, 1))]


def _infer_sparse_segment_grad(op, grad, indices, segment_ids, output_dim0):
    _check_rows_input(op, grad, "grad")
    _check_sparse_index_inputs(op, indices, segment_ids)
    rows = static_count(op, output_dim0, "output_dim0")
    if grad.shape.rank is None:
        return [TensorSpec(grad.dtype, tensor_shape.unknown_shape())]
    return [TensorSpec(grad.dtype, [rows] + _tail(grad, 1))]


# ----------------------------------------------------------------------------------------------
# Op definitions


# The kernels refuse an output too large for memory (check_alloc: ResourceExhaustedError) before
# allocating it, once its element count is known to fit in int64.


def _unsorted_kernel(kind):
    def kernel(data, segment_ids, num_segments):
        return segment.unsorted_segment_reduce(kind, data, segment_ids, num_segments, check_alloc=check_alloc)
    kernel.__name__ = f"unsorted_segment_{kind}"
    return kernel


def _sorted_kernel(kind):
    def kernel(data, segment_ids):
        return segment.sorted_segment_reduce(kind, data, segment_ids, check_alloc=check_alloc)
    kernel.__name__ = f"segment_{kind}"
    return kernel


def _sparse_kernel(kind):
    def kernel(data, indices, segment_ids, num_segments=None, sparse_gradient=False):
        return segment.sparse_segment_reduce(kind, data, indices, segment_ids, num_segments, check_alloc=check_alloc)
    kernel.__name__ = f"sparse_segment_{kind}"
    return kernel


def _sparse_grad_kernel(kind):
    def kernel(grad, indices, segment_ids, output_dim0):
        return segment.sparse_segment_grad(kind, grad, indices, segment_ids, output_dim0)
    kernel.__name__ = f"sparse_segment_{kind}_grad"
    return kernel


def _sparse_grad_v2_kernel(kind):
    def kernel(grad, indices, segment_ids, dense_output_dim0):
        return segment.sparse_segment_grad_v2(kind, grad, indices, segment_ids, dense_output_dim0)
    kernel.__name__ = f"sparse_segment_{kind}_grad_v2"
    return kernel


def _infer_sparse_segment_grad_v2(op, grad, indices, segment_ids, dense_output_dim0):
    _check_rows_input(op, grad, "grad")
    _check_sparse_index_inputs(op, indices, segment_ids)
    tail = tensor_shape.unknown_shape() if grad.shape.rank is None else [None] + _tail(grad, 1)
    return [TensorSpec(grad.dtype, tail), TensorSpec(indices.dtype, [None])]


for _name, _kind, _types in (("UnsortedSegmentSum", "sum", _SUM_TYPES),
                             ("UnsortedSegmentProd", "prod", _SUM_TYPES),
                             ("UnsortedSegmentMax", "max", _EXTREME_TYPES),
                             ("UnsortedSegmentMin", "min", _EXTREME_TYPES),
                             ("UnsortedSegmentMean", "mean", _SUM_TYPES),
                             ("UnsortedSegmentSqrtN", "sqrt_n", _SQRT_N_TYPES)):
    register_op(_name, inputs=("data", "segment_ids", "num_segments"),
                attrs={"T": "data", "Tindices": "segment_ids", "Tnumsegments": "num_segments"},
                allowed={"T": _types, "Tindices": _UNSORTED_IDS, "Tnumsegments": dtypes.INDEX},
                infer=_infer_unsorted_segment, kernel=_unsorted_kernel(_kind))

for _name, _kind, _types in (("SegmentSum", "sum", _SUM_TYPES),
                             ("SegmentProd", "prod", _SUM_TYPES),
                             ("SegmentMax", "max", _EXTREME_TYPES),
                             ("SegmentMin", "min", _EXTREME_TYPES),
                             ("SegmentMean", "mean", _SUM_TYPES)):
    register_op(_name, inputs=("data", "segment_ids"),
                attrs={"T": "data", "Tindices": "segment_ids"},
                allowed={"T": _types, "Tindices": dtypes.INDEX},
                infer=_infer_sorted_segment, kernel=_sorted_kernel(_kind))

for _name, _kind, _types in (("SparseSegmentSum", "sum", _SPARSE_SUM_TYPES),
                             ("SparseSegmentMean", "mean", _SPARSE_MEAN_TYPES),
                             ("SparseSegmentSqrtN", "sqrt_n", _SPARSE_MEAN_TYPES)):
    register_op(_name, inputs=("data", "indices", "segment_ids"),
                attrs={"T": "data", "Tidx": "indices", "Tsegmentids": "segment_ids"},
                allowed={"T": _types, "Tidx": dtypes.INDEX, "Tsegmentids": dtypes.INDEX},
                infer=_infer_sparse_segment, kernel=_sparse_kernel(_kind), defaults={"sparse_gradient": False})
    register_op(_name + "WithNumSegments", inputs=("data", "indices", "segment_ids", "num_segments"),
                attrs={"T": "data", "Tidx": "indices", "Tsegmentids": "segment_ids",
                       "Tnumsegments": "num_segments"},
                allowed={"T": _types, "Tidx": dtypes.INDEX, "Tsegmentids": dtypes.INDEX, "Tnumsegments": dtypes.INDEX},
                infer=_infer_sparse_segment, kernel=_sparse_kernel(_kind), defaults={"sparse_gradient": False})
    # The gradient w.r.t. data: out[indices[i]] += grad[segment_ids[i]] * scale_i.
    register_op(_name + "Grad", inputs=("grad", "indices", "segment_ids", "output_dim0"),
                attrs={"T": "grad", "Tidx": "indices", "Tsegmentids": "segment_ids", "Tdim": "output_dim0"},
                allowed={"T": _types, "Tidx": dtypes.INDEX, "Tsegmentids": dtypes.INDEX, "Tdim": dtypes.INDEX},
                infer=_infer_sparse_segment_grad, kernel=_sparse_grad_kernel(_kind))
    # The same, kept sparse: (values, sorted unique indices).
    register_op(_name + "GradV2", inputs=("grad", "indices", "segment_ids", "dense_output_dim0"),
                attrs={"T": "grad", "Tidx": "indices", "Tsegmentids": "segment_ids"},
                allowed={"T": _types, "Tidx": dtypes.INDEX, "Tsegmentids": dtypes.INDEX},
                infer=_infer_sparse_segment_grad_v2, kernel=_sparse_grad_v2_kernel(_kind), num_outputs=2)


# ----------------------------------------------------------------------------------------------
# Unsorted segment reductions


def unsorted_segment_sum(data: TensorLike, segment_ids: TensorLike, num_segments: IntLike, name: Name = None) -> Tensor:
    """Adds up the rows of `data` that share a segment id: out[j] = sum of data[i] with ids[i] == j.

    Args:
      data: tensor of any numeric dtype (floats, ints, uints, complex) whose leading dimensions
        have the shape of `segment_ids`.
      segment_ids: int16, int32 or int64 ids of any shape that is a prefix of `data.shape`, in any
        order; rows with a negative id are dropped (and get a zero gradient).
      num_segments: number of output rows: a Python int, NumPy integer or 0-D int32/int64 tensor
        (may be known only at run time).
    Returns:
      `data.dtype`, shape `[num_segments] + data.shape[segment_ids.ndim:]`; empty segments hold 0.
    Raises:
      InvalidArgumentError: an id >= num_segments (naming its position and value), a negative
        num_segments, ids whose shape is not a prefix of data's, or an unsupported dtype.
    """
    return apply_op("UnsortedSegmentSum", data, segment_ids, num_segments, name=name)


def unsorted_segment_prod(data: TensorLike, segment_ids: TensorLike, num_segments: IntLike,
                          name: Name = None) -> Tensor:
    """Multiplies the rows of `data` that share a segment id.

    Args:
      data: tensor of any numeric dtype whose leading dimensions have the shape of `segment_ids`.
      segment_ids: int32 or int64 ids of any shape that is a prefix of `data.shape`, in any order;
        negative ids are dropped.
      num_segments: number of output rows (int or 0-D int32/int64 tensor).
    Returns:
      `data.dtype`, shape `[num_segments] + data.shape[segment_ids.ndim:]`; empty segments hold 1.
    Raises:
      InvalidArgumentError: an id >= num_segments, a negative num_segments, bad shapes or dtypes.
    """
    return apply_op("UnsortedSegmentProd", data, segment_ids, num_segments, name=name)


def unsorted_segment_max(data: TensorLike, segment_ids: TensorLike, num_segments: IntLike, name: Name = None) -> Tensor:
    """The elementwise maximum of the rows of `data` that share a segment id.

    Args:
      data: tensor of a real dtype (floats, ints, uints) whose leading dimensions have the shape
        of `segment_ids`.
      segment_ids: int32 or int64 ids of any shape that is a prefix of `data.shape`, in any order;
        negative ids are dropped.
      num_segments: number of output rows (int or 0-D int32/int64 tensor).
    Returns:
      `data.dtype`, shape `[num_segments] + data.shape[segment_ids.ndim:]`; empty segments hold the
      lowest finite value of the dtype (e.g. -3.4028235e38 for float32). The gradient is split
      equally among tied maxima.
    Raises:
      InvalidArgumentError: an id >= num_segments, a negative num_segments, bad shapes or dtypes.
    """
    return apply_op("UnsortedSegmentMax", data, segment_ids, num_segments, name=name)


def unsorted_segment_min(data: TensorLike, segment_ids: TensorLike, num_segments: IntLike, name: Name = None) -> Tensor:
    """The elementwise minimum of the rows of `data` that share a segment id.

    Args:
      data: tensor of a real dtype whose leading dimensions have the shape of `segment_ids`.
      segment_ids: int32 or int64 ids of any shape that is a prefix of `data.shape`, in any order;
        negative ids are dropped.
      num_segments: number of output rows (int or 0-D int32/int64 tensor).
    Returns:
      `data.dtype`, shape `[num_segments] + data.shape[segment_ids.ndim:]`; empty segments hold the
      highest finite value of the dtype. The gradient is split equally among tied minima.
    Raises:
      InvalidArgumentError: an id >= num_segments, a negative num_segments, bad shapes or dtypes.
    """
    return apply_op("UnsortedSegmentMin", data, segment_ids, num_segments, name=name)


def unsorted_segment_mean(data: TensorLike, segment_ids: TensorLike, num_segments: IntLike,
                          name: Name = None) -> Tensor:
    """The mean of the rows of `data` that share a segment id: sum / count.

    Args:
      data: numeric tensor whose leading dimensions have the shape of `segment_ids`.
      segment_ids: int16, int32 or int64 ids of any shape that is a prefix of `data.shape`, in any
        order; negative ids are dropped (not counted).
      num_segments: number of output rows (int or 0-D int32/int64 tensor).
    Returns:
      shape `[num_segments] + data.shape[segment_ids.ndim:]`; empty segments hold 0. The dtype is
      `data.dtype`, except for integer data: TF computes `sum / count` with true division, so the
      mean of int8/int16/uint8/uint16 is float32 and of wider integers float64 (the sum wraps in
      data's dtype first, as TF's does).
    Raises:
      InvalidArgumentError: an id >= num_segments, a negative num_segments, bad shapes or dtypes.
    """
    return apply_op("UnsortedSegmentMean", data, segment_ids, num_segments, name=name)


def unsorted_segment_sqrt_n(data: TensorLike, segment_ids: TensorLike, num_segments: IntLike,
                            name: Name = None) -> Tensor:
    """The sum of the rows of `data` that share a segment id divided by sqrt(count).

    Args:
      data: floating or complex tensor whose leading dimensions have the shape of `segment_ids`.
      segment_ids: int32 or int64 ids of any shape that is a prefix of `data.shape`, in any order;
        negative ids are dropped (not counted).
      num_segments: number of output rows (int or 0-D int32/int64 tensor).
    Returns:
      `data.dtype`, shape `[num_segments] + data.shape[segment_ids.ndim:]`; empty segments hold 0.
    Raises:
      InvalidArgumentError: an id >= num_segments, a negative num_segments, bad shapes or dtypes.
    """
    return apply_op("UnsortedSegmentSqrtN", data, segment_ids, num_segments, name=name)


# ----------------------------------------------------------------------------------------------
# Sorted segment reductions

# The sorted and sparse ops share their Args/Returns/Raises text; each docstring gets it in place
# of this marker (help() and the docs show the full text).
_SHARED = "<Args, Returns, Raises: filled in from the family's text below>"
_SORTED_ARGS = """Args:
      data: tensor of at least one dimension.
      segment_ids: 1-D int32 or int64 ids, one per row of `data` (length `data.shape[0]`),
        non-decreasing and non-negative; gaps make empty segments.
    Returns:
      `data.dtype`, shape `[segment_ids[-1] + 1] + data.shape[1:]` (0 rows when data is empty);
      {empty}.
    Raises:
      InvalidArgumentError: decreasing ids ("segment ids are not increasing", naming the position),
        a negative id, a length that differs from data's first dimension, or a bad dtype."""


def segment_sum(data: TensorLike, segment_ids: TensorLike, name: Name = None) -> Tensor:
    """Adds up the rows of `data` by sorted segment id (any numeric dtype).

    <Args, Returns, Raises: filled in from the family's text below>
    """
    return apply_op("SegmentSum", data, segment_ids, name=name)


def segment_prod(data: TensorLike, segment_ids: TensorLike, name: Name = None) -> Tensor:
    """Multiplies the rows of `data` by sorted segment id (any numeric dtype).

    <Args, Returns, Raises: filled in from the family's text below>
    """
    return apply_op("SegmentProd", data, segment_ids, name=name)


def segment_max(data: TensorLike, segment_ids: TensorLike, name: Name = None) -> Tensor:
    """The elementwise maximum of the rows of `data` by sorted segment id (real dtypes).

    <Args, Returns, Raises: filled in from the family's text below>
    """
    return apply_op("SegmentMax", data, segment_ids, name=name)


def segment_min(data: TensorLike, segment_ids: TensorLike, name: Name = None) -> Tensor:
    """The elementwise minimum of the rows of `data` by sorted segment id (real dtypes).

    <Args, Returns, Raises: filled in from the family's text below>
    """
    return apply_op("SegmentMin", data, segment_ids, name=name)


def segment_mean(data: TensorLike, segment_ids: TensorLike, name: Name = None) -> Tensor:
    """The mean of the rows of `data` by sorted segment id (any numeric dtype; for integers the
    sum divided by the count truncating toward zero, in data's dtype, as TF's SegmentMean).

    <Args, Returns, Raises: filled in from the family's text below>
    """
    return apply_op("SegmentMean", data, segment_ids, name=name)


for _fn, _empty in ((segment_sum, "empty segments hold 0"), (segment_prod, "empty segments hold 1"),
                    (segment_max, "empty segments hold 0 (unlike unsorted_segment_max); the gradient "
                                  "is split equally among tied maxima"),
                    (segment_min, "empty segments hold 0 (unlike unsorted_segment_min); the gradient "
                                  "is split equally among tied minima"),
                    (segment_mean, "empty segments hold 0")):
    _fn.__doc__ = _fn.__doc__.replace(_SHARED, _SORTED_ARGS.replace("{empty}", _empty))


# ----------------------------------------------------------------------------------------------
# Sparse segment reductions

_SPARSE_ARGS = """Args:
      data: tensor of at least one dimension ({dtypes}).
      indices: 1-D int32 or int64 rows of `data` to read, each in [0, data.shape[0]); may repeat.
      segment_ids: 1-D int32 or int64 ids as long as `indices`, non-decreasing and non-negative
        (below `num_segments` when given).
      num_segments: optional number of output rows (int or 0-D int32/int64 tensor); default
        `segment_ids[-1] + 1`.
    Returns:
      `data.dtype`, shape `[num_segments] + data.shape[1:]`; row j reduces data[indices[i]] over
      the i with segment_ids[i] == j; empty segments hold 0.
    Raises:
      InvalidArgumentError: an index out of range, decreasing or negative ids, an id >=
        num_segments, lengths that differ, or a bad dtype."""


def sparse_segment_sum(data: TensorLike, indices: TensorLike, segment_ids: TensorLike, name: Name = None,
                       num_segments: Optional[IntLike] = None, sparse_gradient: bool = False) -> Tensor:
    """Sums rows of `data` picked by `indices`, by sorted segment id.

    <Args, Returns, Raises: filled in from the family's text below>
    """
    if num_segments is not None:
        return sparse_segment_sum_with_num_segments(data, indices, segment_ids, num_segments, name=name,
                                                    sparse_gradient=sparse_gradient)
    return apply_op("SparseSegmentSum", data, indices, segment_ids, sparse_gradient=bool(sparse_gradient), name=name,
                    **_sparse_hints(indices, segment_ids))


def sparse_segment_mean(data: TensorLike, indices: TensorLike, segment_ids: TensorLike, name: Name = None,
                        num_segments: Optional[IntLike] = None, sparse_gradient: bool = False) -> Tensor:
    """Means of rows of `data` picked by `indices`, by sorted segment id.

    <Args, Returns, Raises: filled in from the family's text below>
    """
    if num_segments is not None:
        return sparse_segment_mean_with_num_segments(data, indices, segment_ids, num_segments, name=name,
                                                    sparse_gradient=sparse_gradient)
    return apply_op("SparseSegmentMean", data, indices, segment_ids, sparse_gradient=bool(sparse_gradient), name=name,
                    **_sparse_hints(indices, segment_ids))


def sparse_segment_sqrt_n(data: TensorLike, indices: TensorLike, segment_ids: TensorLike, name: Name = None,
                          num_segments: Optional[IntLike] = None, sparse_gradient: bool = False) -> Tensor:
    """Sums of rows of `data` picked by `indices`, by sorted segment id, divided by sqrt(count).

    <Args, Returns, Raises: filled in from the family's text below>
    """
    if num_segments is not None:
        return sparse_segment_sqrt_n_with_num_segments(data, indices, segment_ids, num_segments, name=name,
                                                    sparse_gradient=sparse_gradient)
    return apply_op("SparseSegmentSqrtN", data, indices, segment_ids, sparse_gradient=bool(sparse_gradient), name=name,
                    **_sparse_hints(indices, segment_ids))


def sparse_segment_sum_with_num_segments(data: TensorLike, indices: TensorLike, segment_ids: TensorLike,
                                         num_segments: IntLike, name: Name = None,
                                         sparse_gradient: bool = False) -> Tensor:
    """sparse_segment_sum with `num_segments` output rows.

    <Args, Returns, Raises: filled in from the family's text below>
    """
    return apply_op("SparseSegmentSumWithNumSegments", data, indices, segment_ids, num_segments,
                    sparse_gradient=bool(sparse_gradient), name=name, **_sparse_hints(indices, segment_ids))


def sparse_segment_mean_with_num_segments(data: TensorLike, indices: TensorLike, segment_ids: TensorLike,
                                          num_segments: IntLike, name: Name = None,
                                          sparse_gradient: bool = False) -> Tensor:
    """sparse_segment_mean with `num_segments` output rows.

    <Args, Returns, Raises: filled in from the family's text below>
    """
    return apply_op("SparseSegmentMeanWithNumSegments", data, indices, segment_ids, num_segments,
                    sparse_gradient=bool(sparse_gradient), name=name, **_sparse_hints(indices, segment_ids))


def sparse_segment_sqrt_n_with_num_segments(data: TensorLike, indices: TensorLike, segment_ids: TensorLike,
                                            num_segments: IntLike, name: Name = None,
                                            sparse_gradient: bool = False) -> Tensor:
    """sparse_segment_sqrt_n with `num_segments` output rows.

    <Args, Returns, Raises: filled in from the family's text below>
    """
    return apply_op("SparseSegmentSqrtNWithNumSegments", data, indices, segment_ids, num_segments,
                    sparse_gradient=bool(sparse_gradient), name=name, **_sparse_hints(indices, segment_ids))


for _fn, _types in ((sparse_segment_sum, "real dtypes"), (sparse_segment_mean, "floating dtypes"),
                    (sparse_segment_sqrt_n, "floating dtypes"),
                    (sparse_segment_sum_with_num_segments, "real dtypes"),
                    (sparse_segment_mean_with_num_segments, "floating dtypes"),
                    (sparse_segment_sqrt_n_with_num_segments, "floating dtypes")):
    _fn.__doc__ = _fn.__doc__.replace(_SHARED, _SPARSE_ARGS.replace("{dtypes}", _types))


def sparse_segment_grad(kind: str, grad: TensorLike, indices: TensorLike, segment_ids: TensorLike, output_dim0: IntLike,
                        name: Name = None) -> Tensor:
    """The gradient of sparse_segment_{kind} w.r.t. data (kind: "sum", "mean" or "sqrt_n").

    Returns shape `[output_dim0] + grad.shape[1:]`: out[indices[i]] += grad[segment_ids[i]] * s_i,
    s_i 1 (sum), 1/count (mean) or 1/sqrt(count) (sqrt_n) of segment segment_ids[i].
    """
    op_type = {"sum": "SparseSegmentSumGrad", "mean": "SparseSegmentMeanGrad",
               "sqrt_n": "SparseSegmentSqrtNGrad"}[kind]
    return apply_op(op_type, grad, indices, segment_ids, output_dim0, name=name)


def sparse_segment_sum_grad(grad: TensorLike, indices: TensorLike, segment_ids: TensorLike, output_dim0: IntLike,
                            name: Name = None) -> Tensor:
    """The gradient of sparse_segment_sum w.r.t. data, `output_dim0` rows (TF's SparseSegmentSumGrad)."""
    return sparse_segment_grad("sum", grad, indices, segment_ids, output_dim0, name=name)


def sparse_segment_mean_grad(grad: TensorLike, indices: TensorLike, segment_ids: TensorLike, output_dim0: IntLike,
                             name: Name = None) -> Tensor:
    """The gradient of sparse_segment_mean w.r.t. data, `output_dim0` rows."""
    return sparse_segment_grad("mean", grad, indices, segment_ids, output_dim0, name=name)


def sparse_segment_sqrt_n_grad(grad: TensorLike, indices: TensorLike, segment_ids: TensorLike, output_dim0: IntLike,
                               name: Name = None) -> Tensor:
    """The gradient of sparse_segment_sqrt_n w.r.t. data, `output_dim0` rows."""
    return sparse_segment_grad("sqrt_n", grad, indices, segment_ids, output_dim0, name=name)


def sparse_segment_grad_v2(kind: str, grad: TensorLike, indices: TensorLike, segment_ids: TensorLike,
                           dense_output_dim0: IntLike, name: Name = None) -> tuple[Tensor, Tensor]:
    """The gradient of sparse_segment_{kind} kept sparse: (values, sorted_unique_indices), the
    rows of the dense gradient that indices touch."""
    op_type = {"sum": "SparseSegmentSumGradV2", "mean": "SparseSegmentMeanGradV2",
               "sqrt_n": "SparseSegmentSqrtNGradV2"}[kind]
    values, unique = apply_op(op_type, grad, indices, segment_ids, dense_output_dim0, name=name)
    return values, unique


def sparse_segment_sum_grad_v2(grad: TensorLike, indices: TensorLike, segment_ids: TensorLike,
                               dense_output_dim0: IntLike, name: Name = None) -> tuple[Tensor, Tensor]:
    """(values, sorted_unique_indices) of sparse_segment_sum's gradient (TF's SparseSegmentSumGradV2)."""
    return sparse_segment_grad_v2("sum", grad, indices, segment_ids, dense_output_dim0, name=name)


def sparse_segment_mean_grad_v2(grad: TensorLike, indices: TensorLike, segment_ids: TensorLike,
                                dense_output_dim0: IntLike, name: Name = None) -> tuple[Tensor, Tensor]:
    """(values, sorted_unique_indices) of sparse_segment_mean's gradient."""
    return sparse_segment_grad_v2("mean", grad, indices, segment_ids, dense_output_dim0, name=name)


def sparse_segment_sqrt_n_grad_v2(grad: TensorLike, indices: TensorLike, segment_ids: TensorLike,
                                  dense_output_dim0: IntLike, name: Name = None) -> tuple[Tensor, Tensor]:
    """(values, sorted_unique_indices) of sparse_segment_sqrt_n's gradient."""
    return sparse_segment_grad_v2("sqrt_n", grad, indices, segment_ids, dense_output_dim0, name=name)


def densify_indexed_slices(value: GradientLike, name: Name = None) -> Tensor:
    """The dense tensor an IndexedSlices stands for: its values summed into rows with
    unsorted_segment_sum (repeated indices add up)."""
    return unsorted_segment_sum(value.values, value.indices, value.dense_shape[0], name=name)


hooks.densify = densify_indexed_slices

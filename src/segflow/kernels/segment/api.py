"""The entry points: unsorted, sorted and sparse segment reductions, their gradient, segment
counts and bincount. NumPy arrays in, a NumPy array out; semantics are TensorFlow's (see each
function). Each one checks its inputs (checks.py), asks plan.py how (`plan_for`,
`reduce_strategy`) and runs the loops (loops.py) or, without Numba, `_numpy_reduce`.

`unsorted_<kind>` and `sorted_<kind>` (TF's UnsortedSegmentSum, SegmentMax, ...) are made from
the kind table at the end of this file, one for each kind each entry point offers.
"""
import math

import numpy as np

from segflow.kernels._common import BadInput, index_text, ufunc_at_rows
from segflow.kernels.segment import checks, idpass, loops
from segflow.kernels.segment.plan import (COMBINE, KINDS, _thread_limit, _threads, count_parts,
                                          finish_chunks, move_rows, plan_for, reduce_strategy,
                                          row_chunks)

__all__ = ["unsorted_segment_reduce", "sorted_segment_reduce", "sparse_segment_reduce",
           "sparse_segment_grad", "sparse_segment_grad_v2", "unsorted_segment_counts", "bincount",
           "true_division_dtype"]


def _numpy_reduce(op, scale, data, ids, num_segments, init, fill, acc_dtype, order=None):
    """The path of inputs below plan._TINY elements and of everything without Numba: rows
    data[order[i]] (or data[i]) with id ids[i] (checked: < num_segments; negatives dropped)
    reduced per segment; empty segments get fill."""
    rows = data if order is None else data[order]
    keep = ids >= 0
    if not keep.all():
        rows, ids = rows[keep], ids[keep]
    out = np.full((num_segments,) + data.shape[1:], init, acc_dtype)
    ufunc_at_rows(COMBINE[op], out, ids, rows.astype(acc_dtype, copy=False))   # cast: exact
    if not scale and fill == init:           # empty segments already hold their fill
        return out
    counts = np.bincount(ids, minlength=num_segments).reshape((-1,) + (1,) * (data.ndim - 1))
    if scale and out.dtype.kind in "iu":     # the integer mean: truncating division, as C++ does
        nonzero = np.maximum(counts, 1).astype(out.dtype)
        q = out // nonzero
        out = q + ((out < 0) & (q * nonzero != out)).astype(out.dtype)
    elif scale:
        nonzero = np.maximum(counts, 1)
        out = out / (nonzero if scale == 1 else np.sqrt(nonzero))
    out = np.where(counts > 0, out, np.asarray(fill, out.dtype))
    return out


def _reduce(plan, rows, ids, num_segments, init, fill, nt, sorted_ids, order=None):
    """Reduce the (n, D) rows by checked ids into a (num_segments, D) array of plan.cd."""
    n, D = rows.shape[0] if order is None else ids.size, rows.shape[1]
    loop, nt, nparts, shift = reduce_strategy(plan, n, D, num_segments, nt, sorted_ids)
    if loop == "numpy":
        out = _numpy_reduce(plan.op, plan.scale, rows, ids, num_segments, init, fill, plan.acc,
                            order)
        return out.astype(plan.cd, copy=False)
    op, scale = plan.op, plan.scale
    out = np.empty((num_segments, D), plan.cd)
    init = np.array([init], plan.acc)
    if loop == "runs":
        order = np.empty(0, np.int64) if order is None else order
        fill = np.array([fill], plan.cd)
        if nt == 1:
            loops.runs_block(op, scale, rows, order, ids, init, fill, out, 0, ids.size, True)
        else:
            with _thread_limit(nt):
                loops.runs(op, scale, rows, order, ids, init, fill, out, row_chunks(n, D), nt)
    elif loop == "serial":
        if plan.acc == plan.cd and not scale:  # straight into the output
            out[:] = init[0]
            loops.private_span(op, scale, rows, ids, 0, n, out, np.zeros(0, np.int64))
        else:
            part = _start_values((1, num_segments, D), init[0], plan.acc)
            counts = np.zeros((1, num_segments if scale else 0), np.int64)
            loops.private_span(op, scale, rows, ids, 0, n, part[0], counts[0])
            if scale:
                loops.private_finish(op, scale, part, counts, out, 0, num_segments)
            else:
                out[...] = part[0]
    elif loop == "private":
        # Accumulators come from NumPy (huge pages where the OS offers them), not Numba's heap.
        parts = _start_values((nparts, num_segments, D), init[0], plan.acc)
        counts = np.zeros((nparts, num_segments if scale else 0), np.int64)
        with _thread_limit(nt):
            loops.scatter_private(op, scale, rows, ids, parts, counts, out,
                                  finish_chunks(num_segments, D), nt)
    else:
        with _thread_limit(nt):
            loops.scatter_bucketed(op, scale, rows, ids, init, out, shift, row_chunks(n, D), nt,
                                   move_rows(n, D, rows.itemsize))
    return out


def _start_values(shape, value, dtype):
    """An array of `value` (zeros come from np.zeros: calloc'd, no fill pass)."""
    return np.zeros(shape, dtype) if value == 0 else np.full(shape, value, dtype)


def _counts(flat, num_segments, nt):
    """Rows per segment of the checked flat ids (negatives dropped), int64."""
    nparts = count_parts(flat.size, num_segments, nt)
    if nparts == 0:
        return np.bincount(flat[flat >= 0], minlength=num_segments).astype(np.int64)
    if nparts == 1:
        counts = np.zeros(num_segments, np.int64)
        idpass.count_span(flat, 0, flat.size, counts)
        return counts
    with _thread_limit(nt):
        return idpass.count_ids(flat, num_segments, nparts, nt)


def _empty_result(shape, dtype, name):
    """The result when `shape` holds no element (checked ids, any number of segments): allocated
    directly, with no per-segment scratch (counts, accumulators) of num_segments entries."""
    try:
        return np.zeros(shape, dtype)
    except ValueError:      # the non-zero dims times the item size exceed what NumPy can describe
        raise BadInput(name, f"the output shape {list(shape)} is empty, but its non-zero dimensions multiply to "
                             "more than 2**63 - 1 bytes, which an array cannot describe") from None


def true_division_dtype(dtype):
    """The floating dtype TF's true division of integers `dtype` gives: float32 for 8- and 16-bit
    integers, float64 for wider ones."""
    return np.dtype(np.float32 if np.dtype(dtype).itemsize <= 2 else np.float64)


def unsorted_segment_reduce(kind, data, segment_ids, num_segments, num_threads=None,
                            accumulate="wide", check_alloc=None):
    """TF's UnsortedSegment{Sum,Prod,Max,Min} and unsorted_segment_{mean,sqrt_n}.

    `segment_ids` (integers) has a shape that is a prefix of `data.shape`; the result has shape
    `(num_segments,) + data.shape[segment_ids.ndim:]` and `data`'s dtype. Negative ids are
    dropped; an id >= num_segments raises BadInput. Empty segments hold 0 (sum, mean, sqrt_n),
    1 (prod), the lowest (max) or highest (min) finite value of the dtype. mean = sum / count,
    sqrt_n = sum / sqrt(count). The mean of integers is TF's `sum / count` in true division: the
    sum in data's dtype (wrapping) divided by the count as floats (`true_division_dtype`), so it
    returns float32 or float64. `accumulate="native"` sums float32 in float32 (for benchmarks).
    `check_alloc(shape, dtype, input_name)`, when given, is called before the output is allocated
    (after the element count is checked against int64, before the ids are read), to refuse an
    output too large for memory.
    """
    data = np.asarray(data)
    ids = checks.as_ids(segment_ids)
    num_segments = checks.as_count(num_segments, "num_segments")
    true_mean = kind == "mean" and data.dtype.kind in "iu"
    plan = plan_for("sum" if true_mean else kind, "unsorted", data.dtype, accumulate)
    if data.shape[:ids.ndim] != ids.shape:
        raise BadInput("segment_ids", f"shape {ids.shape} is not a prefix of data shape"
                                      f" {data.shape}")
    shape = (num_segments,) + data.shape[ids.ndim:]
    out_dtype = true_division_dtype(data.dtype) if true_mean else data.dtype
    checks.check_output_size(shape, "num_segments")
    if check_alloc is not None:
        check_alloc(shape, out_dtype, "num_segments")
    nt = _threads(num_threads)
    ndesc = checks.check_range(ids, checks.NO_LOWER, num_segments, nt)
    if math.prod(shape) == 0:
        return _empty_result(shape, out_dtype, "num_segments")
    init, fill = plan.start_and_fill(sorted_rule=False)
    flat = ids.reshape(-1)
    rows = plan.rows(data, flat.size, math.prod(shape[1:]))
    out = _reduce(plan, rows, flat, num_segments, init, fill, nt, sorted_ids=ndesc == 0)
    out = plan.restore(out, shape)
    if true_mean:
        counts = np.maximum(_counts(flat, num_segments, nt), 1).astype(out_dtype)
        out = out.astype(out_dtype) / counts.reshape((-1,) + (1,) * (len(shape) - 1))
    return out


def unsorted_segment_counts(segment_ids, num_segments, num_threads=None):
    """Rows per segment (int64, shape (num_segments,)); negative ids are dropped."""
    ids = checks.as_ids(segment_ids)
    num_segments = checks.as_count(num_segments, "num_segments")
    nt = _threads(num_threads)
    checks.check_range(ids, checks.NO_LOWER, num_segments, nt)
    return _counts(ids.reshape(-1), num_segments, nt)


_SCALAR_DATA = ("Shape must be at least rank 1 but is rank 0: {} is a scalar, but segments are taken along its "
                "first dimension")


def sorted_segment_reduce(kind, data, segment_ids, num_threads=None, accumulate="wide", check_alloc=None):
    """TF's Segment{Sum,Prod,Max,Min,Mean}: `segment_ids` is 1-D, as long as data's first
    dimension, non-decreasing and non-negative; the result has last id + 1 rows (0 if empty).
    Empty segments (gaps) hold 0, except prod: 1. The mean of integers divides truncating toward
    zero (TF's integer SegmentMean). `check_alloc`: as in unsorted_segment_reduce."""
    data = np.asarray(data)
    ids = checks.as_ids(segment_ids)
    plan = plan_for(kind, "sorted", data.dtype, accumulate)
    if data.ndim == 0:
        raise BadInput("data", _SCALAR_DATA.format("data"))
    if ids.ndim != 1 or ids.shape[0] != data.shape[0]:
        raise BadInput("segment_ids", f"segment_ids should be the same size as dimension 0 of data: "
                                      f"shape {ids.shape} must be 1-D with the length of data's"
                                      f" first dimension (data shape {data.shape})")
    num_segments = max(int(ids[-1]) + 1, 0) if ids.size else 0
    checks.check_output_size((num_segments,) + data.shape[1:], "segment_ids")
    if check_alloc is not None:
        check_alloc((num_segments,) + data.shape[1:], data.dtype, "segment_ids")
    nt = _threads(num_threads)
    checks.check_sorted(ids, num_segments, nt, derived=True)
    if num_segments == 0 or math.prod(data.shape[1:]) == 0:
        return _empty_result((num_segments,) + data.shape[1:], data.dtype, "segment_ids")
    init, fill = plan.start_and_fill(sorted_rule=True)
    rows = plan.rows(data, ids.size, math.prod(data.shape[1:]))
    out = _reduce(plan, rows, ids, num_segments, init, fill, nt, sorted_ids=True)
    return plan.restore(out, (num_segments,) + data.shape[1:])


def sparse_segment_reduce(kind, data, indices, segment_ids, num_segments=None, num_threads=None,
                          check_alloc=None):
    """TF's SparseSegment{Sum,Mean,SqrtN}[WithNumSegments]: row j of the result reduces
    data[indices[i]] over the i with segment_ids[i] == j. indices and segment_ids are 1-D of one
    length; indices in [0, data.shape[0]); segment_ids non-decreasing, non-negative and below
    num_segments when given. Rows: num_segments, else last id + 1. Empty segments hold 0.
    Checked in TF's order: shapes, the output's size (`check_alloc` as in
    unsorted_segment_reduce), then indices, then segment ids."""
    data = np.asarray(data)
    indices = checks.as_ids(indices, "indices")
    ids = checks.as_ids(segment_ids)
    plan = plan_for(kind, "sparse", data.dtype)
    if data.ndim == 0:
        raise BadInput("data", _SCALAR_DATA.format("data"))
    if indices.ndim != 1:
        raise BadInput("indices", f"must be 1-D, not of shape {indices.shape}")
    if ids.shape != indices.shape:
        raise BadInput("segment_ids", f"shape {ids.shape} must equal indices shape"
                                      f" {indices.shape}")
    nt = _threads(num_threads)
    n_rows = data.shape[0]
    if num_segments is None:
        rows_out = max(int(ids[-1]) + 1, 0) if ids.size else 0
    else:
        rows_out = checks.as_count(num_segments, "num_segments")
    size_input = "segment_ids" if num_segments is None else "num_segments"
    checks.check_output_size((rows_out,) + data.shape[1:], size_input)
    if check_alloc is not None:
        check_alloc((rows_out,) + data.shape[1:], data.dtype, size_input)
    if indices.size and (indices.min() < 0 or indices.max() >= n_rows):
        k = int(np.flatnonzero((indices < 0) | (indices >= n_rows))[0])
        raise BadInput("indices", f"indices[{k}] == {indices[k]} out of range [0, {n_rows}): indices[{k}] = "
                                  f"{indices[k]} is out of range [0, {n_rows})")
    checks.check_sorted(ids, rows_out, nt, derived=num_segments is None)
    if rows_out == 0 or math.prod(data.shape[1:]) == 0:
        return _empty_result((rows_out,) + data.shape[1:], data.dtype,
                             "segment_ids" if num_segments is None else "num_segments")
    init, fill = plan.start_and_fill(sorted_rule=True)
    rows = plan.rows(data, n_rows, math.prod(data.shape[1:]))
    if not indices.size:  # `order` must be non-empty to be used as one
        rows, indices = rows[:0], None
    out = _reduce(plan, rows, ids, rows_out, init, fill, nt, sorted_ids=True, order=indices)
    return plan.restore(out, (rows_out,) + data.shape[1:])


def _sparse_grad_rows(kind, grad, indices, segment_ids, output_dim0, nt):
    """The validated ids and the rows grad[segment_ids[i]] * scale_i of the sparse segment
    gradient (TF's SparseSegment<K>Grad checks, in TF's words)."""
    grad = np.asarray(grad)
    indices = checks.as_ids(indices, "indices")
    ids = checks.as_ids(segment_ids)
    plan = plan_for(kind, "sparse", grad.dtype)
    if grad.ndim == 0:
        raise BadInput("grad", _SCALAR_DATA.format("grad"))
    if indices.ndim != 1 or ids.shape != indices.shape:
        raise BadInput("segment_ids", f"shape {ids.shape} must be 1-D and equal to indices shape"
                                      f" {indices.shape}")
    nseg = grad.shape[0]
    # TF's order and words, each followed by the shared wording of the first bad position
    if ids.size and int(ids[-1]) + 1 > nseg:
        raise BadInput("segment_ids", f"Invalid number of segments in grad: segment_ids[{ids.size - 1}] = "
                                      f"{int(ids[-1])} is out of range [0, {nseg})")
    if ids.size and (ids.min() < 0 or ids.max() >= nseg):
        bad = int(np.flatnonzero((ids < 0) | (ids >= nseg))[0])
        raise BadInput("segment_ids", f"Segment id {ids[bad]} out of range [0, {nseg}): segment_ids[{bad}] = "
                                      f"{ids[bad]} is out of range [0, {nseg})")
    if output_dim0 is not None and indices.size and (indices.min() < 0 or indices.max() >= output_dim0):
        bad = int(np.flatnonzero((indices < 0) | (indices >= output_dim0))[0])
        raise BadInput("indices", f"Index {indices[bad]} out of range [0, {output_dim0}): indices[{bad}] = "
                                  f"{indices[bad]} is out of range [0, {output_dim0})")
    rows = grad[ids]
    if plan.scale:
        counts = np.maximum(_counts(ids, nseg, nt), 1).astype(np.float64)
        factor = 1.0 / (counts if plan.scale == 1 else np.sqrt(counts))
        rows = (rows * factor[ids].reshape((-1,) + (1,) * (grad.ndim - 1))).astype(grad.dtype)
    return indices, rows


def sparse_segment_grad(kind, grad, indices, segment_ids, output_dim0, num_threads=None):
    """The gradient of sparse_segment_reduce(kind, ...) with respect to data: shape
    (output_dim0,) + grad.shape[1:], out[indices[i]] += grad[segment_ids[i]] * scale_i with
    scale_i 1 (sum), 1/count (mean) or 1/sqrt(count) (sqrt_n) of segment segment_ids[i]."""
    output_dim0 = checks.as_count(output_dim0, "output_dim0")
    nt = _threads(num_threads)
    indices, rows = _sparse_grad_rows(kind, grad, indices, segment_ids, output_dim0, nt)
    return unsorted_segment_reduce("sum", rows, indices, output_dim0, num_threads=num_threads)


def sparse_segment_grad_v2(kind, grad, indices, segment_ids, dense_output_dim0, num_threads=None):
    """The same gradient kept sparse: (values, sorted_unique_indices), values[k] the sum of the
    scaled rows whose index is sorted_unique_indices[k] (TF's SparseSegment<K>GradV2)."""
    dense_output_dim0 = checks.as_count(dense_output_dim0, "dense_output_dim0")
    nt = _threads(num_threads)
    indices, rows = _sparse_grad_rows(kind, grad, indices, segment_ids, dense_output_dim0, nt)
    unique, inverse = np.unique(indices, return_inverse=True)
    values = unsorted_segment_reduce("sum", rows, inverse.reshape(-1).astype(np.int64), unique.size,
                                     num_threads=num_threads)
    return values, unique.astype(indices.dtype)


def bincount(arr, weights=None, minlength=0, maxlength=None, dtype=np.int32, num_threads=None):
    """TF's bincount: counts (or sums of `weights`) of each non-negative value of `arr`; length
    max(max(arr) + 1, minlength), capped at maxlength (larger values are ignored). Output dtype
    is weights' dtype with weights, else `dtype`."""
    arr = checks.as_ids(arr, "arr")
    flat = arr.reshape(-1)
    nt = _threads(num_threads)
    nbad, _, top = checks.stats(flat, 0, np.iinfo(np.int64).max, nt)   # values up to 2**63 - 1
    negative = np.flatnonzero(flat < 0) if nbad else ()
    if len(negative):
        pos = int(negative[0])
        raise BadInput("arr", f"arr[{index_text(pos, arr.shape)}] = {flat[pos]} is negative;"
                              " bincount needs non-negative values")
    length = max(top + 1, checks.as_count(minlength, "minlength"))
    if maxlength is not None:
        length = min(length, checks.as_count(maxlength, "maxlength"))
        if top >= length:
            flat = np.where(flat < length, flat, -1).astype(flat.dtype)
    if weights is None:
        return _counts(flat, length, nt).astype(dtype, copy=False)
    weights = np.asarray(weights)
    if weights.shape != arr.shape:
        raise BadInput("weights", f"shape {weights.shape} must equal arr shape {arr.shape}")
    return unsorted_segment_reduce("sum", weights.reshape(-1), flat, length,
                                   num_threads=num_threads)


# ----------------------------------------------------------------------------- one per kind

def _unsorted_entry(name):
    def reduce(data, segment_ids, num_segments, num_threads=None, accumulate="wide"):
        return unsorted_segment_reduce(name, data, segment_ids, num_segments, num_threads,
                                       accumulate)
    return reduce


def _sorted_entry(name):
    def reduce(data, segment_ids, num_threads=None, accumulate="wide"):
        return sorted_segment_reduce(name, data, segment_ids, num_threads, accumulate)
    return reduce


for _kind in KINDS:
    for _entry, _make in (("unsorted", _unsorted_entry), ("sorted", _sorted_entry)):
        if _entry in _kind.ops:
            _fn = _make(_kind.name)
            _fn.__name__ = _fn.__qualname__ = f"{_entry}_{_kind.name}"
            _fn.__doc__ = f"{_entry}_segment_reduce({_kind.name!r}, ...)."
            globals()[_fn.__name__] = _fn
            __all__.append(_fn.__name__)
del _kind, _entry, _make, _fn

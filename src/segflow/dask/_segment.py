"""The unsorted segment reductions over dask arrays: `unsorted_segment_{sum,prod,max,min,mean,sqrt_n}`.

Each row chunk of `data` (with the matching chunk of `segment_ids`) is reduced by segflow's
kernel (kernels/segment) into a partial result of `num_segments` rows; the partials are stacked
along a new leading axis and combined by Dask's tree reduction (`sum`/`prod`/`max`/`min` over
that axis, `split_every` partials per task). mean and sqrt_n are a sum and a count, divided at
the end. When the output is large (`output_chunks`, or more than Dask's `array.chunk-size` by
default) it is partitioned by segment range: output block j reduces only the ids in its range,
so no task holds more than one block of the output.

Semantics are the in-memory ops' (segflow._ops.segment): negative ids drop their rows, empty
segments hold 0 (sum, mean, sqrt_n), 1 (prod), the dtype's lowest (max) or highest (min) finite
value; an id >= num_segments raises InvalidArgumentError, naming the op and the id's position in
the whole array, from the task that read it. Deliberate differences: float16/float32 sums are
rounded to the dtype once per chunk before the partials are added in float64 (the in-memory
kernel rounds once), so results agree within float tolerance, not bit for bit; num_segments
must be a Python or NumPy int (TF also takes a tensor known only at run time).
"""
import math
import numbers

import numpy as np

from segflow._core import dtypes, errors
from segflow.dask._threads import run_task
from segflow.kernels import BadInput, segment
from segflow.kernels._common import accumulator_dtype, index_text

__all__ = ["unsorted_segment_sum", "unsorted_segment_prod", "unsorted_segment_max",
           "unsorted_segment_min", "unsorted_segment_mean", "unsorted_segment_sqrt_n", "as_rows",
           "output_blocks"]

_OPS = {"sum": "UnsortedSegmentSum", "prod": "UnsortedSegmentProd", "max": "UnsortedSegmentMax",
        "min": "UnsortedSegmentMin", "mean": "UnsortedSegmentMean", "sqrt_n": "UnsortedSegmentSqrtN"}
_TYPES = {"sum": dtypes.NUMERIC, "prod": dtypes.NUMERIC, "mean": dtypes.NUMERIC,
          "max": dtypes.REAL_NUMERIC, "min": dtypes.REAL_NUMERIC,
          "sqrt_n": dtypes.FLOATING + dtypes.COMPLEX}
_ID_TYPES = (np.dtype(np.int16), np.dtype(np.int32), np.dtype(np.int64))


def _da():
    import dask.array as da  # dask is optional: loaded on first use, never by `import segflow`
    return da


def _bad(op, name, message):
    return errors.invalid_input(errors.OpName(op), name, message)


def _check_count(op, value, name="num_segments"):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise _bad(op, name, f"must be a Python or NumPy int known when the graph is built (segflow.dask "
                             f"needs the output's size), got {type(value).__name__}")
    value = int(value)
    if value < 0:
        raise _bad(op, name, f"Cannot specify a negative value for {name}: {name} = {value} must not be negative")
    return value


def as_rows(op, data, segment_ids, name="segment_ids"):
    """(data, ids) as dask arrays chunked along rows only, the ids' row chunks those of data
    (NumPy inputs become dask arrays; a NumPy side takes the other's chunks)."""
    da = _da()
    is_dask = lambda x: hasattr(x, "dask") and hasattr(x, "chunks")  # noqa: E731
    if not is_dask(data) and not is_dask(segment_ids):
        data = da.from_array(np.asarray(data))
    if not is_dask(data):
        data = np.asarray(data)
        ids = segment_ids
        if data.ndim == 0:
            raise _bad(op, "data", "must have at least one dimension (rows are chunked along the first)")
        data = da.from_array(data, chunks=(ids.chunks[0],) + data.shape[1:])
    if not is_dask(segment_ids):
        segment_ids = np.asarray(segment_ids)
        if segment_ids.ndim == 0:
            raise _bad(op, name, "must have at least one dimension, one id per row of data")
        if tuple(data.shape[:segment_ids.ndim]) != segment_ids.shape:
            raise _bad(op, name, f"shape {list(segment_ids.shape)} is not a prefix of data's shape "
                                 f"{list(data.shape)}")
        segment_ids = da.from_array(segment_ids, chunks=(data.chunks[0],) + segment_ids.shape[1:])
    ids = segment_ids
    if data.ndim == 0 or ids.ndim == 0:
        raise _bad(op, name if ids.ndim == 0 else "data", "must have at least one dimension (rows are chunked "
                                                          "along the first)")
    if any(math.isnan(c) for c in data.shape + ids.shape):
        raise _bad(op, "data", "has unknown chunk sizes; call compute_chunk_sizes() first")
    if np.dtype(ids.dtype) not in _ID_TYPES:
        raise _bad(op, name, f"must be int16, int32 or int64, not {np.dtype(ids.dtype).name}")
    if tuple(data.shape[:ids.ndim]) != tuple(ids.shape):
        raise _bad(op, name, f"shape {list(ids.shape)} is not a prefix of data's shape {list(data.shape)}")
    if any(len(c) > 1 for c in data.chunks[1:]):
        data = data.rechunk({i: -1 for i in range(1, data.ndim)})
    if ids.chunks[0] != data.chunks[0] or any(len(c) > 1 for c in ids.chunks[1:]):
        ids = ids.rechunk((data.chunks[0],) + tuple(-1 for _ in ids.shape[1:]))
    return data, ids


def output_blocks(num_segments, row_bytes, output_chunks):
    """The output's row blocks (a tuple of sizes): `output_chunks` (an int or sizes), or one
    block unless num_segments * row_bytes exceeds Dask's array.chunk-size."""
    da = _da()
    if output_chunks is None:
        import dask
        limit = dask.utils.parse_bytes(dask.config.get("array.chunk-size"))
        if num_segments * row_bytes <= limit or num_segments <= 1:
            return (num_segments,)
        output_chunks = max(1, limit // max(1, row_bytes))
    return da.core.normalize_chunks((output_chunks,), (num_segments,))[0]


def _raise_first_bad(op, ids, row0, num_segments):
    """Raises the in-memory op's error for the first id >= num_segments of a chunk, its position
    counted in the whole array (the chunk starts at row row0)."""
    flat = ids.reshape(-1)
    pos = int(np.flatnonzero(flat >= num_segments)[0])
    idx = np.unravel_index(pos, ids.shape) if ids.ndim else ()
    where = index_text(np.ravel_multi_index((idx[0] + row0,) + tuple(idx[1:]),
                                            (row0 + ids.shape[0],) + ids.shape[1:]),
                       (row0 + ids.shape[0],) + ids.shape[1:])
    raise _bad(op, "segment_ids", f"segment_ids[{where}] = {flat[pos]} is out of range [0, {num_segments})")


def _local_ids(op, ids, row0, start, stop, num_segments):
    """The ids of rows in [start, stop) shifted to start at 0, every other id -1 (dropped);
    raises for ids >= num_segments (checked by the block starting at 0, which every result needs)."""
    if start == 0 and stop == num_segments:
        return ids
    if start == 0 and ids.size and ids.max() >= num_segments:
        _raise_first_bad(op, ids, row0, num_segments)
    local = ids.astype(np.int64) - start
    local[(local < 0) | (local >= stop - start)] = -1
    return local


def _chunk_reduce(data, ids, row0, start, *, kind, op, num_segments, blocks_of):
    """The partial [1, block rows, ...] of one row chunk for the output block starting at `start`."""
    stop = blocks_of[start]
    local = _local_ids(op, ids, row0, start, stop, num_segments)
    try:
        if kind == "count":
            out = segment.unsorted_segment_counts(local, stop - start)
        else:
            out = segment.unsorted_segment_reduce(kind, data, local, stop - start)
    except BadInput as e:
        if e.input_name == "segment_ids" and ids.size and ids.max() >= num_segments:
            _raise_first_bad(op, ids, row0, num_segments)
        raise _bad(op, e.input_name, e.message) from None
    return out[None]


def _chunk_count(ids, row0, start, **kw):
    """The partial [1, block rows] row counts of one chunk of ids."""
    return _chunk_reduce(None, ids, row0, start, **kw)


def _partials(kind, op, data, ids, num_segments, blocks, dtype):
    """The stacked partials: shape [row chunks, num_segments, tail...], chunks (1, blocks, tail);
    task (i, j) reduces row chunk i into output block j."""
    import functools

    import dask.array as da
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph

    tail = tuple(int(d) for d in data.shape[ids.ndim:]) if kind != "count" else ()
    starts = np.cumsum((0,) + tuple(blocks[:-1]), dtype=np.int64)
    blocks_of = {int(s): int(s + b) for s, b in zip(starts, blocks)}
    rows = np.cumsum((0,) + tuple(data.chunks[0][:-1]), dtype=np.int64)
    name = f"segflow-{kind}-partials-" + tokenize(kind, op, data.name, ids.name, num_segments, blocks)
    task = functools.partial(run_task, _chunk_count if kind == "count" else _chunk_reduce, kind=kind, op=op,
                             num_segments=num_segments, blocks_of=blocks_of)
    zeros_d, zeros_i, zeros_o = (0,) * (data.ndim - 1), (0,) * (ids.ndim - 1), (0,) * len(tail)
    dsk = {}
    for i, r0 in enumerate(rows):
        ids_key = (ids.name, i) + zeros_i
        inputs = (ids_key,) if kind == "count" else ((data.name, i) + zeros_d, ids_key)
        for j, s0 in enumerate(starts):
            dsk[(name, i, j) + zeros_o] = (task,) + inputs + (int(r0), int(s0))
    graph = HighLevelGraph.from_collections(name, dsk, dependencies=[ids] if kind == "count" else [data, ids])
    chunks = ((1,) * len(rows), tuple(blocks)) + tuple((t,) for t in tail)
    return da.Array(graph, name, chunks, meta=np.empty((0,) * len(chunks), dtype))


def unsorted_segment_reduce(kind, data, segment_ids, num_segments, output_chunks=None, split_every=None):
    """The lazy unsorted segment `kind` of dask (or NumPy) arrays; see the module docstring."""
    op = _OPS[kind]
    num_segments = _check_count(op, num_segments)
    data, ids = as_rows(op, data, segment_ids)
    in_dtype = np.dtype(data.dtype)
    if dtypes.from_numpy(in_dtype) not in _TYPES[kind]:
        raise _bad(op, "data", f"dtype {in_dtype.name} is not supported")
    tail = tuple(int(d) for d in data.shape[ids.ndim:])
    acc = accumulator_dtype(in_dtype)
    blocks = output_blocks(num_segments, math.prod(tail) * acc.itemsize, output_chunks)
    if kind in ("sum", "mean", "sqrt_n"):
        sums = _partials("sum", op, data, ids, num_segments, blocks, in_dtype)
        total = sums.sum(axis=0, dtype=acc if in_dtype.kind not in "iu" else in_dtype, split_every=split_every)
        if kind == "sum":
            return total.astype(in_dtype)
        counts = _partials("count", op, data, ids, num_segments, blocks, np.dtype(np.int64))
        n = counts.sum(axis=0, split_every=split_every)
        n = n.reshape(n.shape + (1,) * len(tail))
        if kind == "mean" and in_dtype.kind in "iu":
            out_dtype = segment.true_division_dtype(in_dtype)
            return total.astype(out_dtype) / _da().maximum(n, 1).astype(out_dtype)
        denom = _da().maximum(n, 1).astype(np.float64)
        if kind == "sqrt_n":
            denom = _da().sqrt(denom)
        return (total / denom).astype(in_dtype)
    parts = _partials(kind, op, data, ids, num_segments, blocks, in_dtype)
    if kind == "prod":
        return parts.prod(axis=0, dtype=in_dtype, split_every=split_every)
    if kind == "max":
        return parts.max(axis=0, split_every=split_every)
    return parts.min(axis=0, split_every=split_every)


def _public(kind):
    def fn(data, segment_ids, num_segments, output_chunks=None, split_every=None):
        return unsorted_segment_reduce(kind, data, segment_ids, num_segments, output_chunks, split_every)
    fn.__name__ = fn.__qualname__ = f"unsorted_segment_{kind}"
    fn.__doc__ = f"""sf.math.unsorted_segment_{kind} of a dask array (lazy until .compute()).

    Args:
      data: dask or NumPy array; rows (its first axis) may be chunked, other axes are not.
      segment_ids: dask or NumPy int16/int32/int64 ids, shape a prefix of data's; rechunked to
        data's row chunks when they differ. Negative ids drop their rows.
      num_segments: Python or NumPy int.
      output_chunks: rows per output block (int or sizes); None: one block unless the output
        exceeds Dask's array.chunk-size. Each block reduces only its range of ids.
      split_every: partials combined per task in the tree reduction (None: Dask's default).
    Returns:
      A dask array like the in-memory op's result (dtype, shape, empty-segment values).
    Raises:
      InvalidArgumentError: bad dtypes, shapes or num_segments at once; an id >= num_segments at
        compute time, from the task that read it.
    """
    return fn


unsorted_segment_sum = _public("sum")
unsorted_segment_prod = _public("prod")
unsorted_segment_max = _public("max")
unsorted_segment_min = _public("min")
unsorted_segment_mean = _public("mean")
unsorted_segment_sqrt_n = _public("sqrt_n")

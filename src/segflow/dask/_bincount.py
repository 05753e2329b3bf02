"""`bincount` of a dask array: each chunk counted (or its weights summed) by segflow's kernel, the
per-chunk bins (each as long as its own largest value + 1) padded and added in a tree of
`split_every` partials per task. TF's semantics: length max(max(arr) + 1, minlength), capped at
maxlength; a negative value raises InvalidArgumentError naming its position in the whole array.
The length depends on the data unless minlength >= maxlength, so the result's length is unknown
(NaN, as for dask's own bincount without minlength) until it is computed, except in that case.
"""
import numbers

import numpy as np

from segflow._core import errors
from segflow.dask._segment import as_rows
from segflow.dask._threads import run_task
from segflow.kernels import BadInput, segment
from segflow.kernels._common import index_text

__all__ = ["bincount"]

_OP = "Bincount"
_ARR_TYPES = (np.dtype(np.int32), np.dtype(np.int64))
_WEIGHT_TYPES = tuple(np.dtype(t) for t in (np.int32, np.int64, np.float16, np.float32, np.float64))


def _bad(name, message):
    return errors.invalid_input(errors.OpName(_OP), name, message)


def _length_arg(value, name):
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise _bad(name, f"must be a Python or NumPy int, got {value!r}")
    if value < 0:
        raise _bad(name, f"Cannot specify a negative value for {name}: {name} = {int(value)} must not be negative")
    return int(value)


def _chunk(arr, weights, row0, shape, maxlength, dtype):
    """The bins of one chunk (length: its largest kept value + 1)."""
    try:
        return segment.bincount(arr, weights, minlength=0, maxlength=maxlength, dtype=dtype)
    except BadInput as e:
        flat = arr.reshape(-1)
        if e.input_name == "arr" and flat.size and flat.min() < 0:
            local = int(np.flatnonzero(flat < 0)[0])
            idx = np.unravel_index(local, arr.shape)
            pos = np.ravel_multi_index((idx[0] + row0,) + tuple(idx[1:]), shape)
            raise _bad("arr", f"arr[{index_text(pos, shape)}] = {flat[local]} is negative; bincount needs "
                              "non-negative values") from None
        raise _bad(e.input_name, e.message) from None


def _add(*parts):
    """The bins of several partials: padded to the longest and added."""
    n = max(p.shape[0] for p in parts)
    out = np.zeros(n, parts[0].dtype)
    for p in parts:
        out[:p.shape[0]] += p
    return out


def _finish(bins, length):
    if bins.shape[0] >= length:
        return bins
    return np.concatenate([bins, np.zeros(length - bins.shape[0], bins.dtype)])


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=np.int32, split_every=8):
    """sf.math.bincount of a dask array (lazy until .compute()).

    Args:
      arr: dask or NumPy int32/int64 array of non-negative values, chunked along its first axis.
      weights: optional array of arr's shape (int32, int64, float16/32/64), chunked alike (rechunked
        when not).
      minlength, maxlength: optional non-negative ints, as in sf.math.bincount.
      dtype: the output dtype without weights.
      split_every: partials added per task.
    Returns:
      A 1-D dask array (length unknown until computed unless minlength >= maxlength).
    Raises:
      InvalidArgumentError: bad dtypes or lengths at once, a negative value at compute time.
    """
    import dask
    import dask.array as da

    minlength = _length_arg(minlength, "minlength")
    maxlength = _length_arg(maxlength, "maxlength")
    if weights is not None:
        weights, arr = as_rows(_OP, weights, arr, name="arr")
        if tuple(weights.shape) != tuple(arr.shape):
            raise _bad("weights", f"shape {list(weights.shape)} must equal arr shape {list(arr.shape)}")
        if np.dtype(weights.dtype) not in _WEIGHT_TYPES:
            raise _bad("weights", f"dtype {np.dtype(weights.dtype).name} is not supported")
        out_dtype = np.dtype(weights.dtype)
    else:
        if not (hasattr(arr, "dask") and hasattr(arr, "chunks")):
            arr = da.from_array(np.asarray(arr))
        if arr.ndim and any(len(c) > 1 for c in arr.chunks[1:]):
            arr = arr.rechunk({i: -1 for i in range(1, arr.ndim)})
        out_dtype = np.dtype(dtype)
    if np.dtype(arr.dtype) not in _ARR_TYPES:
        raise _bad("arr", f"dtype {np.dtype(arr.dtype).name} is not supported (attr Tarr: one of int32, int64)")
    shape = tuple(int(d) for d in arr.shape)
    if arr.ndim == 0:
        arr = arr.reshape((1,))
        weights = None if weights is None else weights.reshape((1,))
    starts = np.cumsum((0,) + tuple(arr.chunks[0][:-1]))
    a_blocks = arr.to_delayed().ravel()
    w_blocks = [None] * len(a_blocks) if weights is None else weights.to_delayed().ravel()
    task = dask.delayed(run_task, pure=True)
    level = [task(_chunk, a, w, int(r0), shape or (1,), maxlength, out_dtype)
             for a, w, r0 in zip(a_blocks, w_blocks, starts)]
    while len(level) > 1:
        level = [task(_add, *level[i:i + split_every]) for i in range(0, len(level), split_every)]
    floor = minlength or 0
    if maxlength is not None:
        floor = min(floor, maxlength)
    known = maxlength if (minlength is not None and maxlength is not None and minlength >= maxlength) else np.nan
    return da.from_delayed(dask.delayed(_finish, pure=True)(level[0], floor), shape=(known,), dtype=out_dtype)


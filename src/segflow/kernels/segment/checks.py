"""The checks of the segment reductions' ids, indices and counts, and their error messages.

One compiled pass (`idpass.check_span` / `idpass.check_ids`) reads the ids once: how many are out of
range, how many descents, the largest. Only when it finds a problem are the bad positions looked
up, and the error is raised in the shared wording of kernels/ids.py ("segment_ids[i] = v is out
of range [0, n)", "... has dtype float32; ... must be int32 or int64"). The sorted ops' own
messages ("segment ids are not increasing: ...", "... is negative") are raised here.
"""
import numpy as np

from segflow.kernels import ids as _ids
from segflow.kernels._common import BadInput
from segflow.kernels.segment.idpass import check_ids, check_span
from segflow.kernels.segment.plan import _thread_limit, check_chunks

NO_LOWER = -(1 << 63)           # lower bound for unsorted ids: negatives are allowed (dropped)


def as_ids(ids, name="segment_ids"):
    """`ids` as a C-contiguous int32/int64 array: other integer dtypes (and empty float arrays,
    as `[]` makes) become int64; anything else raises the shared dtype error."""
    ids = np.asarray(ids)
    if ids.dtype not in _ids.INDEX_DTYPES:
        if ids.dtype.kind not in "iu" and not (ids.size == 0 and ids.dtype.kind == "f"):
            _ids.check_index_dtype(ids, name)   # raises
        ids = ids.astype(np.int64)
    # (np.ascontiguousarray would turn 0-d ids, valid for 0-d data, into shape (1,).)
    return ids if ids.flags.c_contiguous else np.ascontiguousarray(ids)


INT64_MAX = (1 << 63) - 1


def check_output_size(shape, name):
    """Refuses an output shape whose element count does not fit in int64 (TF's limit on a tensor's
    size), in TF's words ("Encountered overflow when multiplying a with b") followed by the shape.
    A shape holding a 0 is empty, never too large."""
    if 0 in shape:
        return
    n = 1
    for d in shape:
        if n * d > INT64_MAX:
            raise BadInput(name, f"Encountered overflow when multiplying {n} with {d}: the output shape "
                                 f"{list(shape)} would have more than 2**63 - 1 elements")
        n *= d


def as_count(value, name):
    value = np.asarray(value)
    if value.ndim != 0 or value.dtype.kind not in "iu":
        raise BadInput(name, f"must be an integer scalar, got {value!r}")
    value = int(value)
    if value < 0:
        raise BadInput(name, f"Cannot specify a negative value for {name}: {name} = {value} must not be negative")
    return value


def _numpy_check_ids(ids, lo, hi):
    """`idpass.check_span` over all the flat ids, in NumPy."""
    ids = ids.reshape(-1)
    if ids.size == 0:
        return 0, 0, -(1 << 62)
    nbad = np.count_nonzero((ids < lo) | (ids >= hi))
    return int(nbad), int(np.count_nonzero(ids[1:] < ids[:-1])), int(ids.max())


def bounds(dtype, lo, hi):
    """[lo, hi) as the inclusive bounds (lo, top_ok) of the ids' own integer dtype, so that the
    compiled check compares without widening: a bound past the dtype's range is clamped to it
    (no id can fall outside it there)."""
    low, high = _LIMITS.get(dtype) or _LIMITS.setdefault(
        dtype, (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)))
    return dtype.type(max(lo, low)), dtype.type(min(hi - 1, high))


_LIMITS = {}    # dtype -> (min, max): np.iinfo takes microseconds, a small op's whole loop


def stats(ids, lo, hi, nt):
    """(number of ids outside [lo, hi), number of descents, max id) over the flat ids."""
    chunks = check_chunks(ids.size, nt, ids.itemsize)
    if chunks == 0:
        return _numpy_check_ids(ids, lo, hi)
    lo, top_ok = bounds(ids.dtype, lo, hi)
    if chunks == 1:
        return check_span(ids, lo, top_ok, 0, ids.size)
    with _thread_limit(nt):
        found = check_ids(ids, lo, top_ok, chunks, nt)
    return int(found[:, 0].sum()), int(found[:, 1].sum()), int(found[:, 2].max())


def raise_out_of_range(name, ids, lo, hi):
    """Raises the shared out-of-range error for the first of `ids` outside [lo, hi); lo is 0 or
    NO_LOWER (negative ids are dropped, never out of range)."""
    if lo < 0:
        ids = np.where(ids < 0, 0, ids)
    _ids.check_in_range(ids, 0, hi, name)
    raise AssertionError(f"{name}: the id check found an id out of range [0, {hi}), NumPy none")


def check_range(ids, lo, hi, nt, name="segment_ids"):
    """Raises unless every one of `ids` (any shape) is in [lo, hi); returns the number of
    descents of the flat ids (0: they are non-decreasing)."""
    nbad, ndesc, _ = stats(ids if ids.ndim == 1 else ids.reshape(-1), lo, hi, nt)
    if nbad:
        raise_out_of_range(name, ids, lo, hi)
    return ndesc


def check_sorted(ids, num_segments, nt, derived):
    """Ids must be non-decreasing and in [0, num_segments), checked in TensorFlow's order and
    named in its words (then the shared wording of the first bad position). With `derived`
    (num_segments is the last id + 1): a negative last id, then the first id out of range, then a
    descent; with num_segments given: whichever of a descent or an id out of range comes first."""
    nbad, ndesc, _ = stats(ids, 0, num_segments, nt)
    if not (nbad or ndesc):
        return
    if derived and ids.size and ids[-1] < 0:
        k = ids.size - 1
        raise BadInput("segment_ids", f"segment ids must be >= 0: segment_ids[{k}] = {ids[k]} is negative")
    descent = int(np.flatnonzero(ids[1:] < ids[:-1])[0]) + 1 if ndesc else ids.size
    bad = int(np.flatnonzero((ids < 0) | (ids >= num_segments))[0]) if nbad else ids.size
    if derived and nbad:
        what = "is negative" if ids[bad] < 0 else f"is out of range [0, {num_segments})"
        why = (f"; segment ids are not increasing: segment_ids[{descent}] = {ids[descent]} follows "
               f"{ids[descent - 1]}") if ndesc else ""
        raise BadInput("segment_ids", f"Segment id {ids[bad]} out of range [0, {num_segments}), possibly "
                                      f"because 'segment_ids' input is not sorted: segment_ids[{bad}] = "
                                      f"{ids[bad]} {what}{why}")
    if ndesc and descent <= bad:
        raise BadInput("segment_ids", f"segment ids are not increasing: segment_ids[{descent}] ="
                                      f" {ids[descent]} follows {ids[descent - 1]}")
    if ids[bad] < 0:
        raise BadInput("segment_ids", f"segment ids must be >= 0: segment_ids[{bad}] = {ids[bad]} is negative")
    raise BadInput("segment_ids", f"segment ids must be < num_segments: segment_ids[{bad}] = {ids[bad]} "
                                  f"is out of range [0, {num_segments})")

"""The shared index checks: every kernel that takes indices, ids or positions calls these first.

An index must be an integer array (a float index is never truncated, so a NaN cannot reach a
compiled loop as INT64_MIN by construction) and inside its range. The checks raise `BadInput`
naming the input, the first bad position as a multi-index and its value, in TensorFlow's two
wordings: rows of a gather or a scatter (`checked_rows`, GatherV2, ResourceGather,
ResourceScatter*) say `NOT_IN`, every other id (segment ids, labels, ...) says `OUT_OF_RANGE`:

    indices[1,0] = 9 is not in [0, 4)
    segment_ids[1,0] = 9 is out of range [0, 4)
    indices has dtype float32; indices must be int32 or int64

`checked_rows(indices, n)` is what a row gather or scatter needs: the validated ids as a flat,
C-contiguous int64 array, safe to hand to a compiled loop that does no bounds checks.
"""
import math

import numpy as np

from segflow.kernels._common import BadInput, index_text

__all__ = ["INDEX_DTYPES", "OUT_OF_RANGE", "NOT_IN", "check_index_dtype", "check_in_range", "checked_rows",
           "checked_nd_rows"]

INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))
OUT_OF_RANGE = "is out of range"     # "segment_ids[2] = 9 is out of range [0, 4)"
NOT_IN = "is not in"                 # "indices[2] = 9 is not in [0, 4)": TF's words for gathered/scattered rows


def check_index_dtype(x, name="indices", allowed=INDEX_DTYPES):
    """Raises BadInput unless `x` is an array of one of the `allowed` integer dtypes."""
    dt = getattr(x, "dtype", None)
    if dt is None or dt.kind not in "iu" or (allowed is not None and dt.newbyteorder("=") not in allowed):
        got = "no dtype" if dt is None else f"dtype {dt.name if dt.isnative else dt.newbyteorder('=').name}"
        want = " or ".join(d.name for d in allowed) if allowed is not None else "an integer type"
        raise BadInput(name, f"{name} has {got}; {name} must be {want}")


def check_in_range(x, lo, hi, name="indices", what=None, phrase=OUT_OF_RANGE):
    """Raises BadInput naming the first element of integer array `x` outside [lo, hi):
    "{what or name}[pos] = value {phrase} [lo, hi)"."""
    if x.size == 0:
        return
    flat = x.reshape(-1)
    if flat.size <= 32:             # a few ids: Python's min/max beat two NumPy reductions 3x
        few = flat.tolist()
        if min(few) >= lo and max(few) < hi:
            return
    elif flat.min() >= lo and flat.max() < hi:
        return
    pos = int(np.flatnonzero((flat < lo) | (flat >= hi))[0])
    label = what if what is not None else name
    raise BadInput(name, f"{label}[{index_text(pos, x.shape)}] = {flat[pos]} {phrase} [{lo}, {hi})")


def checked_rows(indices, n, name="indices"):
    """`indices` (int32/int64, any shape) validated against [0, n) (the rows of a gather or scatter:
    `NOT_IN` wording): a flat C-contiguous int64 copy or view, safe for unchecked compiled loops."""
    check_index_dtype(indices, name)
    check_in_range(indices, 0, n, name, phrase=NOT_IN)
    return np.ascontiguousarray(indices.reshape(-1), dtype=np.int64)


def checked_nd_rows(shape, indices, name="indices", what="shape"):
    """Multi-indices along the last axis of `indices` into the leading dims of `shape`, validated:
    returns (flat int64 row ids into shape[:depth] flattened, depth)."""
    check_index_dtype(indices, name)
    if indices.ndim == 0:
        raise BadInput(name, f"{name} must have rank >= 1, got a scalar")
    depth = indices.shape[-1]
    if depth > len(shape):
        raise BadInput(name, f"index depth {depth} ({name}.shape[-1]) exceeds the rank {len(shape)} of "
                             f"{what} {list(shape)}")
    flat = indices.reshape(math.prod(indices.shape[:-1]), depth)   # (-1, 0) is ambiguous for NumPy
    if depth == 0:
        return np.zeros(flat.shape[0], np.int64), depth
    limits = np.asarray(shape[:depth], dtype=np.int64)
    if flat.size:
        bad = np.flatnonzero(np.any((flat < 0) | (flat >= limits), axis=1))
        if bad.size:
            k = int(bad[0])
            raise BadInput(name, f"{name}[{index_text(k, indices.shape[:-1])}] = {flat[k].tolist()} does not "
                                 f"index into {what} {list(shape)}")
    dims = tuple(int(d) for d in shape[:depth])
    return np.ravel_multi_index(tuple(flat.T.astype(np.int64)), dims).astype(np.int64, copy=False), depth

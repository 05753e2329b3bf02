"""What each segment reduction computes and how: the kind table, the dtype plan, the strategy.

`KINDS` holds one row per reduction kind; everything kind-specific (the combine rule, start and
fill values, allowed dtypes, how complex and uint64 data are handled, which entry points offer
it) is read from its row. Adding a kind is adding a row (and, for a new combine rule, its code
and branch in loops.py).

The dtype plan (`Plan`): compiled loops see data of three dtypes (float32, float64, int64) and ids
int32/int64, which keeps specializations (and cold compile time) few. float16/bfloat16 are
widened to float32 and smaller integers to int64 before the loop; uint64 is viewed as int64 (sums
and products wrap alike) or sign-flipped for kinds that compare (max, min); complex sums run on
the (re, im) float pairs, complex products take the NumPy path. float32 sums accumulate in
float64 (`accumulate="wide"`, the default) as they are read, never converting the data first.

The strategy (`reduce_strategy`, `check_chunks`, `count_parts`), chosen by shape and by what the
first pass over the ids found: non-decreasing ids take the run-length loops; random ids take
fixed-chunk private accumulators when S*D is small, a serial scatter or two private chunks when
the accumulators fit in L3 (2-8 MB), else the bucket partition; inputs below `_PARALLEL_WORK`
(rows * (4 + D)) run the serial loops (a parallel launch costs more than they do); inputs below
`_TINY` elements, and everything without Numba, take the NumPy path (so a program whose segment
ops are all small never imports Numba). Thread counts never change results.
"""
import functools
from typing import Callable, NamedTuple

import numpy as np

from segflow.kernels import _common
from segflow.kernels._common import (HAVE_NUMBA, BadInput, accumulator_dtype, chunk_count,
                                     parallel_launch, planned_workers, worker_count)
from segflow.kernels.segment.loops import MAX, MIN, PROD, SUM

_SMALL = 1 << 15          # below this many elements, run on one thread with one chunk
# Below this much work (rows * (4 + D): a row costs about as much as four of its elements), a
# reduction runs on one thread: waking a sleeping worker costs 0.1-0.2 ms on the 2-core VM, so
# a parallel launch pays only once one thread would need about 0.7 ms (median ms, float32, one
# call after another, 2 threads / 1: 262144 x 1 into 100 segments 0.58 / 0.28, 16384 x 64
# 0.28 / 0.15, 32768 x 64 0.79 / 0.71, 131072 x 8 into 1000 0.65 / 0.61, 1e6 x 1 into 1e6
# sorted 2.0 / 2.7, 32768 x 128 into 1000 1.46 / 2.23). The results are the same either way.
_PARALLEL_WORK = 1 << 22
_TINY = 1 << 12           # below this many, NumPy (no compiled loop: Numba is not even imported)
_PRIVATE_MAX_BYTES = 2 << 20   # per-chunk accumulators of random-id scatters stay under this
_MOVE_ROW_BYTES = 32           # the bucket partition copies rows this narrow (not row numbers),
_MOVE_MAX_BYTES = 1 << 28      # into a buffer of at most this many bytes
_BAND_MAX_BYTES = 8 << 20      # up to this, accumulators that fit in L3 skip the bucket partition
_BUCKET_BYTES = 1 << 20        # accumulators of one bucket (about one core's L2)
_MAX_PARTS = 8                 # fixed row chunks of the private scatter (thread-independent)
_PARTS_BYTES = 5 << 18         # all chunks' accumulators together stay under this (1.25 MB; L2 is
# 1 MB here): 1e6 x 16 float32 into 1e4 segments, random ids, public op interleaved in one
# process, 2.5 MB / 1.25 MB: max 5.44 / 5.19 and 5.00 / 4.60 ms, min 5.59 / 5.28 and 4.26 / 4.20
# (4 chunks of 640 KB / 2); sum and mean (2 chunks of 1.28 MB either way) unchanged
_BUCKET_MIN_THREADS_1D = 4     # D == 1 buckets beat a serial scatter only with this many threads
_BUCKET_MIN = 1 << 20          # fewer elements: one serial pass beats the partition's three passes

_SIGN = np.int64(-(1 << 63))     # uint64 ^ sign bit, viewed as int64, keeps the order


# ----------------------------------------------------------------------------- the kinds

def _is_bfloat16(dtype):
    # by name: comparing with np.dtype(ml_dtypes.bfloat16) would import ml_dtypes (see dtypes.py)
    return dtype.name == "bfloat16"


def _is_float_like(dtype):
    return dtype.kind in "fc" or _is_bfloat16(dtype)


def _extremes(dtype):
    """(lowest finite, highest finite) of `dtype`."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
    elif _is_bfloat16(dtype):
        import ml_dtypes          # already imported: a bfloat16 array exists
        info = ml_dtypes.finfo(dtype)
    else:
        info = np.finfo(dtype)
    return info.min, info.max


def _zero(dtype):
    return 0


def _one(dtype):
    return 1


def _lowest(dtype):
    return _extremes(dtype)[0]


def _highest(dtype):
    return _extremes(dtype)[1]


def _below_all(dtype):
    return -np.inf if _is_float_like(dtype) else _lowest(dtype)


def _above_all(dtype):
    return np.inf if _is_float_like(dtype) else _highest(dtype)


class Kind(NamedTuple):
    """One reduction kind."""
    name: str
    code: int            # the loops' combine rule: loops.SUM, PROD, MAX or MIN
    combine: np.ufunc    # the same rule for the NumPy path (`ufunc.at`)
    scale: int           # a finished segment of n rows: 0 as is, 1 divided by n, 2 by sqrt(n)
    identity: Callable   # dtype -> TF's start of unsorted segments, and what empty ones hold
    start: Callable      # dtype -> the start of sorted segments (never empty: may be +-inf)
    gap: int             # what segments missing from sorted ids hold
    dtypes: str          # data dtypes: "i" integers, "f" floating (with bfloat16), "c" complex
    complex_via: str     # complex data: "pairs" (float (re, im) pairs) or "numpy" (NumPy path)
    wide: bool           # accumulates in accumulator_dtype (float32 in float64) when "wide"
    ordered: bool        # compares values: uint64 is sign-flipped into int64's order
    ops: tuple           # entry points offering it: "unsorted", "sorted", "sparse"


_U, _S, _P = "unsorted", "sorted", "sparse"
KINDS = (
    #    name      code  combine      scale identity  start       gap dtypes complex wide  ordered ops
    Kind("sum",    SUM,  np.add,      0,    _zero,    _zero,      0, "ifc", "pairs", True,  False, (_U, _S, _P)),
    Kind("prod",   PROD, np.multiply, 0,    _one,     _one,       1, "ifc", "numpy", True,  False, (_U, _S)),
    Kind("max",    MAX,  np.maximum,  0,    _lowest,  _below_all, 0, "if",  "",      False, True,  (_U, _S)),
    Kind("min",    MIN,  np.minimum,  0,    _highest, _above_all, 0, "if",  "",      False, True,  (_U, _S)),
    Kind("mean",   SUM,  np.add,      1,    _zero,    _zero,      0, "ifc", "pairs", True,  False, (_U, _S, _P)),
    Kind("sqrt_n", SUM,  np.add,      2,    _zero,    _zero,      0, "fc",  "pairs", True,  False, (_U, _P)),
)
_BY_NAME = {k.name: k for k in KINDS}
COMBINE = {k.code: k.combine for k in KINDS}   # the NumPy path's ufunc of each loop code
_REAL_ONLY = " and ".join(k.name for k in KINDS if "c" not in k.dtypes)    # "max and min"
_INEXACT_ONLY = " and ".join(k.name for k in KINDS if "i" not in k.dtypes)  # "sqrt_n"


def kind_names(entry):
    """The kinds `entry` ("unsorted", "sorted" or "sparse") offers, in table order."""
    return tuple(k.name for k in KINDS if entry in k.ops)


def _dtype_class(dtype):
    """The letter of `Kind.dtypes` that `dtype` belongs to, or "" (bool, object, ...)."""
    if dtype.kind == "c":
        return "c"
    if _is_float_like(dtype):
        return "f"
    return "i" if dtype.kind in "iu" else ""


# ----------------------------------------------------------------------------- the dtype plan

class Plan:
    """How data of one dtype is reduced by one kind.

    kind: the `Kind` row; op, scale: its loop code and finishing; cd: the dtype the loops read;
    acc: the dtype they accumulate in; mode: "" (cast to cd), "pairs" (complex sums as float
    (re, im) pairs), "bias" (uint64 max/min as sign-flipped int64), or "numpy" (complex prod,
    uint64 mean: the NumPy path).
    """
    __slots__ = ("kind", "op", "scale", "dtype", "cd", "acc", "mode", "_starts")

    def __init__(self, kind, entry, dtype, accumulate="wide"):
        row = _BY_NAME.get(kind) if isinstance(kind, str) else None
        if row is None or entry not in row.ops:
            raise ValueError(f"kind must be one of {', '.join(kind_names(entry))}, not {kind!r}")
        if accumulate not in ("wide", "native"):
            raise ValueError(f"accumulate must be 'wide' or 'native', not {accumulate!r}")
        self.kind = row
        self.op, self.scale = row.code, row.scale
        self.dtype = dtype
        self.mode = ""
        cls = _dtype_class(dtype)
        if cls not in row.dtypes or not cls:
            if cls == "c":
                raise BadInput("data", f"{_REAL_ONLY} are not defined for complex dtype {dtype}")
            if "i" not in row.dtypes and cls != "f":
                raise BadInput("data", f"{_INEXACT_ONLY} needs a floating or complex dtype, not"
                                       f" {dtype}")
            raise BadInput("data", f"dtype {dtype} is not supported by segment reductions")
        if cls == "c":
            if row.complex_via == "numpy":
                self.cd, self.mode = np.dtype(np.complex128), "numpy"
            else:
                self.cd = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
                self.mode = "pairs"
        elif dtype in (np.float16, np.float32) or _is_bfloat16(dtype):
            self.cd = np.dtype(np.float32)
        elif dtype == np.float64:
            self.cd = dtype
        elif cls == "i":
            self.cd = np.dtype(np.int64)
            if dtype == np.uint64 and row.ordered:
                self.mode = "bias"
            elif dtype == np.uint64 and row.scale:
                # an unsigned mean divides unsigned sums: the NumPy path, in uint64
                self.cd, self.mode = dtype, "numpy"
        else:
            raise BadInput("data", f"dtype {dtype} is not supported by segment reductions")
        wide = row.wide and accumulate == "wide"
        self.acc = accumulator_dtype(self.cd) if wide else self.cd
        unsorted = self.value(row.identity(dtype))
        self._starts = ((unsorted, unsorted),
                        (self.value(row.start(dtype)), self.value(row.gap)))

    def rows(self, data, n, D):
        """data as a C-contiguous (n, D) array of cd ((n, 2D) for complex pairs)."""
        data = np.ascontiguousarray(data).reshape(n, D)
        if self.mode == "numpy":
            return data.astype(self.cd, copy=False)
        if self.mode == "pairs":
            return data.view(self.cd)
        if self.mode == "bias":
            return data.view(np.int64) ^ _SIGN
        if data.dtype == np.uint64:
            return data.view(np.int64)  # sums and products wrap the same in int64
        return data.astype(self.cd, copy=False)

    def value(self, v):
        """A fill or start value of the original dtype, as the loops see it."""
        if self.mode == "bias":
            return int(np.uint64(v).view(np.int64) ^ _SIGN)
        return v

    def restore(self, out, shape):
        """The loops' (S, D) result as an array of the original dtype and `shape`."""
        if self.mode == "pairs":
            out = out.view(self.dtype)
        elif self.mode == "bias":
            out = (out ^ _SIGN).view(np.uint64)
        elif self.dtype == np.uint64:
            out = out.view(np.uint64)
        elif out.dtype != self.dtype:
            out = out.astype(self.dtype)
        return out.reshape(shape)

    def start_and_fill(self, sorted_rule):
        """(init, fill): the value each segment's reduction starts from, and what empty ones
        hold. TF's unsorted ops start from (and leave empty segments at) the kind's identity
        (max/min: the lowest/highest finite value); its sorted ops start from the exact one
        (+-inf for floats) and leave gaps at the kind's gap value (0; 1 for prod)."""
        return self._starts[1 if sorted_rule else 0]


@functools.lru_cache(maxsize=512)
def plan_for(kind, entry, dtype, accumulate="wide"):
    """The (immutable, shared) Plan for reducing `dtype` by `kind` in `entry`."""
    return Plan(kind, entry, dtype, accumulate)


# ----------------------------------------------------------------------------- strategy

def reduce_strategy(plan, n, D, num_segments, nt, sorted_ids):
    """How to reduce n rows of width D (as the loops see them) into num_segments, as
    (loop, nt, nparts, shift). loop: "numpy", "runs" (nt 1: the serial block), "serial" (a
    one-thread scatter), "private" (nparts fixed row chunks) or "bucketed" (buckets of 2**shift
    segments); nt: threads."""
    if not HAVE_NUMBA or plan.mode == "numpy" or n * max(D, 1) < _TINY:
        return "numpy", 1, 0, 0
    if n * max(D, 1) < _SMALL or n * (4 + D) < _PARALLEL_WORK:
        nt = 1
    if sorted_ids:
        return "runs", nt, 0, 0
    part_bytes = num_segments * D * plan.acc.itemsize
    # Fewer chunks when each chunk's accumulators are large: they are filled, read back and
    # combined, and more of them than fit in the caches cost more than the parallelism brings
    # (1e6 x 16 into 1e4 segments, 1.28 MB a chunk: 8 chunks 19-32 ms, 4: 12-15, 2: 8-13).
    nparts = int(min(_MAX_PARTS, max(1, n // (4 * num_segments + 1)),
                     max(2, _PARTS_BYTES // max(part_bytes, 1))))
    # Accumulators of 2-8 MB (they fit in the L3 cache, not in L2) with rows of 4 or more: the
    # partition's three passes cost more than a scatter into them (whose rows loops.private_span
    # prefetches). Rows of up to 16 take one serial scatter, wider rows two private chunks
    # (random ids, 1e6 rows, median ms on the 2-core machine, serial / 2 chunks / buckets, before
    # the prefetch: D=16 S=2e4 11-16 / 28 / 33-37; D=4 S=1e5 8 / 9-21 / 15-17; D=32 S=1e4
    # 32-34 / 22-25 / 60-65; D=64 S=1e4 53-73 / 39-57 / 71-92; with it, D=16 S=5e4 44 / 37 / 71).
    band = (_PRIVATE_MAX_BYTES < part_bytes <= _BAND_MAX_BYTES and D >= 4
            and n * D >= _BUCKET_MIN)
    if band and D <= 16:
        return "serial", 1, 0, 0
    if band:
        nparts = min(nparts, 2)
    private = (part_bytes <= _PRIVATE_MAX_BYTES or band) and nparts > 1
    if (n * max(D, 1) < (_SMALL if private else _BUCKET_MIN) or
            nt < (_BUCKET_MIN_THREADS_1D if D == 1 else 2) and not private or
            part_bytes <= _PRIVATE_MAX_BYTES and not private):
        # Too few elements for the partition's three passes to pay (fewer than _BUCKET_MIN), one
        # thread, for D == 1 too few threads, or accumulators that fit in cache but too few rows
        # per segment for private chunks (262144 x 4 into 65536 segments: buckets 3.6 ms, one
        # scatter 1.1): a serial scatter reduces each segment in row order, exactly like the
        # buckets do.
        return "serial", 1, 0, 0
    if private:
        return "private", nt, nparts, 0
    row_bytes = max(D, 1) * plan.acc.itemsize
    return "bucketed", nt, 0, max(0, (_BUCKET_BYTES // row_bytes).bit_length() - 1)


def move_rows(n, D, itemsize):
    """Whether the bucket partition copies the n rows of D items (1 < D, rows of at most 32
    bytes, 256 MiB in all) rather than their row numbers: the reduction then streams the copies
    instead of reading rows at random (random ids, 1e6 rows into 1e6 segments, float32, public
    op: D=2 0.52-0.74x, D=4 0.42-0.55x, D=8 0.45-0.78x the time with row numbers; D=16
    1.17x, so it keeps row numbers)."""
    return 1 < D and D * itemsize <= _MOVE_ROW_BYTES and n * D * itemsize <= _MOVE_MAX_BYTES


_GRAIN = 1 << 16               # elements per chunk that parallel workers pull (see _common.py)


_CHECK_SERIAL_BYTES = 8 << 20  # one thread reads ids up to this size faster than a parallel launch


def check_chunks(size, nt, itemsize=8):
    """Chunks of the pass over `size` ids of `itemsize` bytes: 0 (NumPy: fewer than _TINY ids
    before Numba is loaded), 1 (serial) or more (parallel; the count is set by the size, never by
    the threads). Once Numba is loaded, the compiled pass checks even a few ids faster than
    NumPy's three reductions (256 int32 ids: ~1 us against ~8). The pass is one compare and
    add per id, so up to _CHECK_SERIAL_BYTES (1e6 int64 ids, 2e6 int32) one thread finishes
    before two do: on this VM the second thread is often slow to start on short work.
    - The pass alone, ids in cache, median ms, 2 threads / 1: 3e5 int32 0.21 / 0.05; 1e6 int64
      0.29 / 0.18 one day, 0.52 / 0.24 the next; 4e6 int64 0.94 / 2.08.
    - In the op, interleaved calls, 1e6 rows with int64 ids, 4 MiB / 8 MiB bound: D=1 (ids in
      cache) 0.87-0.95x the time with the 8 MiB bound; 1e6 x 16 and 1e6 x 64, whose data push
      the ids out of the cache, 0.8-0.98x in one run and 0.96-1.05x in another. (An earlier
      session measured 0.5 ms lost with an 8 MB bound on 1e6 x 16, which these runs did not
      reproduce.)"""
    if not HAVE_NUMBA or size < _TINY and not _common.numba_loaded():
        return 0
    if size < _SMALL or nt == 1 or size * itemsize <= _CHECK_SERIAL_BYTES:
        return 1
    return chunk_count(size, _GRAIN)


def row_chunks(n, D):
    """Blocks of rows (n rows of width D) for the runs loop and the bucketed partition."""
    return chunk_count(n * max(D, 1), _GRAIN, 64)


def finish_chunks(num_segments, D):
    """Ranges of segments the private scatter's partial results are combined over."""
    return chunk_count(num_segments * max(D, 1), _GRAIN // 4, 64)


def count_parts(size, num_segments, nt):
    """Private count arrays for counting `size` ids into num_segments: 0 means NumPy (counts are
    exact, so the number of parts changes no result)."""
    if not HAVE_NUMBA or size < _TINY:
        return 0
    # the reductions' rule, rows of D = 1 (1000 segments, median ms, 2 threads / 1: 5e4 ids
    # 0.24 / 0.04, 2e5 0.79 / 0.13, 6e5 1.07 / 0.46)
    if nt == 1 or size * (4 + 1) < _PARALLEL_WORK:
        return 1
    return int(min(_MAX_PARTS, max(1, size // (4 * num_segments + (1 << 14)))))


# ----------------------------------------------------------------------------- threads

if HAVE_NUMBA:
    def _threads(num_threads):
        return planned_workers() if num_threads is None else max(1, int(num_threads))

    class _thread_limit:
        """Runs the enclosed kernels on at most `n` Numba threads (results never depend on it).
        Every parallel kernel here launches inside one, so it also holds `parallel_launch()`
        (serialises launches on a threading layer that is not thread-safe)."""

        def __init__(self, n):
            worker_count()                        # the pool starts with segflow's wait policy
            import numba
            self.n = min(n, numba.config.NUMBA_NUM_THREADS)

        def __enter__(self):
            import numba
            self.launch = parallel_launch()
            self.launch.__enter__()
            try:
                self.old = numba.get_num_threads()
                if self.n != self.old:
                    numba.set_num_threads(self.n)
            except BaseException:
                self.launch.__exit__(None, None, None)
                raise

        def __exit__(self, *exc):
            import numba
            try:
                if self.n != self.old:
                    numba.set_num_threads(self.old)
            finally:
                self.launch.__exit__(*exc)
else:  # pragma: no cover
    import contextlib

    def _threads(num_threads):
        return 1

    def _thread_limit(n):
        return contextlib.nullcontext()

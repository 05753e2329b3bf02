"""Shared pieces of the kernels: the BadInput exception, index formatting, Numba import, the
guard around launches of parallel kernels (`parallel_launch`), the chunk counter parallel kernels
pull work from (`next_chunk`, `chunk_count`), software prefetch (`prefetch`, `prefetch_lines`),
streaming stores (`stream_store`, `store_fence`, `streaming_pays`) and the start of Numba's thread
pool (`worker_count`)."""
import importlib.util
import math
import os
import sys
import threading

import numpy as np

# Numba is a core dependency, but it is imported only when a compiled kernel first runs: `import
# segflow` stays fast for a program that may never call one. Until then `njit` returns a stand-in
# (`_Lazy`) and `prange` is a placeholder; the first call of any stand-in imports Numba, runs the
# registered extensions (`on_numba`: overloads and intrinsics), makes every stand-in a real Numba
# dispatcher and puts the dispatchers (and numba.prange) in place of the stand-ins in the
# namespaces of segflow's modules, so compiled code calling compiled code sees dispatchers.
# Without Numba the stand-ins call the plain Python functions.
HAVE_NUMBA = importlib.util.find_spec("numba") is not None

_lazy = []                 # every stand-in, in definition order
_extensions = []           # functions run once Numba is imported, before the first compile
_numba_lock = threading.RLock()
_numba_ready = False


class _PrangePlaceholder:
    """`prange` before Numba is imported; plain `range` if it never is."""

    def __call__(self, *args):
        return range(*args)

    def __repr__(self):
        return "prange"


prange = _PRANGE = _PrangePlaceholder()


class _Lazy:
    """A kernel that becomes `numba.njit(**options)(func)` when a kernel is first called."""

    def __init__(self, func, options):
        self.py_func = func
        self.options = options
        self.dispatcher = None
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__doc__ = func.__doc__
        self.__module__ = func.__module__
        self.__wrapped__ = func
        _lazy.append(self)

    def __call__(self, *args):
        if self.dispatcher is None:
            load_numba()
        return self.dispatcher(*args)

    def __getattr__(self, name):       # signatures, inspect_types, ...: the dispatcher's
        if name.startswith("__"):
            raise AttributeError(name)
        if self.dispatcher is None:
            load_numba()
        return getattr(self.dispatcher, name)

    def __repr__(self):
        return f"<segflow kernel {self.__qualname__}>"


def _wrap(func, options):
    if _numba_ready and HAVE_NUMBA:   # a module imported after Numba was: a dispatcher at once
        import numba
        return numba.njit(**options)(func)
    return _Lazy(func, options)


def njit(*args, **options):
    """`numba.njit`, applied when the first kernel runs (see above)."""
    if len(args) == 1 and callable(args[0]) and not options:
        return _wrap(args[0], {})
    return lambda func: _wrap(func, options)


def on_numba(func):
    """Registers `func()` to run once Numba is imported, before anything is compiled (for
    `numba.extending.overload` / `intrinsic` definitions). Returns func."""
    _extensions.append(func)
    if _numba_ready:
        func()
    return func


def numba_loaded():
    """Whether the kernels are compiled dispatchers already (Numba imported): small inputs that
    would take NumPy to spare the import then take the compiled loop when it is faster."""
    return _numba_ready


def load_numba():
    """Imports Numba and makes every kernel stand-in a dispatcher (once; thread-safe)."""
    global _numba_ready, prange
    if _numba_ready:
        return
    with _numba_lock:
        if _numba_ready:
            return
        if not HAVE_NUMBA:  # pragma: no cover - exercised only where numba is missing
            for k in _lazy:
                k.dispatcher = k.py_func
            _numba_ready = True
            return
        import numba
        for ext in _extensions:
            ext()
        placeholder = _PRANGE
        real = {id(placeholder): numba.prange}
        for k in _lazy:
            real[id(k)] = numba.njit(**k.options)(k.py_func)
        for name, module in list(sys.modules.items()):
            if not name.startswith("segflow") or module is None:
                continue
            space = vars(module)
            changes = {key: real[id(value)] for key, value in list(space.items())
                       if id(value) in real and (value is placeholder or isinstance(value, _Lazy))}
            # one dict.update per module: another thread never sees a module half swapped (a
            # dispatcher resolves the globals of its own module only)
            space.update(changes)
        for k in _lazy:       # only now: a stand-in called meanwhile waits on the lock above
            k.dispatcher = real[id(k)]
        prange = numba.prange
        _numba_ready = True


class BadInput(ValueError):
    """A kernel's input is wrong. `input_name` names the op input; the message says how."""

    def __init__(self, input_name, message):
        super().__init__(f"input '{input_name}': {message}")
        self.input_name = input_name
        self.message = message


def index_text(flat_index, shape):
    """The multi-index of flat position `flat_index` in an array of `shape`, as text: '1,2'."""
    if len(shape) <= 1:
        return str(int(flat_index))
    return ",".join(str(int(i)) for i in np.unravel_index(int(flat_index), tuple(shape)))


_WIDER = {np.dtype(np.float16): np.dtype(np.float32), np.dtype(np.float32): np.dtype(np.float64)}


def accumulator_dtype(dtype):
    """The dtype sums of `dtype` accumulate in: float16/bfloat16 -> float32, float32 -> float64."""
    dtype = np.dtype(dtype)
    if dtype.name == "bfloat16":
        return np.dtype(np.float32)
    return _WIDER.get(dtype, dtype)



def ufunc_at_rows(ufunc, out, rows, values):
    """`ufunc.at(out, rows, values)` for rows along out's first axis (values shaped
    (len(rows),) + out.shape[1:]), on flat elements: ufunc.at takes its fast loop only on 1-D
    operands of one dtype (255 rows of 16 float64, NumPy 2.4: 40 us as rows, 7 us flat; 194 us
    with float32 values, which callers cast first where that is exact). Each element still sees
    its rows in order. A non-contiguous `out`, or values of another shape, take plain ufunc.at."""
    rows, values = np.asarray(rows), np.asarray(values)
    if out.ndim < 1 or not out.flags.c_contiguous or values.shape != rows.shape + out.shape[1:] or rows.ndim != 1:
        ufunc.at(out, rows, values)
        return
    width = math.prod(out.shape[1:])
    flat = rows if width == 1 else (rows.astype(np.intp)[:, None] * width + np.arange(width)).reshape(-1)
    ufunc.at(out.reshape(-1), flat, values.reshape(-1))


# ----------------------------------------------------------------------------------------------
# Parallel launches from several Python threads
#
# Numba runs `parallel=True` kernels on one of three threading layers. TBB and OpenMP accept
# launches from many Python threads at once; the workqueue layer (Numba's fallback when neither is
# installed, or NUMBA_THREADING_LAYER=workqueue) aborts the whole process when two threads launch
# at the same time ("Concurrent access has been detected"). Every launch of a parallel kernel is
# therefore wrapped in `with parallel_launch():`, which holds one process-wide lock around the
# launch unless the layer is known to be thread-safe. The layer actually used is known only after
# the first launch (`numba.threading_layer()`), so until then launches are serialised too.

_SAFE_LAYERS = ("tbb", "omp")
# Requests that Numba satisfies only with a thread-safe layer (or fails to launch at all).
_SAFE_REQUESTS = ("tbb", "omp", "safe", "threadsafe", "forksafe")

_launch_lock = threading.RLock()
_layer_safe = None   # None: not known yet; True: no lock needed; False: launches are serialised


def _requested_layer():
    try:
        from numba.core import config
        return str(config.THREADING_LAYER).lower()
    except Exception:  # pragma: no cover - numba missing or changed
        return "default"


def _resolve_layer():
    """True/False once the layer launches run on is known to be / not to be thread-safe."""
    global _layer_safe
    if _layer_safe is not None:
        return _layer_safe
    if not HAVE_NUMBA:  # pragma: no cover
        _layer_safe = True
        return True
    requested = _requested_layer()
    if requested == "workqueue":
        _layer_safe = False
    elif requested in _SAFE_REQUESTS:
        _layer_safe = True
    else:  # "default": tbb, else omp, else workqueue; known after the first launch
        import numba
        try:
            layer = numba.threading_layer()
        except ValueError:  # no parallel kernel has run yet
            return None
        _layer_safe = layer in _SAFE_LAYERS
    return _layer_safe


class _Serialised:
    __slots__ = ()

    def __enter__(self):
        _launch_lock.acquire()

    def __exit__(self, *exc):
        try:
            if _layer_safe is None:
                _resolve_layer()  # after a launch, numba.threading_layer() names the layer
        finally:
            _launch_lock.release()
        return False


class _Unserialised:
    __slots__ = ()

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        return False


_SERIALISED = _Serialised()
_UNSERIALISED = _Unserialised()


def parallel_launch():
    """`with parallel_launch(): kernel(...)` around every call of a `parallel=True` kernel: a no-op
    on a thread-safe threading layer (TBB, OpenMP), one process-wide lock on the workqueue layer
    (which aborts the process on concurrent launches) and until the layer is known."""
    if _layer_safe or (_layer_safe is None and _resolve_layer()):
        return _UNSERIALISED
    return _SERIALISED


def threading_layer_is_threadsafe():
    """True/False when the layer parallel kernels run on is known to be / not to be safe for
    concurrent launches from several threads; None before the first parallel launch."""
    return _resolve_layer()


# ----------------------------------------------------------------------------------------------
# Work pulled in fixed chunks
#
# A parallel kernel here never hands each thread a fixed share (prange over the threads' slices):
# on a machine where another process holds a core, the thread that lost its core would hold up the
# whole launch for a scheduler time slice. Instead the work is cut into `chunk_count(...)` chunks,
# a number set by the shape only, and each of the `worker_count()` workers (one prange iteration
# per thread) pulls the next chunk from a shared counter until none is left:
#
#     counter = np.zeros(1, np.int64)
#     for w in prange(workers):
#         c = next_chunk(counter)
#         while c < nchunks:
#             ...chunk c, writing only chunk c's part of the result...
#             c = next_chunk(counter)
#
# A descheduled thread delays at most the chunk it holds. Which thread ran a chunk never changes
# what the chunk computes, and partial results are combined in chunk order, so results are the
# same bits whatever the thread count or the scheduling.

def _fetch_add_python(counter):  # pragma: no cover - without Numba everything runs serially
    c = int(counter[0])
    counter[0] = c + 1
    return c


_fetch_add = _fetch_add_python   # the atomic increment once Numba is imported


@on_numba
def _define_fetch_add():
    global _fetch_add
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def fetch_add(typingctx, counter):
        if not (isinstance(counter, types.Array) and counter.dtype == types.int64):
            return None

        def codegen(context, builder, signature, args):
            aryty = signature.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary,
                                           [context.get_constant(types.intp, 0)],
                                           wraparound=False, boundscheck=False)
            return builder.atomic_rmw("add", ptr, context.get_constant(types.int64, 1), "monotonic")

        return types.int64(counter), codegen

    _fetch_add = fetch_add


@njit(cache=True, nogil=True, inline="always")
def next_chunk(counter):
    """The value of counter[0] before an atomic increment: the next chunk to work on."""
    return _fetch_add(counter)


# ----------------------------------------------------------------------------------------------
# Software prefetch
#
# A scatter into accumulators that do not fit in L1/L2 (random ids) waits on every row it reads
# back; the out-of-order core overlaps only a few such waits. `prefetch(arr, i)` asks for the cache
# lines of arr[i] (the row's first two lines for a 2-D array, the element's line for a 1-D one)
# without waiting for them, so a loop that knows its index `PREFETCH_AHEAD` steps ahead
# (ids[i + PREFETCH_AHEAD]) has the row in cache when it gets there (random ids into 1e4-1e5
# rows of 16 float64, one thread: 0.4-0.6x the loop's time). A prefetch never faults and never
# changes a result; without Numba it does nothing.

PREFETCH_AHEAD = 16     # ids ahead of an accumulator row or hash slot (a scatter's loop step is short)
CACHED_BYTES = 1 << 20  # targets up to this size stay in L2: no prefetch for them
# A scatter's accumulator rows are prefetched from this size on: rows streaming past evict them from
# L2 long before L2 is full (1e6 random rows of 16 into 4 private chunks, one thread, prefetched /
# not: float64 accumulators of 256 KB 0.81x, 384 KB 0.75x, 640 KB 0.64-0.73x; float32 max into
# 320 KB 0.87-0.91x, 640 KB 0.79x; below 200 KB the results went both ways).
SCATTER_PREFETCH_BYTES = 1 << 18
ROW_AHEAD = 8           # rows ahead of a table row read or updated whole (gathers, optimizers)


def _prefetch_python(arr, i):  # pragma: no cover - without Numba there is nothing to prefetch
    return None


_prefetch = _prefetch_python


@on_numba
def _define_prefetch():
    global _prefetch
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    @intrinsic
    def prefetch_intrinsic(typingctx, arr, i):
        if not (isinstance(arr, types.Array) and arr.ndim in (1, 2) and isinstance(i, types.Integer)):
            return None

        def codegen(context, builder, signature, args):
            aryty, ity = signature.args
            ary = context.make_array(aryty)(context, builder, args[0])
            index = [context.cast(builder, args[1], ity, types.intp)]
            index += [context.get_constant(types.intp, 0)] * (aryty.ndim - 1)
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, index,
                                           wraparound=False, boundscheck=False)
            i8p = ir.IntType(8).as_pointer()
            i32 = ir.IntType(32)
            fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
            line = builder.bitcast(ptr, i8p)
            # (address, 1: for a write, 3: keep in all cache levels, 1: data)
            flags = [ir.Constant(i32, 1), ir.Constant(i32, 3), ir.Constant(i32, 1)]
            builder.call(fn, [line] + flags)
            if aryty.ndim == 2:
                builder.call(fn, [builder.gep(line, [ir.Constant(ir.IntType(64), 64)])] + flags)
            return context.get_dummy_value()

        return types.void(arr, i), codegen

    _prefetch = prefetch_intrinsic


@njit(cache=True, nogil=True, inline="always")
def prefetch(arr, i):
    """Starts loading arr[i] (its first two cache lines for a 2-D array) into the caches."""
    _prefetch(arr, i)


@njit(cache=True, nogil=True, inline="always")
def prefetch_lines(flat, start, lines):
    """Starts loading `lines` cache lines of the 1-D array `flat` from flat[start] on (a table row
    of a flat view: start = row * width)."""
    step = 64 // flat.itemsize
    for line in range(lines):
        _prefetch(flat, start + step * line)


@njit(cache=True, nogil=True, inline="always")
def row_lines(row_bytes):
    """How many cache lines of a row of `row_bytes` to prefetch: all of them, at most 8."""
    return min(8, (row_bytes + 63) // 64)


# ----------------------------------------------------------------------------------------------
# Streaming stores
#
# A loop that writes a large output it never reads back (a gather's result) pays for each output
# line twice with ordinary stores: the line is read into the cache before it is written, and
# evicted later. `stream_store(out, i, j, v)` writes out[i, j] with a non-temporal store, which
# goes to memory through write-combining buffers without that read; a loop using it calls
# `store_fence()` before its results are handed on (the end of each chunk). Worth it only for
# outputs larger than the last-level cache (`streaming_pays`): a smaller output that the next op
# reads would have been found in the cache (1e4 rows of 256 bytes, then a sum of them: 1.2x the
# time with streaming stores; 1e5 rows, 25.6 MB against a 32 MB L3: 0.9x for the gather alone).
# On machines other than x86-64 both are plain stores and no fence.

def _stream_store_python(arr, i, j, v):  # pragma: no cover - without Numba nothing streams
    arr[i, j] = v


def _store_fence_python():  # pragma: no cover
    return None


_stream_store = _stream_store_python
_store_fence = _store_fence_python


@on_numba
def _define_streaming():
    global _stream_store, _store_fence
    import platform

    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    x86 = platform.machine().lower() in ("x86_64", "amd64")

    @intrinsic
    def stream_store_intrinsic(typingctx, arr, i, j, v):
        if not (isinstance(arr, types.Array) and arr.ndim == 2 and arr.dtype == v
                and isinstance(i, types.Integer) and isinstance(j, types.Integer)):
            return None

        def codegen(context, builder, signature, args):
            aryty = signature.args[0]
            ary = context.make_array(aryty)(context, builder, args[0])
            index = [context.cast(builder, args[k], signature.args[k], types.intp) for k in (1, 2)]
            ptr = cgutils.get_item_pointer(context, builder, aryty, ary, index,
                                           wraparound=False, boundscheck=False)
            store = builder.store(args[3], ptr)
            if x86:
                store.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
            return context.get_dummy_value()

        return types.void(arr, i, j, v), codegen

    @intrinsic
    def store_fence_intrinsic(typingctx):
        def codegen(context, builder, signature, args):
            if x86:
                fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), []),
                                                    "llvm.x86.sse.sfence")
                builder.call(fn, [])
            return context.get_dummy_value()

        return types.void(), codegen

    _stream_store = stream_store_intrinsic
    _store_fence = store_fence_intrinsic


@njit(cache=True, nogil=True, inline="always")
def stream_store(arr, i, j, v):
    """arr[i, j] = v with a non-temporal store (a plain one off x86-64)."""
    _stream_store(arr, i, j, v)


@njit(cache=True, nogil=True, inline="always")
def store_fence():
    """Orders this thread's streaming stores before what it writes next (x86 `sfence`)."""
    _store_fence()


_llc_bytes = None


def last_level_cache_bytes():
    """The size of the largest CPU cache Linux reports (sysfs), else 32 MiB."""
    global _llc_bytes
    if _llc_bytes is None:
        size = 0
        base = "/sys/devices/system/cpu/cpu0/cache"
        try:
            for entry in os.listdir(base):
                try:
                    with open(os.path.join(base, entry, "size")) as f:
                        text = f.read().strip().upper()
                except OSError:
                    continue
                scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
                digits = text.rstrip("KMG")
                if digits.isdigit():
                    size = max(size, int(digits) * scale)
        except OSError:
            pass
        _llc_bytes = size or (32 << 20)
    return _llc_bytes


def streaming_pays(nbytes):
    """Whether an output of `nbytes` is written with streaming stores: when it is larger than half
    the last-level cache (it would not stay there for the next op anyway)."""
    return nbytes > last_level_cache_bytes() // 2


def chunk_count(work, grain, limit=256):
    """How many chunks `work` units are cut into: about one per `grain` units, at least 1, at most
    `limit` (a function of the shape only, never of the thread count)."""
    return int(max(1, min(limit, work // max(1, grain))))


# ----------------------------------------------------------------------------------------------
# Starting the thread pool
#
# Numba loads its threading layer at the first parallel launch or thread-count query. Numba's
# default order is kept (TBB when its library loads, else OpenMP, else workqueue; the
# NUMBA_THREADING_LAYER variable still chooses). GNU OpenMP, the layer Numba's wheels use on Linux,
# spins its idle threads for about 300,000 polls after every parallel region before sleeping: on a
# busy machine those spinning threads take the cores that other threads (the next region's, or
# another process's) are waiting for, and a neighbour that also spins (a second segflow job, torch's
# own OpenMP pool) makes both crawl. segflow therefore starts the pool with passive waiting
# (OMP_WAIT_POLICY=PASSIVE: idle threads sleep at once) unless the user set OMP_WAIT_POLICY or
# GOMP_SPINCOUNT; the variable is set only while the layer loads (OpenMP reads it once, at load),
# so libraries loaded later (torch's OpenMP) still see the user's environment. The choice was made
# by measurement (benchmarks/threads.py, benchmarks/RESULTS_threads.md): next to torch, passive
# waiting ran the segment kernels 2-5x faster than a 10,000-poll spin and than TBB, and beside a
# second segflow job it was as fast or faster; idle, the settings were within the noise.

_WAIT = ("OMP_WAIT_POLICY", "PASSIVE")
_pool_started = False


def _start_pool():
    global _pool_started
    import numba
    saved = {}
    if not any(k in os.environ for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")):
        saved[_WAIT[0]] = None
        os.environ[_WAIT[0]] = _WAIT[1]
    try:
        numba.get_num_threads()           # loads the threading layer
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:  # pragma: no cover
                os.environ[k] = v
    _pool_started = True


def worker_count():
    """Numba's current thread count (starting the pool, with its wait policy, the first time)."""
    if not HAVE_NUMBA:  # pragma: no cover
        return 1
    if not _pool_started:
        with _launch_lock:
            if not _pool_started:
                _start_pool()
    import numba
    return max(1, numba.get_num_threads())


_planned = [None, 0]     # (NUMBA_NUM_THREADS as last read, the count it gave) before the pool


def planned_workers():
    """The thread count a launch would get, without starting the pool (or importing Numba) when
    it has not started: NUMBA_NUM_THREADS, else the CPUs this process may run on (looked up once
    per value of the variable: the affinity query costs a few microseconds, a small op's whole
    loop). Strategy choices use it; no result depends on it."""
    if _pool_started:
        import numba
        return max(1, numba.get_num_threads())
    env = os.environ.get("NUMBA_NUM_THREADS")
    if _planned[1] and _planned[0] == env:
        return _planned[1]
    try:
        count = max(1, int(env))
    except (TypeError, ValueError):
        try:
            count = max(1, len(os.sched_getaffinity(0)))
        except (AttributeError, OSError):  # pragma: no cover - not Linux
            count = max(1, os.cpu_count() or 1)
    _planned[:] = [env, count]
    return count

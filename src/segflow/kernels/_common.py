"""Shared pieces of the kernels: the BadInput exception, index formatting, Numba import, and the
guard around launches of parallel kernels (`parallel_launch`)."""
import threading

import numpy as np

try:  # Numba is a core dependency; the fallback keeps the package importable without it.
    from numba import njit, prange
    HAVE_NUMBA = True
except ImportError:  # pragma: no cover - exercised only where numba is missing
    HAVE_NUMBA = False
    prange = range

    def njit(*args, **kwargs):
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return lambda f: f


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

"""Shared pieces of the kernels: the BadInput exception, index formatting, Numba import."""
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

"""glibc's malloc set up for arrays of a few MB that come and go (`tune`, run once at import).

An eager step makes and drops many arrays of a few MB (a batch of embedding rows, its gradient, the
temporaries of elementwise ops). glibc serves each from fresh pages (mmap above a threshold that
starts at 128 KiB, or heap memory it gives back to the system whenever more than twice that
threshold is free at the top), so the kernel zero-fills every page again on first touch: measured
on the eager embedding step of benchmarks/embedding.py (1e6 x 64 table, 1e4 ids), 3,700 page
faults a step and 27 ms, against 0 faults and 7-8 ms with the settings below. TensorFlow, PyTorch
and JAX avoid the same cost with their own caching allocators; NumPy has none for large arrays.

`tune()` fixes the mmap threshold at 32 MiB (arrays up to that size reuse freed heap memory) and the
trim threshold at 64 MiB (up to that much free memory is kept for reuse instead of being returned).
It changes nothing where the user set one of glibc's MALLOC_*_ environment variables, where
SEGFLOW_MALLOC=default, or where the C library is not glibc.
"""
import ctypes
import os
import sys

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20
_USER_VARIABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_",
                   "GLIBC_TUNABLES")

tuned = False     # whether tune() changed glibc's settings in this process


def tune():
    """Sets glibc's mmap and trim thresholds as described above; True if it did."""
    global tuned
    if tuned:
        return True
    if not sys.platform.startswith("linux") or os.environ.get("SEGFLOW_MALLOC", "").lower() == "default":
        return False
    if any(k in os.environ for k in _USER_VARIABLES):
        return False
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version             # glibc only: musl's mallopt does nothing
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    tuned = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    return tuned

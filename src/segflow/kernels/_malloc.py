"""glibc's malloc set up for arrays of a few MB that come and go (`tune`, run once at import).

An eager step makes and drops many arrays of a few MB (a batch of embedding rows, its gradient, the
temporaries of elementwise ops). glibc serves each from fresh pages (mmap above a threshold that
starts at 128 KiB, or heap memory it gives back to the system whenever more than twice that
threshold is free at the top), so the kernel zero-fills every page again on first touch: measured
on the eager embedding step of benchmarks/embedding.py (1e6 x 64 table, 1e4 ids), 3,700 page
faults a step and 27 ms, against 0 faults and 7-8 ms with the settings below. TensorFlow, PyTorch
and JAX avoid the same cost with their own caching allocators; NumPy has none for large arrays.

`tune()` fixes the mmap threshold at 128 MiB (arrays up to that size reuse freed heap memory) and
the trim threshold at 256 MiB (up to that much free memory is kept for reuse instead of being
returned); on a machine with less than 8 GiB of memory both scale down with it (1/64 and 1/32 of
it, never below 32 and 64 MiB). Large outputs need it as much as small ones: a fresh 64 MB array
costs about 4 ms of page faults and zero-filling before a kernel writes it, against 1.7 ms to write
memory already mapped (AMD EPYC VM), so a gather of 4e5 rows of 256 B took 14-16 ms with a 32 MiB
threshold and 8.3-8.5 ms with this one, and the gradient of a 1e6 x 16 float32 segment sum (a
64 MB gather) 12-17 ms against 9-11. The price is memory kept by the process after a peak, as the
caching allocators of TensorFlow, PyTorch and JAX keep theirs.
It changes nothing where the user set one of glibc's MALLOC_*_ environment variables, where
SEGFLOW_MALLOC=default, or where the C library is not glibc.
"""
import ctypes
import os
import sys

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 128 << 20      # on a machine with 8 GiB of memory or more (see `thresholds`)
TRIM_THRESHOLD = 256 << 20
_USER_VARIABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "MALLOC_MMAP_MAX_",
                   "GLIBC_TUNABLES")

tuned = False     # whether tune() changed glibc's settings in this process


def thresholds(memory_bytes):
    """(mmap threshold, trim threshold) for a machine with `memory_bytes` of memory."""
    mmap = min(MMAP_THRESHOLD, max(32 << 20, memory_bytes // 64))
    return mmap, min(TRIM_THRESHOLD, max(64 << 20, memory_bytes // 32))


def _memory_bytes():
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 0


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
    mmap, trim = thresholds(_memory_bytes())
    tuned = mallopt(M_MMAP_THRESHOLD, mmap) == 1 and mallopt(M_TRIM_THRESHOLD, trim) == 1
    return tuned

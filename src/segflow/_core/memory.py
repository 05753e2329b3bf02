"""Out of memory: kernels check an output's size before allocating it (`check_alloc`), and every
MemoryError a kernel raises becomes a ResourceExhaustedError naming the op and the request
(`resource_exhausted`, which apply_op and the Session call)."""
import numpy as np

from segflow._core import dtypes, errors
from segflow.kernels import BadInput

__all__ = ["AllocationTooLarge", "memory_limit", "check_alloc", "resource_exhausted"]


class AllocationTooLarge(MemoryError):
    """An output of `shape` and `dtype` needs more bytes than this machine has (`limit`)."""

    def __init__(self, shape, dtype, nbytes, limit):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.nbytes = nbytes
        self.limit = limit
        super().__init__(f"a tensor of shape {list(self.shape)} and type {_np_dtype_name(self.dtype)} needs "
                         f"{_bytes_text(nbytes)}, more than the {_bytes_text(limit)} of memory")


_MEMORY_LIMIT = []


def memory_limit():
    """The bytes of memory this process can have at most: physical memory, or a cgroup's limit."""
    if not _MEMORY_LIMIT:
        import os
        limit = 1 << 62
        try:
            limit = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (AttributeError, ValueError, OSError):
            pass
        for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
            try:
                with open(path) as f:
                    text = f.read().strip()
            except OSError:
                continue
            if text.isdigit() and 0 < int(text) < limit:
                limit = int(text)
        _MEMORY_LIMIT.append(limit)
    return _MEMORY_LIMIT[0]


def check_alloc(shape, dtype, input_name):
    """Call before allocating an output of `shape` and `dtype` (kernels that know their output size):
    raises BadInput(input_name) when the element count exceeds 2**63 - 1 (TF's limit), and
    AllocationTooLarge (a MemoryError: ResourceExhaustedError) when the bytes exceed memory_limit().
    Returns the number of elements."""
    n = 1
    for d in shape:
        n *= int(d)
    if n > 2**63 - 1:
        raise BadInput(input_name, f"the output shape {[int(d) for d in shape]} would have {n} elements, more "
                                   "than 2**63 - 1")
    nbytes = n * np.dtype(dtype).itemsize
    limit = memory_limit()
    if nbytes > limit:
        raise AllocationTooLarge(shape, dtype, nbytes, limit)
    return n


def _np_dtype_name(dt):
    try:
        return dtypes.from_numpy(dt).name
    except TypeError:
        return str(dt)


def _bytes_text(n):
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.2f} {unit} ({n} bytes)"
    return f"{n} bytes"


def resource_exhausted(op_type, node_name, exc, op=None):
    """The ResourceExhaustedError for a MemoryError raised by the kernel of op `op_type`: names the
    op, and the shape, dtype and bytes asked for when known (NumPy's MemoryError carries them)."""
    shape, dtype = getattr(exc, "shape", None), getattr(exc, "dtype", None)
    prefix = errors.op_prefix(op_type, node_name)
    if shape is not None and dtype is not None:
        try:
            shape = [int(d) for d in np.atleast_1d(shape)] if np.ndim(shape) else [int(shape)]
            dtype = np.dtype(dtype)
            nbytes = getattr(exc, "nbytes", None)
            if nbytes is None:
                nbytes = dtype.itemsize
                for d in shape:
                    nbytes *= d
            message = (f"{prefix}: OOM when allocating tensor with shape {shape} and type "
                       f"{_np_dtype_name(dtype)} ({_bytes_text(nbytes)})")
            limit = getattr(exc, "limit", None)
            if limit is not None:
                message += f": more than the {_bytes_text(limit)} of memory"
            return errors.ResourceExhaustedError(None, op, message)
        except (TypeError, ValueError):
            pass
    detail = str(exc)
    return errors.ResourceExhaustedError(None, op, f"{prefix}: out of memory" + (f": {detail}" if detail else ""))

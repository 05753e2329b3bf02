"""Array kernels: NumPy arrays in, NumPy arrays out.

Nothing here knows about graphs, tapes or DType objects. A kernel that finds bad input raises
`BadInput(input_name, message)`; `apply_op` (eager) and the `Session` (graph) turn it into
`errors.InvalidArgumentError` carrying the op type and node name.
"""
from segflow.kernels import _malloc
from segflow.kernels._common import BadInput, index_text, accumulator_dtype, HAVE_NUMBA, njit

__all__ = ["BadInput", "index_text", "accumulator_dtype", "HAVE_NUMBA", "njit"]

_malloc.tune()

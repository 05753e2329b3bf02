"""Segment reductions: unsorted, sorted and sparse segment ops, their gradient, segment counts,
bincount. NumPy arrays in, a NumPy array out; semantics are TensorFlow's.

- api.py: the entry points (re-exported here: `segment.unsorted_segment_reduce(...)`,
  `segment.unsorted_sum(...)`, ...).
- plan.py: one row per reduction kind (`KINDS`), the dtype plan (which dtype the loops read and
  accumulate in), the strategy by shape, thread limits.
- checks.py: the id, index and count checks and their messages.
- loops.py: the compiled Numba loops of the reductions (`cache=True`); idpass.py: the compiled
  passes over the ids alone (the check, the row counts). Nothing is compiled at import; without
  Numba every entry point takes the NumPy path with the same results.
"""
from segflow.kernels.segment import api, checks, idpass, loops, plan
from segflow.kernels.segment.api import *  # noqa: F401,F403
from segflow.kernels.segment.api import __all__  # noqa: F401

"""`enable_check_numerics()`: from then on, an op whose float or complex output holds an infinity or
a NaN raises InvalidArgumentError naming the op, the output and the counts (TF's
`tf.debugging.enable_check_numerics`); `disable_check_numerics()` turns it off.

Enabling wraps the kernel of every registered op (but those that only move or copy values, which
cannot make an infinity or NaN that was not already in their input), so it costs nothing while off
and one `isfinite` pass per float output while on, eagerly, in gradient functions and in Sessions.
A Session keeps the kernels of the plans it already built: enable (or disable) before the first
`run` of the fetches concerned.
"""
import threading

import numpy as np

from segflow._core import errors
from segflow._core.registry import list_ops, lookup_op

__all__ = ["enable_check_numerics", "disable_check_numerics"]

# Ops that only move, copy or describe values: an infinity or NaN in their output was already in
# an input (where its producer was checked), so they are not checked again.
_MOVES_VALUES = frozenset((
    "Const", "Placeholder", "PlaceholderWithDefault", "Identity", "IdentityN", "StopGradient",
    "Reshape", "ExpandDims", "Squeeze", "Transpose", "ConcatV2", "Concat", "Pack", "Unpack", "Split",
    "SplitV", "Slice", "StridedSlice", "Tile", "Fill", "BroadcastTo", "Gather", "GatherV2", "GatherNd",
    "ResourceGather", "ReadVariableOp", "VarHandleOp", "Shape", "ShapeN", "Size", "Rank", "ZerosLike",
    "OnesLike",
))

_lock = threading.Lock()
_original = {}   # op type -> its kernel before enable_check_numerics


def _report(op_type, index, n_outputs, value):
    nan = int(np.count_nonzero(np.isnan(value)))
    pos_inf = int(np.count_nonzero(np.isposinf(value.real if value.dtype.kind == "c" else value)))
    neg_inf = int(np.count_nonzero(np.isneginf(value.real if value.dtype.kind == "c" else value)))
    return (f"\n\n!!! Detected Infinity or NaN in output {index} of op \"{op_type}\" "
            f"(# of outputs: {n_outputs}) !!!\n  dtype: {value.dtype}\n  shape: {value.shape}\n\n"
            f"  # of -Inf elements: {neg_inf}\n  # of +Inf elements: {pos_inf}\n  # of NaN elements: {nan}\n")


def _checked(op_type, kernel):
    def checked_kernel(*args, **attrs):
        out = kernel(*args, **attrs)
        outs = out if isinstance(out, (list, tuple)) else (out,)
        for i, value in enumerate(outs):
            if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "fc":
                if not np.all(np.isfinite(value)):
                    raise errors.InvalidArgumentError(None, None, _report(op_type, i, len(outs), np.asarray(value)))
        return out

    checked_kernel.__name__ = getattr(kernel, "__name__", "kernel")
    checked_kernel.__wrapped__ = kernel
    return checked_kernel


def enable_check_numerics(stack_height_limit=30, path_length_limit=50):
    """Checks every op's float and complex outputs for infinities and NaNs from now on (the limits
    are TF's arguments for its stack traces; accepted, not used). Calling it again does nothing."""
    with _lock:
        if _original:
            return
        for name in list_ops():
            if name in _MOVES_VALUES:
                continue
            opdef = lookup_op(name)
            _original[name] = opdef.kernel
            opdef.kernel = _checked(name, opdef.kernel)


def disable_check_numerics():
    """Stops checking (a no-op if checking is off)."""
    with _lock:
        for name, kernel in _original.items():
            lookup_op(name).kernel = kernel
        _original.clear()

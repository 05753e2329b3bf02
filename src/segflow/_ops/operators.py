"""The operators of Tensor (`x + y`, `1.01 * x`, `x < y`, `-x`, ...), installed on the class when
this module is imported (`_ops/__init__` does): each is the elementwise op, with a fast path for
an eager tensor and a Python int or float."""
import numpy as np

from segflow._core.apply import plain_op
from segflow._core.convert import shared_scalar
from segflow._core.mode import _shared as _ctx, _state as _ctx_state
from segflow._core.tensor import EagerTensor as _EagerTensor, Tensor
from segflow._ops.elementwise import (
    abs, floordiv, floormod, greater, greater_equal, less, less_equal, logical_and, logical_not, logical_or,
    logical_xor, negative, pow, truediv
)

__all__ = []


_FLOAT_MAX = {}     # NumPy float / complex dtype -> the largest finite value of its real part


def _scalar_like(t, y, float_only):
    """The Python number `y` as an eager scalar of eager tensor `t`'s dtype, when that is exactly
    what converting it would give (float and complex tensors; integer tensors with an int that
    fits, unless `float_only`); else None (the general conversion decides)."""
    v = t._value
    kind = v.dtype.kind
    if kind == "f" or kind == "c":
        top = _FLOAT_MAX.get(v.dtype)
        if top is None:
            top = _FLOAT_MAX[v.dtype] = float(np.finfo(v.dtype).max)
        if not -top <= y <= top:
            return None     # out of the dtype's range, inf or nan: the general path decides
        return shared_scalar(y, v.dtype)
    if kind in "iu" and not float_only and type(y) is int:
        info = np.iinfo(v.dtype)
        if info.min <= y <= info.max:
            return shared_scalar(y, v.dtype)
    return None


def _with_scalars(fn, reflected, float_only=False):
    """The operator `fn` with a fast path for an eager tensor and a Python int or float (`x * 1.01`,
    `0.5 + x`): the number becomes a scalar of the tensor's dtype directly, not through the general
    conversion; everything else goes the general way."""
    def op(x, y):
        if type(x) is _EagerTensor and (type(y) is float or type(y) is int) and (_ctx.all_eager or _ctx_state.eager):
            s = _scalar_like(x, y, float_only)
            if s is not None:
                return fn(s, x) if reflected else fn(x, s)
        return fn(y, x) if reflected else fn(x, y)
    return op


# The three commonest operators call their op's plain function (`apply.plain_op`: eager tensors go
# straight to the kernel) instead of add / subtract / multiply, which go through apply_op.
_add, _subtract, _multiply = plain_op("AddV2"), plain_op("Sub"), plain_op("Mul")
for _op_name, _fn, _float_only in (("__add__", _add, False), ("__sub__", _subtract, False), ("__mul__", _multiply, False),
                                   ("__truediv__", truediv, True), ("__floordiv__", floordiv, False),
                                   ("__mod__", floormod, False), ("__pow__", pow, False),
                                   ("__and__", logical_and, False), ("__or__", logical_or, False),
                                   ("__xor__", logical_xor, False)):
    Tensor._override_operator(_op_name, _with_scalars(_fn, False, _float_only))
    Tensor._override_operator("__r" + _op_name[2:], _with_scalars(_fn, True, _float_only))
for _op_name, _fn in (("__lt__", less), ("__le__", less_equal), ("__gt__", greater), ("__ge__", greater_equal)):
    Tensor._override_operator(_op_name, _fn)
Tensor._override_operator("__neg__", negative)
Tensor._override_operator("__abs__", abs)
Tensor._override_operator("__invert__", logical_not)

"""Elementwise ops: unary and binary math with NumPy broadcasting, comparisons, logic, cast.

Each op is one `register_op` call; `_unary` and `_binary` build the common ones. Gradients are in
cwise_grad.py. TensorFlow does not promote dtypes: both inputs of a binary op share one dtype, and a
Python number takes the dtype of the tensor beside it (`t + 1`).
"""

from __future__ import annotations

from typing import Optional
import re

import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.convert import convert_to_tensor, shared_scalar
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.tensor import EagerTensor, Tensor
from segflow._core.apply import apply_op, plain_op
from segflow._core import tensor as _tensor_module
from segflow._core.registry import TensorSpec, hooks, register_op
from segflow.kernels import BadInput
from segflow.kernels.quiet import quietly
from segflow._ops.cast import cast
from segflow._core import fold as tensor_util
from segflow._ops import shape as shape_ops
from segflow._ops.shape import zeros_like
from segflow._core.typing import BinaryOp, Name, ShapeLike, TensorLike, UnaryOp

__all__ = [
    "add", "subtract", "multiply", "divide", "truediv", "realdiv", "div", "div_no_nan", "floordiv",
    "floor_div", "mod", "floormod", "truncatediv", "pow", "negative", "abs", "sign", "sqrt", "rsqrt",
    "square", "exp", "expm1", "log", "log1p", "sin", "cos", "tan", "tanh", "sigmoid", "reciprocal",
    "maximum", "minimum", "squared_difference", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "logical_and", "logical_or", "logical_not", "logical_xor", "where", "where_v2",
    "select", "conj", "real", "imag", "angle",
    "floor", "ceil", "round", "is_nan", "is_inf", "is_finite", "sum_to_shape", "erf", "atan", "asin",
    "acos", "sinh", "cosh", "softplus", "scalar_mul", "add_v2", "neg", "sub", "mul", "complex",
    "xlogy", "xlog1py", "xdivy", "mul_no_nan", "multiply_no_nan", "nextafter",
]

_FLOAT = dtypes.FLOATING
_FLOAT_COMPLEX = dtypes.FLOATING + dtypes.COMPLEX
_NUMERIC = dtypes.NUMERIC
_REAL = dtypes.REAL_NUMERIC
_SIGNED_NUMERIC = tuple(t for t in dtypes.NUMERIC if not t.is_unsigned)


def _infer_unary(op, x, **attrs):
    return [TensorSpec(x.dtype, x.shape)]


def _infer_binary(op, x, y, **attrs):
    try:
        shape = tensor_shape.broadcast_shape(x.shape, y.shape)
    except ValueError:
        raise errors.invalid_input(op, "y", f"shape {y.shape} does not broadcast with shape {x.shape} of 'x'") \
            from None
    return [TensorSpec(x.dtype, shape)]


def _infer_compare(op, x, y, **attrs):
    return [TensorSpec(dtypes.bool, _infer_binary(op, x, y)[0].shape)]


def _unary(name, kernel, allowed=_NUMERIC):
    register_op(name, inputs=("x",), attrs={"T": "x"}, allowed={"T": allowed}, infer=_infer_unary, kernel=kernel)


def _binary(name, kernel, allowed=_NUMERIC, infer=_infer_binary, inputs=("x", "y")):
    register_op(name, inputs=inputs, attrs={"T": inputs}, allowed={"T": allowed}, infer=infer, kernel=kernel)


def _quiet(fn):
    """Runs `fn` with NumPy's float warnings off: division by zero gives inf/nan as in TF."""
    def kernel(*args):
        return quietly(fn, *args)
    kernel.__name__ = getattr(fn, "__name__", "kernel")
    return kernel


def _int_div_check(fn):
    def kernel(x, y):
        if x.dtype.kind in "iu" and np.any(y == 0):
            raise BadInput("y", "Integer division by zero")
        return quietly(fn, x, y)
    return kernel


# -- binary arithmetic
_binary("AddV2", np.add)
_binary("Add", np.add, allowed=_NUMERIC + (dtypes.string,))   # TF's first Add: also joins strings
_binary("Sub", np.subtract)
_binary("Mul", np.multiply)
_binary("RealDiv", _quiet(np.true_divide), allowed=_FLOAT_COMPLEX)
_binary("Div", _int_div_check(lambda x, y: np.floor_divide(x, y) if x.dtype.kind in "iu" else np.true_divide(x, y)))
_binary("DivNoNan", _quiet(lambda x, y: np.where(y == 0, np.zeros((), x.dtype), np.true_divide(x, np.where(y == 0, np.ones((), y.dtype), y))).astype(x.dtype, copy=False)),
        allowed=_FLOAT_COMPLEX)


def _zero_where(zero_input, fn):
    """TF's xlogy/xdivy/mul_no_nan kernels: fn(x, y), but exactly 0 wherever input `zero_input`
    (0 for x, 1 for y) is 0, whatever the other one holds (0, inf, nan)."""
    def kernel(x, y):
        out = quietly(fn, x, y)
        return np.where((x, y)[zero_input] == 0, np.zeros((), x.dtype), out).astype(x.dtype, copy=False)
    kernel.__name__ = getattr(fn, "__name__", "kernel")
    return kernel


_binary("Xlogy", _zero_where(0, lambda x, y: x * np.log(y)), allowed=_FLOAT_COMPLEX)
_binary("Xlog1py", _zero_where(0, lambda x, y: x * np.log1p(y)), allowed=_FLOAT_COMPLEX)
_binary("Xdivy", _zero_where(0, np.true_divide), allowed=_FLOAT_COMPLEX)
_binary("MulNoNan", _zero_where(1, np.multiply), allowed=_FLOAT_COMPLEX)
_binary("NextAfter", np.nextafter, allowed=(dtypes.float32, dtypes.float64), inputs=("x1", "x2"))
_binary("FloorDiv", _int_div_check(lambda x, y: np.floor_divide(x, y) if x.dtype.kind in "iu"
                                   else np.floor(np.true_divide(x, y))), allowed=_REAL)  # floats: floor(x / y), as TF
_binary("FloorMod", _int_div_check(np.mod), allowed=_REAL)
_binary("TruncateDiv", _int_div_check(lambda x, y: np.trunc(np.true_divide(x, y)).astype(x.dtype) if x.dtype.kind == "f"
                                      else (np.abs(x) // np.abs(y)) * np.sign(x) * np.sign(y)), allowed=_REAL)
def _pow_kernel(x, y):
    if x.dtype.kind in "iu" and np.any(y < 0):
        raise BadInput("y", "Integers to negative integer powers are not allowed")
    return quietly(np.power, x, y)


_binary("Pow", _pow_kernel)
_binary("Maximum", np.maximum, allowed=_REAL)
_binary("Minimum", np.minimum, allowed=_REAL)
_binary("SquaredDifference", lambda x, y: np.square(x - y) if x.dtype.kind != "c" else (x - y) * np.conj(x - y))

# -- comparisons and logic
_binary("Equal", np.equal, allowed=dtypes.ALL, infer=_infer_compare)
_binary("NotEqual", np.not_equal, allowed=dtypes.ALL, infer=_infer_compare)
_binary("Less", np.less, allowed=_REAL, infer=_infer_compare)
_binary("LessEqual", np.less_equal, allowed=_REAL, infer=_infer_compare)
_binary("Greater", np.greater, allowed=_REAL, infer=_infer_compare)
_binary("GreaterEqual", np.greater_equal, allowed=_REAL, infer=_infer_compare)
_binary("LogicalAnd", np.logical_and, allowed=(dtypes.bool,))
_binary("LogicalOr", np.logical_or, allowed=(dtypes.bool,))
_binary("LogicalXor", np.logical_xor, allowed=(dtypes.bool,))
_unary("LogicalNot", np.logical_not, allowed=(dtypes.bool,))

# -- unary math
_unary("Neg", np.negative, allowed=_SIGNED_NUMERIC + tuple(t for t in dtypes.INTEGER if t.is_unsigned))
_unary("Abs", np.abs, allowed=_REAL)
_unary("Sign", np.sign)
_unary("Sqrt", _quiet(np.sqrt), allowed=_FLOAT_COMPLEX)
_unary("Rsqrt", _quiet(lambda x: np.reciprocal(np.sqrt(x))), allowed=_FLOAT_COMPLEX)
_unary("Square", np.square)
_unary("Exp", _quiet(np.exp), allowed=_FLOAT_COMPLEX)
_unary("Expm1", _quiet(np.expm1), allowed=_FLOAT_COMPLEX)
_unary("Log", _quiet(np.log), allowed=_FLOAT_COMPLEX)
_unary("Log1p", _quiet(np.log1p), allowed=_FLOAT_COMPLEX)
_unary("Sin", np.sin, allowed=_FLOAT_COMPLEX)
_unary("Cos", np.cos, allowed=_FLOAT_COMPLEX)
_unary("Tan", _quiet(np.tan), allowed=_FLOAT_COMPLEX)
_unary("Asin", _quiet(np.arcsin), allowed=_FLOAT_COMPLEX)
_unary("Acos", _quiet(np.arccos), allowed=_FLOAT_COMPLEX)
_unary("Atan", np.arctan, allowed=_FLOAT_COMPLEX)
_unary("Sinh", _quiet(np.sinh), allowed=_FLOAT_COMPLEX)
_unary("Cosh", _quiet(np.cosh), allowed=_FLOAT_COMPLEX)
_unary("Tanh", np.tanh, allowed=_FLOAT_COMPLEX)
_unary("Reciprocal", _quiet(np.reciprocal), allowed=_FLOAT_COMPLEX)
_unary("Floor", np.floor, allowed=_FLOAT)
_unary("Ceil", np.ceil, allowed=_FLOAT)
_unary("Round", np.round, allowed=_REAL)


def _sigmoid_expr(x):
    # 1 / (1 + exp(-x)), each step in place on one temporary (the same roundings)
    # (the 1 as a 0-d array of x's dtype: a Python int costs NumPy 0.3 us more an op)
    t = np.asarray(np.negative(x))      # (0-d inputs give a NumPy scalar)
    one = shared_scalar(1, t.dtype)._value
    np.exp(t, out=t)
    np.add(t, one, out=t)
    np.true_divide(one, t, out=t)
    return t


def _sigmoid(x):
    return quietly(_sigmoid_expr, x)     # exp(-x) overflows to inf for x below about -88: 0


def _softplus_expr(x):
    return np.logaddexp(np.zeros((), x.dtype), x).astype(x.dtype, copy=False)


def _softplus(x):
    return quietly(_softplus_expr, x)


def _erf(x):
    import math
    return np.vectorize(math.erf, otypes=[x.dtype])(x) if x.size else x.copy()


_unary("Sigmoid", _sigmoid, allowed=_FLOAT_COMPLEX)
_unary("Softplus", _softplus, allowed=_FLOAT)
_unary("Erf", _erf, allowed=_FLOAT)


def _infer_predicate(op, x):
    return [TensorSpec(dtypes.bool, x.shape)]


for _name, _fn in (("IsNan", np.isnan), ("IsInf", np.isinf), ("IsFinite", np.isfinite)):
    register_op(_name, inputs=("x",), attrs={"T": "x"}, allowed={"T": _FLOAT}, infer=_infer_predicate, kernel=_fn)


# -- complex parts
def _infer_to_real(op, x, **attrs):
    return [TensorSpec(x.dtype.real_dtype, x.shape)]


def _infer_complex(op, real, imag, **attrs):
    out = dtypes.complex64 if real.dtype == dtypes.float32 else dtypes.complex128
    return [TensorSpec(out, tensor_shape.broadcast_shape(real.shape, imag.shape))]


register_op("Conj", inputs=("input",), attrs={"T": "input"}, infer=_infer_unary, kernel=np.conj)
register_op("Real", inputs=("input",), attrs={"T": "input"}, infer=_infer_to_real,
            kernel=lambda x: np.real(x).copy() if x.dtype.kind == "c" else x)
register_op("Imag", inputs=("input",), attrs={"T": "input"}, infer=_infer_to_real,
            kernel=lambda x: np.imag(x).copy() if x.dtype.kind == "c" else np.zeros_like(x))
register_op("Angle", inputs=("input",), attrs={"T": "input"}, infer=_infer_to_real,
            kernel=lambda x: np.angle(x).astype(np.real(x).dtype))
register_op("Complex", inputs=("real", "imag"), attrs={"T": ("real", "imag")}, allowed={"T": (dtypes.float32, dtypes.float64)},
            infer=_infer_complex,
            kernel=lambda r, i: (r + 1j * i).astype(np.complex64 if r.dtype == np.float32 else np.complex128))


# -- select
def _infer_select(op, condition, x, y):
    if condition.dtype != dtypes.bool:
        raise errors.invalid_input(op, "condition", f"must be bool, not {condition.dtype.name}")
    try:
        shape = tensor_shape.broadcast_shape(condition.shape, tensor_shape.broadcast_shape(x.shape, y.shape))
    except ValueError as e:
        raise errors.invalid_input(op, "x", str(e)) from None
    return [TensorSpec(x.dtype, shape)]


register_op("SelectV2", inputs=("condition", "x", "y"), attrs={"T": ("x", "y"), "Tcondition": "condition"},
            allowed={"Tcondition": (dtypes.bool,)}, infer=_infer_select,
            kernel=lambda c, x, y: np.where(c, x, y))


# -- sum to shape: reduces a broadcast gradient back to an input's shape
def _infer_sum_to_shape(op, x, shape):
    return [TensorSpec(x.dtype, tensor_util.constant_value_as_shape(shape))]


def _sum_to_shape_kernel(x, shape):
    shape = tuple(int(d) for d in shape)
    if x.shape == shape:
        return x
    lead = x.ndim - len(shape)
    if lead < 0:
        raise ValueError(f"cannot reduce shape {x.shape} to the longer shape {shape}")
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape) if d == 1 and x.shape[lead + i] != 1)
    return np.sum(x, axis=axes, dtype=x.dtype).reshape(shape)


register_op("SumToShape", inputs=("x", "shape"), attrs={"T": "x", "Tshape": "shape"},
            allowed={"Tshape": (dtypes.int32, dtypes.int64)}, infer=_infer_sum_to_shape, kernel=_sum_to_shape_kernel)


# ----------------------------------------------------------------------------------------------
# Public functions


def add(x: TensorLike, y: TensorLike, name: Name = None) -> Tensor:
    """x + y elementwise, with broadcasting."""
    return apply_op("AddV2", x, y, name=name)


add_v2 = add


def subtract(x: TensorLike, y: TensorLike, name: Name = None) -> Tensor:
    """x - y elementwise, with broadcasting."""
    return apply_op("Sub", x, y, name=name)


sub = subtract


def multiply(x: TensorLike, y: TensorLike, name: Name = None) -> Tensor:
    """x * y elementwise, with broadcasting."""
    return apply_op("Mul", x, y, name=name)


mul = multiply


def scalar_mul(scalar: TensorLike, x: TensorLike, name: Name = None) -> Tensor:
    """scalar * x; an IndexedSlices `x` stays sparse (its values are scaled)."""
    if isinstance(x, IndexedSlices):
        return IndexedSlices(multiply(scalar, x.values, name=name), x.indices, x.dense_shape)
    return multiply(scalar, x, name=name)


def realdiv(x: TensorLike, y: TensorLike, name: Name = None) -> Tensor:
    """x / y for float or complex tensors (no integer casting; see `truediv`)."""
    return apply_op("RealDiv", x, y, name=name)


def _as_tensors(x, y):
    if not isinstance(x, Tensor):
        x = convert_to_tensor(x, preferred_dtype=getattr(y, "dtype", None))
    if not isinstance(y, Tensor):
        y = convert_to_tensor(y, dtype_hint=x.dtype)
    return x, y


def truediv(x: TensorLike, y: TensorLike, name: Name = None) -> Tensor:
    """x / y; integer inputs are cast to float first (int8/int16 -> float32, int32/int64 -> float64)."""
    x, y = _as_tensors(x, y)
    if x.dtype.is_integer and y.dtype == x.dtype:
        target = dtypes.float32 if x.dtype.size <= 2 else dtypes.float64
        x, y = cast(x, target), cast(y, target)
    return apply_op("RealDiv", x, y, name=name)


def divide(x: TensorLike, y: TensorLike, name: Name = None) -> Tensor:
    """x / y elementwise (integers are divided as floats, like Python 3)."""
    return truediv(x, y, name=name)


def div(x: TensorLike, y: TensorLike, name: Name = None) -> Tensor:
    """TF1 `div`: floor division for integers, true division for floats."""
    return apply_op("Div", x, y, name=name)


def div_no_nan(x: TensorLike, y: TensorLike, name: Name = None) -> Tensor:
    """x / y, with 0 where y == 0 (float or complex); the gradient is 0 there too."""
    return apply_op("DivNoNan", x, y, name=name)


def xlogy(x: TensorLike, y: TensorLike, name: Name = None) -> Tensor:
    """x * log(y), and 0 where x == 0 even if y is 0, inf or nan (float or complex)."""
    return apply_op("Xlogy", x, y, name=name)


def xlog1py(x: TensorLike, y: TensorLike, name: Name = None) -> Tensor:
    """x * log1p(y), and 0 where x == 0 whatever y is (float or complex)."""
    return apply_op("Xlog1py", x, y, name=name)


def xdivy(x: TensorLike, y: TensorLike, name: Name = None) -> Tensor:
    """x / y, and 0 where x == 0 whatever y is (float or complex)."""
    return apply_op("Xdivy", x, y, name=name)


def mul_no_nan(x: TensorLike, y: TensorLike, name: Name = None) -> Tensor:
    """x * y, and 0 where y == 0 even if x is inf or nan (not symmetric: y nan/inf with x == 0 gives
    nan). TF's raw op `gen_math_ops.mul_no_nan`."""
    return apply_op("MulNoNan", x, y, name=name)


def multiply_no_nan(x: TensorLike, y: TensorLike, name: Name = None) -> Tensor:
    """tf.math.multiply_no_nan: `mul_no_nan` with y converted to x's dtype; differing dtypes raise
    TypeError."""
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    y = y if isinstance(y, Tensor) else convert_to_tensor(y, dtype=x.dtype)
    if x.dtype != y.dtype:
        raise TypeError(f"`x` and `y` must have the same dtype, got {x.dtype!r} != {y.dtype!r}")
    return apply_op("MulNoNan", x, y, name=name)


def nextafter(x1: TensorLike, x2: TensorLike, name: Name = None) -> Tensor:
    """The next representable value after x1 in the direction of x2 (float32/float64); no gradient."""
    return apply_op("NextAfter", x1, x2, name=name)


def floordiv(x: TensorLike, y: TensorLike, name: Name = None) -> Tensor:
    """floor(x / y) elementwise (integers: rounds toward -inf; integer division by zero raises)."""
    return apply_op("FloorDiv", x, y, name=name)


floor_div = floordiv


def floormod(x: TensorLike, y: TensorLike, name: Name = None) -> Tensor:
    """x - floor(x / y) * y: the remainder with the sign of y (Python's %)."""
    return apply_op("FloorMod", x, y, name=name)


mod = floormod


def truncatediv(x: TensorLike, y: TensorLike, name: Name = None) -> Tensor:
    """x / y rounded toward zero (C's integer division)."""
    return apply_op("TruncateDiv", x, y, name=name)


def pow(x: TensorLike, y: TensorLike, name: Name = None) -> Tensor:
    """x ** y elementwise; integer x to a negative integer power raises InvalidArgumentError."""
    return apply_op("Pow", x, y, name=name)




def abs(x: TensorLike, name: Name = None) -> Tensor:
    """|x|; for complex x the modulus (a real tensor)."""
    x = convert_to_tensor(x) if not isinstance(x, Tensor) else x
    if x.dtype.is_complex:
        return apply_op("ComplexAbs", x, name=name)
    return apply_op("Abs", x, name=name)


def _infer_complex_abs(op, x):
    return [TensorSpec(x.dtype.real_dtype, x.shape)]


register_op("ComplexAbs", inputs=("x",), attrs={"T": "x"}, allowed={"T": dtypes.COMPLEX},
            infer=_infer_complex_abs, kernel=np.abs)


def _op_fn(op_type, doc, annotations, name):
    fn = plain_op(op_type)     # apply_op(op_type, ..., name=name), eager tensors straight to the kernel
    fn.__doc__ = doc
    fn.__annotations__ = annotations
    fn.__name__ = fn.__qualname__ = name or re.sub(r"(?<!^)(?=[A-Z])", "_", op_type).lower()   # is_nan
    return fn


def _unary_fn(op_type: str, doc: str, name: Optional[str] = None) -> UnaryOp:
    return _op_fn(op_type, doc, {"x": TensorLike, "name": Name, "return": Tensor}, name)


negative = _unary_fn("Neg", "-x elementwise.", "negative")
neg = negative


sign = _unary_fn("Sign", "-1, 0 or 1 by the sign of x (x/|x| for complex).")
sqrt = _unary_fn("Sqrt", "Square root.")
rsqrt = _unary_fn("Rsqrt", "1 / sqrt(x).")
square = _unary_fn("Square", "x * x.")
exp = _unary_fn("Exp", "e ** x.")
expm1 = _unary_fn("Expm1", "e ** x - 1, accurate near 0.")
log = _unary_fn("Log", "Natural logarithm.")
log1p = _unary_fn("Log1p", "log(1 + x), accurate near 0.")
sin = _unary_fn("Sin", "Sine.")
cos = _unary_fn("Cos", "Cosine.")
tan = _unary_fn("Tan", "Tangent.")
asin = _unary_fn("Asin", "Arcsine.")
acos = _unary_fn("Acos", "Arccosine.")
atan = _unary_fn("Atan", "Arctangent.")
sinh = _unary_fn("Sinh", "Hyperbolic sine.")
cosh = _unary_fn("Cosh", "Hyperbolic cosine.")
tanh = _unary_fn("Tanh", "Hyperbolic tangent.")
sigmoid = _unary_fn("Sigmoid", "1 / (1 + exp(-x)).")
softplus = _unary_fn("Softplus", "log(1 + exp(x)).")
erf = _unary_fn("Erf", "The error function.")
reciprocal = _unary_fn("Reciprocal", "1 / x.")
floor = _unary_fn("Floor", "Largest integer not greater than x.")
ceil = _unary_fn("Ceil", "Smallest integer not less than x.")
round = _unary_fn("Round", "Round half to even.")
is_nan = _unary_fn("IsNan", "True where x is NaN.")
is_inf = _unary_fn("IsInf", "True where x is +-inf.")
is_finite = _unary_fn("IsFinite", "True where x is finite.")
logical_not = _unary_fn("LogicalNot", "Elementwise NOT of a bool tensor.")


def _binary_fn(op_type: str, doc: str) -> BinaryOp:
    return _op_fn(op_type, doc, {"x": TensorLike, "y": TensorLike, "name": Name, "return": Tensor}, None)


maximum = _binary_fn("Maximum", "Elementwise max(x, y), with broadcasting.")
minimum = _binary_fn("Minimum", "Elementwise min(x, y), with broadcasting.")
squared_difference = _binary_fn("SquaredDifference", "(x - y) * conj(x - y).")
equal = _binary_fn("Equal", "x == y elementwise (bool).")
not_equal = _binary_fn("NotEqual", "x != y elementwise (bool).")
less = _binary_fn("Less", "x < y elementwise (bool).")
less_equal = _binary_fn("LessEqual", "x <= y elementwise (bool).")
greater = _binary_fn("Greater", "x > y elementwise (bool).")
greater_equal = _binary_fn("GreaterEqual", "x >= y elementwise (bool).")
logical_and = _binary_fn("LogicalAnd", "Elementwise AND of bool tensors.")
logical_or = _binary_fn("LogicalOr", "Elementwise OR of bool tensors.")
logical_xor = _binary_fn("LogicalXor", "Elementwise XOR of bool tensors.")


def where_v2(condition: TensorLike, x: Optional[TensorLike] = None, y: Optional[TensorLike] = None,
             name: Name = None) -> Tensor:
    """Picks x where `condition` is true, else y (broadcasting all three). With only `condition`,
    the coordinates of its true elements (int64, shape [n, rank])."""
    if x is None and y is None:
        return apply_op("Where", condition, name=name)
    if x is None or y is None:
        raise ValueError("x and y must both be given, or neither")
    return apply_op("SelectV2", condition, x, y, name=name)


def where(condition: TensorLike, x: Optional[TensorLike] = None, y: Optional[TensorLike] = None,
          name: Name = None) -> Tensor:
    """TF2's `where`: the same as `where_v2`."""
    return where_v2(condition, x, y, name=name)


def select(condition: TensorLike, x: TensorLike, y: TensorLike, name: Name = None) -> Tensor:
    """TF1's `select`: x where `condition` is true, else y. As in TF1, a vector condition with matrix
    (or higher-rank) x picks whole rows (condition[i] chooses x[i] or y[i]); otherwise the three
    broadcast as in `where_v2`."""
    if not isinstance(condition, Tensor):
        condition = convert_to_tensor(condition)
    if not isinstance(x, Tensor):
        x = convert_to_tensor(x, preferred_dtype=getattr(y, "dtype", None))
    if condition.shape.rank == 1 and x.shape.rank is not None and x.shape.rank > 1:
        condition = shape_ops.reshape(condition, [-1] + [1] * (x.shape.rank - 1))
    return apply_op("SelectV2", condition, x, y, name=name)


def _infer_where(op, condition):
    return [TensorSpec(dtypes.int64, (None, condition.shape.rank))]


register_op("Where", inputs=("condition",), attrs={"T": "condition"}, infer=_infer_where,
            kernel=lambda c: np.argwhere(c).astype(np.int64))


def conj(x: TensorLike, name: Name = None) -> Tensor:
    """Complex conjugate; the identity for real tensors."""
    if type(x) is EagerTensor and x._value.dtype.kind != "c":   # gradients ask this of every Mul
        return x
    if not isinstance(x, Tensor):
        x = convert_to_tensor(x)
    if not x.dtype.is_complex:
        return x
    return apply_op("Conj", x, name=name)


def real(input: TensorLike, name: Name = None) -> Tensor:
    """The real part of a complex tensor (float32/float64); a real tensor itself."""
    if not isinstance(input, Tensor):
        input = convert_to_tensor(input)
    if not input.dtype.is_complex:
        return input
    return apply_op("Real", input, name=name)


def imag(input: TensorLike, name: Name = None) -> Tensor:
    """The imaginary part of a complex tensor (float32/float64); zeros for a real tensor."""
    if not isinstance(input, Tensor):
        input = convert_to_tensor(input)
    if not input.dtype.is_complex:
        return zeros_like(input, name=name)
    return apply_op("Imag", input, name=name)


def angle(input: TensorLike, name: Name = None) -> Tensor:
    """The argument of a complex tensor, in (-pi, pi]; for a real tensor pi where x < 0, else 0."""
    return apply_op("Angle", input, name=name)


def complex(real: TensorLike, imag: TensorLike, name: Name = None) -> Tensor:
    """real + 1j * imag (float32 -> complex64, float64 -> complex128), with broadcasting."""
    return apply_op("Complex", real, imag, name=name)


def sum_to_shape(x: TensorLike, shape: ShapeLike, name: Name = None) -> Tensor:
    """Sums `x` over the axes along which `shape` was broadcast to x's shape (a gradient helper)."""
    return apply_op("SumToShape", x, shape, name=name)


hooks.add = add
_tensor_module._EQUALITY.equal = equal          # the == / != of TF2 tensors
_tensor_module._EQUALITY.not_equal = not_equal

"""Gradients of the elementwise ops in cwise_ops.py. Complex gradients conjugate (TF's convention:
the gradient of a real loss w.r.t. z is dL/d(conj z))."""
import numpy as np

from segflow._core import mode as context
from segflow._core.registry import NotDifferentiable, RegisterGradient
from segflow._core.convert import shared_scalar
from segflow._core.tensor import EagerTensor
from segflow._core.apply import apply_op, plain_op
from segflow._core.registry import register_op
from segflow._ops import elementwise as cw
from segflow._ops import shape as shape_ops
from segflow._ops import cast as cast_ops

_Eager = EagerTensor


def _scalar(value, dtype):
    """The constant `value` of `dtype` in a gradient formula: eagerly one shared read-only scalar
    (`convert.shared_scalar`), in a graph a Const node."""
    if not context.executing_eagerly():
        return cast_ops.cast(value, dtype)
    return shared_scalar(value, dtype.np)


def _skip(op):
    """Input positions that need no gradient (TF's `op.skip_input_indices`): set by GradientTape for
    inputs not on a path from a source, so e.g. Mul skips the product for a constant factor."""
    return getattr(op, "skip_input_indices", None) or ()


def _unbroadcast(grad, x):
    """`grad` (of the broadcast shape) summed back to the shape of input `x`."""
    if type(grad) is _Eager and type(x) is _Eager:
        if grad._value.shape == x._value.shape:
            return grad
    else:
        gs, xs = grad.shape, x.shape
        if gs.is_fully_defined() and xs.is_fully_defined() and gs.as_list() == xs.as_list():
            return grad
    return cw.sum_to_shape(grad, shape_ops.shape(x))


_mul = plain_op("Mul")     # cw.multiply without apply_op's dispatch (see apply.plain_op)


# The three most common gradients read `op.skip_input_indices` directly (every Operation has it):
# a call less on every backward step.
@RegisterGradient("Add")
@RegisterGradient("AddV2")
def _add_grad(op, grad):
    x, y = op.inputs
    skip = op.skip_input_indices or ()
    return (None if 0 in skip else _unbroadcast(grad, x),
            None if 1 in skip else _unbroadcast(grad, y))


@RegisterGradient("Sub")
def _sub_grad(op, grad):
    x, y = op.inputs
    skip = op.skip_input_indices or ()
    return (None if 0 in skip else _unbroadcast(grad, x),
            None if 1 in skip else _unbroadcast(cw.negative(grad), y))


@RegisterGradient("Mul")
def _mul_grad(op, grad):
    x, y = op.inputs
    skip = op.skip_input_indices or ()
    return (None if 0 in skip else _unbroadcast(_mul(grad, cw.conj(y)), x),
            None if 1 in skip else _unbroadcast(_mul(cw.conj(x), grad), y))


def _quotient_grad(op, grad, divide):
    """d(x/y)/dx = 1/conj(y), d(x/y)/dy = -conj(x)/conj(y)^2, with `divide` the op's own division
    (realdiv, TF1 div, div_no_nan) so the gradient keeps its zero-division rule."""
    x, y = op.inputs
    skip = _skip(op)
    cx, cy = cw.conj(x), cw.conj(y)
    return (None if 0 in skip else _unbroadcast(divide(grad, cy), x),
            None if 1 in skip else
            _unbroadcast(cw.multiply(grad, divide(divide(cw.negative(cx), cy), cy)), y))


@RegisterGradient("RealDiv")
def _real_div_grad(op, grad):
    return _quotient_grad(op, grad, cw.realdiv)


@RegisterGradient("Div")
def _div_grad(op, grad):
    return _quotient_grad(op, grad, cw.div)


@RegisterGradient("DivNoNan")
def _div_no_nan_grad(op, grad):
    return _quotient_grad(op, grad, cw.div_no_nan)


# xlogy, xlog1py, xdivy and mul_no_nan follow TF's math_grad.py term for term (its masks and zero
# rules, and no conjugation for complex inputs, as there).
def _partials(op, grad, partial_x, partial_y):
    x, y = op.inputs
    skip = _skip(op)
    return (None if 0 in skip else _unbroadcast(cw.multiply(partial_x, grad), x),
            None if 1 in skip else _unbroadcast(cw.multiply(partial_y, grad), y))


def _not_zero(x):
    """1 where x != 0, else 0, in x's dtype."""
    return cast_ops.cast(cw.not_equal(x, _scalar(0, x.dtype)), x.dtype)


@RegisterGradient("Xlogy")
def _xlogy_grad(op, grad):
    # d/dx = log(y), d/dy = x / y; both 0 where x == 0.
    x, y = op.inputs
    return _partials(op, grad, cw.xlogy(_not_zero(x), y), cw.xdivy(x, y))


@RegisterGradient("Xlog1py")
def _xlog1py_grad(op, grad):
    x, y = op.inputs
    return _partials(op, grad, cw.xlog1py(_not_zero(x), y), cw.xdivy(x, cw.add(y, _scalar(1, y.dtype))))


@RegisterGradient("Xdivy")
def _xdivy_grad(op, grad):
    x, y = op.inputs
    return _partials(op, grad, cw.xdivy(_not_zero(x), y), cw.xdivy(cw.negative(x), cw.square(y)))


@RegisterGradient("MulNoNan")
def _mul_no_nan_grad(op, grad):
    # dx = mul_no_nan(grad, y), dy = mul_no_nan(x, grad): 0 where the second factor is 0.
    x, y = op.inputs
    skip = _skip(op)
    return (None if 0 in skip else _unbroadcast(cw.mul_no_nan(grad, y), x),
            None if 1 in skip else _unbroadcast(cw.mul_no_nan(x, grad), y))


@RegisterGradient("Pow")
def _pow_grad(op, grad):
    # d(x^y)/dx = y x^(y-1); d(x^y)/dy = x^y log(x), taken as 0 where x <= 0 (real) or x == 0.
    x, y = op.inputs
    z = op.outputs[0]
    skip = _skip(op)
    cx, cy, cz = cw.conj(x), cw.conj(y), cw.conj(z)
    gx = None if 0 in skip else cw.multiply(grad, cw.multiply(cy, cw.pow(cx, cw.subtract(cy, _scalar(1, y.dtype)))))
    if 1 in skip:         # a constant exponent (x ** 2): no log(x) terms at all, as TF skips them
        return _unbroadcast(gx, x), None
    zero = shape_ops.zeros_like(x)
    if x.dtype.is_complex:
        safe = cw.not_equal(x, zero)
    else:
        safe = cw.greater(x, zero)
    log_x = cw.where(safe, cw.log(cw.where(safe, cx, shape_ops.ones_like(x))), zero)
    gy = cw.multiply(grad, cw.multiply(cz, log_x))
    return None if gx is None else _unbroadcast(gx, x), _unbroadcast(gy, y)


@RegisterGradient("Maximum")
def _maximum_grad(op, grad):
    # Ties send the gradient to x (TF's rule: x >= y).
    x, y = op.inputs
    mask = cw.greater_equal(x, y)
    zeros = shape_ops.zeros_like(grad)
    return _unbroadcast(cw.where(mask, grad, zeros), x), _unbroadcast(cw.where(mask, zeros, grad), y)


@RegisterGradient("Minimum")
def _minimum_grad(op, grad):
    x, y = op.inputs
    mask = cw.less_equal(x, y)
    zeros = shape_ops.zeros_like(grad)
    return _unbroadcast(cw.where(mask, grad, zeros), x), _unbroadcast(cw.where(mask, zeros, grad), y)


@RegisterGradient("SquaredDifference")
def _squared_difference_grad(op, grad):
    # f = (x - y) conj(x - y) is real: for complex inputs only the real part of grad reaches it, and
    # dL/d conj(x) = 2 Re(grad) (x - y).
    x, y = op.inputs
    if grad.dtype.is_complex:
        grad = cast_ops.cast(cw.real(grad), grad.dtype)
    d = cw.multiply(cw.multiply(grad, _scalar(2, grad.dtype)), cw.subtract(x, y))
    return _unbroadcast(d, x), _unbroadcast(cw.negative(d), y)


@RegisterGradient("FloorDiv")
def _floor_div_grad(op, grad):
    return None, None


@RegisterGradient("FloorMod")
def _floor_mod_grad(op, grad):
    x, y = op.inputs
    q = cw.floordiv(x, y)
    return _unbroadcast(grad, x), _unbroadcast(cw.multiply(grad, cw.negative(q)), y)


@RegisterGradient("Neg")
def _neg_grad(op, grad):
    return cw.negative(grad)


@RegisterGradient("Abs")
def _abs_grad(op, grad):
    return cw.multiply(grad, cw.sign(op.inputs[0]))


@RegisterGradient("Sign")
def _sign_grad(op, grad):
    # Zero almost everywhere (TF returns zeros rather than None).
    return shape_ops.zeros_like(op.inputs[0])


@RegisterGradient("ComplexAbs")
def _complex_abs_grad(op, grad):
    x = op.inputs[0]
    y = op.outputs[0]
    g = cw.complex(grad, shape_ops.zeros_like(grad))
    ratio = cw.div_no_nan(x, cw.complex(y, shape_ops.zeros_like(y)))
    return cw.multiply(g, ratio)


@RegisterGradient("Square")
def _square_grad(op, grad):
    x = op.inputs[0]
    return cw.multiply(grad, cw.multiply(_scalar(2, x.dtype), cw.conj(x)))


@RegisterGradient("Sqrt")
def _sqrt_grad(op, grad):
    y = op.outputs[0]
    return cw.realdiv(cw.multiply(grad, _scalar(0.5, y.dtype)), cw.conj(y))


@RegisterGradient("Rsqrt")
def _rsqrt_grad(op, grad):
    # d/dx x^-1/2 = -1/2 y^3
    y = op.outputs[0]
    cy = cw.conj(y)
    return cw.multiply(grad, cw.multiply(_scalar(-0.5, y.dtype), cw.multiply(cy, cw.multiply(cy, cy))))


@RegisterGradient("Exp")
def _exp_grad(op, grad):
    return cw.multiply(grad, cw.conj(op.outputs[0]))


@RegisterGradient("Expm1")
def _expm1_grad(op, grad):
    return cw.multiply(grad, cw.conj(cw.exp(op.inputs[0])))


@RegisterGradient("Log")
def _log_grad(op, grad):
    return cw.realdiv(grad, cw.conj(op.inputs[0]))


@RegisterGradient("Log1p")
def _log1p_grad(op, grad):
    x = op.inputs[0]
    return cw.realdiv(grad, cw.conj(cw.add(x, _scalar(1, x.dtype))))


@RegisterGradient("Sin")
def _sin_grad(op, grad):
    return cw.multiply(grad, cw.conj(cw.cos(op.inputs[0])))


@RegisterGradient("Cos")
def _cos_grad(op, grad):
    return cw.multiply(grad, cw.negative(cw.conj(cw.sin(op.inputs[0]))))


@RegisterGradient("Tan")
def _tan_grad(op, grad):
    c = cw.conj(cw.cos(op.inputs[0]))
    return cw.realdiv(grad, cw.multiply(c, c))


@RegisterGradient("Asin")
def _asin_grad(op, grad):
    x = cw.conj(op.inputs[0])
    return cw.multiply(grad, cw.rsqrt(cw.subtract(_scalar(1, x.dtype), cw.square(x))))


@RegisterGradient("Acos")
def _acos_grad(op, grad):
    x = cw.conj(op.inputs[0])
    return cw.negative(cw.multiply(grad, cw.rsqrt(cw.subtract(_scalar(1, x.dtype), cw.square(x)))))


@RegisterGradient("Atan")
def _atan_grad(op, grad):
    x = cw.conj(op.inputs[0])
    return cw.realdiv(grad, cw.add(_scalar(1, x.dtype), cw.square(x)))


@RegisterGradient("Sinh")
def _sinh_grad(op, grad):
    return cw.multiply(grad, cw.conj(cw.cosh(op.inputs[0])))


@RegisterGradient("Cosh")
def _cosh_grad(op, grad):
    return cw.multiply(grad, cw.conj(cw.sinh(op.inputs[0])))


# Tanh and Sigmoid differentiate through one fused op each (TF's TanhGrad / SigmoidGrad): one kernel
# instead of three elementwise ops, with the same arithmetic in the same order. Their own gradients
# give second order: XGrad(y, dy) = dy * g(conj y), so d/d dy is XGrad(conj y, grad) and d/dy is
# conj(grad) * dy * g'(conj y) (the output is antiholomorphic in y; for real y this is TF's formula).


# Real inputs: the kernels work in place on their one temporary and subtract from a shared 0-d
# array of y's dtype holding 1 (a NumPy scalar such as y.dtype.type(1) takes NumPy's slower scalar
# path, and a Python int costs 0.3 us more an op than the array): the same bits, each step one
# rounded operation in y's dtype. Complex inputs keep the plain expression (NumPy's in-place
# complex loops may round differently).
def _tanh_grad_kernel(y, dy):
    if y.dtype.kind == "c":
        y = np.conj(y)
        return dy * (y.dtype.type(1) - y * y)
    t = np.asarray(y * y)               # (0-d inputs give a NumPy scalar)
    np.subtract(shared_scalar(1, t.dtype)._value, t, out=t)
    t *= dy
    return t


def _sigmoid_grad_kernel(y, dy):
    if y.dtype.kind == "c":
        y = np.conj(y)
        return dy * (y * (y.dtype.type(1) - y))
    t = np.asarray(np.subtract(shared_scalar(1, y.dtype)._value, y))
    t *= y
    t *= dy
    return t


for _name, _kernel in (("TanhGrad", _tanh_grad_kernel), ("SigmoidGrad", _sigmoid_grad_kernel)):
    register_op(_name, inputs=("y", "dy"), attrs={"T": ("y", "dy")}, allowed={"T": cw._FLOAT_COMPLEX},
                infer=cw._infer_binary, kernel=_kernel)
_tanh_grad_op, _sigmoid_grad_op = plain_op("TanhGrad"), plain_op("SigmoidGrad")


@RegisterGradient("Tanh")
def _tanh_grad(op, grad):
    # grad * (1 - conj(y)^2)
    return _tanh_grad_op(op.outputs[0], grad)


@RegisterGradient("TanhGrad")
def _tanh_grad_grad(op, grad):
    y, dy = op.inputs
    cy = cw.conj(y)
    return (cw.multiply(cw.multiply(cw.conj(grad), _scalar(-2, y.dtype)), cw.multiply(dy, cy)),
            apply_op("TanhGrad", cy, grad))


@RegisterGradient("Sigmoid")
def _sigmoid_grad(op, grad):
    # grad * conj(y) * (1 - conj(y))
    return _sigmoid_grad_op(op.outputs[0], grad)


@RegisterGradient("SigmoidGrad")
def _sigmoid_grad_grad(op, grad):
    y, dy = op.inputs
    cy = cw.conj(y)
    gdy = cw.multiply(cw.conj(grad), dy)
    return (cw.subtract(gdy, cw.multiply(cw.multiply(_scalar(2, y.dtype), gdy), cy)),
            apply_op("SigmoidGrad", cy, grad))


@RegisterGradient("Softplus")
def _softplus_grad(op, grad):
    return cw.multiply(grad, cw.sigmoid(op.inputs[0]))


@RegisterGradient("Erf")
def _erf_grad(op, grad):
    x = op.inputs[0]
    two_over_root_pi = _scalar(1.1283791670955126, x.dtype)
    return cw.multiply(grad, cw.multiply(two_over_root_pi, cw.exp(cw.negative(cw.square(x)))))


@RegisterGradient("Reciprocal")
def _reciprocal_grad(op, grad):
    y = cw.conj(op.outputs[0])
    return cw.multiply(grad, cw.negative(cw.multiply(y, y)))


@RegisterGradient("SelectV2")
def _select_grad(op, grad):
    c, x, y = op.inputs
    zeros = shape_ops.zeros_like(grad)
    return None, _unbroadcast(cw.where(c, grad, zeros), x), _unbroadcast(cw.where(c, zeros, grad), y)


@RegisterGradient("Cast")
def _cast_grad(op, grad):
    src = op.inputs[0].dtype
    if (src.is_floating or src.is_complex) and (grad.dtype.is_floating or grad.dtype.is_complex):
        return cast_ops.cast(grad, src)
    return None


@RegisterGradient("Conj")
def _conj_grad(op, grad):
    return cw.conj(grad)


@RegisterGradient("Real")
def _real_grad(op, grad):
    return cw.complex(grad, shape_ops.zeros_like(grad))


@RegisterGradient("Imag")
def _imag_grad(op, grad):
    return cw.complex(shape_ops.zeros_like(grad), grad)


@RegisterGradient("Angle")
def _angle_grad(op, grad):
    # angle(z) = atan2(Im z, Re z): dL/d conj(z) = -grad / (Im z + i Re z). No gradient for real inputs.
    x = op.inputs[0]
    if not x.dtype.is_complex:
        return None
    z = cw.reciprocal(cw.complex(cw.imag(x), cw.real(x)))
    return cw.negative(cw.multiply(cw.complex(grad, shape_ops.zeros_like(grad)), z))


@RegisterGradient("Complex")
def _complex_grad(op, grad):
    x, y = op.inputs
    return _unbroadcast(cw.real(grad), x), _unbroadcast(cw.imag(grad), y)


@RegisterGradient("SumToShape")
def _sum_to_shape_grad(op, grad):
    return shape_ops.broadcast_to(grad, shape_ops.shape(op.inputs[0])), None


for _t in ("Equal", "NotEqual", "Less", "LessEqual", "Greater", "GreaterEqual", "LogicalAnd", "LogicalOr",
           "LogicalXor", "LogicalNot", "Floor", "Ceil", "Round", "IsNan", "IsInf", "IsFinite", "Where",
           "TruncateDiv"):
    NotDifferentiable(_t)


@RegisterGradient("NextAfter")
def _next_after_grad(op, grad):
    """nextafter(x1, x2) moves x1 by one ulp: d/dx1 = 1, d/dx2 = 0 (TF's gradient)."""
    x1, x2 = op.inputs
    skip = _skip(op)
    return (None if 0 in skip else _unbroadcast(grad, x1),
            None if 1 in skip else shape_ops.zeros_like(x2))

"""One spec row per op, driving every generic check (like JAX's lax_test.py over lax_reference.py):

* values: the op against its NumPy reference in tests/reference.py (TensorFlow's semantics, output
  dtype included), in eager and graph mode, for each dtype the row lists (float32, float64, int32...);
* gradients: theoretical against numerical Jacobians (gradcheck.check_gradients), both modes, float64;
* second order: the gradient of u . (d/dx0 sum(v * f)) with respect to every differentiable input,
  by nested GradientTapes eagerly and sf.gradients of sf.gradients in a graph, against central
  differences of that first-order gradient computed here (float64). Rows with second="sin" check
  sin(f(x)) instead, so the gradient of a (piecewise) linear op's gradient function is exercised.

Adding an op adds one row to SPECS. A row whose check fails because segflow disagrees with
TensorFlow is listed in XFAIL (strict), naming the check and the reason. CONVENTIONS, at the end,
pins TF's gradients where numerical Jacobians cannot decide (ties, kinks), against reference.py."""
import dataclasses
import zlib
from typing import Callable, Optional

import numpy as np
import pytest

import reference as R
import segflow as sf
from gradcheck import check_gradients

F = (np.float32, np.float64)
FI = F + (np.int32,)
I32 = (np.int32,)
F64 = (np.float64,)
BOOL = (np.bool_,)


@dataclasses.dataclass(frozen=True)
class Spec:
    name: str
    fn: Callable                     # segflow: fn(*tensors) -> tensor (or a list of tensors)
    ref: Callable                    # NumPy: ref(*arrays) -> array (or a tuple of arrays)
    make: Callable                   # make(dtype, rng) -> list of input arrays (the op's tensor inputs)
    dtypes: tuple = F                # dtypes the value check runs for (make's `dtype` argument)
    diff: tuple = (0,)               # differentiable inputs; () for no gradient checks
    second: Optional[str] = "direct"  # "direct", "sin" (check sin(f), for linear ops) or None
    tol: float = 1e-7                # gradient tolerance (float64)
    rtol32: float = 1e-5             # value tolerance for float32
    xfail: tuple = ()                # ((check, reason), ...): check is "values", "values-<dtype>", "grad", "second"


# ----------------------------------------------------------------------------------------------
# Input generators (small shapes; float data cast from float64, ints drawn directly)


def U(r, shape, lo, hi, dt):
    dt = np.dtype(dt)
    if dt.kind in "iu":
        return r.integers(int(np.floor(lo)), int(np.ceil(hi)) + 1, size=shape).astype(dt)
    if dt.kind == "b":
        return r.integers(0, 2, size=shape).astype(bool)
    return r.uniform(lo, hi, size=shape).astype(dt)


def NZ(r, shape, dt, lo=0.3, hi=2.0):
    """Away from zero: |x| in [lo, hi] (ints: +-1..3)."""
    if np.dtype(dt).kind in "iu":
        return (r.choice([-1, 1], size=shape) * r.integers(1, 4, size=shape)).astype(dt)
    return (r.choice([-1.0, 1.0], size=shape) * r.uniform(lo, hi, size=shape)).astype(dt)


def D(r, shape, dt, spacing=0.3):
    """Distinct values, no ties and none near 0 (max/min/sort/relu stay differentiable)."""
    n = int(np.prod(shape))
    if np.dtype(dt).kind in "iu":
        return (r.permutation(n) - n // 2).reshape(shape).astype(dt)
    v = (r.permutation(n) - (n - 1) / 2.0 + 0.41) * spacing
    return v.reshape(shape).astype(dt)


def i32(a):
    return np.asarray(a, np.int32)


def _rng(*key):
    return np.random.default_rng(zlib.crc32("/".join(map(str, key)).encode()))


# ----------------------------------------------------------------------------------------------
# The table


SPECS = []


def row(name, fn, ref, make, **kw):
    SPECS.append(Spec(name, fn, ref, make, **kw))


# -- elementwise unary: (name, segflow fn, reference, generator, dtypes, second order)
unif = lambda lo, hi: (lambda dt, r: [U(r, (2, 3), lo, hi, dt)])  # noqa: E731
nonzero = lambda dt, r: [NZ(r, (2, 3), dt)]  # noqa: E731
HALVES = np.array([[-2.5, -1.5, -0.5, 0.5], [1.5, 2.5, 0.4, -0.6], [3.7, -3.2, 0.0, 4.5]])

for name, fn, ref, make, dtypes, second in [
        ("neg", sf.negative, R.neg, unif(-2, 2), FI, "sin"),
        ("abs", sf.abs, R.abs, nonzero, FI, "sin"),
        ("square", sf.square, R.square, unif(-2, 2), FI, "direct"),
        ("sqrt", sf.sqrt, R.sqrt, unif(0.2, 3), F, "direct"),
        ("rsqrt", sf.math.rsqrt, R.rsqrt, unif(0.2, 3), F, "direct"),
        ("exp", sf.exp, R.exp, unif(-2, 2), F, "direct"),
        ("expm1", sf.math.expm1, R.expm1, unif(-2, 2), F, "direct"),
        ("log", sf.math.log, R.log, unif(0.2, 3), F, "direct"),
        ("log1p", sf.math.log1p, R.log1p, unif(-0.6, 3), F, "direct"),
        ("sin", sf.sin, R.sin, unif(-3, 3), F, "direct"),
        ("cos", sf.cos, R.cos, unif(-3, 3), F, "direct"),
        ("tan", sf.math.tan, R.tan, unif(-1.2, 1.2), F, "direct"),
        ("tanh", sf.tanh, R.tanh, unif(-2, 2), F, "direct"),
        ("sigmoid", sf.sigmoid, R.sigmoid, unif(-3, 3), F, "direct"),
        ("softplus", sf.math.softplus, R.softplus, unif(-3, 3), F, "direct"),
        ("reciprocal", sf.math.reciprocal, R.reciprocal, nonzero, F, "direct"),
        ("sinh", sf.math.sinh, R.sinh, unif(-2, 2), F, "direct"),
        ("cosh", sf.math.cosh, R.cosh, unif(-2, 2), F, "direct"),
        ("asin", sf.math.asin, R.asin, unif(-0.8, 0.8), F, "direct"),
        ("acos", sf.math.acos, R.acos, unif(-0.8, 0.8), F, "direct"),
        ("atan", sf.math.atan, R.atan, unif(-3, 3), F, "direct"),
        ("erf", sf.math.erf, R.erf, unif(-2, 2), F, "direct"),
]:
    row(name, fn, ref, make, dtypes=dtypes, second=second)

# Piecewise constant: values only (TF registers no gradient, or a zero one).
row("sign", sf.sign, R.sign, lambda dt, r: [np.array([[-2, 0, 3], [1, -1, 0]], dt) * (1 if dt == np.int32 else 1.5)],
    dtypes=FI, diff=())
row("floor", sf.math.floor, R.floor, lambda dt, r: [HALVES.astype(dt)], diff=())
row("ceil", sf.math.ceil, R.ceil, lambda dt, r: [HALVES.astype(dt)], diff=())
row("round_half_to_even", sf.math.round, R.round, lambda dt, r: [HALVES.astype(dt)], dtypes=FI, diff=())
row("cast_to_int32_truncates", lambda x: sf.cast(x, sf.int32), lambda x: R.cast(x, np.int32),
    lambda dt, r: [HALVES.astype(dt)], diff=())
row("cast_to_bool", lambda x: sf.cast(x, sf.bool), lambda x: R.cast(x, np.bool_),
    lambda dt, r: [HALVES.astype(dt)], dtypes=FI, diff=())
row("cast_to_float64", lambda x: sf.cast(x, sf.float64), lambda x: R.cast(x, np.float64), unif(-2, 2),
    dtypes=FI, second="sin")

# -- elementwise binary, broadcasting (2, 3) with (3,)
xy = lambda fx, fy: (lambda dt, r: [fx(r, (2, 3), dt), fy(r, (3,), dt)])  # noqa: E731
any_ = lambda r, s, dt: U(r, s, -2, 2, dt)  # noqa: E731
pos = lambda r, s, dt: U(r, s, 0.5, 2, dt) if np.dtype(dt).kind == "f" else U(r, s, -3, 3, dt)  # noqa: E731
nz = lambda r, s, dt: NZ(r, s, dt)  # noqa: E731
expo = lambda r, s, dt: U(r, s, -2, 2, dt) if np.dtype(dt).kind == "f" else U(r, s, 0, 3, dt)  # noqa: E731


def apart(dt, r):
    """x (2, 3) and y (3,) with no ties (at least 0.2 apart), for maximum/minimum."""
    y = U(r, (3,), -2, 2, dt)
    if np.dtype(dt).kind in "iu":
        return [U(r, (2, 3), -2, 2, dt), y]
    sides = np.array([[1, -1, 1], [-1, 1, -1]])  # x above y in half the places
    return [(y + sides * r.uniform(0.2, 1, size=(2, 3))).astype(dt), y]


def quotients(dt, r):
    """Negative and positive operands, fractional quotients (away from the integer jumps)."""
    if np.dtype(dt).kind in "iu":
        return [U(r, (2, 3), -9, 9, dt), NZ(r, (3,), dt)]
    y = NZ(r, (3,), np.float64, 0.5, 2)
    q = np.floor(r.uniform(-4, 4, size=(2, 3))) + r.uniform(0.1, 0.9, size=(2, 3))
    return [(q * y).astype(dt), y.astype(dt)]


row("add", sf.add, R.add, xy(any_, any_), dtypes=FI, diff=(0, 1), second="sin")
row("sub", sf.subtract, R.sub, xy(any_, any_), dtypes=FI, diff=(0, 1), second="sin")
row("mul", sf.multiply, R.mul, xy(any_, any_), dtypes=FI, diff=(0, 1))
row("mul_broadcast_both", sf.multiply, R.mul, lambda dt, r: [U(r, (2, 1), -2, 2, dt), U(r, (1, 3), -2, 2, dt)],
    diff=(0, 1))
row("truediv", sf.math.truediv, R.truediv, xy(any_, nz), dtypes=FI, diff=(0, 1))
row("realdiv", sf.math.realdiv, R.realdiv, xy(any_, nz), diff=(0, 1))
row("div", sf.math.div, R.div, quotients, dtypes=FI, diff=(0, 1))
row("floordiv", sf.math.floordiv, R.floordiv, quotients, dtypes=FI, diff=())
row("floordiv_float_is_floor_of_quotient", sf.math.floordiv, R.floordiv,
    lambda dt, r: [np.array([1.0, -1.0, 7.0, 0.3], dt), np.array([0.1, 0.1, 0.7, 0.1], dt)], diff=())
row("floormod", sf.math.floormod, R.floormod, quotients, dtypes=FI, diff=(0, 1), second="sin")
row("truncatediv", sf.math.truncatediv, R.truncatediv, quotients, dtypes=I32, diff=())
row("pow", sf.pow, R.pow, xy(pos, expo), dtypes=FI, diff=(0, 1))
row("maximum", sf.maximum, R.maximum, apart, dtypes=FI, diff=(0, 1), second="sin")
row("minimum", sf.minimum, R.minimum, apart, dtypes=FI, diff=(0, 1), second="sin")
row("squared_difference", sf.math.squared_difference, R.squared_difference, xy(any_, any_), dtypes=FI,
    diff=(0, 1))
row("div_no_nan", sf.math.div_no_nan, R.div_no_nan, xy(any_, nz), diff=(0, 1))
row("div_no_nan_zero_divisor", sf.math.div_no_nan, R.div_no_nan,
    lambda dt, r: [U(r, (2, 3), -2, 2, dt), np.array([0.0, 1.5, 0.0], dt)], diff=())
row("add_n", lambda a, b, c: sf.add_n([a, b, c]), R.add_n, lambda dt, r: [U(r, (2, 3), -2, 2, dt) for _ in range(3)],
    dtypes=FI, diff=(0, 1, 2), second="sin")
row("select_v2", lambda c, x, y: sf.where(c, x, y), R.select,
    lambda dt, r: [np.array([[True], [False]]), U(r, (2, 3), -2, 2, dt), U(r, (3,), -2, 2, dt)],
    dtypes=FI, diff=(1, 2), second="sin")
for name, fn, ref in [("less", sf.less, R.less), ("less_equal", sf.less_equal, R.less_equal),
                      ("equal", sf.equal, R.equal), ("greater_equal", sf.greater_equal, R.greater_equal)]:
    row(name, fn, ref, lambda dt, r: [U(r, (2, 3), -2, 2, np.int32).astype(dt), U(r, (3,), -2, 2, np.int32).astype(dt)],
        dtypes=FI, diff=())
row("logical_and", sf.logical_and, R.logical_and, lambda dt, r: [U(r, (2, 3), 0, 1, dt), U(r, (3,), 0, 1, dt)],
    dtypes=BOOL, diff=())
row("logical_xor", sf.math.logical_xor, R.logical_xor, lambda dt, r: [U(r, (2, 3), 0, 1, dt), U(r, (3,), 0, 1, dt)],
    dtypes=BOOL, diff=())
row("logical_not", sf.logical_not, R.logical_not, lambda dt, r: [U(r, (2, 3), 0, 1, dt)], dtypes=BOOL, diff=())

# -- reductions on (2, 3, 2)
x232 = lambda dt, r: [U(r, (2, 3, 2), -2, 2, dt)]  # noqa: E731
d232 = lambda dt, r: [D(r, (2, 3, 2), dt)]  # noqa: E731
nz232 = lambda dt, r: [NZ(r, (2, 3, 2), dt, 0.5, 1.5)]  # noqa: E731
empty03 = lambda dt, r: [np.zeros((0, 3), dt)]  # noqa: E731


def _red(sf_fn, ref_fn, **kw):
    return (lambda x: sf_fn(x, **kw)), (lambda x: ref_fn(x, **kw))


for name, (fn, ref), make, dtypes, second in [
        ("reduce_sum_axis1", _red(sf.reduce_sum, R.reduce_sum, axis=1), x232, FI, "sin"),
        ("reduce_sum_all_keepdims", _red(sf.reduce_sum, R.reduce_sum, axis=None, keepdims=True), x232, FI, "sin"),
        ("reduce_sum_axes_0_-1", _red(sf.reduce_sum, R.reduce_sum, axis=[0, -1]), x232, FI, "sin"),
        ("reduce_mean_axis0_keepdims", _red(sf.reduce_mean, R.reduce_mean, axis=0, keepdims=True), x232, FI, "sin"),
        ("reduce_mean_axes_1_2", _red(sf.reduce_mean, R.reduce_mean, axis=[1, 2]), x232, FI, "sin"),
        ("reduce_max_axis-1", _red(sf.reduce_max, R.reduce_max, axis=-1), d232, FI, "sin"),
        ("reduce_max_all", _red(sf.reduce_max, R.reduce_max), d232, FI, "sin"),
        ("reduce_min_axes_0_1_keepdims", _red(sf.reduce_min, R.reduce_min, axis=[0, 1], keepdims=True), d232, FI,
         "sin"),
        ("reduce_prod_axis1", _red(sf.reduce_prod, R.reduce_prod, axis=1), nz232, FI, "direct"),
        ("reduce_prod_with_zeros", _red(sf.reduce_prod, R.reduce_prod, axis=1),
         lambda dt, r: [np.array([[0.5, 0.0, 2.0, -1.5], [0.0, 1.5, 0.0, 2.0], [1.2, -0.7, 0.9, 1.1]], dt)], FI,
         "direct"),
        ("reduce_logsumexp_axis1", _red(sf.reduce_logsumexp, R.reduce_logsumexp, axis=1), x232, F, "direct"),
        ("cumsum_axis1", (lambda x: sf.cumsum(x, 1), lambda x: R.cumsum(x, 1)), x232, FI, "sin"),
        ("cumsum_exclusive_reverse", (lambda x: sf.cumsum(x, 0, exclusive=True, reverse=True),
                                      lambda x: R.cumsum(x, 0, exclusive=True, reverse=True)), x232, FI, "sin"),
]:
    row(name, fn, ref, make, dtypes=dtypes, second=second)
row("l2_loss", sf.nn.l2_loss, R.l2_loss, x232)
for name, (fn, ref), dtypes in [
        ("reduce_max_empty", _red(sf.reduce_max, R.reduce_max, axis=0), FI),
        ("reduce_min_empty", _red(sf.reduce_min, R.reduce_min, axis=0), FI),
        ("reduce_prod_empty", _red(sf.reduce_prod, R.reduce_prod, axis=0), FI),
        ("reduce_sum_empty", _red(sf.reduce_sum, R.reduce_sum, axis=0), FI),
        ("reduce_mean_empty_is_nan", _red(sf.reduce_mean, R.reduce_mean, axis=0), F)]:
    row(name, fn, ref, empty03, dtypes=dtypes, diff=())
row("reduce_any", *_red(sf.reduce_any, R.reduce_any, axis=1), lambda dt, r: [U(r, (3, 4), 0, 1, dt) & U(r, (3, 4), 0, 1, dt)],
    dtypes=BOOL, diff=())
row("reduce_all", *_red(sf.reduce_all, R.reduce_all, axis=0), lambda dt, r: [U(r, (3, 4), 0, 1, dt) | U(r, (3, 4), 0, 1, dt)],
    dtypes=BOOL, diff=())
row("count_nonzero", *_red(sf.math.count_nonzero, R.count_nonzero, axis=1),
    lambda dt, r: [U(r, (3, 4), -1, 1, np.int32).astype(dt)], dtypes=FI, diff=())
row("argmax", lambda x: sf.argmax(x, 1), lambda x: R.argmax(x, 1), lambda dt, r: [D(r, (3, 4), dt)], dtypes=FI, diff=())
row("argmin", lambda x: sf.argmin(x, 0), lambda x: R.argmin(x, 0), lambda dt, r: [D(r, (3, 4), dt)], dtypes=FI, diff=())

# -- segment reductions. Unsorted: ids drop row 2 (-1), segments 2 and 4 are empty; sorted: 2 is a gap.
IDS = i32([3, 0, -1, 3, 1, 0, 3])
IDS_2D = i32([[3, 0], [-1, 3], [1, 1]])
SORTED = i32([0, 0, 1, 3, 3, 3])
SP_IDX = i32([0, 4, 0, 2, 3, 3])  # row 0 and row 3 used twice
SP_SEG = i32([0, 0, 1, 3, 3, 3])


def seg_data(shape, kind):
    if kind in ("max", "min"):
        return lambda dt, r: [D(r, shape, dt)]
    if kind == "prod":
        return lambda dt, r: [NZ(r, shape, dt, 0.5, 1.5)]
    return lambda dt, r: [U(r, shape, -2, 2, dt)]


SECOND = {"sum": "sin", "mean": "sin", "sqrt_n": "sin", "max": "sin", "min": "sin", "prod": "direct"}
for kind in ("sum", "prod", "max", "min", "mean", "sqrt_n"):
    sf_fn, ref_fn = getattr(sf.math, f"unsorted_segment_{kind}"), getattr(R, f"unsorted_segment_{kind}")
    dtypes = F if kind in ("mean", "sqrt_n") else FI
    make = seg_data((7, 2), kind)
    row(f"unsorted_segment_{kind}", lambda d, ids, f=sf_fn: f(d, ids, 5), lambda d, ids, f=ref_fn: f(d, ids, 5),
        lambda dt, r, m=make: m(dt, r) + [IDS], dtypes=dtypes, second=SECOND[kind])
for kind in ("sum", "max"):
    sf_fn, ref_fn = getattr(sf.math, f"unsorted_segment_{kind}"), getattr(R, f"unsorted_segment_{kind}")
    make = seg_data((3, 2, 2), kind)
    row(f"unsorted_segment_{kind}_2d_ids", lambda d, ids, f=sf_fn: f(d, ids, 5), lambda d, ids, f=ref_fn: f(d, ids, 5),
        lambda dt, r, m=make: m(dt, r) + [IDS_2D], dtypes=FI, second="sin")
row("unsorted_segment_prod_with_zeros", lambda d, ids: sf.math.unsorted_segment_prod(d, ids, 5),
    lambda d, ids: R.unsorted_segment_prod(d, ids, 5),
    lambda dt, r: [np.array([[0.0, 1.5], [0.7, 0.0], [2.0, 2.0], [1.2, 0.0], [0.9, -1.1], [0.0, 0.0], [-0.8, 1.3]], dt),
                   IDS], dtypes=FI)
row("unsorted_segment_sum_int64_ids", lambda d, ids: sf.math.unsorted_segment_sum(d, ids, sf.constant(5, sf.int64)),
    lambda d, ids: R.unsorted_segment_sum(d, ids, 5), lambda dt, r: [U(r, (7,), -2, 2, dt), IDS.astype(np.int64)],
    dtypes=F64, second="sin")
for kind in ("sum", "prod", "max", "min", "mean"):
    sf_fn, ref_fn = getattr(sf.math, f"segment_{kind}"), getattr(R, f"segment_{kind}")
    dtypes = F if kind == "mean" else FI
    make = seg_data((6, 2), kind)
    row(f"segment_{kind}", sf_fn, ref_fn, lambda dt, r, m=make: m(dt, r) + [SORTED], dtypes=dtypes,
        second=SECOND[kind])
for kind in ("sum", "mean", "sqrt_n"):
    sf_fn, ref_fn = getattr(sf.math, f"sparse_segment_{kind}"), getattr(R, f"sparse_segment_{kind}")
    sf_n = getattr(sf.math, f"sparse_segment_{kind}_with_num_segments")
    dtypes = FI if kind == "sum" else F
    make = lambda dt, r: [U(r, (5, 2), -2, 2, dt), SP_IDX, SP_SEG]  # noqa: E731
    row(f"sparse_segment_{kind}", sf_fn, ref_fn, make, dtypes=dtypes, second="sin")
    row(f"sparse_segment_{kind}_with_num_segments", lambda d, i, s, f=sf_n: f(d, i, s, 6),
        lambda d, i, s, f=ref_fn: f(d, i, s, 6), make, dtypes=dtypes, second="sin")
row("bincount", lambda a: sf.math.bincount(a), R.bincount, lambda dt, r: [i32([1, 4, 1, 0, 4, 4, 6])], dtypes=I32,
    diff=())
row("bincount_minlength", lambda a: sf.math.bincount(a, minlength=9), lambda a: R.bincount(a, minlength=9),
    lambda dt, r: [i32([1, 4, 1, 0, 4])], dtypes=I32, diff=())
row("bincount_weights", lambda a, w: sf.math.bincount(a, weights=w), lambda a, w: R.bincount(a, weights=w),
    lambda dt, r: [i32([1, 4, 1, 0, 4]), U(r, (5,), -2, 2, dt)], dtypes=F, diff=())

# -- gather / scatter
row("gather_axis0", lambda p, i: sf.gather(p, i), R.gather, lambda dt, r: [U(r, (5, 3), -2, 2, dt), i32([4, 0, 4, 2])],
    dtypes=FI, second="sin")
row("gather_axis1_2d_indices", lambda p, i: sf.gather(p, i, axis=1), lambda p, i: R.gather(p, i, axis=1),
    lambda dt, r: [U(r, (3, 4, 2), -2, 2, dt), i32([[1, 0], [3, 3]])], dtypes=FI, second="sin")
row("gather_axis-1", lambda p, i: sf.gather(p, i, axis=-1), lambda p, i: R.gather(p, i, axis=-1),
    lambda dt, r: [U(r, (2, 4), -2, 2, dt), i32([2, 2, 0])], dtypes=FI, second="sin")
row("gather_batch_dims1", lambda p, i: sf.gather(p, i, axis=1, batch_dims=1),
    lambda p, i: R.gather(p, i, axis=1, batch_dims=1),
    lambda dt, r: [U(r, (2, 4, 3), -2, 2, dt), i32([[3, 0, 3], [1, 1, 2]])], dtypes=FI, second="sin")
row("gather_batch_dims1_axis2", lambda p, i: sf.gather(p, i, axis=2, batch_dims=1),
    lambda p, i: R.gather(p, i, axis=2, batch_dims=1),
    lambda dt, r: [U(r, (2, 3, 4), -2, 2, dt), i32([[3, 0], [1, 1]])], dtypes=FI, second="sin")
row("batch_gather", sf.batch_gather, R.batch_gather,
    lambda dt, r: [U(r, (2, 4, 2), -2, 2, dt), i32([[3, 0, 3], [1, 1, 2]])], dtypes=FI, second="sin")
row("embedding_lookup", sf.nn.embedding_lookup, R.embedding_lookup,
    lambda dt, r: [U(r, (5, 2), -2, 2, dt), i32([[4, 0], [4, 1]])], dtypes=FI, second="sin")
row("gather_nd_elements", sf.gather_nd, R.gather_nd,
    lambda dt, r: [U(r, (3, 4), -2, 2, dt), i32([[0, 1], [2, 3], [0, 1]])], dtypes=FI, second="sin")
row("gather_nd_rows", sf.gather_nd, R.gather_nd,
    lambda dt, r: [U(r, (3, 2, 2), -2, 2, dt), i32([[[2], [0]], [[2], [1]]])], dtypes=FI, second="sin")
row("gather_nd_batch_dims1", lambda p, i: sf.gather_nd(p, i, batch_dims=1), lambda p, i: R.gather_nd(p, i, 1),
    lambda dt, r: [U(r, (2, 3, 2), -2, 2, dt), i32([[[1], [0]], [[2], [2]]])], dtypes=FI, second="sin")
row("scatter_nd", lambda i, u: sf.scatter_nd(i, u, [4, 2]), lambda i, u: R.scatter_nd(i, u, (4, 2)),
    lambda dt, r: [i32([[1], [3], [1]]), U(r, (3, 2), -2, 2, dt)], dtypes=FI, diff=(1,), second="sin")
row("tensor_scatter_nd_update", sf.tensor_scatter_nd_update, R.tensor_scatter_nd_update,
    lambda dt, r: [U(r, (4, 2), -2, 2, dt), i32([[1, 0], [3, 1], [0, 0]]), U(r, (3,), -2, 2, dt)], dtypes=FI,
    diff=(0, 2), second="sin")
row("tensor_scatter_nd_add", sf.tensor_scatter_nd_add, R.tensor_scatter_nd_add,
    lambda dt, r: [U(r, (4, 2), -2, 2, dt), i32([[1], [3], [1]]), U(r, (3, 2), -2, 2, dt)], dtypes=FI,
    diff=(0, 2), second="sin")
row("tensor_scatter_nd_sub", sf.tensor_scatter_nd_sub, R.tensor_scatter_nd_sub,
    lambda dt, r: [U(r, (4, 2), -2, 2, dt), i32([[1], [3], [1]]), U(r, (3, 2), -2, 2, dt)], dtypes=FI,
    diff=(0, 2), second="sin")

# -- shapes, joins, slices
x23 = lambda dt, r: [U(r, (2, 3), -2, 2, dt)]  # noqa: E731
x234 = lambda dt, r: [U(r, (2, 3, 4), -2, 2, dt)]  # noqa: E731
x34 = lambda dt, r: [U(r, (3, 4), -2, 2, dt)]  # noqa: E731
LIN = dict(dtypes=FI, second="sin")  # linear ops: second order through sin(op)
row("identity", sf.identity, R.identity, x23, **LIN)
row("reshape", lambda x: sf.reshape(x, [4, -1]), lambda x: R.reshape(x, [4, -1]), x234, **LIN)
row("transpose_perm", lambda x: sf.transpose(x, [2, 0, 1]), lambda x: R.transpose(x, [2, 0, 1]), x234, **LIN)
row("transpose_default_reverses", sf.transpose, R.transpose, x234, **LIN)
row("expand_dims", lambda x: sf.expand_dims(x, -1), lambda x: R.expand_dims(x, -1), x23, **LIN)
row("squeeze", lambda x: sf.squeeze(x, [0, 2]), lambda x: R.squeeze(x, [0, 2]),
    lambda dt, r: [U(r, (1, 3, 1, 2), -2, 2, dt)], **LIN)
row("broadcast_to", lambda x: sf.broadcast_to(x, [2, 3, 2]), lambda x: R.broadcast_to(x, (2, 3, 2)),
    lambda dt, r: [U(r, (3, 1), -2, 2, dt)], **LIN)
row("concat_axis1", lambda a, b: sf.concat([a, b], 1), lambda a, b: R.concat([a, b], 1),
    lambda dt, r: [U(r, (2, 3), -2, 2, dt), U(r, (2, 1), -2, 2, dt)], diff=(0, 1), **LIN)
row("concat_axis-3_three", lambda a, b, c: sf.concat([a, b, c], -3), lambda a, b, c: R.concat([a, b, c], -3),
    lambda dt, r: [U(r, (1, 2, 2), -2, 2, dt), U(r, (2, 2, 2), -2, 2, dt), U(r, (1, 2, 2), -2, 2, dt)],
    diff=(0, 1, 2), **LIN)
row("stack_axis1", lambda a, b: sf.stack([a, b], 1), lambda a, b: R.stack([a, b], 1),
    lambda dt, r: [U(r, (2, 3), -2, 2, dt), U(r, (2, 3), -2, 2, dt)], diff=(0, 1), **LIN)
row("unstack_axis1", lambda x: sf.unstack(x, axis=1), lambda x: R.unstack(x, 1), x23, **LIN)
row("split_sizes", lambda x: sf.split(x, [1, -1, 1], axis=1), lambda x: R.split(x, [1, -1, 1], 1), x34, **LIN)
row("split_even_axis0", lambda x: sf.split(x, 2, axis=0), lambda x: R.split(x, 2, 0),
    lambda dt, r: [U(r, (4, 2), -2, 2, dt)], **LIN)
row("tile", lambda x: sf.tile(x, [2, 1, 3]), lambda x: R.tile(x, [2, 1, 3]),
    lambda dt, r: [U(r, (1, 2, 2), -2, 2, dt)], **LIN)
row("slice", lambda x: sf.slice(x, [1, 1], [2, -1]), lambda x: R.slice(x, [1, 1], [2, -1]), x34, **LIN)
row("strided_slice_steps", lambda x: sf.strided_slice(x, [2, 0], [0, 4], [-1, 2]),
    lambda x: R.strided_slice(x, [2, 0], [0, 4], [-1, 2]), x34, **LIN)
row("strided_slice_masks", lambda x: sf.strided_slice(x, [0, 1, 3], [0, 3, 0], [1, 1, -1], begin_mask=1, end_mask=5,
                                                      shrink_axis_mask=0, new_axis_mask=0),
    lambda x: R.strided_slice(x, [0, 1, 3], [0, 3, 0], [1, 1, -1], begin_mask=1, end_mask=5), x234, **LIN)
row("strided_slice_shrink_newaxis", lambda x: sf.strided_slice(x, [1, 0, 0], [2, 0, 3], [1, 1, 1], end_mask=0,
                                                               new_axis_mask=2, shrink_axis_mask=1),
    lambda x: R.strided_slice(x, [1, 0, 0], [2, 0, 3], [1, 1, 1], new_axis_mask=2, shrink_axis_mask=1), x34, **LIN)
row("getitem", lambda x: x[1:, ::-2], lambda x: x[1:, ::-2].copy(), x34, **LIN)
row("reverse", lambda x: sf.reverse(x, [0, 2]), lambda x: R.reverse(x, [0, 2]), x234, **LIN)
for pad_mode in ("CONSTANT", "REFLECT", "SYMMETRIC"):
    row(f"pad_{pad_mode.lower()}", lambda x, m=pad_mode: sf.pad(x, [[1, 2], [2, 1]], mode=m),
        lambda x, m=pad_mode: R.pad(x, [[1, 2], [2, 1]], mode=m), lambda dt, r: [U(r, (3, 3), -2, 2, dt)], **LIN)
row("pad_constant_value", lambda x: sf.pad(x, [[0, 1], [1, 0]], constant_values=3),
    lambda x: R.pad(x, [[0, 1], [1, 0]], constant_values=3), x23, **LIN)
row("one_hot", lambda i: sf.one_hot(i, 4), lambda i: R.one_hot(i, 4), lambda dt, r: [i32([[0, 3], [-1, 4], [2, 2]])],
    dtypes=I32, diff=())
row("one_hot_axis0_on_off", lambda i, on, off: sf.one_hot(i, 3, on_value=on, off_value=off, axis=0),
    lambda i, on, off: R.one_hot(i, 3, on, off, axis=0, dtype=on.dtype),
    lambda dt, r: [i32([2, 0, 5, -2]), np.array(5, dt), np.array(-1, dt)], dtypes=FI, diff=())
row("dynamic_stitch", lambda i0, i1, d0, d1: sf.dynamic_stitch([i0, i1], [d0, d1]), lambda i0, i1, d0, d1:
    R.dynamic_stitch([i0, i1], [d0, d1]),
    lambda dt, r: [i32([0, 4]), i32([[3, 1], [2, 5]]), U(r, (2, 2), -2, 2, dt), U(r, (2, 2, 2), -2, 2, dt)],
    dtypes=FI, diff=(2, 3), second="sin")
# Overlapping indices: later (list, position) wins; rows overwritten later get no gradient
# (the numerical Jacobian's answer).
row("dynamic_stitch_overlap", lambda i0, i1, d0, d1: sf.dynamic_stitch([i0, i1], [d0, d1]), lambda i0, i1, d0, d1:
    R.dynamic_stitch([i0, i1], [d0, d1]),
    lambda dt, r: [i32([0, 3, 0]), i32([3, 1]), U(r, (3,), -2, 2, dt), U(r, (2,), -2, 2, dt)],
    dtypes=FI, diff=(2, 3), second="sin")
row("dynamic_partition", lambda d, p: sf.dynamic_partition(d, p, 3), lambda d, p: R.dynamic_partition(d, p, 3),
    lambda dt, r: [U(r, (5, 2), -2, 2, dt), i32([2, 0, 2, 2, 0])], dtypes=FI, second="sin")
row("unique", sf.unique, R.unique, lambda dt, r: [np.array([7, 3, 7, 1, 3, 3, 9, 1], dt)], dtypes=FI, diff=())
row("unique_with_counts", sf.unique_with_counts, R.unique_with_counts,
    lambda dt, r: [np.array([-2, 5, 5, -2, 0, 5], dt)], dtypes=FI, diff=())
row("invert_permutation", sf.invert_permutation, R.invert_permutation, lambda dt, r: [i32([3, 0, 4, 1, 2])],
    dtypes=I32, diff=())
row("boolean_mask", lambda x, m: sf.boolean_mask(x, m), R.boolean_mask,
    lambda dt, r: [U(r, (4, 2), -2, 2, dt), np.array([True, False, True, True])], dtypes=FI, second="sin")
row("where_coordinates", sf.where, R.where_coords, lambda dt, r: [np.array([[True, False, True], [False, False, True]])],
    dtypes=BOOL, diff=())
row("top_k", lambda x: sf.math.top_k(x, 2), lambda x: R.top_k(x, 2), lambda dt, r: [D(r, (2, 4), dt)], dtypes=FI,
    second="sin")
row("top_k_ties_lower_index_first", lambda x: sf.math.top_k(x, 3), lambda x: R.top_k(x, 3),
    lambda dt, r: [np.array([[1, 3, 3, 2, 3], [0, 0, 0, 0, 0]], dt)], dtypes=FI, diff=())
row("sort_descending", lambda x: sf.sort(x, axis=0, direction="DESCENDING"),
    lambda x: R.sort(x, 0, "DESCENDING"), lambda dt, r: [D(r, (3, 2), dt)], dtypes=FI, second="sin")
row("argsort", lambda x: sf.argsort(x), R.argsort, lambda dt, r: [D(r, (2, 4), dt)], dtypes=FI, diff=())
row("range", lambda a, b, c: sf.range(a, b, c), lambda a, b, c: R.range_(a, b, c, a.dtype),
    lambda dt, r: [np.array(1, dt), np.array(8, dt), np.array(3, dt)], dtypes=FI, diff=())
row("range_negative_delta", lambda a, b, c: sf.range(a, b, c), lambda a, b, c: R.range_(a, b, c, a.dtype),
    lambda dt, r: [np.array(2, dt), np.array(-2.5 if dt != np.int32 else -3, dt), np.array(-1.5 if dt != np.int32 else -2, dt)],
    dtypes=FI, diff=())
row("fill", lambda v: sf.fill([2, 3], v), lambda v: R.fill([2, 3], v), lambda dt, r: [np.array(1.5 if dt != np.int32 else 7, dt)],
    dtypes=FI, diff=())

# -- nn
row("relu", sf.nn.relu, R.relu, lambda dt, r: [D(r, (2, 4), dt)], dtypes=FI, second="sin")
row("relu6", sf.nn.relu6, R.relu6, lambda dt, r: [D(r, (3, 4), dt, spacing=1.3)], dtypes=FI, second="sin")
row("leaky_relu", lambda x: sf.nn.leaky_relu(x, alpha=0.1), lambda x: R.leaky_relu(x, 0.1),
    lambda dt, r: [D(r, (2, 4), dt)], second="sin")
row("softmax", sf.nn.softmax, R.softmax, x23)
row("softmax_axis0", lambda x: sf.nn.softmax(x, axis=0), lambda x: R.softmax(x, 0), x23)
row("log_softmax", sf.nn.log_softmax, R.log_softmax, x23)
row("bias_add", sf.nn.bias_add, R.bias_add, lambda dt, r: [U(r, (2, 2, 3), -2, 2, dt), U(r, (3,), -2, 2, dt)],
    dtypes=FI, diff=(0, 1), second="sin")
row("l2_normalize", lambda x: sf.nn.l2_normalize(x, axis=1), lambda x: R.l2_normalize(x, axis=1), x23)
row("sigmoid_cross_entropy", lambda z, x: sf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
    R.sigmoid_cross_entropy_with_logits, lambda dt, r: [U(r, (2, 3), 0, 1, dt), U(r, (2, 3), -3, 3, dt)],
    diff=(0, 1))
row("softmax_cross_entropy_v2", lambda z, x: sf.nn.softmax_cross_entropy_with_logits_v2(labels=z, logits=x),
    R.softmax_cross_entropy_with_logits,
    lambda dt, r: [R.softmax(U(r, (2, 3), -1, 1, np.float64)).astype(dt), U(r, (2, 3), -2, 2, dt)], diff=(0, 1))
row("sparse_softmax_cross_entropy", lambda x, z: sf.nn.sparse_softmax_cross_entropy_with_logits(labels=z, logits=x),
    lambda x, z: R.sparse_softmax_cross_entropy_with_logits(z, x),
    lambda dt, r: [U(r, (3, 4), -2, 2, dt), i32([3, 0, 1])])

# -- linalg
row("matmul", sf.matmul, R.matmul, lambda dt, r: [U(r, (2, 3), -2, 2, dt), U(r, (3, 2), -2, 2, dt)], dtypes=FI,
    diff=(0, 1))
row("matmul_transpose_a", lambda a, b: sf.matmul(a, b, transpose_a=True), lambda a, b: R.matmul(a, b, transpose_a=True),
    lambda dt, r: [U(r, (3, 2), -2, 2, dt), U(r, (3, 2), -2, 2, dt)], dtypes=FI, diff=(0, 1))
row("matmul_adjoint_b", lambda a, b: sf.matmul(a, b, adjoint_b=True), lambda a, b: R.matmul(a, b, adjoint_b=True),
    lambda dt, r: [U(r, (2, 3), -2, 2, dt), U(r, (2, 3), -2, 2, dt)], dtypes=FI, diff=(0, 1))
row("matmul_batch_broadcast", sf.matmul, R.matmul,
    lambda dt, r: [U(r, (2, 1, 2, 3), -2, 2, dt), U(r, (3, 3, 2), -2, 2, dt)], dtypes=FI, diff=(0, 1))
row("linalg_matmul", sf.linalg.matmul, R.matmul, lambda dt, r: [U(r, (2, 2, 3), -2, 2, dt), U(r, (3, 1), -2, 2, dt)],
    diff=(0, 1))

# -- edge values (values only): IEEE results at the domain edges, integer wrap-around, empty inputs
EDGE = dict(diff=())
row("log_at_0_and_negative", sf.math.log, R.log, lambda dt, r: [np.array([0.0, -1.0, 1.0, np.inf], dt)], **EDGE)
row("log1p_at_-1", sf.math.log1p, R.log1p, lambda dt, r: [np.array([-1.0, -2.0, 0.0], dt)], **EDGE)
row("sqrt_of_negative", sf.sqrt, R.sqrt, lambda dt, r: [np.array([-1.0, 0.0, 4.0], dt)], **EDGE)
row("rsqrt_at_0", sf.math.rsqrt, R.rsqrt, lambda dt, r: [np.array([0.0, 4.0, np.inf], dt)], **EDGE)
row("reciprocal_at_0", sf.math.reciprocal, R.reciprocal, lambda dt, r: [np.array([0.0, -0.0, 4.0], dt)], **EDGE)
row("softplus_extremes", sf.math.softplus, R.softplus, lambda dt, r: [np.array([-100.0, -20.0, 0.0, 20.0, 100.0], dt)],
    **EDGE)
row("sigmoid_extremes", sf.sigmoid, R.sigmoid, lambda dt, r: [np.array([-100.0, -20.0, 0.0, 20.0, 100.0], dt)], **EDGE)
row("log_softmax_large_logits", sf.nn.log_softmax, R.log_softmax,
    lambda dt, r: [np.array([[1000.0, 0.0, -1000.0], [-500.0, -500.0, -501.0]], dt)], **EDGE)
row("reduce_logsumexp_with_-inf", lambda x: sf.reduce_logsumexp(x, 1), lambda x: R.reduce_logsumexp(x, 1),
    lambda dt, r: [np.array([[-np.inf, -np.inf], [0.0, -np.inf], [1.0, 2.0]], dt)], **EDGE)
row("pow_negative_base", sf.pow, R.pow, lambda dt, r: [np.array([-2.0, -1.5, -3.0, 0.0], dt),
                                                      np.array([2.0, 3.0, 0.5, 0.0], dt)], **EDGE)
row("floordiv_float_by_zero", sf.math.floordiv, R.floordiv,
    lambda dt, r: [np.array([1.0, -1.0, 0.0], dt), np.array([0.0, 0.0, 0.0], dt)], **EDGE)
row("floormod_float_by_zero", sf.math.floormod, R.floormod,
    lambda dt, r: [np.array([1.0, -1.0, 0.0], dt), np.array([0.0, 0.0, 0.0], dt)], **EDGE)
row("truediv_small_ints_to_float32", sf.math.truediv, R.truediv,
    lambda dt, r: [np.array([[1, 9, 6]], dt), np.array([2, 2, 4], dt)], dtypes=(np.int8, np.int16, np.uint8), **EDGE)
row("reduce_sum_int_wraps", sf.reduce_sum, R.reduce_sum, lambda dt, r: [np.array([2 ** 31 - 1, 1, 5], dt)],
    dtypes=I32, **EDGE)
row("reduce_prod_int_wraps", sf.reduce_prod, R.reduce_prod, lambda dt, r: [np.array([100000, 100000, 3], dt)],
    dtypes=I32, **EDGE)
row("reduce_sum_no_axes_is_identity", lambda x: sf.reduce_sum(x, []), lambda x: R.reduce_sum(x, []), x23, dtypes=FI,
    **EDGE)
row("segment_sum_empty", sf.math.segment_sum, R.segment_sum,
    lambda dt, r: [np.zeros((0, 2), dt), i32([])], dtypes=FI, **EDGE)
row("unsorted_segment_max_empty_data", lambda d, i: sf.math.unsorted_segment_max(d, i, 2),
    lambda d, i: R.unsorted_segment_max(d, i, 2), lambda dt, r: [np.zeros((0, 2), dt), i32([])], dtypes=FI, **EDGE)
row("unsorted_segment_min_all_dropped", lambda d, i: sf.math.unsorted_segment_min(d, i, 2),
    lambda d, i: R.unsorted_segment_min(d, i, 2), lambda dt, r: [U(r, (2, 2), -2, 2, dt), i32([-1, -3])], dtypes=FI,
    **EDGE)
row("sparse_segment_sum_int64_indices", sf.math.sparse_segment_sum, R.sparse_segment_sum,
    lambda dt, r: [U(r, (5, 2), -2, 2, dt), SP_IDX.astype(np.int64), SP_SEG], dtypes=F64, second="sin")
row("gather_scalar_index", lambda p, i: sf.gather(p, i), R.gather, lambda dt, r: [U(r, (4, 2), -2, 2, dt), i32(2)],
    dtypes=FI, second="sin")
row("gather_nd_empty_indices", sf.gather_nd, R.gather_nd,
    lambda dt, r: [U(r, (3, 4), -2, 2, dt), np.zeros((0, 2), np.int32)], dtypes=FI, **EDGE)
row("concat_with_empty", lambda a, b: sf.concat([a, b], 0), lambda a, b: R.concat([a, b], 0),
    lambda dt, r: [np.zeros((0, 3), dt), U(r, (2, 3), -2, 2, dt)], dtypes=FI, diff=(1,), second="sin")
row("tile_zero_multiple", lambda x: sf.tile(x, [0, 2]), lambda x: R.tile(x, [0, 2]), x23, dtypes=FI, **EDGE)
row("strided_slice_clamps_out_of_range", lambda x: sf.strided_slice(x, [-2, -10], [10, -1], [1, 1]),
    lambda x: R.strided_slice(x, [-2, -10], [10, -1], [1, 1]), x34, **LIN)
row("squeeze_all", sf.squeeze, R.squeeze, lambda dt, r: [U(r, (1, 3, 1), -2, 2, dt)], **LIN)

# -- negative axes, op by op
row("concat_axis-1", lambda a, b: sf.concat([a, b], -1), lambda a, b: R.concat([a, b], -1),
    lambda dt, r: [U(r, (2, 2), -2, 2, dt), U(r, (2, 1), -2, 2, dt)], diff=(0, 1), **LIN)
row("stack_axis-1", lambda a, b: sf.stack([a, b], -1), lambda a, b: R.stack([a, b], -1),
    lambda dt, r: [U(r, (2, 3), -2, 2, dt), U(r, (2, 3), -2, 2, dt)], diff=(0, 1), **LIN)
row("unstack_axis-1", lambda x: sf.unstack(x, axis=-1), lambda x: R.unstack(x, -1), x23, **LIN)
row("split_axis-1", lambda x: sf.split(x, 2, axis=-1), lambda x: R.split(x, 2, -1), x34, **LIN)
row("split_sizes_axis-2", lambda x: sf.split(x, [2, 1], axis=-2), lambda x: R.split(x, [2, 1], -2), x34, **LIN)
row("reverse_axis-1", lambda x: sf.reverse(x, [-1]), lambda x: R.reverse(x, [-1]), x23, **LIN)
row("cumsum_axis-1", lambda x: sf.cumsum(x, -1), lambda x: R.cumsum(x, -1), x23, **LIN)
row("argmax_axis-1", lambda x: sf.argmax(x, -1), lambda x: R.argmax(x, -1), lambda dt, r: [D(r, (3, 4), dt)],
    dtypes=FI, diff=())
row("squeeze_axis-1", lambda x: sf.squeeze(x, [-1]), lambda x: R.squeeze(x, [-1]),
    lambda dt, r: [U(r, (2, 3, 1), -2, 2, dt)], **LIN)
row("l2_normalize_axis-1", lambda x: sf.nn.l2_normalize(x, axis=-1), lambda x: R.l2_normalize(x, axis=-1), x23)
row("reduce_logsumexp_axis-1_keepdims", lambda x: sf.reduce_logsumexp(x, -1, keepdims=True),
    lambda x: R.reduce_logsumexp(x, -1, keepdims=True), x23)

# Where segflow disagrees with TensorFlow (strict: a fix turns the row red until the mark goes).
XFAIL = {}   # name -> ((check, reason), ...); empty: every row agrees with TF
SPECS = [dataclasses.replace(s, xfail=XFAIL.get(s.name, s.xfail)) for s in SPECS]
assert set(XFAIL) <= {s.name for s in SPECS}

_names = [s.name for s in SPECS]
assert len(set(_names)) == len(_names), "duplicate spec row names"
BY_NAME = {s.name: s for s in SPECS}


# ----------------------------------------------------------------------------------------------
# Parametrization


def _param(spec, check, *extra):
    reasons = dict(spec.xfail)
    keys = [check] + [f"{check}-{np.dtype(e).name}" for e in extra if isinstance(e, type)]
    marks = [pytest.mark.xfail(strict=True, reason=reasons[k]) for k in keys if k in reasons]
    return pytest.param(spec, *extra, marks=marks, id="-".join([spec.name] + [np.dtype(e).name for e in extra]))


VALUE_CASES = [_param(s, "values", d) for s in SPECS for d in s.dtypes]
GRAD_CASES = [_param(s, "grad") for s in SPECS if s.diff]
SECOND_CASES = [_param(s, "second") for s in SPECS if s.diff and s.second]


def _as_tuple(x):
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


def _tensor(x):
    return sf.constant(x)


# ----------------------------------------------------------------------------------------------
# Values


def _assert_same(got, want, dtype, spec, what):
    got = np.asarray(got)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, TF gives {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, TF gives {want.shape}"
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=what)
    elif np.dtype(dtype) == np.float32 or want.dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=spec.rtol32, atol=spec.rtol32, err_msg=what)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=what)


@pytest.mark.parametrize("spec,dtype", VALUE_CASES)
def test_values(mode, spec, dtype):
    xs = spec.make(np.dtype(dtype), _rng(spec.name, "values", np.dtype(dtype).name))
    with np.errstate(all="ignore"):  # the edge rows make inf and nan on purpose
        want = _as_tuple(spec.ref(*[np.array(x, copy=True) for x in xs]))
    out = _as_tuple(spec.fn(*[_tensor(x) for x in xs]))
    assert len(out) == len(want), f"{len(out)} outputs, TF gives {len(want)}"
    got = mode.evaluate(list(out))
    for k, (t, g, w) in enumerate(zip(out, got, want)):
        w = np.asarray(w)
        if t.shape.is_fully_defined():
            assert tuple(t.shape.as_list()) == w.shape, f"output {k}: static shape {t.shape}, TF gives {w.shape}"
        _assert_same(g, w, dtype, spec, f"{spec.name} output {k}")


# ----------------------------------------------------------------------------------------------
# First-order gradients


def _weights(shape, seed):
    return np.random.default_rng(seed).uniform(0.5, 1.5, size=shape)


def differentiable(spec, xs, wrap=False):
    """f(*diff_inputs): the op with its other inputs fixed as constants. Several float outputs are
    folded into one scalar (a fixed random weighting of each); `wrap` checks sin(op(x))."""
    want = _as_tuple(spec.ref(*[np.array(x, copy=True) for x in xs]))
    weights = [_weights(np.shape(w), k) for k, w in enumerate(want)]

    def f(*d):
        args = [_tensor(x) for x in xs]
        for i, t in zip(spec.diff, d):
            args[i] = t
        out = _as_tuple(spec.fn(*args))
        if wrap:
            out = tuple(sf.sin(o) if o.dtype.is_floating else o for o in out)
        if len(out) == 1:
            return out[0]
        terms = [sf.reduce_sum(o * sf.constant(w)) for o, w in zip(out, weights) if o.dtype.is_floating]
        return sf.add_n(terms)

    out_shape = want[0].shape if len(want) == 1 else ()
    return f, out_shape


@pytest.mark.parametrize("spec", GRAD_CASES)
def test_gradients(mode, spec):
    xs = spec.make(np.dtype(np.float64), _rng(spec.name, "grad"))
    f, _ = differentiable(spec, xs)
    check_gradients(mode, f, [xs[i] for i in spec.diff], tol=spec.tol)


# ----------------------------------------------------------------------------------------------
# Second order: gradient of a gradient against central differences of the first-order gradient


def _dense(t):
    return None if t is None else sf.convert_to_tensor(t)


def _second_order_eager(f, d, v, u):
    def phi_tensor(ts):
        with sf.GradientTape() as tape:
            tape.watch(ts[0])
            y = f(*ts)
        g = _dense(tape.gradient(y, ts[0], output_gradients=sf.constant(v)))
        assert g is not None, "no first-order gradient"
        return sf.reduce_sum(g * sf.constant(u))

    ts = [sf.constant(x) for x in d]
    with sf.GradientTape() as outer:
        outer.watch(ts)
        h = phi_tensor(ts)
    analytic = [None if g is None else _dense(g).numpy() for g in outer.gradient(h, ts)]
    return analytic, lambda vals: float(phi_tensor([sf.constant(x) for x in vals]).numpy())


def _second_order_graph(mode, f, d, v, u):
    phs = [sf.placeholder(sf.as_dtype(x.dtype), x.shape) for x in d]
    y = f(*phs)
    g = _dense(sf.gradients(y, phs[0], grad_ys=sf.constant(v))[0])
    assert g is not None, "no first-order gradient"
    h = sf.reduce_sum(g * sf.constant(u))
    hh = [_dense(t) for t in sf.gradients(h, phs)]
    feed = dict(zip(phs, d))
    connected = [t for t in hh if t is not None]
    values = iter(mode.session.run(connected, feed)) if connected else iter(())
    analytic = [None if t is None else next(values) for t in hh]
    return analytic, lambda vals: float(mode.session.run(h, dict(zip(phs, vals))))


@pytest.mark.parametrize("spec", SECOND_CASES)
def test_second_order(mode, spec):
    xs = spec.make(np.dtype(np.float64), _rng(spec.name, "second"))
    f, out_shape = differentiable(spec, xs, wrap=spec.second == "sin")
    d = [np.array(xs[i], np.float64) for i in spec.diff]
    rng = _rng(spec.name, "second", "weights")
    v = rng.uniform(0.5, 1.5, size=out_shape)
    u = rng.uniform(0.5, 1.5, size=d[0].shape)
    if mode.eager:
        analytic, phi = _second_order_eager(f, d, v, u)
    else:
        analytic, phi = _second_order_graph(mode, f, d, v, u)
    delta = 1e-5
    any_nonzero = False
    for j, x in enumerate(d):
        numeric = np.zeros(x.shape)
        for k in np.ndindex(x.shape):
            plus = [a.copy() for a in d]
            minus = [a.copy() for a in d]
            plus[j][k] += delta
            minus[j][k] -= delta
            numeric[k] = (phi(plus) - phi(minus)) / (2 * delta)
        got = np.zeros(x.shape) if analytic[j] is None else np.asarray(analytic[j])
        assert got.shape == x.shape, f"input {spec.diff[j]}: second-order gradient shape {got.shape}"
        np.testing.assert_allclose(got, numeric, rtol=10 * spec.tol, atol=10 * spec.tol,
                                   err_msg=f"{spec.name}: d/d input {spec.diff[j]} of the first-order gradient")
        any_nonzero |= bool(np.any(numeric != 0))
    assert any_nonzero, "the row's second derivative is identically zero: use second='sin'"


def test_table_covers_the_families():
    assert len(SPECS) >= 60
    for prefix in ("unsorted_segment_", "segment_", "sparse_segment_", "gather", "reduce_", "matmul", "concat",
                   "softmax", "pad_", "strided_slice", "tensor_scatter"):
        assert any(n.startswith(prefix) for n in BY_NAME), prefix


# ----------------------------------------------------------------------------------------------
# Gradient conventions at ties and kinks: TF's choice, which numerical Jacobians cannot decide.
# (name, fn, inputs, differentiable inputs, forward reference for the output shape, gradient reference)

TIES = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
SEG_DATA = np.array([[1.0, 5.0], [1.0, 2.0], [0.0, 5.0], [7.0, 7.0]])
SEG_IDS = i32([0, 0, -1, 1])
CONVENTIONS = [
    ("maximum_ties_go_to_x", sf.maximum, [np.array([[1.0, 2.0, 3.0], [0.5, 3.0, -1.0]]), np.array([1.0, 3.0, -1.0])],
     (0, 1), R.maximum, R.maximum_grad),
    ("minimum_ties_go_to_x", sf.minimum, [np.array([[1.0, 2.0, 3.0], [0.5, 3.0, -1.0]]), np.array([1.0, 3.0, -1.0])],
     (0, 1), R.minimum, R.minimum_grad),
    ("reduce_max_ties_split_evenly", lambda x: sf.reduce_max(x, 1), [TIES], (0,), lambda x: R.reduce_max(x, 1),
     lambda x, dy: (R.reduce_max_grad(x, 1, dy),)),
    ("reduce_min_ties_split_evenly", lambda x: sf.reduce_min(x), [TIES], (0,), R.reduce_min,
     lambda x, dy: (R.reduce_min_grad(x, None, dy),)),
    ("unsorted_segment_max_ties_split_evenly", lambda d, i: sf.math.unsorted_segment_max(d, i, 3), [SEG_DATA, SEG_IDS],
     (0,), lambda d, i: R.unsorted_segment_max(d, i, 3), lambda d, i, dy: (R.unsorted_segment_max_grad(d, i, 3, dy),)),
    ("unsorted_segment_min_ties_split_evenly", lambda d, i: sf.math.unsorted_segment_min(d, i, 3), [SEG_DATA, SEG_IDS],
     (0,), lambda d, i: R.unsorted_segment_min(d, i, 3), lambda d, i, dy: (R.unsorted_segment_min_grad(d, i, 3, dy),)),
    ("segment_max_ties_split_evenly", sf.math.segment_max, [SEG_DATA, i32([0, 0, 2, 2])], (0,), R.segment_max,
     lambda d, i, dy: (R.segment_max_grad(d, i, dy),)),
    ("relu_at_zero", sf.nn.relu, [np.array([-1.0, 0.0, 2.0])], (0,), R.relu, lambda x, dy: (R.relu_grad(x, dy),)),
    ("relu6_at_0_and_6", sf.nn.relu6, [np.array([-1.0, 0.0, 3.0, 6.0, 7.0])], (0,), R.relu6,
     lambda x, dy: (R.relu6_grad(x, dy),)),
    ("leaky_relu_at_zero", lambda x: sf.nn.leaky_relu(x, 0.1), [np.array([-1.0, 0.0, 2.0])], (0,),
     lambda x: R.leaky_relu(x, 0.1), lambda x, dy: (R.leaky_relu_grad(x, dy, 0.1),)),
    ("abs_at_zero", sf.abs, [np.array([-1.5, 0.0, 2.0])], (0,), R.abs, lambda x, dy: (R.abs_grad(x, dy),)),
    ("pow_at_zero_and_negative_base", sf.pow, [np.array([0.0, 0.0, -2.0, 1.5]), np.array([2.0, 3.0, 2.0, 0.5])],
     (0, 1), R.pow, R.pow_grad),
    ("div_no_nan_zero_divisor", sf.math.div_no_nan, [np.array([1.0, 2.0, -3.0]), np.array([0.0, 4.0, 0.0])], (0, 1),
     R.div_no_nan, R.div_no_nan_grad),
    ("top_k_ties_lower_index", lambda x: sf.math.top_k(x, 2)[0], [np.array([[1.0, 3.0, 3.0, 2.0, 3.0]])], (0,),
     lambda x: R.top_k(x, 2)[0], lambda x, dy: (R.top_k_grad(x, 2, dy),)),
]


@pytest.mark.parametrize("name,fn,xs,diff,fwd,grad_ref", CONVENTIONS, ids=[c[0] for c in CONVENTIONS])
def test_gradient_conventions(mode, name, fn, xs, diff, fwd, grad_ref):
    dy = _weights(np.shape(fwd(*xs)), 7)
    ts = [sf.constant(x) for x in xs]
    d = [ts[i] for i in diff]
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(d)
            y = fn(*ts)
        grads = tape.gradient(y, d, output_gradients=sf.constant(dy))
    else:
        grads = sf.gradients(fn(*ts), d, grad_ys=sf.constant(dy))
    assert all(g is not None for g in grads), "missing gradient"
    got = mode.evaluate([_dense(g) for g in grads])
    want = grad_ref(*xs, dy)
    for i, g, w in zip(diff, got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, err_msg=f"{name}: gradient of input {i}")

"""TF1's learning-rate schedules (`tf.compat.v1.train.exponential_decay` and kin): the rate as a
function of the global step.

    step = sf.train.get_or_create_global_step()
    lr = sf.train.exponential_decay(0.1, step, decay_steps=1000, decay_rate=0.96, staircase=True)
    opt = sf.train.GradientDescentOptimizer(lr)     # graph mode: a tensor that follows `step`

While building a graph each function returns a float tensor computed from `global_step` (so a
Session run sees the variable's current value); eagerly it returns a no-argument callable that
computes the rate from `global_step` when called, as TensorFlow 2 does. The rate has the dtype of
`learning_rate` (float32 for a Python number); the step and the other numbers are cast to it.
"""
import functools
import math

from segflow._core import mode as context
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._core.tensor import Tensor
from segflow._ops import cast as cast_ops
from segflow._ops import elementwise as cw

__all__ = ["exponential_decay", "piecewise_constant", "polynomial_decay", "natural_exp_decay",
           "inverse_time_decay", "cosine_decay", "cosine_decay_restarts", "linear_cosine_decay"]


class _Schedule:
    """A rate as a function of the step: `schedule(step)` builds (or computes) the rate tensor."""

    def __init__(self, kind, name, fn):
        self.kind, self.name, self._fn = kind, name, fn

    def __call__(self, step):
        with name_scope(self.name, self.kind, [step]):
            return self._fn(step)

    def __repr__(self):
        return f"<{self.kind} schedule>"


def _result(kind, name, global_step, fn):
    schedule = _Schedule(kind, name, fn)
    if context.executing_eagerly():
        return functools.partial(schedule, global_step)
    if global_step is None:
        raise ValueError(f"global_step is required for {kind}.")
    return schedule(global_step)


def _lr(learning_rate):
    return learning_rate if isinstance(learning_rate, Tensor) else \
        convert_to_tensor(learning_rate, name="learning_rate")


def _as(value, dtype):
    return cast_ops.cast(value, dtype)


def _exp_like(kind, learning_rate, global_step, decay_steps, staircase, name, decay_of_p):
    def fn(step):
        lr = _lr(learning_rate)
        p = cw.divide(_as(step, lr.dtype), _as(decay_steps, lr.dtype))
        if staircase:
            p = cw.floor(p)
        return cw.multiply(lr, decay_of_p(p, lr.dtype))
    return _result(kind, name, global_step, fn)


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """learning_rate * decay_rate ** (global_step / decay_steps); with `staircase` the exponent is
    floored, so the rate drops once every `decay_steps` steps."""
    return _exp_like("ExponentialDecay", learning_rate, global_step, decay_steps, staircase, name,
                     lambda p, dt: cw.pow(_as(decay_rate, dt), p))


def natural_exp_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """learning_rate * exp(-decay_rate * global_step / decay_steps) (the exponent floored with
    `staircase`)."""
    return _exp_like("NaturalExpDecay", learning_rate, global_step, decay_steps, staircase, name,
                     lambda p, dt: cw.exp(cw.negative(cw.multiply(_as(decay_rate, dt), p))))


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False, name=None):
    """learning_rate / (1 + decay_rate * global_step / decay_steps) (the ratio floored with
    `staircase`)."""
    return _exp_like("InverseTimeDecay", learning_rate, global_step, decay_steps, staircase, name,
                     lambda p, dt: cw.reciprocal(cw.add(_as(1, dt), cw.multiply(_as(decay_rate, dt), p))))


def piecewise_constant(x, boundaries, values, name=None):
    """values[0] while x <= boundaries[0], values[i] while boundaries[i-1] < x <= boundaries[i],
    values[-1] once x > boundaries[-1].

    Args:
      x: the step (a scalar tensor or variable); the boundaries are cast to its dtype.
      boundaries: increasing numbers; values: one more number (or scalar tensor) than boundaries,
        all of one dtype.
    Raises:
      ValueError: len(values) != len(boundaries) + 1, or values of different dtypes.
    """
    boundaries, values = list(boundaries), list(values)
    if len(boundaries) != len(values) - 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")

    def fn(step):
        step = step if isinstance(step, Tensor) else convert_to_tensor(step)
        vals = [v if isinstance(v, Tensor) else convert_to_tensor(v) for v in values]
        if len({v.dtype for v in vals}) > 1:
            raise ValueError(f"piecewise_constant: values must all have one dtype, got "
                             f"{[v.dtype.name for v in vals]}")
        out = vals[-1]
        for b, v in zip(reversed(boundaries), reversed(vals[:-1])):
            b = b if isinstance(b, Tensor) else convert_to_tensor(b)
            if b.dtype.base_dtype != step.dtype.base_dtype:
                b = cast_ops.cast(b, step.dtype.base_dtype)
            out = cw.where_v2(cw.less_equal(step, b), v, out)
        return out
    return _result("PiecewiseConstant", name, x, fn)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False,
                     name=None):
    """(learning_rate - end_learning_rate) * (1 - step / decay_steps) ** power + end_learning_rate,
    with step = min(global_step, decay_steps); with `cycle` the decay restarts: decay_steps is
    multiplied by ceil(global_step / decay_steps) (by 1 at step 0) and step is not clipped."""
    def fn(step):
        lr = _lr(learning_rate)
        dt = lr.dtype
        end = _as(end_learning_rate, dt)
        step = _as(step, dt)
        steps = _as(decay_steps, dt)
        if cycle:
            multiplier = cw.where_v2(cw.equal(step, _as(0, dt)), _as(1, dt), cw.ceil(cw.divide(step, steps)))
            steps = cw.multiply(steps, multiplier)
        else:
            step = cw.minimum(step, steps)
        p = cw.divide(step, steps)
        return cw.add(cw.multiply(cw.subtract(lr, end), cw.pow(cw.subtract(_as(1, dt), p), _as(power, dt))), end)
    return _result("PolynomialDecay", name, global_step, fn)


def cosine_decay(learning_rate, global_step, decay_steps, alpha=0.0, name=None):
    """learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * step / decay_steps)) + alpha), step =
    min(global_step, decay_steps): from learning_rate down to alpha * learning_rate."""
    def fn(step):
        lr = _lr(learning_rate)
        dt = lr.dtype
        steps = _as(decay_steps, dt)
        fraction = cw.divide(cw.minimum(_as(step, dt), steps), steps)
        cosine = cw.multiply(_as(0.5, dt), cw.add(_as(1, dt), cw.cos(cw.multiply(_as(math.pi, dt), fraction))))
        a = _as(alpha, dt)
        return cw.multiply(lr, cw.add(cw.multiply(cw.subtract(_as(1, dt), a), cosine), a))
    return _result("CosineDecay", name, global_step, fn)


def cosine_decay_restarts(learning_rate, global_step, first_decay_steps, t_mul=2.0, m_mul=1.0, alpha=0.0,
                          name=None):
    """Cosine decay with warm restarts (SGDR): the first period is `first_decay_steps` long, each
    next one `t_mul` times longer and starting from `m_mul` times the previous peak; each period
    decays from its peak to alpha * learning_rate."""
    def fn(step):
        lr = _lr(learning_rate)
        dt = lr.dtype
        one = _as(1, dt)
        fraction = cw.divide(_as(step, dt), _as(first_decay_steps, dt))
        tm, mm, a = _as(t_mul, dt), _as(m_mul, dt), _as(alpha, dt)
        if t_mul == 1.0:
            restarts = cw.floor(fraction)
            fraction = cw.subtract(fraction, restarts)
        else:
            # periods 1, t, t^2, ...: restart i starts at (1 - t^i) / (1 - t) first periods
            restarts = cw.floor(cw.divide(cw.log(cw.subtract(one, cw.multiply(fraction, cw.subtract(one, tm)))),
                                          cw.log(tm)))
            done = cw.divide(cw.subtract(one, cw.pow(tm, restarts)), cw.subtract(one, tm))
            fraction = cw.divide(cw.subtract(fraction, done), cw.pow(tm, restarts))
        peak = cw.pow(mm, restarts)
        cosine = cw.multiply(cw.multiply(_as(0.5, dt), peak),
                             cw.add(one, cw.cos(cw.multiply(_as(math.pi, dt), fraction))))
        return cw.multiply(lr, cw.add(cw.multiply(cw.subtract(one, a), cosine), a))
    return _result("SGDRDecay", name, global_step, fn)


def linear_cosine_decay(learning_rate, global_step, decay_steps, num_periods=0.5, alpha=0.0, beta=0.001,
                        name=None):
    """learning_rate * ((alpha + linear) * cosine + beta), step = min(global_step, decay_steps),
    linear = (decay_steps - step) / decay_steps, cosine = 0.5 * (1 + cos(2 pi num_periods step /
    decay_steps))."""
    def fn(step):
        lr = _lr(learning_rate)
        dt = lr.dtype
        steps = _as(decay_steps, dt)
        step = cw.minimum(_as(step, dt), steps)
        linear = cw.divide(cw.subtract(steps, step), steps)
        fraction = cw.multiply(_as(2.0 * num_periods, dt), cw.divide(step, steps))
        cosine = cw.multiply(_as(0.5, dt), cw.add(_as(1, dt), cw.cos(cw.multiply(_as(math.pi, dt), fraction))))
        return cw.multiply(lr, cw.add(cw.multiply(cw.add(_as(alpha, dt), linear), cosine), _as(beta, dt)))
    return _result("LinearCosineDecay", name, global_step, fn)

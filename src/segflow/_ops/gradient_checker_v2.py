"""Numerical checks of gradients for functions (eager), like `tf.test.compute_gradient`.

    theoretical, numerical = compute_gradient(f, [x])

`f` maps tensors to one tensor; each result is a list with one Jacobian per argument, shaped
[x.size, y.size] (complex values split into real and imaginary parts, as in TF).
"""
import numpy as np

from segflow._core import mode as context
from segflow._ops import backprop
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.tensor import EagerTensor, Tensor
from segflow._core import fold as tensor_util
from segflow._core import dtypes
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import get_default_graph
from segflow._core.indexed_slices import IndexedSlicesValue
from segflow._core.mode import get_default_session
from segflow._core.session import Session
from segflow._ops import gradients as gradients_lib
from segflow._ops.shape import placeholder

__all__ = ["compute_gradient", "max_error"]


def _to_dense(g, shape):
    if isinstance(g, IndexedSlices):
        dense = np.zeros(shape, dtype=g.values.numpy().dtype)
        np.add.at(dense, g.indices.numpy(), g.values.numpy())
        return dense
    return np.asarray(g.numpy())


class _EagerRunner:
    """Evaluates f and its vector-Jacobian products eagerly."""

    def value(self, f, xs):
        return np.asarray(f(*[EagerTensor(v) for v in xs]).numpy())

    def vjp(self, f, xs, i, dy):
        args = [EagerTensor(v) for v in xs]
        with backprop.GradientTape() as tape:
            tape.watch(args[i])
            y = f(*args)
        g = tape.gradient(y, args[i], output_gradients=EagerTensor(dy))
        return None if g is None else _to_dense(g, xs[i].shape)


class _GraphRunner:
    """Builds f once on placeholders in the default graph (so tensors it closes over are usable)
    and evaluates it and its gradients with a Session, as TF's checker does in graph mode."""

    def __init__(self, f, xs):
        from_numpy = dtypes.from_numpy
        self.phs = [placeholder(from_numpy(v.dtype), v.shape) for v in xs]
        self.y = convert_to_tensor(f(*self.phs))
        self.dy = placeholder(self.y.dtype, self.y.shape)
        self.grads = gradients_lib.gradients(self.y, self.phs, grad_ys=self.dy)
        self.session = get_default_session()
        if self.session is None or self.session.graph is not get_default_graph():
            self.session = Session(graph=get_default_graph())

    def value(self, f, xs):
        return np.asarray(self.session.run(self.y, dict(zip(self.phs, xs))))

    def vjp(self, f, xs, i, dy):
        if self.grads[i] is None:
            return None
        feed = dict(zip(self.phs, xs))
        feed[self.dy] = dy
        g = self.session.run(self.grads[i], feed)
        if isinstance(g, IndexedSlicesValue):
            dense = np.zeros(xs[i].shape, dtype=g.values.dtype)
            np.add.at(dense, g.indices, g.values)
            return dense
        return np.asarray(g)


def _jacobians(f, xs, i, delta, runner):
    x = xs[i]
    x_size = x.size
    y0 = runner.value(f, xs)
    y_size = y0.size
    y_complex = np.iscomplexobj(y0)
    x_complex = np.iscomplexobj(x)
    # the Jacobians' dtype: x's own for floats (bfloat16, which np.finfo does not know, included),
    # the real part's for complex x; np.finfo refuses the rest (integers) as before
    real = np.real(x).dtype if x_complex else (x.dtype if dtypes.from_numpy(x.dtype).is_floating
                                                else np.finfo(x.dtype).dtype)
    rows = 2 * x_size if x_complex else x_size
    cols = 2 * y_size if y_complex else y_size
    theory = np.zeros((rows, cols), real)
    numeric = np.zeros((rows, cols), real)
    # Theoretical: backpropagate unit vectors of y.
    units = [(j, 1) for j in range(y_size)] + ([(j, 1j) for j in range(y_size)] if y_complex else [])
    for col, (j, unit) in enumerate(units):
        dy = np.zeros(y_size, dtype=y0.dtype)
        dy[j] = unit
        g = runner.vjp(f, xs, i, dy.reshape(y0.shape))
        if g is None:
            continue
        g = g.reshape(-1)
        if x_complex:
            theory[:x_size, col] = g.real
            theory[x_size:, col] = g.imag
        else:
            theory[:, col] = np.real(g)
    # Numerical: central differences.
    steps = [1] + ([1j] if x_complex else [])
    for k, unit in enumerate(steps):
        for r in range(x_size):
            xp = [v.copy() for v in xs]
            xm = [v.copy() for v in xs]
            xp[i].reshape(-1)[r] += delta * unit
            xm[i].reshape(-1)[r] -= delta * unit
            yp = np.asarray(runner.value(f, xp), dtype=np.complex128 if y_complex else np.float64)
            ym = np.asarray(runner.value(f, xm), dtype=np.complex128 if y_complex else np.float64)
            d = ((yp - ym) / (2 * delta)).reshape(-1)
            if y_complex:
                numeric[k * x_size + r, :y_size] = d.real
                numeric[k * x_size + r, y_size:] = d.imag
            else:
                numeric[k * x_size + r, :] = d
    return theory, numeric


def _value(v):
    """A starting point as a NumPy array: eager tensors give their value; a graph tensor its
    constant value, or what the default session computes for it."""
    if isinstance(v, EagerTensor):
        return np.array(v.numpy())
    if isinstance(v, Tensor):
        known = tensor_util.constant_value(v)
        if known is not None:
            return np.array(known)
        session = get_default_session()
        if session is None or session.graph is not v.graph:
            session = Session(graph=v.graph)
        return np.array(session.run(v))
    return np.array(v)


def compute_gradient(f, x, delta=None):
    """(theoretical, numerical): lists of Jacobians of f w.r.t. each argument in `x`.

    Eagerly, f runs on eager tensors under a GradientTape. Inside a graph-building block, f is
    built once on placeholders in the default graph (tensors it closes over belong there) and
    run by a Session, as TF's checker does.
    """
    xs = [_value(v) for v in x]
    if delta is None:
        delta = 1e-3 if all(v.dtype in (np.float64, np.complex128) for v in xs) else 1e-2
    runner = _EagerRunner() if context.executing_eagerly() else _GraphRunner(f, xs)
    pairs = [_jacobians(f, xs, i, delta, runner) for i in range(len(xs))]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def max_error(grad1, grad2):
    """The largest absolute difference between two lists of Jacobians."""
    return max((float(np.max(np.abs(a - b))) if a.size else 0.0) for a, b in zip(grad1, grad2))

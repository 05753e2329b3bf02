"""Numerical checks of gradients for functions (eager), like `tf.test.compute_gradient`.

    theoretical, numerical = compute_gradient(f, [x])

`f` maps tensors to one tensor; each result is a list with one Jacobian per argument, shaped
[x.size, y.size] (complex values split into real and imaginary parts, as in TF).
"""
import numpy as np

from segflow._core import mode as context
from segflow._ops import backprop
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.tensor import EagerTensor

__all__ = ["compute_gradient", "max_error"]


def _to_dense(g, shape):
    if isinstance(g, IndexedSlices):
        dense = np.zeros(shape, dtype=g.values.numpy().dtype)
        np.add.at(dense, g.indices.numpy(), g.values.numpy())
        return dense
    return np.asarray(g.numpy())


def _jacobians(f, xs, i, delta):
    x = xs[i]
    x_shape = x.shape
    x_size = x.size
    y0 = np.asarray(f(*[EagerTensor(v) for v in xs]).numpy())
    y_size = y0.size
    y_complex = np.iscomplexobj(y0)
    x_complex = np.iscomplexobj(x)
    real = np.finfo(x.dtype).dtype if not x_complex else np.real(x).dtype
    rows = 2 * x_size if x_complex else x_size
    cols = 2 * y_size if y_complex else y_size
    theory = np.zeros((rows, cols), real)
    numeric = np.zeros((rows, cols), real)
    # Theoretical: backpropagate unit vectors of y.
    units = [(j, 1) for j in range(y_size)] + ([(j, 1j) for j in range(y_size)] if y_complex else [])
    for col, (j, unit) in enumerate(units):
        args = [EagerTensor(v) for v in xs]
        with backprop.GradientTape() as tape:
            tape.watch(args[i])
            y = f(*args)
        dy = np.zeros(y_size, dtype=y0.dtype)
        dy[j] = unit
        g = tape.gradient(y, args[i], output_gradients=EagerTensor(dy.reshape(y0.shape)))
        if g is None:
            continue
        g = _to_dense(g, x_shape).reshape(-1)
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
            yp = np.asarray(f(*[EagerTensor(v) for v in xp]).numpy(), dtype=np.complex128 if y_complex else np.float64)
            ym = np.asarray(f(*[EagerTensor(v) for v in xm]).numpy(), dtype=np.complex128 if y_complex else np.float64)
            d = ((yp - ym) / (2 * delta)).reshape(-1)
            if y_complex:
                numeric[k * x_size + r, :y_size] = d.real
                numeric[k * x_size + r, y_size:] = d.imag
            else:
                numeric[k * x_size + r, :] = d
    return theory, numeric


def compute_gradient(f, x, delta=None):
    """(theoretical, numerical): lists of Jacobians of f w.r.t. each argument in `x`.

    Runs eagerly (inside a graph-building block too, by switching to eager mode for the check).
    """
    xs = [np.array(v.numpy() if isinstance(v, EagerTensor) else v) for v in x]
    if delta is None:
        delta = 1e-3 if all(v.dtype in (np.float64, np.complex128) for v in xs) else 1e-2
    with context.eager_mode():
        pairs = [_jacobians(f, xs, i, delta) for i in range(len(xs))]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def max_error(grad1, grad2):
    """The largest absolute difference between two lists of Jacobians."""
    return max((float(np.max(np.abs(a - b))) if a.size else 0.0) for a, b in zip(grad1, grad2))

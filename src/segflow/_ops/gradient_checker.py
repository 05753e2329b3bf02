"""Numerical checks of gradients (TF v1 signature, graph mode).

    jac_theory, jac_numeric = compute_gradient(x, x_shape, y, y_shape, x_init_value=x0)

Both Jacobians have shape [x.size, y.size] (complex values split into real and imaginary parts):
row i of the theoretical one is the gradient of y w.r.t. x when backpropagating the unit vector
e_i... column-wise, as TF lays it out. The numerical one uses central differences with step `delta`.
"""
import numpy as np

from segflow._core.graph import get_default_graph
from segflow._core.indexed_slices import IndexedSlicesValue
from segflow._core.mode import get_default_session
from segflow._ops import gradients as gradients_lib
from segflow._core.session import Session

__all__ = ["compute_gradient", "compute_gradient_error"]


def _session():
    s = get_default_session()
    return s if s is not None else Session()


def _real_size(dtype, n):
    return 2 * n if dtype.is_complex else n


def _theoretical(x, x_shape, x_data, y, y_shape, sess, extra_feed):
    x_size = int(np.prod(x_shape))
    y_size = int(np.prod(y_shape))
    jac = np.zeros((_real_size(x.dtype, x_size), _real_size(y.dtype, y_size)),
                   dtype=x.dtype.real_dtype.as_numpy_dtype)
    dy = get_default_graph() and __import__("segflow._ops.shape", fromlist=["placeholder"]).placeholder(
        y.dtype, y_shape)
    grad = gradients_lib.gradients(y, x, grad_ys=dy)[0]
    if grad is None:
        return jac
    if x_size == 0 or y_size == 0:
        # No column to fill: still run the gradient once, to check that it has x's shape.
        feed = {x: x_data, dy: np.zeros(y_shape, dtype=y.dtype.as_numpy_dtype)}
        feed.update(extra_feed)
        g = sess.run(grad, feed)
        got = g.dense_shape if isinstance(g, IndexedSlicesValue) else np.shape(g)
        if tuple(got) != tuple(x_data.shape):
            raise ValueError(f"Empty gradient has wrong shape: expected {tuple(x_data.shape)}, got {tuple(got)}")
        return jac
    dy_data = np.zeros(y_shape, dtype=y.dtype.as_numpy_dtype)
    flat = dy_data.reshape(-1)
    cols = [(i, 1) for i in range(y_size)] + ([(i, 1j) for i in range(y_size)] if y.dtype.is_complex else [])
    for col, (i, unit) in enumerate(cols):
        flat[:] = 0
        flat[i] = unit
        feed = {x: x_data, dy: dy_data}
        feed.update(extra_feed)
        g = sess.run(grad, feed)
        if isinstance(g, IndexedSlicesValue):
            dense = np.zeros(x_shape, dtype=g.values.dtype)
            np.add.at(dense, g.indices, g.values)
            g = dense
        g = np.asarray(g).reshape(-1)
        if x.dtype.is_complex:
            jac[:x_size, col] = g.real
            jac[x_size:, col] = g.imag
        else:
            jac[:, col] = np.real(g)
    return jac


def _numerical(x, x_shape, x_data, y, y_shape, delta, sess, extra_feed):
    x_size = int(np.prod(x_shape))
    y_size = int(np.prod(y_shape))
    real = x.dtype.real_dtype.as_numpy_dtype
    jac = np.zeros((_real_size(x.dtype, x_size), _real_size(y.dtype, y_size)), dtype=real)
    units = [1] + ([1j] if x.dtype.is_complex else [])
    for k, unit in enumerate(units):
        for i in range(x_size):
            xp = x_data.copy().reshape(-1)
            xm = x_data.copy().reshape(-1)
            xp[i] += delta * unit
            xm[i] -= delta * unit
            feed_p = {x: xp.reshape(x_shape)}
            feed_m = {x: xm.reshape(x_shape)}
            feed_p.update(extra_feed)
            feed_m.update(extra_feed)
            yp = np.asarray(sess.run(y, feed_p), dtype=np.complex128 if y.dtype.is_complex else np.float64)
            ym = np.asarray(sess.run(y, feed_m), dtype=np.complex128 if y.dtype.is_complex else np.float64)
            d = ((yp - ym) / (2 * delta)).reshape(-1)
            row = k * x_size + i
            if y.dtype.is_complex:
                jac[row, :y_size] = d.real
                jac[row, y_size:] = d.imag
            else:
                jac[row, :] = d
    return jac


def compute_gradient(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3, init_targets=None,
                     extra_feed_dict=None):
    """Theoretical and numerical Jacobians of y w.r.t. x (or lists of pairs when x is a list).

    x: a graph tensor (placeholder, constant, or any feedable tensor); x_init_value: its value (random
    in [-1, 1) when None). Returns (theoretical, numerical), each [x_size, y_size].
    """
    if isinstance(x, (list, tuple)):
        init = x_init_value or [None] * len(x)
        return [compute_gradient(xi, si, y, y_shape, vi, delta, extra_feed_dict=extra_feed_dict)
                for xi, si, vi in zip(x, x_shape, init)]
    sess = _session()
    if x_init_value is None:
        rng = np.random.default_rng(0)
        x_init_value = rng.uniform(-1, 1, size=x_shape)
        if x.dtype.is_complex:
            x_init_value = x_init_value + 1j * rng.uniform(-1, 1, size=x_shape)
    x_data = np.asarray(x_init_value, dtype=x.dtype.as_numpy_dtype).reshape(x_shape)
    extra = extra_feed_dict or {}
    theory = _theoretical(x, x_shape, x_data, y, y_shape, sess, extra)
    numeric = _numerical(x, x_shape, x_data, y, y_shape, delta, sess, extra)
    return theory, numeric


def compute_gradient_error(x, x_shape, y, y_shape, x_init_value=None, delta=1e-3, init_targets=None,
                           extra_feed_dict=None):
    """The largest absolute difference between the theoretical and numerical Jacobians."""
    result = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, extra_feed_dict=extra_feed_dict)
    if isinstance(result, list):
        return max(float(np.max(np.abs(t - n))) if t.size else 0.0 for t, n in result)
    t, n = result
    return float(np.max(np.abs(t - n))) if t.size else 0.0

"""Gradient checks shared by the op-family tests: theoretical against numerical Jacobians, in the
`mode` fixture's mode (gradient_checker_v2 eagerly, gradient_checker on placeholders in a graph)."""
import numpy as np

import segflow as sf
from segflow.ops import gradient_checker, gradient_checker_v2

_RNG = np.random.default_rng(1234)


def default_delta(xs):
    """Central-difference step: small for 64-bit values (errors ~1e-10), larger for 32-bit."""
    return 1e-5 if all(np.asarray(x).dtype in (np.float64, np.complex128) for x in xs) else 1e-2


def _output_shape(f, xs):
    with sf.Graph().as_default():
        shape = f(*[sf.constant(x) for x in xs]).shape
    if shape.is_fully_defined():
        return shape.as_list()
    return list(np.shape(f(*[sf.constant(x) for x in xs]).numpy()))


def check_gradients(mode, f, xs, tol=1e-8, delta=None):
    """Asserts that f's Jacobian w.r.t. each x in `xs` matches central differences to `tol`, and that
    a zero theoretical Jacobian is only accepted where the numerical one is zero too."""
    xs = [np.asarray(x) for x in xs]
    delta = default_delta(xs) if delta is None else delta
    if mode.eager:
        theory, numeric = gradient_checker_v2.compute_gradient(f, xs, delta=delta)
    else:
        phs = [sf.placeholder(sf.as_dtype(x.dtype), x.shape) for x in xs]
        y = f(*phs)
        y_shape = y.shape.as_list() if y.shape.is_fully_defined() else \
            list(np.shape(mode.session.run(y, dict(zip(phs, xs)))))
        theory, numeric = [], []
        for i, (p, x) in enumerate(zip(phs, xs)):
            feed = {q: v for j, (q, v) in enumerate(zip(phs, xs)) if j != i}
            t, n = gradient_checker.compute_gradient(p, x.shape, y, y_shape, x_init_value=x, delta=delta,
                                                     extra_feed_dict=feed)
            theory.append(t)
            numeric.append(n)
    for i, (t, n) in enumerate(zip(theory, numeric)):
        assert t.shape == n.shape, f"input {i}: Jacobian shapes {t.shape} and {n.shape} differ"
        assert np.any(t != 0) or np.all(n == 0), f"input {i}: the gradient is missing (all zeros)"
        np.testing.assert_allclose(t, n, rtol=tol, atol=tol, err_msg=f"input {i}")
    if mode.eager:
        _check_traced_and_graph_tape(f, xs, theory)


def _check_traced_and_graph_tape(f, xs, theory):
    """The same gradients under sf.function (the tape around the traced call) and from a
    GradientTape recording a graph (against sf.gradients), to the last bits but rounding."""
    traced, _ = gradient_checker_v2.compute_gradient(sf.function(f), xs, delta=default_delta(xs))
    for i, (t, u) in enumerate(zip(theory, traced)):
        np.testing.assert_allclose(u, t, rtol=1e-12, atol=1e-12, err_msg=f"input {i} under sf.function")
    with sf.Graph().as_default():
        tensors = [sf.constant(x) for x in xs]
        with sf.GradientTape(persistent=True) as tape:
            for t in tensors:
                tape.watch(t)
            y = f(*tensors)
        if y.dtype.is_integer or y.dtype == sf.bool:
            return
        v = sf.constant(_RNG.uniform(0.5, 1.5, size=y.shape.as_list() if y.shape.is_fully_defined()
                                     else np.shape(sf.compat.v1.Session().run(y))).astype(y.dtype.as_numpy_dtype))
        by_tape = tape.gradient(y, tensors, output_gradients=v)
        by_gradients = sf.gradients(y, tensors, grad_ys=v)
        with sf.compat.v1.Session() as sess:
            for i, (a, b) in enumerate(zip(by_tape, by_gradients)):
                if a is None or b is None:
                    assert a is None and b is None, f"input {i}: the graph tape and sf.gradients disagree"
                    continue
                np.testing.assert_allclose(*sess.run([sf.convert_to_tensor(a), sf.convert_to_tensor(b)]),
                                           rtol=1e-12, atol=1e-12, err_msg=f"input {i}: graph tape")


def gradient_of(mode, f, xs, v):
    """d sum(f(*xs) * v) / d xs[0], built with the tape (eager) or sf.gradients (graph)."""
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(xs[0])
            y = f(*xs)
        return tape.gradient(y, xs[0], output_gradients=sf.constant(v))
    return sf.gradients(f(*xs), xs[0], grad_ys=sf.constant(v))[0]


def check_second_order(mode, f, xs, tol=1e-8, delta=None):
    """Checks the Jacobian of x0 -> d/dx0 sum(f(x0, *rest) * v) for a random weighting v: a gradient
    of a gradient, through the same registered gradient functions."""
    xs = [np.asarray(x) for x in xs]
    v = _RNG.uniform(0.5, 1.5, size=_output_shape(f, xs)).astype(xs[0].dtype)
    rest = xs[1:]

    def grad(x0):
        return sf.convert_to_tensor(gradient_of(mode, f, [x0] + [sf.constant(r) for r in rest], v))

    check_gradients(mode, grad, [xs[0]], tol=tol, delta=delta)

"""sf.cond / case / switch_case / while_loop: values and gradients eagerly, in graphs and inside
sf.function, checked against NumPy and central differences."""
import numpy as np
import pytest

import segflow as sf


def _numeric_grad(f, x, eps=1e-3):
    """Central differences of the scalar f at the float64 array x."""
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (f(up) - f(down)) / (2 * eps)
    return g


# ------------------------------------------------------------------------------------------ cond
def test_cond_eager_runs_one_branch():
    calls = []
    x = sf.constant(3.0)

    def yes():
        calls.append("t")
        return x * 2

    def no():
        calls.append("f")
        return x * 3
    assert sf.cond(x > 2, yes, no).numpy() == 6.0
    assert sf.cond(x < 2, yes, no).numpy() == 9.0
    assert calls == ["t", "f"]
    assert sf.cond(True, lambda: 1, lambda: 2) == 1


@pytest.mark.parametrize("value", [3.0, 1.0])
def test_cond_graph_value_and_gradient(value):
    with sf.Graph().as_default():
        p = sf.compat.v1.placeholder(sf.float64, [])
        y = sf.cond(p > 2, lambda: p * p * p, lambda: sf.sin(p))
        (dy,) = sf.gradients(y, p)
        with sf.compat.v1.Session() as sess:
            got, got_d = sess.run([y, dy], {p: value})
    want = value ** 3 if value > 2 else np.sin(value)
    want_d = 3 * value ** 2 if value > 2 else np.cos(value)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(got_d, want_d, rtol=1e-12)


def test_cond_graph_runs_only_the_chosen_branch():
    with sf.Graph().as_default():
        p = sf.compat.v1.placeholder(sf.bool, [])
        v = sf.Variable(0.0)
        y = sf.cond(p, lambda: sf.identity(v.assign_add(1.0)), lambda: sf.constant(-1.0))
        with sf.compat.v1.Session() as sess:
            sess.run(v.initializer)
            assert sess.run(y, {p: False}) == -1.0
            assert sess.run(v) == 0.0          # the true branch did not run
            assert sess.run(y, {p: True}) == 1.0
            assert sess.run(v) == 1.0


def test_cond_nested_structure_and_captured_gradients():
    with sf.Graph().as_default():
        a = sf.constant([1.0, 2.0], sf.float64)
        b = sf.constant([3.0, 4.0], sf.float64)
        p = sf.compat.v1.placeholder(sf.bool, [])
        out = sf.cond(p, lambda: {"s": a * b, "t": (a + 1.0, b)}, lambda: {"s": a - b, "t": (a, b * 2.0)})
        loss = sf.reduce_sum(out["s"]) + sf.reduce_sum(out["t"][0] * out["t"][1])
        da, db = sf.gradients(loss, [a, b])
        with sf.compat.v1.Session() as sess:
            t_da, t_db = sess.run([da, db], {p: True})
            f_da, f_db = sess.run([da, db], {p: False})
    av, bv = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    # true: sum(a*b) + sum((a+1)*b) -> d/da = 2b, d/db = 2a + 1
    np.testing.assert_allclose(t_da, 2 * bv)
    np.testing.assert_allclose(t_db, 2 * av + 1)
    # false: sum(a-b) + sum(a*2b) -> d/da = 1 + 2b, d/db = -1 + 2a
    np.testing.assert_allclose(f_da, 1 + 2 * bv)
    np.testing.assert_allclose(f_db, -1 + 2 * av)


def test_cond_errors():
    with sf.Graph().as_default():
        p = sf.compat.v1.placeholder(sf.float32, [])
        with pytest.raises(TypeError, match="boolean scalar"):
            sf.cond(p, lambda: p, lambda: p)
        q = sf.compat.v1.placeholder(sf.bool, [])
        with pytest.raises(TypeError, match="different dtypes"):
            sf.cond(q, lambda: sf.constant(1.0), lambda: sf.constant(1))
        with pytest.raises(TypeError, match="callable"):
            sf.cond(q, 1.0, lambda: p)


def test_python_bool_of_symbolic_tensor_names_cond():
    @sf.function
    def f(x):
        if x > 0:
            return x
        return -x
    with pytest.raises(TypeError, match="sf.cond"):
        f(sf.constant(1.0))


def test_cond_in_function_gradient_for_captured_variable():
    v = sf.Variable(2.0)

    @sf.function
    def h(a):
        return sf.cond(a > 0, lambda: v * a, lambda: v * v)
    with sf.GradientTape() as tape:
        out = h(sf.constant(3.0))
    assert out.numpy() == 6.0
    assert tape.gradient(out, v).numpy() == 3.0
    with sf.GradientTape() as tape:
        out = h(sf.constant(-3.0))
    assert out.numpy() == 4.0
    assert tape.gradient(out, v).numpy() == 4.0


def test_case_and_switch_case():
    x = sf.constant(5)
    got = sf.case([(x < 3, lambda: sf.constant(1)), (x < 6, lambda: sf.constant(2))], default=lambda: sf.constant(3))
    assert got.numpy() == 2
    with sf.Graph().as_default():
        i = sf.compat.v1.placeholder(sf.int32, [])
        y = sf.switch_case(i, [lambda: sf.constant(10.0), lambda: sf.constant(20.0)],
                           default=lambda: sf.constant(-1.0))
        z = sf.case([(i < 1, lambda: sf.constant(1.0)), (i < 2, lambda: sf.constant(2.0))],
                    default=lambda: sf.constant(3.0))
        with sf.compat.v1.Session() as sess:
            assert [sess.run(y, {i: k}) for k in (0, 1, 7)] == [10.0, 20.0, -1.0]
            assert [sess.run(z, {i: k}) for k in (0, 1, 7)] == [1.0, 2.0, 3.0]
    assert sf.switch_case(sf.constant(1), [lambda: sf.constant(10.0), lambda: sf.constant(20.0)]).numpy() == 20.0


# ------------------------------------------------------------------------------------ while_loop
def test_while_loop_eager():
    i, acc = sf.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, a * 2.0), [0, sf.constant(1.5)])
    assert int(i.numpy()) == 4 and acc.numpy() == 24.0
    single = sf.while_loop(lambda a: a < 100, lambda a: a * 3, sf.constant(1))
    assert single.numpy() == 243
    capped = sf.while_loop(lambda a: a < 100, lambda a: a * 3, sf.constant(1), maximum_iterations=2)
    assert capped.numpy() == 9


def test_while_loop_graph_value_and_gradient():
    def run(x):
        with sf.Graph().as_default():
            p = sf.compat.v1.placeholder(sf.float64, [2])
            _, r = sf.while_loop(lambda i, a: i < 5, lambda i, a: (i + 1, a * p + sf.sin(a)),
                                 [sf.constant(0), sf.ones([2], sf.float64)])
            loss = sf.reduce_sum(r)
            (d,) = sf.gradients(loss, p)
            with sf.compat.v1.Session() as sess:
                return sess.run([loss, d], {p: x})
    x = np.array([0.7, -0.4])

    def numpy_loss(xv):
        a = np.ones(2)
        for _ in range(5):
            a = a * xv + np.sin(a)
        return a.sum()
    loss, d = run(x)
    np.testing.assert_allclose(loss, numpy_loss(x), rtol=1e-12)
    np.testing.assert_allclose(d, _numeric_grad(numpy_loss, x, 1e-6), rtol=1e-6)


def test_while_loop_1000_iterations_gradient_in_function():
    @sf.function
    def f(x):
        _, acc = sf.while_loop(lambda i, a: i < 1000, lambda i, a: (i + 1, a * 1.001 + 0.001 * a * a),
                               [0, x])
        return sf.reduce_sum(acc)
    x = sf.constant([0.1, 0.2], sf.float64)
    with sf.GradientTape() as tape:
        tape.watch(x)
        out = f(x)
    grad = tape.gradient(out, x).numpy()

    def numpy_f(xv):
        a = xv.copy()
        for _ in range(1000):
            a = a * 1.001 + 0.001 * a * a
        return a.sum()
    np.testing.assert_allclose(out.numpy(), numpy_f(np.array([0.1, 0.2])), rtol=1e-10)
    np.testing.assert_allclose(grad, _numeric_grad(numpy_f, np.array([0.1, 0.2]), 1e-6), rtol=1e-5)
    assert f.experimental_get_tracing_count() == 1


def test_while_loop_shape_invariants():
    with sf.Graph().as_default():
        x = sf.constant([1.0])
        with pytest.raises(ValueError, match="shape_invariants"):
            sf.while_loop(lambda a: sf.size(a) < 4, lambda a: sf.concat([a, a], 0), [x])
        (grown,) = sf.while_loop(lambda a: sf.size(a) < 4, lambda a: sf.concat([a, a], 0), [x],
                                 shape_invariants=[sf.TensorShape([None])])
        with sf.compat.v1.Session() as sess:
            np.testing.assert_array_equal(sess.run(grown), np.ones(4))


def test_while_loop_captured_variable_gradient_and_max_iterations():
    with sf.Graph().as_default():
        w = sf.Variable(np.array([0.5, 2.0]))
        r = sf.while_loop(lambda a: sf.reduce_sum(a) < 1e9, lambda a: a * w, [sf.constant([1.0, 1.0], sf.float64)],
                          maximum_iterations=3)
        loss = sf.reduce_sum(r[0])
        (dw,) = sf.gradients(loss, w)
        with sf.compat.v1.Session() as sess:
            sess.run(w.initializer)
            got_r, got_dw = sess.run([r[0], dw])
    np.testing.assert_allclose(got_r, np.array([0.5, 2.0]) ** 3)
    np.testing.assert_allclose(got_dw, 3 * np.array([0.5, 2.0]) ** 2)


def test_name_scope_with_outer_values_inside_a_branch():
    # TF1 layer code opens `name_scope(name, values=[...])` with tensors of the outer graph; inside a
    # cond branch or a while body those are captured, not refused.
    from segflow.framework import ops as ops_lib
    with ops_lib.Graph().as_default():
        x = sf.constant(2.0)

        def branch():
            with ops_lib.name_scope("inner", values=[x]) as scope:
                assert scope.endswith("inner/")
                return x * 3.0
        y = sf.cond(x > 1.0, branch, lambda: x)
        with sf.compat.v1.Session() as sess:
            assert sess.run(y) == 6.0
        other = ops_lib.Graph()
        with other.as_default():
            with pytest.raises(ValueError, match="same graph"):
                with ops_lib.name_scope("outer", values=[x]):
                    pass

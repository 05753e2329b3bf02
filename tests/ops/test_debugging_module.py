"""sf.print, the sf.debugging assertions and check_numerics in all three modes (eager, graph,
sf.function), and sf.Module's variable and sub-module tracking."""
import io

import numpy as np
import pytest

import segflow as sf


# ----------------------------------------------------------------------------------------- print
def test_print_eager_formats_like_numpy():
    out = io.StringIO()
    assert sf.print("x =", sf.constant([1, 2, 3]), 7, output_stream=out) is None
    assert out.getvalue() == "x = [1 2 3] 7\n"
    out = io.StringIO()
    sf.print(sf.range(10), summarize=2, output_stream=out, end="|")
    assert out.getvalue() == "[0 1 ... 8 9]|"
    out = io.StringIO()
    sf.print("a", "b", sep=",", output_stream=out)
    assert out.getvalue() == "a,b\n"


def test_print_runs_each_time_a_graph_or_function_runs():
    out = io.StringIO()
    with sf.Graph().as_default():
        p = sf.compat.v1.placeholder(sf.float32, [None])
        op = sf.print("p:", p, output_stream=out)
        with sf.compat.v1.Session() as sess:
            assert out.getvalue() == ""          # building prints nothing
            sess.run(op, {p: [1.5]})
            sess.run(op, {p: [2.5, 3.0]})
    assert out.getvalue() == "p: [1.5]\np: [2.5 3. ]\n"
    out = io.StringIO()

    @sf.function
    def f(x):
        sf.print("in f", x, output_stream=out)
        return x + 1
    f(sf.constant(1))
    f(sf.constant(2))
    assert out.getvalue() == "in f 1\nin f 2\n"
    assert f.experimental_get_tracing_count() == 1


# ------------------------------------------------------------------------------------ assertions
@pytest.mark.parametrize("fn,x,y,ok", [
    (sf.debugging.assert_equal, [1, 2], [1, 2], True),
    (sf.debugging.assert_equal, [1, 2], [1, 3], False),
    (sf.debugging.assert_less, [1, 2], [2, 3], True),
    (sf.debugging.assert_less, [1, 3], [2, 3], False),
    (sf.debugging.assert_greater_equal, [2, 3], [2, 3], True),
    (sf.debugging.assert_none_equal, [1, 2], [2, 1], True),
    (sf.debugging.assert_none_equal, [1, 2], [1, 1], False),
])
def test_binary_assertions_eager(fn, x, y, ok):
    if ok:
        assert fn(sf.constant(x), sf.constant(y)) is None
    else:
        with pytest.raises(sf.errors.InvalidArgumentError, match="did not hold element-wise"):
            fn(sf.constant(x), sf.constant(y), message="custom")


@pytest.mark.parametrize("fn,good,bad", [
    (sf.debugging.assert_non_negative, [0.0, 1.0], [-1.0, 1.0]),
    (sf.debugging.assert_positive, [0.5, 1.0], [0.0, 1.0]),
    (sf.debugging.assert_negative, [-0.5], [0.0]),
    (sf.debugging.assert_non_positive, [0.0, -1.0], [0.1]),
])
def test_sign_assertions_in_a_graph(fn, good, bad):
    with sf.Graph().as_default():
        p = sf.compat.v1.placeholder(sf.float32, [None])
        check = fn(p, message="checked")
        with sf.control_dependencies([check]):
            y = sf.identity(p)
        with sf.compat.v1.Session() as sess:
            np.testing.assert_array_equal(sess.run(y, {p: good}), good)
            with pytest.raises(sf.errors.InvalidArgumentError, match="checked"):
                sess.run(y, {p: bad})


def test_assertion_inside_function_runs_without_control_dependencies():
    @sf.function
    def f(x):
        sf.debugging.assert_positive(x, message="x must be positive")
        return sf.sqrt(x)
    np.testing.assert_allclose(f(sf.constant([4.0])).numpy(), [2.0])
    with pytest.raises(sf.errors.InvalidArgumentError, match="x must be positive"):
        f(sf.constant([-4.0]))


def test_assert_rank_static_and_dynamic():
    with pytest.raises(ValueError, match="must have rank 2"):
        sf.debugging.assert_rank(sf.constant([1.0]), 2)
    assert sf.debugging.assert_rank(sf.constant([[1.0]]), 2) is None
    with sf.Graph().as_default():
        p = sf.compat.v1.placeholder(sf.float32)
        check = sf.debugging.assert_rank(p, 1)
        with sf.compat.v1.Session() as sess:
            sess.run(check, {p: [1.0]})
            with pytest.raises(sf.errors.InvalidArgumentError, match="rank"):
                sess.run(check, {p: [[1.0]]})


def test_assert_near_and_type():
    sf.debugging.assert_near(sf.constant([1.0]), sf.constant([1.0 + 1e-7]))
    with pytest.raises(sf.errors.InvalidArgumentError, match="tolerance"):
        sf.debugging.assert_near(sf.constant([1.0]), sf.constant([1.1]))
    with pytest.raises(TypeError, match="float64"):
        sf.debugging.assert_type(sf.constant([1.0]), sf.float64)


def test_check_numerics_value_and_gradient():
    x = sf.constant([1.0, 4.0])
    np.testing.assert_array_equal(sf.debugging.check_numerics(x, "ok").numpy(), [1.0, 4.0])
    with pytest.raises(sf.errors.InvalidArgumentError, match="bad values : Tensor had NaN and Inf values"):
        sf.debugging.check_numerics(sf.constant([np.nan, np.inf]), "bad values")
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = sf.reduce_sum(sf.debugging.check_numerics(x, "fwd") * 3.0)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [3.0, 3.0])


# ---------------------------------------------------------------------------------------- Module
class _Dense(sf.Module):
    def __init__(self, n_in, n_out, name=None):
        super().__init__(name=name)
        self.w = sf.Variable(np.ones((n_in, n_out), np.float32), name="w")
        self.b = sf.Variable(np.zeros(n_out, np.float32), name="b", trainable=False)

    @sf.Module.with_name_scope
    def __call__(self, x):
        return sf.matmul(x, self.w) + self.b


class _MLP(sf.Module):
    def __init__(self):
        super().__init__()
        self.layers = [_Dense(2, 3), _Dense(3, 1, name="head")]
        self.alias = self.layers[0].w          # the same variable twice: listed once
        self.config = {"depth": 2}


def test_module_tracks_variables_and_submodules():
    m = _MLP()
    assert m.name == "_mlp"
    assert len(m.variables) == 4
    assert len(m.trainable_variables) == 2 and all(v.trainable for v in m.trainable_variables)
    assert len(m.non_trainable_variables) == 2
    assert [s.name for s in m.submodules] == ["__dense", "head"]     # TF's camel-to-snake rule
    y = m.layers[1](m.layers[0](sf.ones([1, 2])))
    assert y.numpy().tolist() == [[6.0]]


def test_module_training_with_function_and_tape():
    m = _MLP()

    @sf.function
    def step(x):
        with sf.GradientTape() as tape:
            loss = sf.reduce_sum(m.layers[1](m.layers[0](x)))
        grads = tape.gradient(loss, m.trainable_variables)
        for v, g in zip(m.trainable_variables, grads):
            v.assign_sub(0.1 * g)
        return loss
    x = sf.ones([1, 2])
    assert step(x).numpy() == 6.0
    # d loss / d w0 = x^T (w1^T) = ones(2,3); d loss / d w1 = (x w0)^T = 2 * ones(3,1)
    np.testing.assert_allclose(m.layers[0].w.numpy(), np.ones((2, 3)) - 0.1)
    np.testing.assert_allclose(m.layers[1].w.numpy(), np.ones((3, 1)) - 0.2)


def test_module_name_must_be_valid():
    with pytest.raises(ValueError, match="valid module name"):
        sf.Module(name="not valid!")
    assert sf.Module().name == "module"
    with sf.Module(name="scope").name_scope as scope:
        assert scope.startswith("scope")

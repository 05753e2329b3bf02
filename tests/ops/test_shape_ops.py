"""shape_ops: reshape, fill, zeros/ones(_like), shape/size/rank, identity, stop_gradient, broadcast_to,
concat, stack, one_hot. Values against NumPy, gradients against numerical Jacobians in both modes."""
import numpy as np
import pytest

import reference as R
import segflow as sf
from segflow.framework import errors
from gradcheck import check_gradients

X = np.arange(24, dtype=np.float64).reshape(2, 3, 4)


def check_gradient(mode, f, *xs, tol=1e-6):
    check_gradients(mode, f, xs, tol=tol)


# -- reshape
@pytest.mark.parametrize("shape,expect", [([-1, 4], (6, 4)), ([4, -1], (4, 6)), ([24], (24,)),
                                          ([2, 3, 2, 2], (2, 3, 2, 2))])
def test_reshape_values(mode, shape, expect):
    got = mode.evaluate(sf.reshape(X, shape))
    np.testing.assert_array_equal(got, X.reshape(expect))


def test_reshape_to_scalar_and_back(mode):
    got = mode.evaluate(sf.reshape(sf.reshape(np.array([5], np.int32), []), [1, 1]))
    np.testing.assert_array_equal(got, [[5]])


def test_reshape_unknown_leading_dim_graph():
    with sf.Graph().as_default():
        x = sf.placeholder(sf.float32, [None, 3, 4])
        y = sf.reshape(x, [-1, 12])
        assert y.shape.as_list() == [None, 12]
        with sf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y, {x: X}), X.reshape(2, 12))


@pytest.mark.parametrize("shape,match", [([5, -1], r"Reshape.*input 'shape'.*24 elements"),
                                         ([-1, -1], r"Reshape.*input 'shape'.*one -1"),
                                         ([5, 5], r"Reshape.*input 'shape'.*24 elements")])
def test_reshape_errors(mode, shape, match):
    with pytest.raises(errors.InvalidArgumentError, match=match):
        mode.evaluate(sf.reshape(X, shape))


def test_reshape_error_at_run_time_names_node():
    with sf.Graph().as_default():
        x = sf.placeholder(sf.float32, [None])
        y = sf.reshape(x, [-1, 5], name="resh")
        with sf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match="Reshape 'resh'"):
                sess.run(y, {x: np.ones(7)})


def test_reshape_gradient(mode):
    check_gradient(mode, lambda t: sf.reshape(t, [3, -1]) * np.arange(8.0), np.random.default_rng(0).normal(size=(2, 3, 4)))


# -- fill, zeros, ones
def test_fill(mode):
    got = mode.evaluate(sf.fill([2, 3], 7))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.full((2, 3), 7))
    got = mode.evaluate(sf.fill([2], sf.constant(1.5, sf.float64)))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [1.5, 1.5])


def test_fill_rejects_non_scalar_value(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"Fill.*input 'value'.*scalar"):
        mode.evaluate(sf.fill([2], [1.0, 2.0]))


def test_fill_gradient_sums_into_value(mode):
    # d/dv sum(w * fill(dims, v)) = sum(w)
    w = np.arange(6.0).reshape(2, 3)
    check_gradient(mode, lambda v: sf.fill([2, 3], v) * w, np.array(0.3))


@pytest.mark.parametrize("dtype", [sf.float32, sf.float64, sf.int32, sf.int64, sf.bool])
def test_zeros_ones(mode, dtype):
    z = mode.evaluate(sf.zeros([2, 3], dtype))
    o = mode.evaluate(sf.ones((3,), dtype))
    assert z.dtype == dtype.as_numpy_dtype and o.dtype == dtype.as_numpy_dtype
    np.testing.assert_array_equal(z, np.zeros((2, 3)))
    np.testing.assert_array_equal(o, np.ones(3))


def test_zeros_ones_fill_negative_dims(mode):
    for make in (lambda: sf.zeros([2, -1]), lambda: sf.ones([-3]), lambda: sf.fill([-1], 1.0)):
        with pytest.raises(errors.InvalidArgumentError, match=r"Fill.*input 'dims'.*non-negative"):
            mode.evaluate(make())


def test_empty_inputs(mode):
    e = np.zeros((0, 3))
    got = mode.evaluate([sf.reshape(e, [-1, 3]), sf.concat([e, np.ones((2, 3))], 0), sf.stack([e, e], 1),
                         sf.one_hot(np.zeros((0,), np.int32), 3), sf.zeros([0, 2])])
    assert [g.shape for g in got] == [(0, 3), (2, 3), (0, 2, 3), (0, 3), (0, 2)]
    np.testing.assert_array_equal(got[1], np.ones((2, 3)))


def test_zeros_from_shape_tensor(mode):
    got = mode.evaluate(sf.zeros(sf.shape(X)))
    assert got.shape == (2, 3, 4) and got.dtype == np.float32 and not got.any()


def test_zeros_like_ones_like(mode):
    x = np.array([[1, 2], [3, 4]], np.int64)
    z, o, of = mode.evaluate([sf.zeros_like(x), sf.ones_like(x), sf.ones_like(x, dtype=sf.float32)])
    assert z.dtype == np.int64 and o.dtype == np.int64 and of.dtype == np.float32
    np.testing.assert_array_equal(z, [[0, 0], [0, 0]])
    np.testing.assert_array_equal(o, [[1, 1], [1, 1]])
    np.testing.assert_array_equal(of, [[1, 1], [1, 1]])


# -- shape, size, rank
def test_shape_size_rank(mode):
    s, s64, n, r = mode.evaluate([sf.shape(X), sf.shape(X, out_type=sf.int64), sf.size(X), sf.rank(X)])
    np.testing.assert_array_equal(s, [2, 3, 4])
    assert s.dtype == np.int32 and s64.dtype == np.int64
    assert n == 24 and r == 3


def test_shape_of_fed_placeholder():
    with sf.Graph().as_default():
        x = sf.placeholder(sf.float32, [None, 2])
        s, n = sf.shape(x), sf.size(x)
        with sf.Session() as sess:
            s_v, n_v = sess.run([s, n], {x: np.ones((5, 2))})
    np.testing.assert_array_equal(s_v, [5, 2])
    assert n_v == 10


def test_shape_size_rank_have_no_gradient(mode):
    x = sf.constant([1.0, 2.0])
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = sf.cast(sf.size(x), sf.float32) * x
        g = tape.gradient(y, x)
    else:
        y = sf.cast(sf.size(x), sf.float32) * x
        g = sf.gradients(y, x)[0]
    np.testing.assert_array_equal(mode.evaluate(g), [2.0, 2.0])


# -- identity, stop_gradient
def test_identity_and_gradient(mode):
    np.testing.assert_array_equal(mode.evaluate(sf.identity(X)), X)
    check_gradient(mode, lambda t: sf.identity(t) * t, np.array([1.0, -2.0, 0.5]))


def test_stop_gradient_blocks(mode):
    # y = x * stop(x): dy/dx = stop(x) = x (not 2x)
    x0 = np.array([1.0, -2.0, 0.5])
    x = sf.constant(x0)
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = x * sf.stop_gradient(x)
        g = tape.gradient(y, x)
    else:
        y = x * sf.stop_gradient(x)
        g = sf.gradients(y, x)[0]
    y_v, g_v = mode.evaluate([y, g])
    np.testing.assert_array_equal(y_v, x0 * x0)
    np.testing.assert_array_equal(g_v, x0)


# -- broadcast_to
def test_broadcast_to(mode):
    got = mode.evaluate(sf.broadcast_to(np.array([[1.0], [2.0]]), [3, 2, 4]))
    np.testing.assert_array_equal(got, np.broadcast_to([[1.0], [2.0]], (3, 2, 4)))


def test_broadcast_to_error(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"BroadcastTo.*input 'shape'.*cannot broadcast"):
        mode.evaluate(sf.broadcast_to([1.0, 2.0, 3.0], [3, 2]))


def test_broadcast_to_gradient(mode):
    w = np.arange(24.0).reshape(2, 3, 4)
    check_gradient(mode, lambda t: sf.broadcast_to(t, [2, 3, 4]) * w, np.random.default_rng(1).normal(size=(3, 1)))


# -- concat, stack
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_concat(mode, axis):
    y = X[:, :2] * 10 if axis in (1,) else (X[:1] * 10 if axis in (0, -3) else X[..., :1] * 10)
    got = mode.evaluate(sf.concat([X, y], axis))
    np.testing.assert_array_equal(got, np.concatenate([X, y], axis))


def test_concat_errors(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"ConcatV2.*input 'values'"):
        mode.evaluate(sf.concat([np.zeros((2, 3)), np.zeros((3, 3))], 1))
    with pytest.raises(errors.InvalidArgumentError, match=r"ConcatV2.*input 'axis'.*out of range"):
        mode.evaluate(sf.concat([np.zeros((2, 3)), np.zeros((2, 3))], 2))


def test_concat_gradient(mode):
    rng = np.random.default_rng(2)
    w = rng.normal(size=(2, 5))
    check_gradient(mode, lambda a, b: sf.concat([a, b, a], 1) * np.concatenate([w, w[:, :3]], 1)[:, :7],
                   rng.normal(size=(2, 2)), rng.normal(size=(2, 3)))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_stack(mode, axis):
    a, b = X[0], X[1] * 2
    np.testing.assert_array_equal(mode.evaluate(sf.stack([a, b], axis=axis)), np.stack([a, b], axis))


def test_stack_error(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"Pack.*input 'values'.*shapes differ"):
        mode.evaluate(sf.stack([np.zeros(2), np.zeros(3)]))


def test_stack_gradient(mode):
    rng = np.random.default_rng(3)
    w = rng.normal(size=(3, 2))
    check_gradient(mode, lambda a, b: sf.stack([a, b], axis=1) * w, rng.normal(size=3), rng.normal(size=3))


# -- one_hot
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(mode, axis):
    idx = np.array([[0, 2], [3, -1], [1, 5]])   # -1 and 5 (>= depth) give all-off rows
    got = mode.evaluate(sf.one_hot(idx, 4, axis=axis))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, R.one_hot(idx, 4, axis=axis))


def test_one_hot_values_and_dtype(mode):
    got = mode.evaluate(sf.one_hot([1, 0], 3, on_value=5, off_value=-1))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [[-1, 5, -1], [5, -1, -1]])
    got = mode.evaluate(sf.one_hot(np.array([2], np.int64), 3, dtype=sf.float64))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [[0, 0, 1]])


def test_one_hot_errors(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"OneHot.*input 'indices'"):
        mode.evaluate(sf.one_hot([0.5, 1.0], 3))
    with pytest.raises(errors.InvalidArgumentError, match=r"OneHot.*input 'depth'.*non-negative"):
        mode.evaluate(sf.one_hot([0, 1], -2))


def test_one_hot_is_not_differentiable(mode):
    # As in TF, OneHot has no gradient: on_value / off_value get None.
    on = sf.constant(1.5, sf.float64)
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(on)
            y = sf.one_hot([0, 2], 3, on_value=on, off_value=sf.constant(0.0, sf.float64))
        g = tape.gradient(y, on)
    else:
        y = sf.one_hot([0, 2], 3, on_value=on, off_value=sf.constant(0.0, sf.float64))
        g = sf.gradients(y, on)[0]
    assert g is None


# -- placeholder_with_default, identity_n, shape_n, add_n
def test_placeholder_with_default():
    with sf.Graph().as_default():
        p = sf.placeholder_with_default(np.array([1.0, 2.0]), shape=[None])
        assert p.shape.as_list() == [None]
        y = p * 2.0
        with sf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y), [2.0, 4.0])
            np.testing.assert_array_equal(sess.run(y, {p: [5.0, 6.0, 7.0]}), [10.0, 12.0, 14.0])
        with pytest.raises(errors.InvalidArgumentError, match=r"PlaceholderWithDefault.*input 'input'"):
            sf.placeholder_with_default(np.zeros(3), shape=[2])


def test_identity_n_and_shape_n(mode):
    a, b = sf.identity_n([X, np.array([1, 2])])
    s = sf.shape_n([X, np.zeros((5,))])
    a_v, b_v, s0, s1 = mode.evaluate([a, b, s[0], s[1]])
    np.testing.assert_array_equal(a_v, X)
    np.testing.assert_array_equal(b_v, [1, 2])
    np.testing.assert_array_equal(s0, [2, 3, 4])
    np.testing.assert_array_equal(s1, [5])


def test_identity_n_gradient(mode):
    def f(t, u):
        a, b = sf.identity_n([t, u])
        return a * b * 3.0
    check_gradient(mode, f, np.array([1.0, -2.0]), np.array([0.5, 4.0]))


def test_add_n(mode):
    xs = [np.arange(6.0).reshape(2, 3) * k for k in (1, 2, 5)]
    np.testing.assert_array_equal(mode.evaluate(sf.add_n(xs)), sum(xs))
    np.testing.assert_array_equal(mode.evaluate(sf.add_n(xs[:1])), xs[0])
    s = sf.IndexedSlices(sf.constant([[1.0, 1.0, 1.0]], sf.float64), sf.constant([1]), sf.constant([2, 3]))
    np.testing.assert_array_equal(mode.evaluate(sf.add_n([s, xs[1]])), xs[1] + [[0, 0, 0], [1, 1, 1]])
    with pytest.raises(errors.InvalidArgumentError, match=r"AddN.*input 'inputs'"):
        mode.evaluate(sf.add_n([np.zeros(2), np.zeros(3)]))
    with pytest.raises(ValueError, match="non-empty"):
        sf.add_n([])


def test_add_n_gradient(mode):
    rng = np.random.default_rng(4)
    check_gradient(mode, lambda a, b: sf.add_n([a, b, a * b]), rng.normal(size=(2, 2)), rng.normal(size=(2, 2)))


def test_prevent_gradient(mode):
    x = sf.constant([1.0, 2.0])
    np.testing.assert_array_equal(mode.evaluate(sf.prevent_gradient(x)), [1.0, 2.0])
    with pytest.raises(LookupError, match="no second derivative here"):
        if mode.eager:
            with sf.GradientTape() as tape:
                tape.watch(x)
                y = sf.prevent_gradient(x, message="no second derivative here")
            tape.gradient(y, x)
        else:
            sf.gradients(sf.prevent_gradient(x, message="no second derivative here"), x)

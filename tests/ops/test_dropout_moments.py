"""nn.dropout (TF2 and TF1 spellings), moments, weighted_moments, normalize_moments and
batch_normalization: values against NumPy, gradients against numerical Jacobians, eager and graph."""
import numpy as np
import pytest

import segflow as sf
from segflow.ops import gradient_checker_v2, nn_impl
from tests.gradcheck import check_gradients, gradient_of

RNG = np.random.default_rng(7)
X = RNG.normal(size=(40, 50))


@pytest.fixture(autouse=True)
def _clear_global_seed():
    """The tests that set the eager global seed leave it unset for the tests after them."""
    yield
    sf.random.set_seed(None)


# -- dropout
def test_dropout_keeps_scaled_entries_or_zeros(mode):
    y = mode.evaluate(sf.nn.dropout(X, 0.3, seed=4))
    kept = y != 0
    np.testing.assert_allclose(y[kept], X[kept] / 0.7, rtol=1e-12)
    assert abs(1 - kept.mean() - 0.3) < 0.05, kept.mean()
    assert y.dtype == np.float64 and y.shape == X.shape


def test_dropout_noise_shape_drops_whole_rows(mode):
    y = mode.evaluate(sf.nn.dropout(X, 0.5, noise_shape=[40, 1], seed=2))
    rows_kept = np.all(y != 0, axis=1)
    rows_dropped = np.all(y == 0, axis=1)
    assert np.all(rows_kept | rows_dropped)
    assert 5 < rows_kept.sum() < 35
    np.testing.assert_allclose(y[rows_kept], 2 * X[rows_kept], rtol=1e-12)
    # a None entry takes x's dimension
    y = mode.evaluate(sf.nn.dropout(X, 0.5, noise_shape=[None, 1], seed=2))
    assert np.all(np.all(y != 0, axis=1) | np.all(y == 0, axis=1))


def test_dropout_tensor_rate(mode):
    y = mode.evaluate(sf.nn.dropout(X, sf.constant(0.75), seed=1))
    kept = y != 0
    np.testing.assert_allclose(y[kept], 4 * X[kept], rtol=1e-12)
    np.testing.assert_array_equal(mode.evaluate(sf.nn.dropout(X, sf.constant(1.0, sf.float64))), np.zeros_like(X))


def test_dropout_rate_zero_is_identity_and_v1_keep_prob(mode):
    x = sf.constant(X)
    assert sf.nn.dropout(x, 0.0) is x
    assert sf.compat.v1.nn.dropout(x, keep_prob=1.0) is x
    y = mode.evaluate(sf.compat.v1.nn.dropout(x, keep_prob=0.8, seed=3))
    kept = y != 0
    np.testing.assert_allclose(y[kept], X[kept] * 1.25, rtol=1e-12)
    assert abs(kept.mean() - 0.8) < 0.05
    y = mode.evaluate(sf.compat.v1.nn.dropout(x, rate=0.5, seed=3))
    np.testing.assert_allclose(y[y != 0], 2 * X[y != 0], rtol=1e-12)


def test_dropout_errors():
    x = sf.ones([3, 4])
    for bad in (1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match=r"`rate` must be a scalar tensor or a float in the range \[0, 1\)"):
            sf.nn.dropout(x, bad)
    with pytest.raises(ValueError, match="must be a scalar or scalar tensor"):
        sf.nn.dropout(x, "a")
    with pytest.raises(ValueError, match="floating point"):
        sf.nn.dropout(sf.ones([3], sf.int32), 0.5)
    with pytest.raises(ValueError, match="scalar tensor"):
        sf.nn.dropout(x, sf.constant([0.5, 0.5]))
    with pytest.raises(sf.errors.InvalidArgumentError, match=r"noise_shape \[2, 1\] does not broadcast"):
        sf.nn.dropout(x, 0.5, noise_shape=[2, 1])
    with pytest.raises(ValueError, match="Cannot specify both 'keep_prob' and 'rate'"):
        sf.compat.v1.nn.dropout(x, keep_prob=0.5, rate=0.5)
    with pytest.raises(ValueError, match="`rate` must be provided"):
        sf.compat.v1.nn.dropout(x)
    with pytest.raises(ValueError, match="range"):
        sf.compat.v1.nn.dropout(x, keep_prob=0.0)


def test_dropout_is_reproducible_with_seeds(mode):
    sf.random.set_seed(11)
    a = mode.evaluate(sf.nn.dropout(X, 0.5, seed=5))
    sf.random.set_seed(11)
    b = mode.evaluate(sf.nn.dropout(X, 0.5, seed=5))
    np.testing.assert_array_equal(a, b)
    c = mode.evaluate(sf.nn.dropout(X, 0.5, seed=6))
    assert np.any((a != 0) != (c != 0))


@pytest.mark.parametrize("rate", [0.4, "tensor"])
def test_dropout_gradient_is_mask_times_scale(mode, rate):
    r = sf.constant(0.4, sf.float64) if rate == "tensor" else rate
    v = RNG.uniform(0.5, 1.5, size=X.shape)
    x = sf.constant(X)
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = sf.nn.dropout(x, r, seed=9)
        g = tape.gradient(y, x, output_gradients=sf.constant(v))
    else:
        y = sf.nn.dropout(x, r, seed=9)
        g = sf.gradients(y, x, grad_ys=sf.constant(v))[0]
    y, g = mode.evaluate([y, g])          # one run: the gradient sees the mask y was made with
    np.testing.assert_allclose(g, np.where(y != 0, v / 0.6, 0.0), rtol=1e-12)
    assert 0 < np.count_nonzero(g) < g.size


def test_dropout_numerical_jacobian_eager():
    def f(t):
        sf.random.set_seed(3)             # the same mask on every call
        return sf.nn.dropout(t, 0.5, seed=1)
    x = RNG.normal(size=(4, 5))
    theory, numeric = gradient_checker_v2.compute_gradient(f, [x], delta=1e-5)
    np.testing.assert_allclose(theory[0], numeric[0], rtol=1e-8, atol=1e-8)
    assert 0 < np.count_nonzero(np.diag(theory[0])) < 20


# -- moments
@pytest.mark.parametrize("axes,keepdims", [([0], False), ([0, 2], True), (1, False), ([0, 1, 2], False)])
def test_moments_values(mode, axes, keepdims):
    x = RNG.normal(size=(3, 4, 5))
    mean, var = mode.evaluate(sf.nn.moments(x, axes, keepdims=keepdims))
    ax = tuple(axes) if isinstance(axes, list) else axes
    np.testing.assert_allclose(mean, np.mean(x, ax, keepdims=keepdims), rtol=1e-12)
    np.testing.assert_allclose(var, np.var(x, ax, keepdims=keepdims), rtol=1e-12)


def test_moments_dtypes_and_v1_spelling(mode):
    x = RNG.normal(size=(6, 3))
    m16, v16 = sf.nn.moments(x.astype(np.float16), [0])
    assert m16.dtype == sf.float16 and v16.dtype == sf.float16
    np.testing.assert_allclose(mode.evaluate(v16), np.var(x.astype(np.float16).astype(np.float32), 0), rtol=2e-3)
    mi, vi = mode.evaluate(sf.nn.moments(np.array([1, 2, 4], np.int32), [0]))
    assert (mi, vi) == (2, 1)             # integer means truncate, as reduce_mean does
    m, v = sf.compat.v1.nn.moments(x, [1], keep_dims=True)
    assert m.shape.as_list() == [6, 1] and v.shape.as_list() == [6, 1]
    np.testing.assert_allclose(mode.evaluate(v), np.var(x, 1, keepdims=True), rtol=1e-12)
    assert nn_impl.moments_v2 is sf.nn.moments and nn_impl.moments is sf.compat.v1.nn.moments
    with pytest.raises(ValueError, match="both"):
        sf.compat.v1.nn.moments(x, [0], keep_dims=True, keepdims=True)


def test_moments_gradients(mode):
    x = RNG.normal(size=(3, 4))
    check_gradients(mode, lambda t: sf.nn.moments(t, [0])[0], [x])
    check_gradients(mode, lambda t: sf.nn.moments(t, [0, 1], keepdims=True)[1], [x])
    # no second-order check: as in TF, the variance stops the gradient at the mean, which leaves
    # first-order gradients exact but drops the mean's term from the Hessian


def _ref_weighted_moments(x, w, axes):
    wb = w + np.zeros_like(x)
    s = wb.sum(axes, keepdims=True)
    mean = np.where(s != 0, (w * x).sum(axes, keepdims=True) / np.where(s != 0, s, 1), 0)
    var = np.where(s != 0, (w * (x - mean) ** 2).sum(axes, keepdims=True) / np.where(s != 0, s, 1), 0)
    return mean.squeeze(axes), var.squeeze(axes)


def test_weighted_moments(mode):
    x = RNG.normal(size=(5, 3))
    w = RNG.uniform(0, 2, size=(5, 1))
    mean, var = mode.evaluate(sf.nn.weighted_moments(x, [0], w))
    rm, rv = _ref_weighted_moments(x, w, (0,))
    np.testing.assert_allclose(mean, rm, rtol=1e-12)
    np.testing.assert_allclose(var, rv, rtol=1e-12)
    zm, zv = mode.evaluate(sf.nn.weighted_moments(x, [0], np.zeros((5, 1))))
    np.testing.assert_array_equal(zm, 0)
    np.testing.assert_array_equal(zv, 0)
    m1, _ = sf.compat.v1.nn.weighted_moments(x, [0], w, keep_dims=True)
    assert m1.shape.as_list() == [1, 3]
    check_gradients(mode, lambda t, u: sf.nn.weighted_moments(t, [0], u)[1], [x, w])
    check_gradients(mode, lambda t, u: sf.nn.weighted_moments(t, [0, 1], u)[0], [x, w])


def test_normalize_moments(mode):
    mean, var = mode.evaluate(sf.nn.normalize_moments(4., sf.constant([2., 4.]), sf.constant([10., 20.]),
                                                      sf.constant(1.)))
    np.testing.assert_allclose(mean, [1.5, 2.0])
    np.testing.assert_allclose(var, [2.25, 4.0])
    mean, var = mode.evaluate(sf.nn.normalize_moments(4., sf.constant([2., 4.]), sf.constant([10., 20.]), None))
    np.testing.assert_allclose(mean, [0.5, 1.0])
    np.testing.assert_allclose(var, [2.25, 4.0])
    x = RNG.normal(size=(4, 2))
    check_gradients(mode, lambda m, v: sf.nn.normalize_moments(sf.constant(3.0, sf.float64), m, v, None)[1],
                    [x[0], x[1]])


def test_batch_normalization(mode):
    x = RNG.normal(size=(6, 3))
    mean, var = x.mean(0), x.var(0)
    offset, scale = RNG.normal(size=3), RNG.uniform(0.5, 2, size=3)
    got = mode.evaluate(sf.nn.batch_normalization(x, mean, var, offset, scale, 1e-3))
    np.testing.assert_allclose(got, (x - mean) / np.sqrt(var + 1e-3) * scale + offset, rtol=1e-10)
    got = mode.evaluate(sf.nn.batch_normalization(x, mean, var, None, None, 1e-3))
    np.testing.assert_allclose(got, (x - mean) / np.sqrt(var + 1e-3), rtol=1e-10, atol=1e-12)
    check_gradients(mode, lambda t, m, v, o, s: sf.nn.batch_normalization(t, m, v, o, s, 1e-3),
                    [x, mean, var, offset, scale], tol=1e-7)
    # normalizing by the batch's own moments: the gradient flows through moments too
    check_gradients(mode, lambda t: sf.nn.batch_normalization(t, *sf.nn.moments(t, [0]), None, None, 1e-3),
                    [x], tol=1e-7)


def test_bias_add_nchw(mode):
    x, b = RNG.normal(size=(2, 3, 4, 5)), RNG.normal(size=3)
    np.testing.assert_allclose(mode.evaluate(sf.nn.bias_add(x, b, data_format="NCHW")),
                               x + b[None, :, None, None], rtol=1e-12)
    check_gradients(mode, lambda t, c: sf.nn.bias_add(t, c, data_format="NCHW"), [x, b])
    v = RNG.uniform(size=x.shape)
    g = mode.evaluate(gradient_of(mode, lambda c, t: sf.nn.bias_add(t, c, data_format="NCHW"),
                                  [sf.constant(b), sf.constant(x)], v))
    np.testing.assert_allclose(g, v.sum((0, 2, 3)), rtol=1e-12)

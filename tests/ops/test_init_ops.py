"""init_ops: the TF1 initializers (values, moments against hand-derived variances, fans of conv
kernels, orthogonality, partition_info), their errors, configs, seeds, the Qr op and the faces
(sf.initializers, sf.compat.v1.*_initializer, sf.zeros_initializer)."""
import math

import numpy as np
import pytest

import segflow as sf
from segflow.compat import v1
from segflow.framework import random_seed
from segflow.ops import init_ops
from segflow._ops.init_ops import qr as _qr
from segflow.ops.variable_scope import _PartitionInfo

TRUNC = 0.87962566103423978       # stddev of a unit normal truncated at +-2


@pytest.fixture(autouse=True)
def _no_global_seed():
    random_seed.set_seed(None)
    yield
    random_seed.set_seed(None)


def _moments_ok(x, mean, var):
    """Sample mean and variance within 6 standard errors (estimated from the sample) of the
    expected ones."""
    x = np.asarray(x, np.float64).reshape(-1)
    n = x.size
    se_mean = x.std() / math.sqrt(n)
    dev2 = (x - x.mean()) ** 2
    se_var = dev2.std() / math.sqrt(n)
    assert abs(x.mean() - mean) < 6 * se_mean + 1e-12, (x.mean(), mean, se_mean)
    assert abs(x.var() - var) < 6 * se_var, (x.var(), var, se_var)


# -- constant initializers
def test_zeros_ones(mode):
    z = mode.evaluate(init_ops.zeros_initializer()([2, 3]))
    o = mode.evaluate(init_ops.ones_initializer(dtype=sf.int32)([4]))
    assert z.dtype == np.float32 and np.array_equal(z, np.zeros((2, 3)))
    assert o.dtype == np.int32 and np.array_equal(o, [1, 1, 1, 1])
    z64 = mode.evaluate(init_ops.Zeros()(sf.TensorShape([2]), dtype=sf.float64))
    assert z64.dtype == np.float64


def test_constant_values_and_padding(mode):
    init = init_ops.constant_initializer([0, 1, 2, 3, 4, 5, 6, 7])
    np.testing.assert_array_equal(mode.evaluate(init([2, 4])), np.arange(8).reshape(2, 4))
    # shorter than the shape: the last value fills the rest (TF1)
    np.testing.assert_array_equal(mode.evaluate(init([3, 4])),
                                  [[0, 1, 2, 3], [4, 5, 6, 7], [7, 7, 7, 7]])
    np.testing.assert_array_equal(mode.evaluate(init_ops.Constant(2.5)([2, 2])), np.full((2, 2), 2.5))
    got = mode.evaluate(init_ops.Constant(np.array([[1, 2], [3, 4]]), dtype=sf.int64)([2, 2]))
    assert got.dtype == np.int64 and np.array_equal(got, [[1, 2], [3, 4]])
    assert mode.evaluate(init_ops.Constant(3)([0, 2])).shape == (0, 2)


def test_constant_errors():
    init = init_ops.Constant([0, 1, 2, 3, 4, 5, 6, 7])
    with pytest.raises(ValueError, match="Too many elements provided. Needed at most 6, but received 8"):
        init([2, 3])
    with pytest.raises(TypeError, match=r"Expected Tensor's shape: \(3, 4\), but got \(8,\)"):
        init_ops.Constant([0, 1, 2, 3, 4, 5, 6, 7], verify_shape=True)([3, 4])
    with pytest.raises(TypeError, match="Invalid type for initial value"):
        init_ops.Constant({"a": 1})
    with pytest.raises(TypeError):
        init_ops.Constant([0.5, 1.5], dtype=sf.int32)([2])      # lossy, as TF


# -- random initializers: moments
def test_random_uniform(mode):
    x = mode.evaluate(init_ops.random_uniform_initializer(-2.0, 3.0, seed=3)([200, 250]))
    assert x.dtype == np.float32 and x.min() >= -2.0 and x.max() < 3.0
    _moments_ok(x, 0.5, 25.0 / 12)
    ints = mode.evaluate(init_ops.RandomUniform(0, 5, seed=1, dtype=sf.int32)([1000]))
    assert ints.dtype == np.int32 and set(np.unique(ints)) == {0, 1, 2, 3, 4}


def test_random_normal_and_truncated(mode):
    x = mode.evaluate(init_ops.random_normal_initializer(1.0, 2.0, seed=4)([50000]))
    _moments_ok(x, 1.0, 4.0)
    t = mode.evaluate(init_ops.truncated_normal_initializer(1.0, 2.0, seed=4)([50000]))
    assert np.all(np.abs(t - 1.0) <= 4.0)
    _moments_ok(t, 1.0, (2.0 * TRUNC) ** 2)


def test_uniform_unit_scaling(mode):
    x = mode.evaluate(init_ops.uniform_unit_scaling_initializer(factor=1.5, seed=2)([30, 40, 50]))
    limit = 1.5 * math.sqrt(3 / (30 * 40))          # all dimensions but the last
    assert np.abs(x).max() <= limit * (1 + 1e-6)
    _moments_ok(x, 0.0, limit ** 2 / 3)


@pytest.mark.parametrize("shape,fans", [
    ([], (1, 1)), ([7], (7, 7)), ([4, 6], (4, 6)),
    ([3, 3, 16, 32], (3 * 3 * 16, 3 * 3 * 32)),        # conv2d kernel: receptive field 9
    ([2, 5, 7, 3, 4], (70 * 3, 70 * 4)),               # conv3d kernel
])
def test_compute_fans(shape, fans):
    assert init_ops._compute_fans(shape) == fans


@pytest.mark.parametrize("mode_name,n", [("fan_in", 144), ("fan_out", 288), ("fan_avg", 216)])
@pytest.mark.parametrize("distribution", ["truncated_normal", "normal", "untruncated_normal", "uniform"])
def test_variance_scaling_conv_kernel(mode, mode_name, n, distribution):
    shape = [3, 3, 16, 32]                      # fan_in 144, fan_out 288
    init = init_ops.VarianceScaling(scale=2.0, mode=mode_name, distribution=distribution, seed=5)
    x = np.concatenate([mode.evaluate(init(shape)).reshape(-1) for _ in range(8)])
    variance = 2.0 / n                          # every distribution keeps scale / n
    _moments_ok(x, 0.0, variance)
    std = math.sqrt(variance)
    if distribution in ("truncated_normal", "normal"):
        # drawn with stddev sqrt(scale/n) / 0.8796..., cut at 2 of those
        assert np.abs(x).max() <= 2 * std / TRUNC * (1 + 1e-5)
        assert np.abs(x).max() > 2 * std       # the correction widens the draw
    elif distribution == "uniform":
        assert np.abs(x).max() <= math.sqrt(3 * variance) * (1 + 1e-6)
    else:
        assert np.abs(x).max() > 2 * std / TRUNC       # not truncated


def test_variance_scaling_uses_partition_info_full_shape(mode):
    init = init_ops.VarianceScaling(scale=1.0, mode="fan_in", distribution="uniform", seed=9)
    info = _PartitionInfo(full_shape=[4000, 10], var_offset=[1000, 0])
    x = mode.evaluate(init([1000, 10], partition_info=info))
    limit = math.sqrt(3.0 / 4000)               # the whole variable's fan_in, not the shard's
    assert x.shape == (1000, 10) and np.abs(x).max() <= limit * (1 + 1e-6)
    _moments_ok(x, 0.0, 1.0 / 4000)


def test_glorot(mode):
    shape = [300, 500]
    u = mode.evaluate(init_ops.glorot_uniform_initializer(seed=1)(shape))
    limit = math.sqrt(6.0 / 800)
    assert np.abs(u).max() <= limit * (1 + 1e-6) and np.abs(u).max() > 0.99 * limit
    _moments_ok(u, 0.0, limit ** 2 / 3)
    g = mode.evaluate(init_ops.glorot_normal_initializer(seed=1)(shape))
    _moments_ok(g, 0.0, 2.0 / 800)


@pytest.mark.parametrize("fn,scale,dist", [
    (init_ops.he_normal, 2.0, "truncated_normal"), (init_ops.he_uniform, 2.0, "uniform"),
    (init_ops.lecun_normal, 1.0, "truncated_normal"), (init_ops.lecun_uniform, 1.0, "uniform"),
])
def test_he_lecun(mode, fn, scale, dist):
    init = fn(seed=3)
    assert isinstance(init, init_ops.VarianceScaling)
    assert init.get_config() == {"scale": scale, "mode": "fan_in", "distribution": dist, "seed": 3,
                                 "dtype": "float32"}
    x = mode.evaluate(init([400, 300]))
    _moments_ok(x, 0.0, scale / 400)


# -- orthogonal and identity
@pytest.mark.parametrize("shape", [[6, 4], [4, 6], [5, 5], [2, 3, 4], [3, 1, 7]])
def test_orthogonal_is_orthogonal(mode, shape):
    gain = 1.5
    q = mode.evaluate(init_ops.orthogonal_initializer(gain=gain, seed=2, dtype=sf.float64)(shape))
    assert q.shape == tuple(shape) and q.dtype == np.float64
    m = q.reshape(-1, shape[-1]) / gain
    rows, cols = m.shape
    if rows >= cols:
        np.testing.assert_allclose(m.T @ m, np.eye(cols), atol=1e-10)    # orthonormal columns
    else:
        np.testing.assert_allclose(m @ m.T, np.eye(rows), atol=1e-10)    # orthonormal rows


@pytest.mark.parametrize("shape", [[5, 3], [3, 5]])
def test_orthogonal_matches_numpy_qr_with_sign_correction(shape):
    """Eagerly, after the same set_seed, Orthogonal draws the very normal matrix random_normal
    does: its result is Q of that matrix, each column times sign(diag(R))."""
    flat = (max(shape), min(shape))
    random_seed.set_seed(11)
    a = sf.random.normal(flat, seed=4).numpy().astype(np.float64)
    random_seed.set_seed(11)
    got = init_ops.Orthogonal(seed=4)(shape).numpy()
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))
    if shape[0] < shape[1]:
        q = q.T
    np.testing.assert_allclose(got, q, rtol=1e-5, atol=1e-6)


def test_identity(mode):
    np.testing.assert_array_equal(mode.evaluate(init_ops.Identity()([3, 3])), np.eye(3))
    np.testing.assert_array_equal(mode.evaluate(init_ops.identity_initializer(gain=2.0)([2, 4])), 2 * np.eye(2, 4))
    info = _PartitionInfo(full_shape=[4, 4], var_offset=[2, 0])
    np.testing.assert_array_equal(mode.evaluate(init_ops.Identity()([2, 4], partition_info=info)), np.eye(4)[2:])


def test_shape_errors():
    with pytest.raises(ValueError, match="at least two-dimensional"):
        init_ops.Orthogonal()([5])
    with pytest.raises(ValueError, match="at least two-dimensional"):
        init_ops.Identity()([2, 2, 2])


def test_constructor_errors():
    with pytest.raises(ValueError, match="`scale` must be a positive float"):
        init_ops.VarianceScaling(scale=0.0)
    with pytest.raises(ValueError, match="Argument `mode` should be one of"):
        init_ops.VarianceScaling(mode="fan_mid")
    with pytest.raises(ValueError, match="Argument `distribution` should be one of"):
        init_ops.VarianceScaling(distribution="cauchy")
    for cls in (init_ops.RandomNormal, init_ops.TruncatedNormal, init_ops.GlorotUniform, init_ops.Orthogonal,
                init_ops.Identity, init_ops.UniformUnitScaling):
        with pytest.raises(ValueError, match="expected to be floating point"):
            cls(dtype=sf.int32)
    with pytest.raises(NotImplementedError):
        init_ops.Initializer()([2])


# -- configs and seeds
@pytest.mark.parametrize("init", [
    init_ops.Zeros(dtype=sf.int64), init_ops.Ones(), init_ops.Constant([1, 2]), init_ops.RandomUniform(-1, 1, seed=2),
    init_ops.RandomNormal(0.5, 2.0, seed=1, dtype=sf.float64), init_ops.TruncatedNormal(0.0, 0.3, seed=7),
    init_ops.UniformUnitScaling(1.2, seed=3), init_ops.VarianceScaling(3.0, "fan_out", "normal", seed=4),
    init_ops.GlorotUniform(seed=5), init_ops.GlorotNormal(seed=6), init_ops.Orthogonal(0.5, seed=7),
    init_ops.Identity(2.0),
])
def test_config_round_trip(init):
    config = init.get_config()
    again = type(init).from_config(config)
    assert type(again) is type(init) and again.get_config() == config
    assert all(isinstance(v, (int, float, str, list, type(None))) for v in config.values())


def test_config_contents():
    assert init_ops.GlorotUniform(seed=5).get_config() == {"seed": 5, "dtype": "float32"}
    assert init_ops.VarianceScaling(distribution="Normal").get_config()["distribution"] == "normal"
    assert init_ops.RandomUniform(0, 3, seed=1).get_config() == {"minval": 0, "maxval": 3, "seed": 1,
                                                                  "dtype": "float32"}


def test_seeded_initializers_repeat_across_graphs():
    def draw():
        graph = sf.Graph()
        with graph.as_default():
            t = [init_ops.GlorotUniform(seed=1)([4, 5]), init_ops.TruncatedNormal(seed=2)([3]),
                 init_ops.Orthogonal(seed=3)([3, 3])]
            with sf.Session(graph=graph) as sess:
                return sess.run(t)
    first, second = draw(), draw()
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


def test_seeded_initializers_repeat_eagerly_after_set_seed():
    def draw():
        random_seed.set_seed(123)
        return [init_ops.GlorotUniform(seed=1)([4, 5]).numpy(), init_ops.RandomNormal(seed=1)([6]).numpy()]
    a, b = draw(), draw()
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(init_ops.GlorotUniform(seed=1)([4, 5]).numpy(), a[0])   # the stream goes on


# -- the Qr op
@pytest.mark.parametrize("shape,full", [((5, 3), False), ((3, 5), False), ((2, 4, 3), False), ((4, 2), True)])
def test_qr(mode, shape, full):
    a = np.random.default_rng(0).standard_normal(shape)
    q, r = init_ops_qr(a, full)
    qv, rv = mode.evaluate([q, r])
    m, n = shape[-2:]
    k = m if full else min(m, n)
    assert qv.shape == shape[:-2] + (m, k) and rv.shape == shape[:-2] + (k, n)
    np.testing.assert_allclose(qv @ rv, a, atol=1e-12)
    np.testing.assert_allclose(np.swapaxes(qv, -1, -2) @ qv, np.broadcast_to(np.eye(k), shape[:-2] + (k, k)),
                               atol=1e-12)
    assert np.allclose(np.tril(rv, -1), 0)
    if not mode.eager:
        assert q.shape.as_list() == list(shape[:-2]) + [m, k]


def init_ops_qr(a, full):
    return _qr(sf.constant(a), full_matrices=full)


def test_qr_rejects_vectors_and_ints(mode):
    with pytest.raises((ValueError, sf.errors.InvalidArgumentError), match="rank >= 2"):
        mode.evaluate(init_ops_qr(np.ones(3), False))
    with pytest.raises(TypeError):
        init_ops_qr(np.ones((2, 2), np.int32), False)


# -- faces
def test_faces():
    assert sf.zeros_initializer is init_ops.Zeros is v1.zeros_initializer is sf.initializers.zeros
    assert sf.initializers.glorot_uniform is init_ops.GlorotUniform is v1.glorot_uniform_initializer
    assert sf.initializers.he_normal is init_ops.he_normal
    assert sf.initializers.variance_scaling is init_ops.VarianceScaling is sf.variance_scaling_initializer
    assert sf.initializers.orthogonal is init_ops.Orthogonal and sf.initializers.identity is init_ops.Identity
    assert v1.initializers is sf.initializers
    assert sf.initializers.global_variables is v1.global_variables_initializer
    for name in ("constant", "ones", "random_normal", "random_uniform", "truncated_normal", "glorot_normal",
                 "he_uniform", "lecun_normal", "lecun_uniform", "uniform_unit_scaling", "Zeros", "GlorotUniform"):
        assert callable(getattr(sf.initializers, name)), name

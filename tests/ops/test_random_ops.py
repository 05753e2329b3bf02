"""random_ops: distributions, dtypes, TF seed semantics (global/graph seed x op seed, per-Session
state, eager reproducibility after set_seed), errors, faces (sf.random.*, sf.random_normal)."""
import numpy as np
import pytest

import segflow as sf
from segflow.framework import errors
from segflow.ops import random_ops
from segflow.framework import random_seed


@pytest.fixture(autouse=True)
def _no_global_seed():
    """Each test starts and ends with no eager global seed."""
    random_seed.set_seed(None)
    yield
    random_seed.set_seed(None)


# -- distributions and dtypes
@pytest.mark.parametrize("dtype", [sf.float16, sf.float32, sf.float64])
def test_random_normal_moments(mode, dtype):
    x = mode.evaluate(sf.random.normal([200, 100], mean=3.0, stddev=2.0, dtype=dtype, seed=1))
    assert x.shape == (200, 100) and x.dtype == dtype.as_numpy_dtype
    x = x.astype(np.float64)
    # 20000 draws: the standard error of the mean is 2/sqrt(20000) ~ 0.014
    assert abs(x.mean() - 3.0) < 0.08
    assert abs(x.std() - 2.0) < 0.08


def test_truncated_normal_bounds(mode):
    x = mode.evaluate(sf.random.truncated_normal([10000], mean=-1.0, stddev=0.5, dtype=sf.float64, seed=2))
    assert x.min() >= -2.0 and x.max() <= 0.0        # within 2 stddev of the mean
    # a normal truncated at +-2 sigma has std ~0.8796 sigma
    assert abs(x.std() - 0.8796 * 0.5) < 0.02
    assert abs(x.mean() + 1.0) < 0.02


@pytest.mark.parametrize("dtype", [sf.float32, sf.float64])
def test_random_uniform_float(mode, dtype):
    x = mode.evaluate(sf.random.uniform([5000], minval=-2.0, maxval=3.0, dtype=dtype, seed=3))
    assert x.dtype == dtype.as_numpy_dtype
    assert x.min() >= -2.0 and x.max() < 3.0
    assert abs(x.mean() - 0.5) < 0.1
    y = mode.evaluate(sf.random_uniform([2, 3], seed=4))
    assert y.shape == (2, 3) and y.dtype == np.float32 and 0 <= y.min() and y.max() < 1


@pytest.mark.parametrize("dtype", [sf.int32, sf.int64])
def test_random_uniform_int(mode, dtype):
    x = mode.evaluate(sf.random.uniform([4000], minval=-3, maxval=4, dtype=dtype, seed=5))
    assert x.dtype == dtype.as_numpy_dtype
    assert set(np.unique(x).tolist()) == set(range(-3, 4))


def test_random_uniform_int_errors(mode):
    with pytest.raises(ValueError, match="maxval"):
        sf.random.uniform([3], dtype=sf.int32)
    with pytest.raises(errors.InvalidArgumentError, match=r"RandomUniformInt.*input 'maxval'.*minval < maxval"):
        mode.evaluate(sf.random.uniform([3], minval=5, maxval=5, dtype=sf.int32))


def test_random_uniform_int_error_at_run_time():
    with sf.Graph().as_default():
        hi = sf.placeholder(sf.int64, [])
        x = sf.random.uniform([3], minval=sf.constant(2, sf.int64), maxval=hi, dtype=sf.int64, name="draw")
        with sf.Session() as sess:
            assert sess.run(x, {hi: 3}).tolist() == [2, 2, 2]
            with pytest.raises(errors.InvalidArgumentError, match=r"RandomUniformInt.*input 'maxval'.*2 >= 1"):
                sess.run(x, {hi: 1})


def test_shape_errors(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"RandomStandardNormal.*input 'shape'.*non-negative"):
        mode.evaluate(sf.random.normal([2, -1]))
    with pytest.raises(TypeError, match="floating"):
        sf.random.normal([2], dtype=sf.int32)


def test_shape_from_tensor_and_static_shape():
    with sf.Graph().as_default():
        n = sf.placeholder(sf.int32, [])
        x = sf.random.normal(sf.stack([n, 3]))
        assert x.shape.as_list() == [None, 3]
        assert sf.random_normal([4, 2]).shape.as_list() == [4, 2]
        with sf.Session() as sess:
            assert sess.run(x, {n: 5}).shape == (5, 3)


def test_random_shuffle(mode):
    x = np.arange(20).reshape(10, 2)
    y = mode.evaluate(sf.random_shuffle(x, seed=7))
    assert sorted(y[:, 0].tolist()) == list(range(0, 20, 2))
    np.testing.assert_array_equal(y[:, 1], y[:, 0] + 1)   # rows move whole
    ys = [mode.evaluate(sf.random.shuffle(x, seed=s))[:, 0].tolist() for s in range(8)]
    assert any(v != list(range(0, 20, 2)) for v in ys)


def test_categorical(mode):
    logits = np.log([[0.1, 0.0001, 0.9], [1.0, 1e-9, 1e-9]])
    x = mode.evaluate(sf.random.categorical(logits, 2000, seed=8))
    assert x.shape == (2, 2000) and x.dtype == np.int64
    assert set(x[1].tolist()) == {0}
    frac2 = (x[0] == 2).mean()
    assert 0.86 < frac2 < 0.94
    x = mode.evaluate(sf.multinomial(logits, 5, output_dtype=sf.int32, seed=1))
    assert x.dtype == np.int32


# -- seed semantics
def test_graph_seed_same_across_sessions_new_values_per_run():
    with sf.Graph().as_default() as g:
        sf.random.set_seed(42)
        assert g.seed == 42
        x = sf.random.normal([3])
        with sf.Session() as s1:
            a1, a2 = s1.run(x), s1.run(x)
        with sf.Session() as s2:
            b1, b2 = s2.run(x), s2.run(x)
    assert not np.array_equal(a1, a2)
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)


def test_graph_seed_identical_graphs_give_identical_values():
    values = []
    for _ in range(2):
        with sf.Graph().as_default():
            sf.set_random_seed(7)
            x = sf.random.uniform([4])
            y = sf.random.uniform([4])
            with sf.Session() as sess:
                values.append(sess.run([x, y]))
    np.testing.assert_array_equal(values[0][0], values[1][0])
    np.testing.assert_array_equal(values[0][1], values[1][1])
    assert not np.array_equal(values[0][0], values[0][1])   # two ops, two streams


def test_graph_seed_differs_by_seed():
    out = []
    for seed in (1, 2):
        with sf.Graph().as_default():
            sf.set_random_seed(seed)
            x = sf.random.normal([4])
            with sf.Session() as sess:
                out.append(sess.run(x))
    assert not np.array_equal(out[0], out[1])


def test_op_seed_alone_is_reproducible_across_graphs():
    out = []
    for extra_ops in (0, 3):
        with sf.Graph().as_default():
            for _ in range(extra_ops):
                sf.constant(1.0)
            x = sf.random.normal([4], seed=11)
            with sf.Session() as sess:
                out.append(sess.run(x))
    np.testing.assert_array_equal(out[0], out[1])


def test_unseeded_graph_differs_across_sessions():
    with sf.Graph().as_default():
        x = sf.random.normal([8])
        with sf.Session() as s1:
            a = s1.run(x)
        with sf.Session() as s2:
            b = s2.run(x)
    assert not np.array_equal(a, b)


def test_unseeded_eager_differs_across_calls():
    a = sf.random.normal([8]).numpy()
    b = sf.random.normal([8]).numpy()
    assert not np.array_equal(a, b)


def test_eager_global_seed_sequence_repeats_after_reset():
    sf.random.set_seed(123)
    first = [sf.random.normal([3]).numpy(), sf.random.uniform([2]).numpy(), sf.random.normal([3], seed=5).numpy(),
             sf.random.normal([3], seed=5).numpy()]
    sf.random.set_seed(123)
    again = [sf.random.normal([3]).numpy(), sf.random.uniform([2]).numpy(), sf.random.normal([3], seed=5).numpy(),
             sf.random.normal([3], seed=5).numpy()]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], sf.random.normal([3]).numpy())
    # the same op seed twice continues one stream rather than repeating a value
    assert not np.array_equal(first[2], first[3])
    sf.random.set_seed(124)
    assert not np.array_equal(first[0], sf.random.normal([3]).numpy())


def test_eager_op_seed_without_global_seed_repeats_after_reset():
    a = sf.random.uniform([3], seed=9).numpy()
    sf.random.set_seed(None)
    b = sf.random.uniform([3], seed=9).numpy()
    np.testing.assert_array_equal(a, b)


def test_get_seed_rules():
    assert random_seed.get_seed(None) == (None, None)
    assert random_seed.get_seed(4) == (random_seed.DEFAULT_GRAPH_SEED, 4)
    random_seed.set_seed(10)
    s1, s2 = random_seed.get_seed(None), random_ops.get_seed(None)
    assert s1[0] == 10 and s2[0] == 10 and s1[1] != s2[1]
    assert random_seed.get_seed(3) == (10, 3)
    random_seed.set_seed(0)
    assert random_seed.get_seed(0) == (0, 2 ** 31 - 1)


# -- gradients
def test_random_ops_are_not_differentiable_but_mean_and_stddev_are(mode):
    mean = sf.constant(1.0, sf.float64)
    std = sf.constant(2.0, sf.float64)
    if mode.eager:
        with sf.GradientTape(persistent=True) as tape:
            tape.watch([mean, std])
            x = sf.random.normal([5], mean=mean, stddev=std, dtype=sf.float64, seed=1)
            y = sf.reduce_sum(x)
        gm, gs = tape.gradient(y, [mean, std])
    else:
        x = sf.random.normal([5], mean=mean, stddev=std, dtype=sf.float64, seed=1)
        y = sf.reduce_sum(x)
        gm, gs = sf.gradients(y, [mean, std])
    x_v, gm_v, gs_v = mode.evaluate([x, gm, gs])
    assert gm_v == 5.0
    np.testing.assert_allclose(gs_v, ((x_v - 1.0) / 2.0).sum())   # d/dstd sum(mean + std*z) = sum(z)
    from segflow.framework import ops
    for t in ("RandomStandardNormal", "RandomUniform", "TruncatedNormal", "RandomUniformInt", "RandomShuffle"):
        assert ops._gradient_registry.lookup(t) is None


# -- faces
def test_faces():
    for n in ("normal", "uniform", "truncated_normal", "shuffle", "categorical", "set_seed"):
        assert hasattr(sf.random, n)
    assert sf.random.normal is sf.random_normal is random_ops.random_normal
    assert sf.random_uniform is random_ops.random_uniform
    assert sf.set_random_seed is random_seed.set_seed
    assert sf.truncated_normal is random_ops.truncated_normal


def test_eager_counter_seeded_ops_keep_no_generators():
    # With a global seed and no op seed every eager call gets a fresh op seed: nothing to keep.
    from segflow._core import apply as op_def
    sf.random.set_seed(3)
    before = len(op_def._EAGER_RESOURCES)
    for _ in range(20):
        sf.random.normal([1])
    assert len(op_def._EAGER_RESOURCES) == before
    sf.random.normal([1], seed=1)
    assert len(op_def._EAGER_RESOURCES) == before + 1

"""Learning-rate schedules (sf.train.exponential_decay and kin) eagerly and following the global
step in a Session, and ExponentialMovingAverage: shadow variables, decay with num_updates,
zero-debiasing, names for a Saver."""
import functools
import math

import numpy as np
import pytest

import segflow as sf
from segflow.training import learning_rate_decay, moving_averages

v1 = sf.compat.v1
T = sf.train
STEPS = [0, 3, 5, 10, 12, 25]


def _exp(p, stair):
    return np.floor(p) if stair else p


# NumPy versions of TensorFlow's documented formulas
SCHEDULES = {
    "exponential": (lambda g: T.exponential_decay(0.1, g, 10, 0.5), lambda s: 0.1 * 0.5 ** (s / 10)),
    "exponential_staircase": (lambda g: T.exponential_decay(0.1, g, 10, 0.5, staircase=True),
                              lambda s: 0.1 * 0.5 ** np.floor(s / 10)),
    "piecewise_constant": (lambda g: T.piecewise_constant(g, [5, 10], [1.0, 0.5, 0.1]),
                           lambda s: 1.0 if s <= 5 else 0.5 if s <= 10 else 0.1),
    "polynomial": (lambda g: T.polynomial_decay(0.1, g, 10, 0.01, power=2.0),
                   lambda s: 0.09 * (1 - min(s, 10) / 10) ** 2 + 0.01),
    "polynomial_cycle": (lambda g: T.polynomial_decay(0.1, g, 10, 0.01, power=2.0, cycle=True),
                         lambda s: 0.09 * (1 - s / (10 * max(1, math.ceil(s / 10)))) ** 2 + 0.01),
    "natural_exp": (lambda g: T.natural_exp_decay(0.1, g, 10, 0.5), lambda s: 0.1 * np.exp(-0.5 * s / 10)),
    "natural_exp_staircase": (lambda g: T.natural_exp_decay(0.1, g, 10, 0.5, staircase=True),
                              lambda s: 0.1 * np.exp(-0.5 * np.floor(s / 10))),
    "inverse_time": (lambda g: T.inverse_time_decay(0.1, g, 10, 0.5), lambda s: 0.1 / (1 + 0.5 * s / 10)),
    "inverse_time_staircase": (lambda g: T.inverse_time_decay(0.1, g, 10, 0.5, staircase=True),
                               lambda s: 0.1 / (1 + 0.5 * np.floor(s / 10))),
    "cosine": (lambda g: T.cosine_decay(0.1, g, 10, alpha=0.1),
               lambda s: 0.1 * (0.9 * 0.5 * (1 + np.cos(np.pi * min(s, 10) / 10)) + 0.1)),
    "linear_cosine": (lambda g: T.linear_cosine_decay(0.1, g, 10, num_periods=0.5, alpha=0.1, beta=0.01),
                      lambda s: 0.1 * ((0.1 + (10 - min(s, 10)) / 10) * 0.5 * (1 + np.cos(np.pi * min(s, 10) / 10))
                                       + 0.01)),
}
# SGDR: periods 4, 8, 16 starting at steps 0, 4, 12; peaks 1, 0.5, 0.25 (TF 2.21's values)
SGDR = [0.10000000149011612, 0.023180196061730385, 0.05328729376196861, 0.016590097919106483,
        0.032499998807907104, 0.011895966716110706]


def _sgdr_ref(s):
    start, length, peak = 0, 4, 1.0
    while s >= start + length:
        start, length, peak = start + length, length * 2, peak * 0.5
    frac = (s - start) / length
    return 0.1 * (0.9 * 0.5 * peak * (1 + np.cos(np.pi * frac)) + 0.1)


def test_sgdr_reference_matches_tensorflow_numbers():
    np.testing.assert_allclose([_sgdr_ref(s) for s in STEPS], SGDR, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(SCHEDULES) + ["cosine_restarts"])
def test_schedules_eager_return_callables(name):
    make, ref = SCHEDULES.get(name, (lambda g: T.cosine_decay_restarts(0.1, g, 4, t_mul=2.0, m_mul=0.5, alpha=0.1),
                                     _sgdr_ref))
    step = sf.Variable(0, dtype=sf.int64)
    lr = make(step)
    assert isinstance(lr, functools.partial)
    for s in STEPS:
        step.assign(s)
        got = lr()
        assert got.dtype == sf.float32
        np.testing.assert_allclose(got.numpy(), ref(s), rtol=2e-6)


@pytest.mark.parametrize("name", sorted(SCHEDULES) + ["cosine_restarts"])
def test_schedules_follow_the_global_step_in_a_session(name):
    make, ref = SCHEDULES.get(name, (lambda g: T.cosine_decay_restarts(0.1, g, 4, t_mul=2.0, m_mul=0.5, alpha=0.1),
                                     _sgdr_ref))
    with sf.Graph().as_default():
        step = T.get_or_create_global_step()
        lr = make(step)
        assert isinstance(lr, sf.Tensor) and lr.shape.rank == 0
        with v1.Session() as sess:
            sess.run(step.initializer)
            for s in STEPS:
                sess.run(step.assign(s))
                np.testing.assert_allclose(sess.run(lr), ref(s), rtol=2e-6)


def test_schedule_details():
    # t_mul == 1: equal periods
    lr = T.cosine_decay_restarts(1.0, sf.constant(6), 4, t_mul=1.0, m_mul=0.5)
    np.testing.assert_allclose(lr().numpy(), 0.5 * 0.5 * (1 + np.cos(np.pi * 0.5)), rtol=1e-6)
    # the rate has the learning rate's dtype; the step is cast to it
    lr = T.exponential_decay(np.float64(0.1), sf.constant(3), 10, 0.5)
    assert lr().dtype == sf.float64
    np.testing.assert_allclose(lr().numpy(), 0.1 * 0.5 ** 0.3, rtol=1e-12)
    assert T.piecewise_constant(sf.constant(7), [5, 10], [1, 2, 3])().numpy() == 2
    assert T.piecewise_constant(sf.constant(7.0), [5.0, 10.0], [1.0, 2.0, 3.0])().numpy() == 2.0
    with pytest.raises(ValueError, match="The length of boundaries should be 1 less than the length of values"):
        T.piecewise_constant(sf.constant(1), [5, 10], [1.0, 0.5])
    with pytest.raises(ValueError, match="one dtype"):
        T.piecewise_constant(sf.constant(1), [5], [1.0, 2])()
    with sf.Graph().as_default():
        with pytest.raises(ValueError, match="global_step is required for ExponentialDecay"):
            T.exponential_decay(0.1, None, 10, 0.5)
    assert learning_rate_decay.exponential_decay is T.exponential_decay


def test_schedule_drives_an_optimizer():
    with sf.Graph().as_default():
        step = T.get_or_create_global_step()
        w = sf.Variable(0.0)
        lr = T.exponential_decay(1.0, step, 1, 0.5)
        train = T.GradientDescentOptimizer(lr).minimize(-1.0 * w, global_step=step)   # d loss / d w = -1
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            np.testing.assert_allclose(sess.run(w), 1.0 + 0.5 + 0.25, rtol=1e-6)


# -- ExponentialMovingAverage
def test_ema_eager():
    v = sf.Variable(1.0, name="v")
    ema = T.ExponentialMovingAverage(0.9)
    assert ema.apply([v]) is None
    avg = ema.average(v)
    assert avg.name == "v/ExponentialMovingAverage:0" and ema.average_name(v) == "v/ExponentialMovingAverage"
    assert avg.numpy() == 1.0 and not avg.trainable
    v.assign(3.0)
    ema.apply([v])
    np.testing.assert_allclose(avg.numpy(), 0.9 * 1.0 + 0.1 * 3.0, rtol=1e-6)
    ema.apply([v])
    np.testing.assert_allclose(avg.numpy(), 0.9 * 1.2 + 0.1 * 3.0, rtol=1e-6)
    assert ema.average(sf.Variable(2.0)) is None
    with pytest.raises(TypeError, match="The variables must be half, float, or double"):
        ema.apply([sf.Variable(1, name="iv")])


def test_ema_graph_num_updates_names_and_restore_map():
    with sf.Graph().as_default():
        with v1.variable_scope("s"):
            a = v1.get_variable("a", initializer=2.0)
            b = sf.Variable([1.0, 2.0], name="b")
            c = v1.get_variable("c", initializer=1.0)
        step = T.get_or_create_global_step()
        ema = T.ExponentialMovingAverage(0.9, num_updates=step)
        assert ema.average_name(a) == "s/a/ExponentialMovingAverage"
        op = ema.apply([a, b])
        assert op.type == "NoOp"
        assert [x.name for x in v1.moving_average_variables()] == ["s/a:0", "s/b:0"]
        assert ema.average(a).name == "s/a/ExponentialMovingAverage:0" and ema.average(c) is None
        assert [x.name for x in v1.trainable_variables()] == ["s/a:0", "s/b:0", "s/c:0"]
        assert {x.name for x in v1.global_variables()} == {"s/a:0", "s/b:0", "s/c:0", "global_step:0",
                                                           "s/a/ExponentialMovingAverage:0",
                                                           "s/b/ExponentialMovingAverage:0"}
        names = {k: x.name for k, x in ema.variables_to_restore().items()}
        assert names == {"s/a/ExponentialMovingAverage": "s/a:0", "s/b/ExponentialMovingAverage": "s/b:0",
                         "s/c/ExponentialMovingAverage": "s/c:0", "global_step": "global_step:0"}
        names = {k: x.name for k, x in ema.variables_to_restore([b]).items()}
        assert names == {"s/b/ExponentialMovingAverage": "s/b:0", "s/a": "s/a:0", "s/c": "s/c:0",
                         "global_step": "global_step:0",
                         "s/a/ExponentialMovingAverage": "s/a/ExponentialMovingAverage:0"}
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            shadow, value = 2.0, 2.0
            for n in range(3):
                sess.run(a.assign_add(1.0))
                value += 1.0
                sess.run(op)
                decay = min(0.9, (1 + n) / (10 + n))
                shadow = decay * shadow + (1 - decay) * value
                np.testing.assert_allclose(sess.run(ema.average(a)), shadow, rtol=1e-6)
                np.testing.assert_allclose(sess.run(ema.average(b)), [1.0, 2.0])
                sess.run(step.assign_add(1))
            assert shadow == pytest.approx(4.7, rel=1e-6)      # TF 2.21 gives 2.9, 3.8, 4.7


def test_ema_zero_debias_applies_to_tensors_only():
    with sf.Graph().as_default():
        b = sf.Variable([1.0, 2.0], name="b")
        total = sf.reduce_sum(b) * 1.0
        on_var = T.ExponentialMovingAverage(0.5, zero_debias=True, name="zd")
        on_tensor = T.ExponentialMovingAverage(0.5, zero_debias=True)
        ops = [on_var.apply([b]), on_tensor.apply([total])]
        assert on_var.average(b).name == "b/zd:0"
        with v1.Session() as sess:
            sess.run(v1.global_variables_initializer())
            want_var, biased, seen = np.array([1.0, 2.0]), 0.0, []
            for t in range(1, 4):
                sess.run(b.assign(b * 2.0))
                sess.run(ops)
                x = 3.0 * 2.0 ** t
                want_var = 0.5 * want_var + 0.5 * np.array([2.0 ** t, 2.0 ** (t + 1)])
                biased = 0.5 * biased + 0.5 * x
                seen.append(sess.run(on_tensor.average(total)))
                np.testing.assert_allclose(sess.run(on_var.average(b)), want_var, rtol=1e-6)
                np.testing.assert_allclose(seen[-1], biased / (1 - 0.5 ** t), rtol=1e-6)
            np.testing.assert_allclose(seen, [6.0, 10.0, 18.0], rtol=1e-6)


def test_assign_moving_average():
    v = sf.Variable([4.0, 8.0])
    moving_averages.assign_moving_average(v, sf.constant([0.0, 0.0]), 0.75, zero_debias=False)
    np.testing.assert_allclose(v.numpy(), [3.0, 6.0])
    assert moving_averages.ExponentialMovingAverage is T.ExponentialMovingAverage

"""Optimizer slots of a variable whose static shape is unknown (validate_shape=False) take the
variable's shape when they are initialized; repeated updates of a scalar variable."""
import numpy as np

import segflow as sf
from segflow.ops import variable_scope, variables


def test_adagrad_on_a_variable_of_unknown_shape():
    with sf.Graph().as_default():
        var0 = variable_scope.get_variable("var0", initializer=sf.constant([1.0, 2.0]), validate_shape=False)
        assert var0.shape.rank is None
        opt = sf.compat.v1.train.AdagradOptimizer(lambda: 3.0, initial_accumulator_value=0.1)
        update = opt.apply_gradients([(sf.constant([0.1, 0.1]), var0)])
        acc = opt.get_slot(var0, "accumulator")
        with sf.Session() as sess:
            sess.run(variables.global_variables_initializer())
            assert sess.run(acc).tolist() == np.float32([0.1, 0.1]).tolist()
            for _ in range(3):
                sess.run(update)
            got = sess.run(var0)
    # by hand: acc_k = 0.1 + k * 0.01, var -= 3 * 0.1 / sqrt(acc_k)
    expected = np.array([1.0, 2.0]) - sum(3 * 0.1 / np.sqrt(0.1 + k * 0.01) for k in (1, 2, 3))
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_zeros_slot_of_a_variable_of_unknown_shape():
    from segflow._training import slot_creator
    with sf.Graph().as_default():
        v = sf.Variable([[1.0, 2.0, 3.0]], validate_shape=False)
        slot = slot_creator.create_zeros_slot(v, "m")
        with sf.Session() as sess:
            sess.run(variables.global_variables_initializer())
            assert sess.run(slot).tolist() == [[0.0, 0.0, 0.0]]


def test_scalar_variable_updated_twice_after_a_read():
    with sf.Graph().as_default():
        v = sf.Variable(1.0)
        update = v.assign_sub(0.25, read_value=False)
        with sf.Session() as sess:
            sess.run(v.initializer)
            assert sess.run(v) == 1.0
            sess.run(update)
            sess.run(update)
            assert sess.run(v) == 0.5
    w = sf.Variable(1.0)
    w.numpy()
    w.assign_add(1.0, read_value=False)
    w.assign_add(1.0, read_value=False)
    assert float(w.numpy()) == 3.0

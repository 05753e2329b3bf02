"""enable_check_numerics: an infinity or NaN in an op's float output raises, eagerly, in gradient
functions and in a Session; disable_check_numerics turns it off."""
import numpy as np
import pytest

import segflow as sf
from segflow.debug.lib import check_numerics_callback


@pytest.fixture
def checking():
    check_numerics_callback.enable_check_numerics()
    try:
        yield
    finally:
        check_numerics_callback.disable_check_numerics()


def test_infinity_raises_naming_the_op(checking):
    with pytest.raises(sf.errors.InvalidArgumentError, match=r'(?s)output 0 of op "Log".*-Inf elements: 1'):
        sf.math.log(sf.constant([0.0, 1.0]))
    with pytest.raises(sf.errors.InvalidArgumentError, match="NaN elements: 1"):
        sf.sqrt(sf.constant([-1.0, 4.0]))
    assert sf.math.log(sf.constant([1.0])).numpy().tolist() == [0.0]
    assert sf.constant([1, 2]) // sf.constant([1, 1]) is not None        # integers are not checked


def test_pow_gradient_at_zero_passes_the_check(checking):
    x = sf.constant([-1.0, 0.0, 1.0])
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = sf.pow(x, 2)
    assert tape.gradient(y, x).numpy().tolist() == [-2.0, 0.0, 2.0]


def test_check_in_a_session(checking):
    with sf.Graph().as_default():
        z = sf.math.log(sf.placeholder(sf.float32, [2], name="p"))
        with sf.Session() as sess:
            with pytest.raises(sf.errors.InvalidArgumentError, match="Infinity or NaN"):
                sess.run(z, {"p:0": np.array([0.0, 1.0], np.float32)})


def test_disable_stops_checking():
    check_numerics_callback.enable_check_numerics()
    check_numerics_callback.enable_check_numerics()     # twice: still one layer of checks
    check_numerics_callback.disable_check_numerics()
    assert np.isneginf(sf.math.log(sf.constant([0.0])).numpy()[0])
    check_numerics_callback.disable_check_numerics()    # when off: nothing to do

"""Python int and float operands of eager ops take a short conversion (`scalar_tensor`) that
must give exactly what the general conversion gives: the same dtype and the same bits, and
nothing at all where the general path would do something else (fall back, widen, refuse)."""
import math

import numpy as np
import pytest

import segflow as sf
from segflow._core import convert

VALUES = [0, 1, -1, 7, 2**31 - 1, 2**31, -2**31, -2**31 - 1, 2**40, 2**63 - 1, 2**63, -2**63,
          -2**63 - 1, 2**70, 0.0, -0.0, 1.5, 1.01, 0.1, 3.0e38, 1e40, -1e-45, math.inf, -math.inf,
          math.nan, True, False]
HINTS = [None, sf.float32, sf.float64, sf.int32, sf.int64, sf.float16, sf.bfloat16, sf.int8,
         sf.uint8, sf.bool, sf.complex64, sf.complex128]


def _general(value, hint):
    """What convert_to_tensor makes of `value` beside a tensor of dtype `hint` (or an error)."""
    try:
        return sf.convert_to_tensor(value, preferred_dtype=hint)
    except (TypeError, ValueError) as e:
        return e


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")  # 1e40 as float32
@pytest.mark.parametrize("hint", HINTS, ids=lambda h: "none" if h is None else h.name)
def test_the_short_conversion_matches_the_general_one(hint):
    taken = 0
    for value in VALUES:
        fast = convert.scalar_tensor(value, hint)
        if fast is None:
            continue
        taken += 1
        general = _general(value, hint)
        assert not isinstance(general, Exception), (value, hint, general)
        assert fast.dtype == general.dtype, (value, hint)
        assert fast.numpy().tobytes() == general.numpy().tobytes(), (value, hint)
    # the common hints do take it (else the test above would check nothing for them)
    if hint in (None, sf.float32, sf.float64, sf.int32, sf.int64):
        assert taken >= 5


def test_only_plain_ints_and_floats_in_range_take_it():
    for value in (True, False, np.float32(1), np.int64(3), 1 + 2j, [1, 2], "1"):
        assert convert.scalar_tensor(value, None) is None
    assert convert.scalar_tensor(2**31, None) is None        # int64 by the general rule
    assert convert.scalar_tensor(2**31, sf.int64).dtype == sf.int64
    assert convert.scalar_tensor(2**63, sf.int64) is None
    assert convert.scalar_tensor(1.5, sf.int32) is None      # TF refuses: the general path says so
    assert convert.scalar_tensor(2**64, sf.float32) is None
    for hint in (sf.float16, sf.bool, sf.complex64, sf.uint8):
        assert convert.scalar_tensor(1, hint) is None


def test_graph_mode_builds_constants_as_before():
    g = sf.Graph()
    with g.as_default():
        assert convert.scalar_tensor(3, None) is None
        y = sf.constant([1.0, 2.0]) * 2
        assert y.dtype == sf.float32
    with sf.compat.v1.Session(graph=g) as sess:
        np.testing.assert_array_equal(sess.run(y), [2.0, 4.0])


def test_ops_with_scalar_operands_give_the_general_results():
    x = sf.constant(np.array([1.5, -2.0], np.float32))
    assert (x * 2).dtype == sf.float32 and (x + 0.1).dtype == sf.float32
    np.testing.assert_array_equal((x + 0.1).numpy(), np.array([1.5, -2.0], np.float32) + np.float32(0.1))
    d = sf.constant(np.array([1.5, -2.0]))
    np.testing.assert_array_equal((d + 0.1).numpy(), np.array([1.5, -2.0]) + 0.1)   # float64 0.1
    i = sf.constant(np.array([1, 2], np.int64))
    assert (i + 2**40).dtype == sf.int64
    np.testing.assert_array_equal((i + 2**40).numpy(), np.array([1, 2]) + 2**40)
    out = sf.math.unsorted_segment_sum(np.arange(4.0, dtype=np.float32), np.array([0, 1, 0, 2]), 3)
    np.testing.assert_array_equal(out.numpy(), [2.0, 1.0, 3.0])
    with pytest.raises(sf.errors.InvalidArgumentError):
        sf.math.unsorted_segment_sum(np.arange(4.0), np.array([0, 1, 0, 2]), 2.5)


def test_a_registered_conversion_for_python_scalars_turns_the_short_path_off(monkeypatch):
    monkeypatch.setattr(convert, "_conversion_functions", list(convert._conversion_functions))
    monkeypatch.setattr(convert, "_scalar_types_converted", False)
    convert.register_tensor_conversion_function(str, lambda v, dtype=None, name=None, as_ref=False:
                                                NotImplemented)
    assert convert.scalar_tensor(3, None) is not None          # a type that is not a scalar's
    convert.register_tensor_conversion_function(object, lambda v, dtype=None, name=None, as_ref=False:
                                                NotImplemented)
    assert convert.scalar_tensor(3, None) is None
    assert convert.scalar_tensor(1.5, sf.float32) is None

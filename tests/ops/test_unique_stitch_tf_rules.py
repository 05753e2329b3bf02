"""unique and dynamic_stitch: string values as bytes, TF's phrases in their errors; and the gradient
checker on bfloat16."""
import ml_dtypes
import numpy as np
import pytest

import segflow as sf
from segflow.framework import errors
from segflow.ops import data_flow_ops, gen_array_ops, gradient_checker_v2


# ----------------------------------------------------------------------------------------------
# Strings are bytes (UTF-8), as in TF


def test_string_tensors_hold_utf8_bytes():
    assert sf.constant(["a", "\u00e9"]).numpy().tolist() == [b"a", b"\xc3\xa9"]
    assert sf.constant("abc").numpy() == b"abc"
    assert sf.constant(np.array(["x", "yz"])).numpy().tolist() == [b"x", b"yz"]
    assert sf.constant([b"a", b"bc"]).numpy().tolist() == [b"a", b"bc"]
    assert sf.constant(["a"]).dtype is sf.string


@pytest.mark.parametrize("with_counts", [False, True])
def test_unique_of_strings(mode, with_counts):
    x = ["b", "a", "b", "c", "a", "b"]
    if with_counts:
        y, idx, count = mode.evaluate(sf.unique_with_counts(x))
        assert count.tolist() == [3, 2, 1]
    else:
        y, idx = mode.evaluate(sf.unique(x))
    assert y.tolist() == [b"b", b"a", b"c"]
    assert [y[i].decode("ascii") for i in idx] == x


# ----------------------------------------------------------------------------------------------
# UniqueV2 wording (graph building: ValueError)


def test_unique_v2_shape_errors():
    x = np.arange(6).reshape(3, 2, 1)
    with sf.Graph().as_default():
        with pytest.raises(ValueError, match=r"UniqueV2.*'x'.*x expects a 1D vector when axis is empty, got shape "
                                             r"\(3, 2, 1\)"):
            gen_array_ops.unique_v2(x, axis=[])
        with pytest.raises(ValueError, match=r"UniqueV2.*'axis'.*axis does not support input tensors larger than 1 "
                                             r"elements"):
            gen_array_ops.unique_v2(x, axis=[1, 2])
        for bad in (3, -4):
            with pytest.raises(ValueError, match=rf"UniqueV2.*'axis'.*axis {bad} is out of range for x of rank 3: "
                                                 r"axis expects to be in the range \[-3, 3\)"):
                gen_array_ops.unique_v2(x, axis=[bad])


def test_unique_v2_kernel_errors():
    x = np.arange(6).reshape(3, 2, 1)
    with pytest.raises(errors.InvalidArgumentError, match=r"UniqueV2.*x expects a 1D vector when axis is empty"):
        gen_array_ops.unique_v2(x, axis=np.array([], np.int32))
    with pytest.raises(errors.InvalidArgumentError, match=r"axis expects to be in the range \[-3, 3\)"):
        gen_array_ops.unique_v2(x, axis=np.array([3], np.int32))


# ----------------------------------------------------------------------------------------------
# dynamic_stitch wording


@pytest.mark.parametrize("fn, op", [(data_flow_ops.dynamic_stitch, "DynamicStitch"),
                                    (data_flow_ops.parallel_dynamic_stitch, "ParallelDynamicStitch")])
def test_negative_stitch_index_is_out_of_range(mode, fn, op):
    with pytest.raises(errors.InvalidArgumentError, match=rf"{op}.*'indices'.*indices\[1\]\[0\] = -1000 is "
                                                          r"negative: out of range"):
        mode.evaluate(fn([[405], [-1000]], [[110.5], [120.5]]))


def test_stitch_list_lengths_must_match(mode):
    one = [sf.constant([0]), sf.constant([1])]
    four = [sf.constant([1.0]), sf.constant([2.0]), sf.constant([3.0]), sf.constant([4.0])]
    with pytest.raises(errors.InvalidArgumentError, match=r"DynamicStitch.*List argument 'data' with length 4 must "
                                                          r"match length 2 of argument 'indices'"):
        mode.evaluate(sf.dynamic_stitch(one, four))
    with pytest.raises(errors.InvalidArgumentError, match=r"List argument 'data' with length 2 must match length 4"):
        mode.evaluate(sf.dynamic_stitch(one + one, four[:2]))


# ----------------------------------------------------------------------------------------------
# The gradient checker on bfloat16


def test_gradient_checker_v2_on_bfloat16():
    x = np.arange(1, 7).reshape(3, 2).astype(ml_dtypes.bfloat16)
    theoretical, numerical = gradient_checker_v2.compute_gradient(
        lambda v: sf.math.unsorted_segment_sum(v, [0, 1, 0], 2), [x], delta=1.0)
    assert theoretical[0].dtype == ml_dtypes.bfloat16
    want = np.zeros((6, 4))
    for r, (i, j) in enumerate(np.ndindex(3, 2)):         # x[i, j] lands in out[ids[i], j]
        want[r, [0, 1, 0][i] * 2 + j] = 1
    np.testing.assert_array_equal(np.asarray(theoretical[0], np.float64), want)
    np.testing.assert_array_equal(np.asarray(numerical[0], np.float64), want)

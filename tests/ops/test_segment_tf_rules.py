"""Segment reductions: TensorFlow's rules for integer means, small id dtypes, Python-list ids, the
size of the output, and the wording of its errors. Expected values are hand-derived."""
import numpy as np
import pytest

import segflow as sf
from segflow.framework import errors, errors_impl
from segflow.kernels import BadInput
from segflow.kernels import segment as seg
from segflow.kernels.segment import api as seg_api


# ----------------------------------------------------------------------------------------------
# Integer means


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32])
def test_sorted_integer_mean_truncates_toward_zero(mode, dtype):
    data = np.array([1, 2, 4, 9, 9, 7], dtype)                    # segments {1, 2} {4, 9, 9} gap {7}
    got = mode.evaluate(sf.math.segment_mean(data, [0, 0, 1, 1, 1, 3]))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, [1, 7, 0, 7])              # 3 // 2, 22 // 3, empty, 7


def test_sorted_integer_mean_of_negative_sums_truncates_toward_zero(mode):
    # C++ integer division (TF's MeanReducer): -7 / 2 = -3 and -22 / 3 = -7, not -4 and -8
    data = np.array([[-3, 3], [-4, 4], [-4, 4], [-9, 9], [-9, 9]], np.int64)
    got = mode.evaluate(sf.math.segment_mean(data, [0, 0, 1, 1, 1]))
    np.testing.assert_array_equal(got, [[-3, 3], [-7, 7]])


def test_integer_mean_numpy_path_agrees_with_the_loops(monkeypatch):
    data = np.array([-3, -4, 5, 6, 6, 1], np.int64)
    ids = np.array([0, 0, 1, 1, 1, 2])
    want = seg.sorted_segment_reduce("mean", data, ids)
    monkeypatch.setattr(seg_api, "reduce_strategy", lambda *a: ("numpy", 1, 0, 0))
    np.testing.assert_array_equal(seg.sorted_segment_reduce("mean", data, ids), want)
    np.testing.assert_array_equal(want, [-3, 5, 1])


def test_sorted_uint64_mean_divides_unsigned():
    big = 2**63 + 10                                           # as int64 this would be negative
    got = seg.sorted_segment_reduce("mean", np.array([big, big + 2, 5], np.uint64), np.array([0, 0, 1]))
    # the uint64 sum wraps (2**64 + 22 -> 22), then divides unsigned: 11; TF's uint64 sum wraps too
    np.testing.assert_array_equal(got, np.array([11, 5], np.uint64))
    single = seg.sorted_segment_reduce("mean", np.array([big, 4], np.uint64), np.array([0, 1]))
    np.testing.assert_array_equal(single, np.array([big, 4], np.uint64))


@pytest.mark.parametrize("dtype, out", [(np.int8, np.float32), (np.uint16, np.float32), (np.int32, np.float64),
                                        (np.int64, np.float64), (np.uint64, np.float64)])
def test_unsorted_integer_mean_is_true_division(mode, dtype, out):
    # TF's unsorted_segment_mean is sum / count with `/`: integers give float32 (8-, 16-bit) or float64
    data = np.array([[1, 8], [2, 9], [4, 2], [7, 7]], dtype)
    t = sf.math.unsorted_segment_mean(data, [0, 0, 3, 0], 5)
    assert t.dtype == out
    got = mode.evaluate(t)
    assert got.dtype == out
    np.testing.assert_allclose(got, [[10 / 3, 8], [0, 0], [0, 0], [4, 2], [0, 0]], rtol=1e-6)


def test_unsorted_integer_mean_drops_negative_ids_and_wraps_the_sum_first():
    got = sf.math.unsorted_segment_mean(np.array([100, 100, 1], np.int8), [0, 0, -1], 1).numpy()
    # 100 + 100 wraps to -56 in int8 (as TF's int8 sum does), then -56 / 2
    np.testing.assert_array_equal(got, np.array([-28.0], np.float32))


def test_integer_sqrt_n_is_still_refused(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"UnsortedSegmentSqrtN.*'data'.*int32 is not supported"):
        mode.evaluate(sf.math.unsorted_segment_sqrt_n(np.ones(2, np.int32), [0, 1], 2))


# ----------------------------------------------------------------------------------------------
# Id dtypes and Python lists


@pytest.mark.parametrize("fn", [sf.math.unsorted_segment_sum, sf.math.unsorted_segment_max,
                                sf.math.unsorted_segment_prod, sf.math.unsorted_segment_mean])
def test_unsorted_ops_take_int16_ids(mode, fn):
    data = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
    got = mode.evaluate(fn(data, np.array([2, 0, 2], np.int16), 3))
    want = mode.evaluate(fn(data, np.array([2, 0, 2], np.int32), 3))
    np.testing.assert_array_equal(got, want)
    assert got[0].tolist() == [3.0, 4.0]


def test_int8_ids_and_int16_sorted_ids_are_refused(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"UnsortedSegmentSum.*'segment_ids'.*int8 is not "
                                                          r"supported.*allowed values: int16, int32, int64"):
        mode.evaluate(sf.math.unsorted_segment_sum(np.ones(2), np.array([0, 1], np.int8), 2))
    with pytest.raises(errors.InvalidArgumentError, match=r"SegmentSum.*'segment_ids'.*int16 is not supported"):
        mode.evaluate(sf.math.segment_sum(np.ones(2), np.array([0, 1], np.int16)))


@pytest.mark.parametrize("fn", [sf.math.sparse_segment_sum, sf.math.sparse_segment_mean,
                                sf.math.sparse_segment_sqrt_n])
def test_sparse_ops_read_empty_python_lists_as_int32(mode, fn):
    data = sf.zeros([0, 4])
    assert mode.evaluate(fn(data, [], [])).shape == (0, 4)
    got = mode.evaluate(fn(data, [], [], num_segments=3))
    np.testing.assert_array_equal(got, np.zeros((3, 4), np.float32))


def test_sparse_ops_still_refuse_float_indices(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"SparseSegmentSum.*'indices'.*float32"):
        mode.evaluate(sf.math.sparse_segment_sum(np.ones((3, 2)), [0.0, 1.5], [0, 0]))


# ----------------------------------------------------------------------------------------------
# The size of the output


def test_num_segments_whose_output_overflows_int64(mode):
    # [8327099846119777499, 3] has more than 2**63 - 1 elements: TF's overflow error, not NumPy's
    with pytest.raises(errors.InvalidArgumentError, match=r"UnsortedSegmentSum.*'num_segments'.*Encountered overflow "
                                                          r"when multiplying 8327099846119777499 with 3"):
        mode.evaluate(sf.math.unsorted_segment_sum(np.ones(3), 898042203, 8327099846119777499))


def test_sorted_and_sparse_outputs_that_overflow(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"SegmentMax.*Encountered overflow when multiplying"):
        mode.evaluate(sf.math.segment_max(np.ones((1, 10, 1)), [1676240524292489355]))
    # the size is checked before the indices (TF's order): 2**62 - 1 is also no row of data
    with pytest.raises(errors.InvalidArgumentError, match=r"SparseSegmentMean.*'segment_ids'.*Encountered overflow "
                                                          r"when multiplying 4611686018427387904 with 4"):
        mode.evaluate(sf.math.sparse_segment_mean(np.ones((10, 4), np.float32), [2**62 - 1], [2**62 - 1]))


def test_an_output_larger_than_memory_is_resource_exhausted(mode):
    with pytest.raises(errors.ResourceExhaustedError, match=r"UnsortedSegmentSum.*OOM when allocating tensor with "
                                                            r"shape \[1000000000000000\] and type float64"):
        mode.evaluate(sf.math.unsorted_segment_sum(np.ones(3), [0, 1, 2], 10**15))
    with pytest.raises(errors.ResourceExhaustedError, match=r"SegmentSum.*OOM"):
        mode.evaluate(sf.math.segment_sum(np.ones((2, 1000)), [0, 10**12]))


def test_output_size_check_in_the_kernel():
    with pytest.raises(BadInput, match=r"Encountered overflow when multiplying 4611686018427387904 with 2"):
        seg.checks.check_output_size((2**62, 2, 0 + 1), "x")
    seg.checks.check_output_size((2**62, 2, 0), "x")      # empty: never too large
    seg.checks.check_output_size((2**62, 1), "x")


# ----------------------------------------------------------------------------------------------
# Wording (TF's phrases, with the op, the input and the problem)


def test_negative_num_segments(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"SparseSegmentSumWithNumSegments.*'num_segments'.*Cannot "
                                                          r"specify a negative value for num_segments: num_segments = -2"):
        mode.evaluate(sf.math.sparse_segment_sum(np.ones((4, 2)), [0, 1], [0, 1], num_segments=-2))
    with pytest.raises(errors.InvalidArgumentError, match=r"UnsortedSegmentSum.*num_segments = -1 must not be negative"):
        mode.evaluate(sf.math.unsorted_segment_sum(np.ones(2), [0, 1], -1))


def test_negative_num_segments_is_a_value_error_when_building():
    with sf.Graph().as_default():
        with pytest.raises(ValueError, match=r"Cannot specify a negative value for num_segments"):
            sf.math.sparse_segment_mean(np.ones((4, 2), np.float32), [0, 1], [0, 1], num_segments=-2)


@pytest.mark.parametrize("fn", [lambda: sf.math.segment_mean(np.uint16(10), np.array([], np.int64)),
                                lambda: sf.math.sparse_segment_sqrt_n(1.0, [0], [3]),
                                lambda: sf.math.sparse_segment_sum(np.float32(1.0), [0], [0], num_segments=2)])
def test_scalar_data(mode, fn):
    with pytest.raises(errors_impl.InvalidArgumentError, match=r"input 'data': Shape must be at least rank 1 but is "
                                                               r"rank 0"):
        mode.evaluate(fn())


def test_sorted_ids_of_the_wrong_length_fail_when_the_op_runs():
    # TF's shape function leaves the length alone: the graph builds, the run fails
    with sf.Graph().as_default():
        s = sf.math.segment_sum(np.ones((4, 4), np.float32), [0, 1])
        assert s.shape.as_list() == [None, 4]
        with sf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match=r"SegmentSum.*segment_ids should be the same size as "
                                                                  r"dimension 0 of data"):
                sess.run(s)


def test_errors_impl_is_the_errors_module_under_tf_name():
    assert errors_impl.InvalidArgumentError is errors.InvalidArgumentError
    assert errors_impl.OpError is errors.OpError
    assert issubclass(errors_impl.ResourceExhaustedError, errors_impl.OpError)

"""The shared index checks (kernels/ids.py): dtype, range, multi-indices, one wording."""
import numpy as np
import pytest

import segflow as sf
from segflow.kernels import BadInput, ids


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.bool_, object])
def test_non_integer_indices_are_rejected(dtype):
    with pytest.raises(BadInput, match=r"input 'idx': idx has dtype \w+; idx must be int32 or int64"):
        ids.checked_rows(np.array([0, 1], dtype=dtype), 4, "idx")


def test_nan_index_is_rejected_before_any_cast():
    with pytest.raises(BadInput, match="float32"):
        ids.checked_rows(np.array([0, np.nan], np.float32), 4)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, ">i4", ">i8"])
def test_integer_indices_come_back_flat_int64(dtype):
    x = np.array([[3, 0], [1, 2]], dtype=dtype)
    got = ids.checked_rows(x, 4)
    assert got.dtype == np.int64 and got.flags.c_contiguous
    np.testing.assert_array_equal(got, [3, 0, 1, 2])


def test_small_integer_dtypes_need_an_explicit_allowance():
    with pytest.raises(BadInput, match="must be int32 or int64"):
        ids.check_index_dtype(np.array([1], np.int8))
    ids.check_index_dtype(np.array([1], np.int8), allowed=None)      # any integer type


@pytest.mark.parametrize("bad, where, value", [([0, 4, 1], "1", 4), ([[0, 1], [-1, 2]], "1,0", -1),
                                               ([np.iinfo(np.int64).min], "0", np.iinfo(np.int64).min)])
def test_range_error_names_the_first_bad_position(bad, where, value):
    x = np.array(bad, np.int64)
    with pytest.raises(BadInput, match=rf"indices\[{where}\] = {value} is not in \[0, 4\)"):
        ids.checked_rows(x, 4)


def test_nd_rows_flatten_multi_indices():
    shape = (3, 4, 5)
    idx = np.array([[2, 1], [0, 3], [1, 0]], np.int32)
    rows, depth = ids.checked_nd_rows(shape, idx)
    assert depth == 2
    np.testing.assert_array_equal(rows, [2 * 4 + 1, 0 * 4 + 3, 1 * 4 + 0])


def test_nd_rows_errors():
    with pytest.raises(BadInput, match=r"indices\[1\] = \[0, 4\] does not index into shape \[3, 4\]"):
        ids.checked_nd_rows((3, 4), np.array([[1, 1], [0, 4]], np.int64))
    with pytest.raises(BadInput, match=r"index depth 3 \(indices.shape\[-1\]\) exceeds the rank 2"):
        ids.checked_nd_rows((3, 4), np.zeros((1, 3), np.int64))
    with pytest.raises(BadInput, match="rank >= 1"):
        ids.checked_nd_rows((3, 4), np.array(1, np.int64))
    with pytest.raises(BadInput, match="must be int32 or int64"):
        ids.checked_nd_rows((3, 4), np.zeros((1, 2), np.float32))


@pytest.mark.parametrize("n", [0, 3])
def test_nd_rows_of_depth_zero_address_the_whole_tensor(n):
    rows, depth = ids.checked_nd_rows((2, 2), np.zeros((n, 0), np.int32))
    assert depth == 0
    np.testing.assert_array_equal(rows, np.zeros(n))
    # scatter_nd with depth-0 indices adds every update to the whole output (TF's rule)
    got = sf.scatter_nd(np.zeros((n, 0), np.int32), np.ones((n, 2, 2), np.float32), [2, 2]).numpy()
    np.testing.assert_array_equal(got, np.full((2, 2), float(n)))

"""top_k, sort, argsort, boolean_mask: values against NumPy, ties, gradients in both modes, errors."""
import numpy as np
import pytest

import reference as R
import segflow as sf
from segflow.framework import errors
from segflow.ops import sort_ops
from gradcheck import check_gradients


X = np.array([[[3.0, 1.0, 3.0, 2.0, -4.0], [0.0, 5.0, -1.0, 5.0, 5.0]],
              [[1.0, 1.0, 1.0, 1.0, 1.0], [9.0, 8.0, 7.0, 6.0, 5.0]]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8])
@pytest.mark.parametrize("k", [0, 1, 3, 5])
def test_top_k_values_and_ties(mode, dtype, k):
    x = np.abs(X).astype(dtype) if dtype == np.uint8 else X.astype(dtype)
    values, indices = mode.evaluate(sort_ops.top_k(x, k))
    # R.top_k ranks by -value, which wraps for unsigned ints (uint8 0 would rank first): rank as int64.
    want_v, want_i = R.top_k(x.astype(np.int64) if x.dtype.kind == "u" else x, k)
    np.testing.assert_array_equal(values, want_v)
    np.testing.assert_array_equal(indices, want_i)
    assert indices.dtype == np.int32 and values.dtype == dtype


def test_top_k_static_shape_and_errors(mode):
    if not mode.eager:
        assert sort_ops.top_k(sf.constant(X), 2).values.shape.as_list() == [2, 2, 2]
    with pytest.raises(errors.InvalidArgumentError, match=r"TopKV2.*k = 6 is not in \[0, 5\]"):
        mode.evaluate(sort_ops.top_k(X, 6))
    with pytest.raises(errors.InvalidArgumentError, match="TopKV2.*rank >= 1"):
        mode.evaluate(sort_ops.top_k(np.float64(1.0), 1))


def test_top_k_gradient(mode):
    x = np.random.default_rng(0).normal(size=(2, 3, 5))
    check_gradients(mode, lambda t: sort_ops.top_k(t * t, 3).values, [x])


@pytest.mark.parametrize("axis", [-1, 0, 1])
@pytest.mark.parametrize("direction", ["ASCENDING", "DESCENDING"])
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.uint8])
def test_sort_and_argsort(mode, axis, direction, dtype):
    x = np.abs(X).astype(dtype) if dtype == np.uint8 else X.astype(dtype)
    got = mode.evaluate(sort_ops.sort(x, axis=axis, direction=direction))
    order = mode.evaluate(sort_ops.argsort(x, axis=axis, direction=direction))
    key = x if direction == "ASCENDING" else -x.astype(np.float64)
    want_order = np.argsort(key, axis=axis, kind="stable")       # stable: ties keep index order
    np.testing.assert_array_equal(order, want_order)
    want = np.sort(x, axis=axis)
    np.testing.assert_array_equal(got, want if direction == "ASCENDING" else np.flip(want, axis=axis))
    assert got.dtype == dtype and order.dtype == np.int32


def test_sort_gradient(mode):
    x = np.random.default_rng(1).normal(size=(3, 4))
    check_gradients(mode, lambda t: sort_ops.sort(t, axis=0) * np.arange(12.0).reshape(3, 4), [x])


def test_sort_errors():
    with pytest.raises(ValueError, match="direction"):
        sort_ops.sort([1.0, 2.0], direction="UP")
    with pytest.raises(ValueError, match="axis"):
        sort_ops.sort([1.0, 2.0], axis=1)


def test_boolean_mask_values(mode):
    x = np.arange(24.0).reshape(2, 3, 4)
    m2 = np.array([[True, False, True], [False, False, True]])
    np.testing.assert_array_equal(mode.evaluate(sort_ops.boolean_mask(x, m2)), x[m2])
    m1 = np.array([False, True, True, False])
    np.testing.assert_array_equal(mode.evaluate(sort_ops.boolean_mask(x, m1, axis=2)), x[:, :, m1])
    np.testing.assert_array_equal(mode.evaluate(sort_ops.boolean_mask(x, np.zeros(2, bool))), np.zeros((0, 3, 4)))


def test_boolean_mask_gradient(mode):
    m = np.array([[True, False, True], [False, True, True]])
    check_gradients(mode, lambda t: sort_ops.boolean_mask(t * t, m), [np.arange(12.0).reshape(2, 3, 2) / 7])


def test_boolean_mask_errors():
    with pytest.raises(ValueError, match="incompatible"):
        sort_ops.boolean_mask(np.zeros((2, 3)), np.array([True, False, True]))
    with pytest.raises(TypeError, match="bool"):
        sort_ops.boolean_mask(np.zeros(3), np.array([1, 0, 1]))

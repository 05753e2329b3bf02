"""scatter_nd and tensor_scatter_nd_*: values against NumPy references (duplicates), gradients
against numerical Jacobians in both modes, errors."""
import numpy as np
import pytest

import reference as R
import segflow as sf
from segflow.framework import errors
from segflow.ops import array_ops
from segflow._ops import scatter as scatter_ops
from gradcheck import check_gradients


IND = np.array([[[1, 0], [2, 1]], [[1, 0], [0, 0]]])           # (1, 0) twice
UPD = np.arange(16, dtype=np.float64).reshape(2, 2, 4) + 1.0    # slices of shape [4]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_scatter_nd_values_duplicates_add(mode, dtype):
    got = mode.evaluate(scatter_ops.scatter_nd(IND, UPD.astype(dtype), [3, 2, 4]))
    want = R.scatter_nd(IND, UPD.astype(dtype), (3, 2, 4))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


def test_scatter_nd_full_depth_and_empty(mode):
    ind = np.array([[0, 1], [1, 1], [0, 1]], np.int64)
    got = mode.evaluate(sf.scatter_nd(ind, np.array([1.0, 2.0, 3.0]), np.array([2, 2], np.int64)))
    np.testing.assert_array_equal(got, [[0, 4], [0, 2]])
    got = mode.evaluate(sf.scatter_nd(np.zeros((0, 1), np.int32), np.zeros((0, 3)), [2, 3]))
    np.testing.assert_array_equal(got, np.zeros((2, 3)))


def test_scatter_nd_static_shape():
    with sf.Graph().as_default():
        out = sf.scatter_nd(sf.constant([[0], [2]]), sf.ones([2, 5]), [4, 5])
        assert out.shape.as_list() == [4, 5]


def test_scatter_nd_errors(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"ScatterNd.*indices\[1\] = \[3\] does not index"):
        mode.evaluate(sf.scatter_nd(np.array([[0], [3]]), np.ones(2), [3]))
    with pytest.raises(errors.InvalidArgumentError, match="ScatterNd.*updates"):
        mode.evaluate(sf.scatter_nd(np.array([[0], [1]]), np.ones((2, 2)), [3, 3]))


def test_scatter_nd_gradient(mode):
    check_gradients(mode, lambda u: scatter_ops.scatter_nd(IND, u * u, [3, 2, 4]), [UPD / 10.0])


def test_gather_nd_gradient_uses_scatter_nd(mode):
    ind = np.array([[1, 1], [0, 2], [1, 1]])
    check_gradients(mode, lambda p: array_ops.gather_nd(p, ind) * 2.0, [np.arange(6.0).reshape(2, 3)])


@pytest.mark.parametrize("how,fn", [("update", scatter_ops.tensor_scatter_nd_update),
                                    ("add", scatter_ops.tensor_scatter_nd_add),
                                    ("sub", scatter_ops.tensor_scatter_nd_sub)])
def test_tensor_scatter_values(mode, how, fn):
    base = np.arange(24, dtype=np.float64).reshape(3, 2, 4)
    got = mode.evaluate(fn(base, IND, UPD))
    np.testing.assert_array_equal(got, getattr(R, f"tensor_scatter_nd_{how}")(base, IND, UPD))


@pytest.mark.parametrize("fn", [scatter_ops.tensor_scatter_nd_update, scatter_ops.tensor_scatter_nd_add,
                                scatter_ops.tensor_scatter_nd_sub])
def test_tensor_scatter_gradients(mode, fn):
    base = np.random.default_rng(0).normal(size=(3, 2, 4))
    check_gradients(mode, lambda t, u: fn(t, IND, u) * 1.5, [base, UPD / 7.0])


def test_tensor_scatter_out_of_range_names_position(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"TensorScatterAdd.*indices\[1\] = \[-1, 0\]"):
        mode.evaluate(sf.tensor_scatter_nd_add(np.zeros((2, 2)), np.array([[0, 0], [-1, 0]]), np.ones(2)))

"""gather_ops: gather (axis 0 -> IndexedSlices gradient; other axes and batch_dims -> dense) and
gather_nd. Values against NumPy, gradients against numerical Jacobians in both modes."""
import numpy as np
import pytest

import reference as R
import segflow as sf
from segflow.framework import errors, ops
from gradcheck import check_gradients

RNG = np.random.default_rng(0)
P = np.arange(24, dtype=np.float64).reshape(4, 3, 2)
PR = RNG.normal(size=(4, 3, 2))


def gradient(mode, f, x):
    """The gradient of sum(f(x)) w.r.t. x, unevaluated (an IndexedSlices stays one)."""
    x = sf.constant(x)
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = sf.reduce_sum(f(x))
        return tape.gradient(y, x)
    return sf.gradients(sf.reduce_sum(f(x)), x)[0]


# -- gather values
def check_gradient(mode, f, *xs, tol=1e-6):
    check_gradients(mode, f, xs, tol=tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_])
def test_gather_axis0_dtypes(mode, dtype):
    params = (P % 3).astype(dtype)
    idx = np.array([3, 0, 3, 1])
    got = mode.evaluate(sf.gather(params, idx))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, params[idx])


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("idx_dtype", [np.int32, np.int64])
def test_gather_axes(mode, axis, idx_dtype):
    idx = np.array([[1, 0], [1, 1], [0, 1]], idx_dtype)
    got = mode.evaluate(sf.gather(P, idx, axis=axis))
    np.testing.assert_array_equal(got, np.take(P, idx, axis=axis))


def test_gather_scalar_and_empty_indices(mode):
    np.testing.assert_array_equal(mode.evaluate(sf.gather(P, 2)), P[2])
    got = mode.evaluate(sf.gather(P, np.zeros((0,), np.int32), axis=1))
    assert got.shape == (4, 0, 2)


@pytest.mark.parametrize("axis,batch_dims", [(1, 1), (2, 1), (2, 2), (-1, 1), (1, -1)])
def test_gather_batch_dims(mode, axis, batch_dims):
    params = np.arange(4 * 3 * 5, dtype=np.float64).reshape(4, 3, 5)
    idx = np.array([[0, 2], [1, 1], [2, 0], [1, 2]]) if batch_dims != 2 else \
        RNG.integers(0, 5, size=(4, 3, 2))
    bd = batch_dims % idx.ndim if batch_dims < 0 else batch_dims
    got = mode.evaluate(sf.gather(params, idx, axis=axis, batch_dims=batch_dims))
    np.testing.assert_array_equal(got, R.gather(params, idx, axis % 3, bd))


def test_batch_gather(mode):
    params = np.arange(24.0).reshape(2, 3, 4)
    idx = np.array([[[0, 3], [1, 1], [2, 0]], [[3, 3], [0, 1], [2, 2]]])
    got = mode.evaluate(sf.batch_gather(params, idx))
    np.testing.assert_array_equal(got, np.take_along_axis(params, idx, axis=2))


def test_gather_static_shape_graph():
    with sf.Graph().as_default():
        p = sf.placeholder(sf.float32, [None, 3, 2])
        i = sf.placeholder(sf.int32, [5, 7])
        assert sf.gather(p, i, axis=1).shape.as_list() == [None, 5, 7, 2]
        assert sf.gather(p, i).shape.as_list() == [5, 7, 3, 2]


def test_gather_errors(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"GatherV2.*input 'indices'.*indices\[1\] = 4 is not in \[0, 4\)"):
        mode.evaluate(sf.gather(P, [0, 4]))
    with pytest.raises(errors.InvalidArgumentError, match=r"GatherV2.*input 'indices'.*indices\[0,1\] = -1"):
        mode.evaluate(sf.gather(P, [[0, -1]], axis=1))
    with pytest.raises(errors.InvalidArgumentError, match=r"GatherV2.*input 'indices'.*float32.*int32, int64"):
        mode.evaluate(sf.gather(P, [0.0, 1.0]))
    with pytest.raises(errors.InvalidArgumentError, match=r"GatherV2.*input 'axis'.*out of range"):
        mode.evaluate(sf.gather(P, [0], axis=3))


def test_gather_error_at_run_time_names_node():
    with sf.Graph().as_default():
        i = sf.placeholder(sf.int32, [None])
        y = sf.gather(sf.constant(P), i, name="lookup")
        with sf.Session() as sess:
            with pytest.raises(errors.InvalidArgumentError, match=r"GatherV2 'lookup'.*indices\[2\] = 9"):
                sess.run(y, {i: [0, 1, 9]})


# -- gather gradients
def test_gather_axis0_gradient_is_indexed_slices(mode):
    idx = np.array([[3, 0], [3, 1]])
    g = gradient(mode, lambda x: sf.gather(x, idx) * np.arange(12.0).reshape(2, 2, 3, 1), P)
    assert isinstance(g, ops.IndexedSlices)
    v = mode.evaluate(g)
    np.testing.assert_array_equal(v.indices, [3, 0, 3, 1])
    np.testing.assert_array_equal(v.dense_shape, [4, 3, 2])
    assert v.values.shape == (4, 3, 2)
    dense = np.zeros_like(P)
    np.add.at(dense, v.indices, v.values)
    want = np.zeros_like(P)
    np.add.at(want, idx.reshape(-1), np.broadcast_to(np.arange(12.0).reshape(4, 3, 1), (4, 3, 2)))
    np.testing.assert_array_equal(dense, want)


def test_gather_axis0_gradient(mode):
    idx = np.array([2, 0, 2, 2])
    w = RNG.normal(size=(4, 3, 2))
    check_gradient(mode, lambda x: sf.gather(x, idx) * w, PR)


@pytest.mark.parametrize("inner", [[2, 0, 3], [[2, 0], [3, 3]]], ids=["rank1", "rank2"])
def test_gather_of_gather_gradient_stays_sparse(mode, inner):
    # The outer gather's IndexedSlices gradient flows into the inner gather as rows of its output.
    inner = np.array(inner)
    outer = np.array([1, 1, 0])
    g = gradient(mode, lambda x: sf.gather(sf.gather(x, inner), outer), P)
    assert isinstance(g, ops.IndexedSlices)
    v = mode.evaluate(g)
    dense = np.zeros_like(P)
    np.add.at(dense, v.indices, v.values)
    want = np.zeros_like(P)
    np.add.at(want, inner[outer].reshape(-1), 1.0)
    np.testing.assert_array_equal(dense, want)
    w = RNG.normal(size=(3,) + inner.shape[1:] + (3, 2))
    check_gradient(mode, lambda x: sf.gather(sf.gather(x, inner), outer) * w, PR)


@pytest.mark.parametrize("axis", [1, 2, -1])
def test_gather_other_axes_gradient_is_dense(mode, axis):
    idx = np.array([[1, 0], [1, 1]])
    g = gradient(mode, lambda x: sf.gather(x, idx, axis=axis), P)
    assert not isinstance(g, ops.IndexedSlices)
    want = np.zeros_like(P)
    counts = np.bincount(idx.reshape(-1), minlength=P.shape[axis])
    shape = [1, 1, 1]
    shape[axis] = -1
    want += counts[: P.shape[axis]].reshape(shape)
    np.testing.assert_array_equal(mode.evaluate(g), want)


@pytest.mark.parametrize("axis", [1, 2, -1])
def test_gather_other_axes_gradient(mode, axis):
    idx = np.array([[1, 0], [1, 1], [0, 0]])
    w = RNG.normal(size=np.take(PR, idx, axis=axis).shape)
    check_gradient(mode, lambda x: sf.gather(x, idx, axis=axis) * w, PR)


@pytest.mark.parametrize("axis,batch_dims", [(1, 1), (2, 1), (2, 2)])
def test_gather_batch_dims_gradient(mode, axis, batch_dims):
    params = RNG.normal(size=(3, 2, 4))
    n = params.shape[axis]
    idx = np.array([[0, n - 1], [1, 1], [n - 1, n - 1]]) if batch_dims == 1 else RNG.integers(0, n, size=(3, 2, 2))
    w = RNG.normal(size=R.gather(params, idx, axis, batch_dims).shape)
    check_gradient(mode, lambda x: sf.gather(x, idx, axis=axis, batch_dims=batch_dims) * w, params)


def test_gather_second_order(mode):
    # d sum(gather(x)^2)/dx = 2 * (densified rows); its gradient runs through UnsortedSegmentSum.
    idx = np.array([1, 1, 3])

    def g(x):
        if sf.executing_eagerly():
            with sf.GradientTape() as tape:
                tape.watch(x)
                y = sf.reduce_sum(sf.square(sf.gather(x, idx)))
            return sf.convert_to_tensor(tape.gradient(y, x))
        return sf.convert_to_tensor(sf.gradients(sf.reduce_sum(sf.square(sf.gather(x, idx))), x)[0])
    check_gradient(mode, g, RNG.normal(size=(4, 2)))


# -- gather_nd
@pytest.mark.parametrize("indices", [[[0, 1], [3, 2]], [[1], [0], [1]], [[[0, 1, 1]], [[2, 2, 0]]], [[2]],
                                     np.zeros((0, 2), np.int32)],
                         ids=["pairs", "rows", "full-depth", "one-row", "empty"])
def test_gather_nd(mode, indices):
    got = mode.evaluate(sf.gather_nd(P, np.asarray(indices, np.int32)))
    want = R.gather_nd(P, indices)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_gather_nd_batch_dims(mode):
    params = np.arange(24.0).reshape(2, 3, 4)
    idx = np.array([[[1], [0]], [[2], [2]]])
    got = mode.evaluate(sf.gather_nd(params, idx, batch_dims=1))
    want = R.gather_nd(params, idx, batch_dims=1)
    np.testing.assert_array_equal(got, want)


def test_gather_nd_errors(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"GatherNd.*input 'indices'.*\[1, 3\] does not index"):
        mode.evaluate(sf.gather_nd(P, [[0, 0], [1, 3]]))
    with pytest.raises(errors.InvalidArgumentError, match=r"GatherNd.*input 'indices'.*index depth 4"):
        mode.evaluate(sf.gather_nd(P, [[0, 0, 0, 0]]))


def test_gather_nd_gradient(mode):
    idx = np.array([[0, 1], [3, 2], [0, 1]])      # repeated index: gradients add up
    w = RNG.normal(size=(3, 2))
    check_gradient(mode, lambda x: sf.gather_nd(x, idx) * w, PR)

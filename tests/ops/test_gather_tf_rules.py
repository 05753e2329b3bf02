"""gather: shapes with an axis known only at run time, gradients when ranks are unknown,
batch_dims=None, and TF's wording of bad indices and dtypes. Checked against NumPy."""
import numpy as np
import pytest

import segflow as sf
from segflow.framework import errors
from segflow.ops import gradient_checker_v2


def test_unknown_axis_keeps_the_rank():
    with sf.Graph().as_default():
        params = sf.constant([[0, 1, 2]])
        axis = sf.compat.v1.placeholder(sf.int32)
        t = sf.gather(params, sf.constant([[0, 0], [0, 0]]), axis=axis)
        assert t.shape.as_list() == [None, None, None]       # rank 2 + rank 2 - 1
        t = sf.gather(params, sf.constant([[0, 0], [0, 0]]), axis=axis, batch_dims=1)
        assert t.shape.as_list() == [None, None]             # batch dims are shared
        assert sf.gather(params, sf.compat.v1.placeholder(sf.int32), axis=axis).shape.rank is None
        with sf.Session() as sess:
            got = sess.run(sf.gather(params, [[2, 0]], axis=axis), {axis: 1})
    np.testing.assert_array_equal(got, np.take([[0, 1, 2]], [[2, 0]], axis=1))


def test_batch_dims_none_means_zero(mode):
    got = mode.evaluate(sf.gather([[10, 11, 12], [13, 14, 15]], [1, 0], axis=1, batch_dims=None))
    np.testing.assert_array_equal(got, [[11, 10], [14, 13]])


def test_bad_index_wording(mode):
    params = [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(errors.InvalidArgumentError, match=r"GatherV2.*'indices'.*indices\[0,0\] = 7 is not in \[0, 2\)"):
        mode.evaluate(sf.gather(params, [[7]], axis=0))
    with pytest.raises(errors.InvalidArgumentError, match=r"GatherV2.*'indices'.*indices\[0,0\] = 7 is not in \[0, 3\)"):
        mode.evaluate(sf.gather(params, [[7]], axis=1))


def test_bad_axis_wording(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"GatherV2.*'axis'.*axis 2 is out of range for params of "
                                                          r"rank 1: Shape must be at least rank 3 but is rank 1"):
        mode.evaluate(sf.gather([0, 1, 2], 0, axis=2))
    with pytest.raises(errors.InvalidArgumentError, match=r"Shape must be at least rank 2 but is rank 1"):
        mode.evaluate(sf.gather([0, 1, 2], 0, axis=-2))


def test_float_indices_wording(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"GatherV2.*'indices'.*float32 is not supported: value for "
                                                          r"attr 'Tindices' of float32 is not in the list of allowed "
                                                          r"values: int16, int32, int64"):
        mode.evaluate(sf.gather([0], 0.0))


CASES = [  # (params shape, indices, axis, batch_dims)
    ((2, 4), [[2, 1], [0, 3]], 1, 1),
    ((2, 2, 2), [[[0, 1], [1, 0]], [[0, 0], [1, 1]]], 2, 2),
    ((2, 4), [2, 1], 1, 1),
    ((2, 2, 3), [[[0, 1, 2, 1, 0]], [[0, 1, 2, 1, 0]]], 2, 1),
    ((2, 3), [1, 0], 1, 0),
    ((2, 3), [[1, 0], [2, 2]], -1, 0),
    ((3, 2), [[2, 2], [0, 1]], 0, 0),
    ((2, 2, 3, 2), [[1, 0], [0, 0]], 2, 1),
]


def _reference(params, indices, axis, batch_dims):
    """np.take along axis, walked over the leading batch_dims dims of params and indices together."""
    if batch_dims == 0:
        return np.take(params, indices, axis=axis)
    return np.stack([_reference(p, i, axis - 1, batch_dims - 1) for p, i in zip(params, indices)])


@pytest.mark.parametrize("shape, indices, axis, batch_dims", CASES)
def test_gradient_when_ranks_are_unknown(shape, indices, axis, batch_dims):
    params = np.arange(1, np.prod(shape) + 1, dtype=np.float64).reshape(shape)
    with sf.Graph().as_default():
        p = sf.compat.v1.placeholder(sf.float64)            # rank unknown: the gradient's dynamic path
        i = sf.compat.v1.placeholder(sf.int32)
        y = sf.gather(p, i, axis=axis, batch_dims=batch_dims)
        dy = sf.compat.v1.placeholder(sf.float64)
        (g,) = sf.gradients(y, [p], grad_ys=dy)
        with sf.Session() as sess:
            value = sess.run(y, {p: params, i: indices})
            np.testing.assert_array_equal(value, _reference(params, np.asarray(indices), axis % len(shape), batch_dims))
            upstream = np.arange(value.size, dtype=np.float64).reshape(value.shape) + 1
            got = sess.run(g, {p: params, i: indices, dy: upstream})
    if isinstance(got, sf.IndexedSlicesValue):              # axis 0: the rows gathered, kept sparse
        dense = np.zeros(shape)
        np.add.at(dense, got.indices, got.values)
        got = dense
    # the gradient is the adjoint of the gather: <gather(x), dy> = <x, grad> for every x
    rng = np.random.default_rng(0)
    for _ in range(3):
        x = rng.standard_normal(shape)
        lhs = np.sum(_reference(x, np.asarray(indices), axis % len(shape), batch_dims) * upstream)
        np.testing.assert_allclose(np.sum(x * got), lhs)


def test_gradient_of_a_traced_gather_with_unknown_shapes():
    params = np.arange(8, dtype=np.float64).reshape(2, 4)

    @sf.function(input_signature=[sf.TensorSpec(shape=None, dtype=sf.float64),
                                  sf.TensorSpec(shape=None, dtype=sf.int32)])
    def gather(p, i):
        return sf.gather(p, i, axis=1, batch_dims=1)
    theoretical, numerical = gradient_checker_v2.compute_gradient(lambda p: gather(p, [[2, 1], [0, 3]]), [params])
    np.testing.assert_allclose(theoretical[0], numerical[0])


def test_negative_batch_dims_with_unknown_indices_rank_has_no_gradient():
    with sf.Graph().as_default():
        p = sf.compat.v1.placeholder(sf.float64, shape=[2, 4])
        i = sf.compat.v1.placeholder(sf.int32)
        y = sf.gather(p, i, axis=1, batch_dims=-1)
        with pytest.raises(ValueError, match=r"Currently, it is unsupported to take the gradient of tf.gather when "
                                             r"batch_dims < 0 and the rank of the indices is unknown"):
            sf.gradients(y, [p])


@pytest.mark.parametrize("op", [sf.compat.v1.scatter_update, sf.compat.v1.scatter_add, sf.compat.v1.scatter_max])
def test_scatter_rows_out_of_range_leave_the_variable_alone(op):
    v = sf.Variable(np.array([1, 2, 3, 4, 5, 6], np.float32))
    updates = np.array([-3, -4, -5], np.float32)
    for bad, where in (([-1, 0, 5], r"indices\[0\] = -1"), ([2, 0, 6], r"indices\[2\] = 6")):
        with pytest.raises(errors.InvalidArgumentError, match=rf"ResourceScatter\w+.*'indices'.*{where} is not in "
                                                              r"\[0, 6\)"):
            op(v, np.array(bad), updates)
        np.testing.assert_array_equal(v.numpy(), [1, 2, 3, 4, 5, 6])


def test_gather_gradient_dense_shape_is_int32_as_tf():
    """TF's gather / sparse_read gradients carry an int32 dense_shape; segflow keeps int64 only
    where a dimension is unknown when the graph is built (it might not fit)."""
    w = sf.Variable([[1.0, 2.0], [3.0, 4.0]])
    t = sf.constant([[1.0, 2.0], [3.0, 4.0]])
    with sf.GradientTape(persistent=True) as tape:
        tape.watch(t)
        a = sf.reduce_sum(sf.gather(w, [0]))
        b = sf.reduce_sum(sf.gather(t, [1, 1]))
    gw, gt = tape.gradient(a, w), tape.gradient(b, t)
    assert gw.dense_shape.dtype == sf.int32 and gw.dense_shape.numpy().tolist() == [2, 2]
    assert gt.dense_shape.dtype == sf.int32 and gt.dense_shape.numpy().tolist() == [2, 2]
    with sf.Graph().as_default():
        p = sf.compat.v1.placeholder(sf.float32, [None, 2])
        (g,) = sf.gradients(sf.reduce_sum(sf.gather(p, [1])), p)
        assert g.dense_shape.dtype == sf.int64

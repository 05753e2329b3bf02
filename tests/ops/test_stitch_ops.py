"""unique, unique_with_counts, dynamic_stitch, dynamic_partition: values against NumPy references,
gradients against numerical Jacobians in both modes, duplicates, errors."""
import numpy as np
import pytest

import reference as R
import segflow as sf
from segflow.framework import errors
from segflow.ops import array_ops, data_flow_ops, math_ops
from segflow._ops import shape as shape_ops
from gradcheck import check_gradients


# -- unique


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_unique_first_appearance_order(mode, dtype):
    x = np.array([7, 3, 7, 1, 3, 3, 9, 1], dtype=dtype)
    y, idx = mode.evaluate(array_ops.unique(x))
    ry, ridx, _ = R.unique_with_counts(x)
    np.testing.assert_array_equal(y, ry)
    np.testing.assert_array_equal(idx, ridx)
    assert y.dtype == dtype and idx.dtype == np.int32
    np.testing.assert_array_equal(y[idx], x)


def test_unique_with_counts_and_int64_idx(mode):
    x = np.array([-2, 5, 5, -2, 0, 5], np.int64)
    out = array_ops.unique_with_counts(x, out_idx=sf.int64)
    y, idx, count = mode.evaluate([out.y, out.idx, out.count])
    ry, ridx, rcount = R.unique_with_counts(x)
    np.testing.assert_array_equal(y, ry)
    np.testing.assert_array_equal(idx, ridx)
    np.testing.assert_array_equal(count, rcount)
    assert idx.dtype == np.int64 and count.dtype == np.int64


def test_unique_random_against_reference(mode):
    x = np.random.default_rng(1).integers(0, 30, size=300)
    y, idx = mode.evaluate(sf.unique(x))
    ry, ridx, _ = R.unique_with_counts(x)
    np.testing.assert_array_equal(y, ry)
    np.testing.assert_array_equal(idx, ridx)


def test_unique_empty(mode):
    y, idx = mode.evaluate(sf.unique(np.zeros(0, np.int32)))
    assert y.shape == (0,) and idx.shape == (0,)


def test_unique_needs_1d(mode):
    with pytest.raises(errors.InvalidArgumentError, match="Unique.*input 'x': .*x must be 1-D, got shape \\(2, 2\\)"):
        mode.evaluate(sf.unique(np.zeros((2, 2), np.int32)))


def test_dedup_indexed_slices_pattern(mode):
    # The optimizers' _apply_sparse: sum the values of repeated indices with unique + unsorted_segment_sum.
    indices = np.array([4, 1, 4, 4, 0])
    values = np.arange(10.0).reshape(5, 2)
    uniq, pos = array_ops.unique(indices)
    summed = math_ops.unsorted_segment_sum(values, pos, array_ops.size(uniq))
    u, s = mode.evaluate([uniq, summed])
    np.testing.assert_array_equal(u, [4, 1, 0])
    np.testing.assert_array_equal(s, [[0 + 4 + 6, 1 + 5 + 7], [2, 3], [8, 9]])


# -- dynamic_stitch


def test_dynamic_stitch_values(mode):
    indices = [np.array(6), np.array([4, 1]), np.array([[5, 2], [0, 3]])]
    data = [np.array([61.0, 62.0]), np.array([[41.0, 42.0], [11.0, 12.0]]),
            np.array([[[51.0, 52.0], [21.0, 22.0]], [[1.0, 2.0], [31.0, 32.0]]])]
    got = mode.evaluate(data_flow_ops.dynamic_stitch(indices, data))
    np.testing.assert_array_equal(got, R.dynamic_stitch(indices, data))
    np.testing.assert_array_equal(got[:, 0], [1, 11, 21, 31, 41, 51, 61])


def test_dynamic_stitch_duplicates_later_wins_and_gaps_are_zero(mode):
    indices = [np.array([0, 4, 4]), np.array([4, 2, 0, 2])]
    data = [np.array([1, 2, 3], np.int32), np.array([4, 5, 6, 7], np.int32)]
    for fn in (data_flow_ops.dynamic_stitch, data_flow_ops.parallel_dynamic_stitch):
        got = mode.evaluate(fn(indices, data))
        np.testing.assert_array_equal(got, R.dynamic_stitch(indices, data))
        np.testing.assert_array_equal(got, [6, 0, 7, 0, 4])


def test_dynamic_stitch_static_shape():
    with sf.Graph().as_default():
        out = sf.dynamic_stitch([sf.constant([0, 3]), sf.constant([1])], [sf.ones([2, 5]), sf.ones([1, 5])])
        assert out.shape.as_list() == [4, 5]


def test_dynamic_stitch_errors(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"DynamicStitch.*indices\[1\]\[0\] = -1 is negative"):
        mode.evaluate(sf.dynamic_stitch([np.array([0]), np.array([-1])], [np.ones(1), np.ones(1)]))
    with pytest.raises(errors.InvalidArgumentError, match="DynamicStitch.*data"):
        mode.evaluate(sf.dynamic_stitch([np.array([0, 1])], [np.ones((3, 2))]))


def test_dynamic_stitch_gradient_with_duplicates(mode):
    # Entries overwritten later (across lists and within one) get zero gradient.
    indices = [np.array([0, 3, 3]), np.array([[3, 1], [0, 5]])]
    d0 = np.random.default_rng(2).normal(size=(3, 2))
    d1 = np.random.default_rng(3).normal(size=(2, 2, 2))

    def f(a, b):
        return data_flow_ops.dynamic_stitch(indices, [a, b]) * 1.5

    check_gradients(mode, f, [d0, d1])


def test_dynamic_stitch_gradient_values(mode):
    indices = [np.array([1, 1]), np.array([0, 1])]
    a = sf.constant([[1.0], [2.0]], dtype=sf.float64)
    b = sf.constant([[3.0], [4.0]], dtype=sf.float64)
    w = np.array([[10.0], [20.0]])
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch([a, b])
            y = sf.reduce_sum(sf.dynamic_stitch(indices, [a, b]) * w)
        ga, gb = tape.gradient(y, [a, b])
    else:
        y = sf.reduce_sum(sf.dynamic_stitch(indices, [a, b]) * w)
        ga, gb = sf.gradients(y, [a, b])
    ga, gb = mode.evaluate([ga, gb])
    np.testing.assert_array_equal(ga, [[0.0], [0.0]])
    np.testing.assert_array_equal(gb, [[10.0], [20.0]])


def test_dynamic_stitch_gradient_second_order(mode):
    indices = [np.array([2, 0]), np.array([0, 1])]

    def f(a, b):
        return data_flow_ops.dynamic_stitch(indices, [a * a, b * a])

    check_gradients(mode, f, [np.array([0.5, -1.5]), np.array([2.0, 3.0])])


# -- dynamic_partition


def test_dynamic_partition_values(mode):
    data = np.arange(12.0).reshape(6, 2)
    parts = np.array([2, 0, 2, 1, 0, 2])
    got = mode.evaluate(sf.dynamic_partition(data, parts, 4))
    for p in range(4):
        np.testing.assert_array_equal(got[p], data[parts == p])


def test_dynamic_partition_then_stitch_round_trip(mode):
    data = np.random.default_rng(4).normal(size=(7, 3))
    parts = np.array([1, 0, 1, 1, 2, 0, 2])
    pieces = sf.dynamic_partition(data, parts, 3)
    positions = sf.dynamic_partition(np.arange(7), parts, 3)
    np.testing.assert_array_equal(mode.evaluate(sf.dynamic_stitch(positions, pieces)), data)


def test_dynamic_partition_out_of_range(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"DynamicPartition.*partitions\[1\] = 3 is not in \[0, 3\)"):
        mode.evaluate(sf.dynamic_partition(np.ones(2), np.array([0, 3], np.int32), 3))


def test_dynamic_partition_gradient(mode):
    parts = np.array([[1, 0], [1, 1], [0, 2]])

    def f(x):
        a, b, c = sf.dynamic_partition(x, parts, 3)
        return sf.concat([a * 2.0, b * b, c], 0)

    check_gradients(mode, f, [np.random.default_rng(5).normal(size=(3, 2, 2))])


def _stitch_grad_by_composition(op, grad):
    # A user-level DynamicStitch gradient written with public ops, in the style of the seed code:
    # data[i] gets grad gathered at indices[i], with the rows that later lists overwrite zeroed by
    # stitching zeros over them.
    n = len(op.inputs) // 2
    idxs = [shape_ops.reshape(math_ops.cast(op.inputs[i], sf.int32), (-1,)) for i in range(n)]
    zeros = array_ops.zeros_like(grad)
    idx_zeros = [zeros[:array_ops.shape(x)[0]] for x in idxs]
    grad_range = math_ops.range(array_ops.shape(grad)[0])
    values_grad = []
    for i in range(n):
        v_grad = grad if i == n - 1 else data_flow_ops.dynamic_stitch([grad_range] + idxs[i + 1:],
                                                                      [grad] + idx_zeros[i + 1:])
        values_grad.append(array_ops.gather(v_grad, math_ops.cast(op.inputs[i], sf.int32)))
    return [None] * n + values_grad


def test_user_stitch_gradient_by_composition_runs_and_agrees():
    # Overwrites across lists only (no duplicate inside one list): both gradients must agree.
    if "UserStitchGrad" not in sf.framework.ops._gradient_registry:
        sf.RegisterGradient("UserStitchGrad")(_stitch_grad_by_composition)
    indices = [np.array([0, 3]), np.array([[3, 1]]), np.array([1, 4])]
    data = [np.arange(4.0).reshape(2, 2), np.arange(4.0).reshape(1, 2, 2) + 10, np.arange(4.0).reshape(2, 2) + 20]
    w = np.arange(10.0).reshape(5, 2) + 1
    g = sf.Graph()
    with g.as_default(), sf.Session() as sess:
        xs = [sf.constant(d) for d in data]
        y = sf.reduce_sum(sf.dynamic_stitch(indices, xs) * w)
        ours = sf.gradients(y, xs)
        with g.gradient_override_map({"DynamicStitch": "UserStitchGrad"}):
            y2 = sf.reduce_sum(sf.dynamic_stitch(indices, xs) * w)
        theirs = sf.gradients(y2, xs)
        for a, b in zip(sess.run(ours), sess.run(theirs)):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(sess.run(ours[0]), [[1, 2], [0, 0]])

"""The TensorFlow code segflow started from (../shared/seeds/), rewritten against segflow's imports:
each test runs the seed's calls and checks the numbers against NumPy computed independently."""
import numpy as np
import pytest

from segflow.client import session
from segflow.eager import backprop
from segflow.eager import context
from segflow.framework import constant_op
from segflow.framework import dtypes, ops
from segflow.framework import tensor_util
from segflow.ops import array_ops, data_flow_ops, math_ops, nn_impl, state_ops
from segflow.ops import control_flow_ops, embedding_ops, gradient_checker, gradients, variables

RNG = np.random.default_rng(7)


def test_kmeans_full_batch_update():
    # The k-means full-batch step: per-cluster sums and counts via unsorted_segment_sum, colocated.
    num_clusters = 3
    x1 = RNG.normal(size=(6, 2)).astype(np.float32)
    x2 = RNG.normal(size=(4, 2)).astype(np.float32)
    idx1 = np.array([0, 1, 0, 2, 1, 0])
    idx2 = np.array([2, 2, 0, 1])
    with ops.Graph().as_default():
        inputs = [constant_op.constant(x1), constant_op.constant(x2)]
        cluster_idx_list = [constant_op.constant(idx1), constant_op.constant(idx2)]
        cluster_centers = variables.Variable(np.zeros((num_clusters, 2), np.float32))
        cluster_sums, cluster_counts = [], []
        epsilon = constant_op.constant(1e-6, dtype=inputs[0].dtype)
        for inp, cluster_idx in zip(inputs, cluster_idx_list):
            with ops.colocate_with(inp):
                cluster_sums.append(math_ops.unsorted_segment_sum(inp, cluster_idx, num_clusters))
                cluster_counts.append(math_ops.unsorted_segment_sum(
                    array_ops.reshape(array_ops.ones(array_ops.reshape(array_ops.shape(inp)[0], [-1])), [-1, 1]),
                    cluster_idx, num_clusters))
        with ops.colocate_with(cluster_centers):
            new_centers = math_ops.add_n(cluster_sums) / (
                math_ops.cast(math_ops.add_n(cluster_counts), cluster_sums[0].dtype) + epsilon)
            new_centers = nn_impl.l2_normalize(new_centers, dim=1)
        train = state_ops.assign(cluster_centers, new_centers)
        with session.Session() as sess:
            sess.run(variables.global_variables_initializer())
            sess.run(train)
            got = sess.run(cluster_centers)
    data = np.concatenate([x1, x2]).astype(np.float64)
    ids = np.concatenate([idx1, idx2])
    sums = np.zeros((num_clusters, 2))
    np.add.at(sums, ids, data)
    counts = np.bincount(ids, minlength=num_clusters)[:, None]
    expected = sums / (counts + 1e-6)
    expected /= np.sqrt(np.maximum(np.sum(expected ** 2, axis=1, keepdims=True), 1e-12))
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_boosted_trees_partition_statistics():
    # The split handler's active_inputs(): gather, unique, float64 segment sums, bias rows, stack.
    bias_feature_id = -1
    gradients_np = RNG.normal(size=(5, 1)).astype(np.float32)
    hessians_np = RNG.uniform(size=(5, 1)).astype(np.float32)
    partition_np = np.array([3, 1, 3, 3, 7], np.int32)
    sparse_indices_np = np.array([[0, 0], [2, 0], [2, 1], [4, 0]], np.int64)
    sparse_values_np = np.array([10, 11, 12, 13], np.int64)
    with ops.Graph().as_default():
        gradients_t = constant_op.constant(gradients_np)
        hessians_t = constant_op.constant(hessians_np)
        example_partition_ids = constant_op.constant(partition_np)
        sparse_indices = constant_op.constant(sparse_indices_np)
        sparse_values = constant_op.constant(sparse_values_np)
        example_indices, _ = array_ops.split(sparse_indices, num_or_size_splits=2, axis=1)
        example_indices = array_ops.squeeze(example_indices, [1])
        filtered_gradients = array_ops.gather(gradients_t, example_indices)
        filtered_hessians = array_ops.gather(hessians_t, example_indices)
        filtered_partition_ids = array_ops.gather(example_partition_ids, example_indices)
        unique_partitions, mapped_partitions = array_ops.unique(example_partition_ids)
        gradients64 = math_ops.cast(gradients_t, dtypes.float64)
        hessians64 = math_ops.cast(hessians_t, dtypes.float64)
        per_partition_gradients = math_ops.unsorted_segment_sum(gradients64, mapped_partitions,
                                                                array_ops.size(unique_partitions))
        per_partition_hessians = math_ops.unsorted_segment_sum(hessians64, mapped_partitions,
                                                               array_ops.size(unique_partitions))
        per_partition_gradients = math_ops.cast(per_partition_gradients, dtypes.float32)
        per_partition_hessians = math_ops.cast(per_partition_hessians, dtypes.float32)
        bias_feature_ids = array_ops.fill(array_ops.shape(unique_partitions), bias_feature_id)
        bias_feature_ids = math_ops.cast(bias_feature_ids, dtypes.int64)
        partition_ids = array_ops.concat([unique_partitions, filtered_partition_ids], 0)
        filtered_gradients = array_ops.concat([per_partition_gradients, filtered_gradients], 0)
        filtered_hessians = array_ops.concat([per_partition_hessians, filtered_hessians], 0)
        feature_ids = array_ops.concat([bias_feature_ids, sparse_values], 0)
        dimension_ids = array_ops.zeros_like(feature_ids, dtype=dtypes.int64)
        feature_ids_and_dimensions = array_ops.stack([feature_ids, dimension_ids], axis=1)
        with session.Session() as sess:
            p, f, g, h = sess.run([partition_ids, feature_ids_and_dimensions, filtered_gradients, filtered_hessians])
    uniq = np.array([3, 1, 7])                  # order of first appearance
    mapped = np.array([0, 1, 0, 0, 2])
    ex = sparse_indices_np[:, 0]
    g_sum = np.zeros((3, 1))
    h_sum = np.zeros((3, 1))
    np.add.at(g_sum, mapped, gradients_np.astype(np.float64))
    np.add.at(h_sum, mapped, hessians_np.astype(np.float64))
    np.testing.assert_array_equal(p, np.concatenate([uniq, partition_np[ex]]))
    np.testing.assert_array_equal(f, np.stack([np.concatenate([[-1, -1, -1], sparse_values_np]),
                                               np.zeros(7, np.int64)], axis=1))
    np.testing.assert_allclose(g, np.concatenate([g_sum, gradients_np[ex]]).astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(h, np.concatenate([h_sum, hessians_np[ex]]).astype(np.float32), rtol=1e-6)


def _dynamic_stitch_grads(op, grad):
    # The seed's user-written DynamicStitch gradient, verbatim apart from imports.
    num_values = len(op.inputs) // 2
    indices_grad = [None] * num_values

    def AsInt32(x):
        return (x if op.inputs[0].dtype == dtypes.int32 else math_ops.cast(x, dtypes.int32))

    idxs = [AsInt32(array_ops.reshape(op.inputs[i], (-1,))) for i in range(num_values)]
    if isinstance(grad, ops.IndexedSlices):
        output_shape = array_ops.shape(op.outputs[0])
        output_rows = output_shape[0]
        grad = math_ops.unsorted_segment_sum(grad.values, grad.indices, output_rows)
    values_grad = []
    zeros = array_ops.zeros_like(grad)
    idx_zeros = [zeros[:array_ops.shape(x)[0]] for x in idxs]
    grad_range = math_ops.range(array_ops.shape(grad)[0])
    for i in range(num_values):
        if i == num_values - 1:
            v_grad = grad
        else:
            v_grad = data_flow_ops.dynamic_stitch([grad_range] + idxs[i + 1:], [grad] + idx_zeros[i + 1:])
        v_grad = array_ops.gather(v_grad, AsInt32(op.inputs[i]))
        values_grad += [v_grad]
    return indices_grad + values_grad


def test_user_dynamic_stitch_gradient_matches_registered_one():
    # Indices overlap: later entries win, so overwritten data rows must get zero gradient.
    idx = [np.array([0, 2]), np.array([2, 3]), np.array([1])]
    data_np = [RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3)), RNG.normal(size=(1, 3))]
    upstream = RNG.normal(size=(4, 3))
    with ops.Graph().as_default():
        data = [constant_op.constant(d) for d in data_np]
        y = data_flow_ops.dynamic_stitch([constant_op.constant(i) for i in idx], data)
        g = constant_op.constant(upstream)
        mine = _dynamic_stitch_grads(y.op, g)[3:]
        registered = gradients.gradients(y, data, grad_ys=g)
        with session.Session() as sess:
            mine_v, reg_v = sess.run([mine, [ops.convert_to_tensor(r) for r in registered]])
    expected = [upstream[[0, 2]].copy(), upstream[[2, 3]].copy(), upstream[[1]].copy()]
    expected[0][1] = 0.0   # row 2 of the output was overwritten by data[1]
    for m, r, e in zip(mine_v, reg_v, expected):
        np.testing.assert_allclose(m, e)
        np.testing.assert_allclose(r, e)


def test_tile_gradient_with_indexed_slices_upstream():
    # The seed's _TileGrad path for IndexedSlices: segment sums of values by index mod rows.
    x_np = RNG.normal(size=(2, 3))
    with ops.Graph().as_default():
        x = constant_op.constant(x_np)
        t = array_ops.tile(x, [3, 2])
        picked = array_ops.gather(t, [0, 5, 3, 0])
        loss = math_ops.reduce_sum(picked * constant_op.constant(np.arange(24.0).reshape(4, 6)))
        g = gradients.gradients(loss, x)[0]
        with session.Session() as sess:
            got = sess.run(g)
    w = np.arange(24.0).reshape(4, 6)
    expected = np.zeros((2, 3))
    for row, tile_row in enumerate([0, 5, 3, 0]):
        for col in range(6):
            expected[tile_row % 2, col % 3] += w[row, col]
    np.testing.assert_allclose(got, expected)


@pytest.mark.parametrize("axis", [0, 1])
def test_gather_v2_gradient_axis_zero_sparse_other_axes_dense(axis):
    params_np = RNG.normal(size=(4, 3))
    indices = np.array([2, 0, 2])
    with ops.Graph().as_default():
        params = constant_op.constant(params_np)
        y = array_ops.gather(params, indices, axis=axis)
        g = gradients.gradients(y, params)[0]
        if axis == 0:
            assert isinstance(g, ops.IndexedSlices)
            assert tensor_util.constant_value(g.dense_shape).tolist() == [4, 3]
        dense = ops.convert_to_tensor(g)
        with session.Session() as sess:
            got = sess.run(dense)
    expected = np.zeros((4, 3))
    if axis == 0:
        np.add.at(expected, indices, np.ones((3, 3)))
    else:
        np.add.at(expected.T, indices, np.ones((3, 4)))
    np.testing.assert_allclose(got, expected)


def test_unsorted_segment_sum_gradient_matches_segment_sum():
    # The seed's testGradientMatchesSegmentSum: same Jacobians for sorted, contiguous ids.
    indices = [0, 0, 1, 1, 1, 2, 3, 4, 5]
    shape = [len(indices), 2]
    num_segments = max(indices) + 1
    x_np = RNG.normal(size=shape)
    with ops.Graph().as_default():
        with session.Session().as_default():
            x = constant_op.constant(x_np)
            unsorted_s = math_ops.unsorted_segment_sum(data=x, segment_ids=indices, num_segments=num_segments)
            ju_t, ju_n = gradient_checker.compute_gradient(x, shape, unsorted_s, [num_segments, 2],
                                                           x_init_value=x_np, delta=1)
            sorted_s = math_ops.segment_sum(data=x, segment_ids=indices)
            js_t, js_n = gradient_checker.compute_gradient(x, shape, sorted_s, [num_segments, 2],
                                                           x_init_value=x_np, delta=1)
    np.testing.assert_allclose(ju_t, js_t)
    np.testing.assert_allclose(ju_n, js_n)
    expected = np.zeros((shape[0] * 2, num_segments * 2))
    for i, s in enumerate(indices):
        for c in range(2):
            expected[i * 2 + c, s * 2 + c] = 1.0
    np.testing.assert_allclose(ju_t, expected)


def test_drop_negative_ids():
    indices_flat = np.array([0, 4, 0, 8, 3, 8, 4, 7, 7, 3])
    for indices in (indices_flat, indices_flat.reshape(5, 2)):
        x_np = RNG.normal(size=indices.shape + (2,))
        ids = np.where(indices == 8, -1, indices)
        expected = np.zeros((12, 2))
        np.add.at(expected, ids[ids >= 0], x_np[ids >= 0])
        got = math_ops.unsorted_segment_sum(constant_op.constant(x_np), ids, 12).numpy()
        np.testing.assert_allclose(got, expected)


def test_aggregate_mixed_sparse_and_dense_gradients():
    # The seed's testAggregateGradients in eager and graph mode.
    def fn(x):
        ind1 = constant_op.constant(np.array([0, 1]))
        ind2 = constant_op.constant(np.array([2, 3]))
        ind3 = constant_op.constant(np.array([1, 3]))
        g1 = embedding_ops.embedding_lookup(x, ind1)
        g2 = embedding_ops.embedding_lookup(x, ind2)
        g3 = embedding_ops.embedding_lookup(x, ind3)
        g4 = math_ops.reduce_sum(x * constant_op.constant(2.0))
        return g1 * g2 * g3 * g4

    var_np = RNG.random((4, 2)).astype(np.float32)
    grad = backprop.gradients_function(fn, [0])(constant_op.constant(var_np))[0]
    grad = ops.convert_to_tensor(grad).numpy()
    with context.graph_mode():
        tf_var = array_ops.constant(var_np, dtypes.float32)
        tf_y = fn(tf_var)
        tf_grad = gradients.gradients(tf_y, [tf_var])[0]
        # TF turns a mix of sparse and dense gradients into one IndexedSlices (the seed then reads
        # tf_grad.values); segflow's aggregation densifies a mix (ARCHITECTURE.md, "Gradients").
        assert isinstance(tf_grad, ops.Tensor)
        tf_dense = tf_grad
        with session.Session() as sess:
            graph_grad = sess.run(tf_dense)
    # Hand-derived: y = x[i1] * x[i2] * x[i3] * s with s = 2 * sum(x).
    x = var_np.astype(np.float64)
    s = 2 * x.sum()
    a, b, c = x[[0, 1]], x[[2, 3]], x[[1, 3]]
    expected = np.zeros_like(x)
    np.add.at(expected, [0, 1], b * c * s)
    np.add.at(expected, [2, 3], a * c * s)
    np.add.at(expected, [1, 3], a * b * s)
    expected += 2 * (a * b * c).sum()
    np.testing.assert_allclose(grad, expected, rtol=1e-5)
    np.testing.assert_allclose(graph_grad, expected, rtol=1e-5)


def test_group_of_scatter_updates_runs_both():
    with ops.Graph().as_default():
        v = variables.Variable(np.zeros((3, 2), np.float32))
        m = variables.Variable(np.ones((3, 2), np.float32))
        upd = state_ops.scatter_sub(v, [0, 2, 0], np.ones((3, 2), np.float32))
        m_t = state_ops.scatter_update(m, [1], np.full((1, 2), 5.0, np.float32))
        train = control_flow_ops.group(*[upd, m_t])
        with session.Session() as sess:
            sess.run(variables.global_variables_initializer())
            sess.run(train)
            v_v, m_v = sess.run([v, m])
    np.testing.assert_array_equal(v_v, [[-2, -2], [0, 0], [-1, -1]])
    np.testing.assert_array_equal(m_v, [[1, 1], [5, 5], [1, 1]])

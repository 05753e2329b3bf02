"""k-means as a graph of segflow ops: TF's `clustering_ops.KMeans`, built from the public ops.

    km = KMeans(x, 8, initial_clusters=KMEANS_PLUS_PLUS_INIT)
    (all_scores, cluster_idx, scores, initialized, init_op, training_op) = km.training_graph()
    with Session() as sess:
        sess.run(global_variables_initializer())
        while not sess.run(initialized):
            sess.run(init_op)
        for _ in range(20):
            sess.run(training_op)          # one Lloyd step (full batch) or one mini-batch step

A full-batch step sums each shard's rows per cluster with `unsorted_segment_sum` (under
`colocate_with(shard)`), adds the shards with `add_n` and divides by the counts plus 1e-6, as TF
does: a cluster no row chose gets the zero vector, exactly as in TF (not its old center). Mini-batch
steps move each center towards its new rows with learning rate 1 / (points it has seen). The three
initialization ops (NearestNeighbors, KmeansPlusPlusInitialization, KMC2ChainInitialization) are
in clustering_kernels.py.

Differences from TF 2.21, each deliberate:
- The variables take the inputs' dtype (TF's are float32 whatever the inputs are).
- `random_seed` matters: the sampling seed mixes it with the graph seed (TF uses the graph seed
  only), so the same random_seed picks the same centers.
- RANDOM_INIT samples rows without replacement (TF draws with replacement, so duplicate centers,
  and then a zero center, can happen).
- Mini-batch shards are applied one after the other, each seeing the previous shard's update (TF
  applies them concurrently without locking); the sync of mini_batch_steps_per_iteration > 1 runs
  after the step's assignments are computed.
- training_graph() needs graph mode (TF's fails in eager mode too); it raises a clear error there.
"""
import numpy as np

from segflow._core import dtypes
from segflow._core.graph import colocate_with, control_dependencies, name_scope
from segflow._core.mode import executing_eagerly
from segflow._core.convert import convert_to_tensor
from segflow._ops import cast as cast_ops
from segflow._ops import control_flow
from segflow._ops import debugging
from segflow._ops import elementwise as cw
from segflow._ops import join
from segflow._ops import linalg
from segflow._ops import nn
from segflow._ops import random as random_ops
from segflow._ops import reduce as ro
from segflow._ops import shape as so
from segflow._ops import state
from segflow._ops import transpose as to
from segflow._ops import unique as unique_ops
from segflow._ops import gather as gather_ops
from segflow._ops.control import group, no_op
from segflow._ops.embedding import embedding_lookup
from segflow._ops.segment import unsorted_segment_sum
from segflow._ops.sequence import range as sequence_range
from segflow._ops.variables import VariableV1
from segflow._ops.clustering_kernels import (kmc2_chain_initialization, kmeans_plus_plus_initialization,
                                             nearest_neighbors)

__all__ = ["KMeans", "SQUARED_EUCLIDEAN_DISTANCE", "COSINE_DISTANCE", "RANDOM_INIT", "KMEANS_PLUS_PLUS_INIT",
           "KMC2_INIT", "CLUSTERS_VAR_NAME"]

SQUARED_EUCLIDEAN_DISTANCE = "squared_euclidean"
COSINE_DISTANCE = "cosine"
RANDOM_INIT = "random"
KMEANS_PLUS_PLUS_INIT = "kmeans_plus_plus"
KMC2_INIT = "kmc2"
CLUSTERS_VAR_NAME = "clusters"

_INITS = (RANDOM_INIT, KMEANS_PLUS_PLUS_INIT, KMC2_INIT)
_METRICS = (SQUARED_EUCLIDEAN_DISTANCE, COSINE_DISTANCE)


def _mix_seed(random_seed):
    """One int64 sampling seed from the graph seed and `random_seed` (deterministic per pair)."""
    graph_seed, op_seed = random_ops.get_seed(random_seed)
    graph_seed = 87654321 if graph_seed is None else graph_seed
    op_seed = 0 if op_seed is None else op_seed
    return int((int(graph_seed) * 1000003 + int(op_seed)) % (2**62))


class KMeans:
    """Builds the graph of k-means clustering (TF's `clustering_ops.KMeans`)."""

    def __init__(self, inputs, num_clusters, initial_clusters=RANDOM_INIT,
                 distance_metric=SQUARED_EUCLIDEAN_DISTANCE, use_mini_batch=False,
                 mini_batch_steps_per_iteration=1, random_seed=0, kmeans_plus_plus_num_retries=2,
                 kmc2_chain_length=200):
        """Creates an object that builds a k-means graph.

        Args:
          inputs: a float32/float64 matrix [rows, dims] or a list of them (shards of the data,
            assumed randomly permuted).
          num_clusters: int (or int tensor) number of clusters; ignored when `initial_clusters`
            is a tensor or array.
          initial_clusters: RANDOM_INIT (rows sampled without replacement), KMEANS_PLUS_PLUS_INIT
            (k-means++ on the first shard, with `kmeans_plus_plus_num_retries` greedy retries),
            KMC2_INIT (k-MC2 on the first shard, one chain of `kmc2_chain_length` rows per
            center), a [num_clusters, dims] tensor or array, or a callable
            `f(inputs, num_remaining) -> [<= num_remaining, dims] tensor`.
          distance_metric: SQUARED_EUCLIDEAN_DISTANCE or COSINE_DISTANCE (inputs and centers
            l2-normalized; score 1 - cos).
          use_mini_batch: mini-batch k-means when True, full-batch Lloyd steps when False.
          mini_batch_steps_per_iteration: mini-batch steps between syncs of the updated copy of
            the centers back to the copy used for assignment.
          random_seed: seed of the initialization's sampling.
          kmeans_plus_plus_num_retries: extra candidates per k-means++ center; negative means
            2 + log(num_to_sample).
          kmc2_chain_length: rows per k-MC2 Markov chain.
        Raises:
          ValueError: an unknown initial_clusters name or distance_metric, inputs that are not
            matrices, or a non-positive num_clusters.
        """
        if isinstance(initial_clusters, str) and initial_clusters not in _INITS:
            raise ValueError(f"Unsupported initialization algorithm `{initial_clusters}`, must be one of "
                             f"`{list(_INITS)}`.")
        if distance_metric not in _METRICS:
            raise ValueError(f"Unsupported distance metric `{distance_metric}`, must be one of `{list(_METRICS)}`.")
        self._inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        if not self._inputs:
            raise ValueError("KMeans: inputs is an empty list; give a matrix or a list of shards")
        if isinstance(num_clusters, (int, np.integer)) and num_clusters <= 0:
            raise ValueError(f"KMeans: num_clusters must be positive, got {num_clusters}")
        self._num_clusters = num_clusters
        self._initial_clusters = initial_clusters
        self._distance_metric = distance_metric
        self._use_mini_batch = bool(use_mini_batch)
        self._mini_batch_steps_per_iteration = int(mini_batch_steps_per_iteration)
        if self._mini_batch_steps_per_iteration < 1:
            raise ValueError(f"KMeans: mini_batch_steps_per_iteration must be >= 1, got "
                             f"{mini_batch_steps_per_iteration}")
        self._seed = _mix_seed(random_seed)
        self._kmeans_plus_plus_num_retries = int(kmeans_plus_plus_num_retries)
        self._kmc2_chain_length = int(kmc2_chain_length)
        if self._kmc2_chain_length <= 0:
            raise ValueError(f"KMeans: kmc2_chain_length must be positive, got {kmc2_chain_length}")

    # ------------------------------------------------------------------------------------------
    # distances and assignment

    @classmethod
    def _distance_graph(cls, inputs, clusters, distance_metric):
        """Per shard, the [rows, num_clusters] matrix of distances to every center."""
        if distance_metric == SQUARED_EUCLIDEAN_DISTANCE:
            return cls._compute_euclidean_distance(inputs, clusters)
        return cls._compute_cosine_distance(inputs, clusters, inputs_normalized=True)

    @classmethod
    def _compute_euclidean_distance(cls, inputs, clusters):
        out = []
        for inp in inputs:
            with colocate_with(inp, ignore_existing=True):
                out.append(ro.reduce_sum(cw.square(inp), 1, keepdims=True)
                           - 2 * linalg.matmul(inp, clusters, transpose_b=True)
                           + to.transpose(ro.reduce_sum(cw.square(clusters), 1, keepdims=True)))
        return out

    @classmethod
    def _compute_cosine_distance(cls, inputs, clusters, inputs_normalized=True):
        if not inputs_normalized:
            with colocate_with(clusters, ignore_existing=True):
                clusters = nn.l2_normalize(clusters, axis=1)
        out = []
        for inp in inputs:
            with colocate_with(inp, ignore_existing=True):
                if not inputs_normalized:
                    inp = nn.l2_normalize(inp, axis=1)
                out.append(1 - linalg.matmul(inp, clusters, transpose_b=True))
        return out

    def _infer_graph(self, inputs, clusters):
        """(all_scores, scores, cluster_idx), each a list with one tensor per shard."""
        all_scores = self._distance_graph(inputs, clusters, self._distance_metric)
        scores, idx = [], []
        for inp in inputs:
            with colocate_with(inp, ignore_existing=True):
                nearest, distances = nearest_neighbors(inp, clusters, 1)
                if self._distance_metric == COSINE_DISTANCE:
                    # For unit vectors ||x - c||^2 = 2 (1 - cos): half of it is the cosine distance.
                    distances = distances * 0.5
                scores.append(to.squeeze(distances, [-1]))
                idx.append(to.squeeze(nearest, [-1]))
        return all_scores, scores, idx

    def _clusters_l2_normalized(self):
        """Whether the stored centers are kept l2-normalized."""
        return (self._distance_metric == COSINE_DISTANCE
                and (not self._use_mini_batch or self._mini_batch_steps_per_iteration > 1))

    # ------------------------------------------------------------------------------------------
    # variables

    def _create_variables(self, num_clusters, dtype):
        init_value = so.placeholder_with_default(np.zeros([0], dtype.as_numpy_dtype), shape=None)
        centers = VariableV1(init_value, name=CLUSTERS_VAR_NAME, validate_shape=False)
        initialized = VariableV1(False, dtype=dtypes.bool, name="initialized")
        if self._use_mini_batch and self._mini_batch_steps_per_iteration > 1:
            # The copy updated every step; synced back to `centers` every few steps.
            updated = VariableV1(init_value, name="clusters_updated", validate_shape=False)
            update_in_steps = VariableV1(np.int64(self._mini_batch_steps_per_iteration), dtype=dtypes.int64,
                                         name="update_in_steps")
            counts = VariableV1(so.zeros(so.reshape(num_clusters, [1]), dtype=dtypes.int64),
                                name="cluster_counts")
        else:
            updated, update_in_steps = centers, None
            counts = (VariableV1(so.ones(so.reshape(num_clusters, [1]), dtype=dtypes.int64),
                                 name="cluster_counts") if self._use_mini_batch else None)
        return centers, initialized, counts, updated, update_in_steps

    @classmethod
    def _l2_normalize_data(cls, inputs):
        out = []
        for inp in inputs:
            with colocate_with(inp, ignore_existing=True):
                out.append(nn.l2_normalize(inp, axis=1))
        return out

    def _check_inputs(self):
        converted = []
        for i, inp in enumerate(self._inputs):
            t = convert_to_tensor(inp)
            if t.dtype not in (dtypes.float32, dtypes.float64):
                raise ValueError(f"KMeans: inputs[{i}] must be float32 or float64, not {t.dtype.name}")
            if t.shape.rank is not None and t.shape.rank != 2:
                raise ValueError(f"KMeans: inputs[{i}] must be a matrix [rows, dims], got shape {t.shape}")
            if converted and t.dtype != converted[0].dtype:
                raise ValueError(f"KMeans: inputs[{i}] has dtype {t.dtype.name}, inputs[0] {converted[0].dtype.name}")
            converted.append(t)
        return converted

    # ------------------------------------------------------------------------------------------
    # the graph

    def training_graph(self):
        """Builds the training graph.

        Run `init_op` until `cluster_centers_initialized` is True (once, unless the first
        batches hold fewer rows than the centers still missing), then `training_op` any number
        of times.

        Returns:
          (all_scores, cluster_idx, scores, cluster_centers_initialized, init_op, training_op):
          all_scores: list (per shard) of [rows, num_clusters] distances to every center;
          cluster_idx: list of int64 [rows] nearest-center indices;
          scores: list of [rows] distances to the nearest center (squared Euclidean, or 1 - cos);
          cluster_centers_initialized: bool variable; init_op: bool tensor (the flag after the
          run); training_op: one Lloyd step (full batch) or one mini-batch step.
        Raises:
          RuntimeError: called while executing eagerly.
        """
        if executing_eagerly():
            raise RuntimeError("KMeans.training_graph() builds a graph (as TF's does): call it under "
                               "`with segflow.Graph().as_default():` or after "
                               "segflow.compat.v1.disable_eager_execution(); for eager k-means use "
                               "segflow.models.KMeans")
        inputs = self._check_inputs()
        self._inputs = inputs
        dtype = inputs[0].dtype
        if isinstance(self._initial_clusters, str) or callable(self._initial_clusters):
            initial_clusters = self._initial_clusters
            num_clusters = convert_to_tensor(self._num_clusters)
        else:
            initial_clusters = cast_ops.cast(convert_to_tensor(self._initial_clusters), dtype)
            if initial_clusters.shape.rank not in (None, 2):
                raise ValueError(f"KMeans: initial_clusters must be a matrix [num_clusters, dims], got shape "
                                 f"{initial_clusters.shape}")
            num_clusters = so.shape(initial_clusters)[0]
        num_clusters = cast_ops.cast(num_clusters, dtypes.int32)
        (centers_var, initialized, total_counts, centers_updated,
         update_in_steps) = self._create_variables(num_clusters, dtype)
        init_op = _InitializeClustersOpFactory(
            inputs, num_clusters, initial_clusters, self._distance_metric, self._seed,
            self._kmeans_plus_plus_num_retries, self._kmc2_chain_length, centers_var, centers_updated,
            initialized).op()
        centers = centers_var.value()
        if self._distance_metric == COSINE_DISTANCE:
            inputs = self._l2_normalize_data(inputs)
            if not self._clusters_l2_normalized():
                centers = nn.l2_normalize(centers, axis=1)
        all_scores, scores, cluster_idx = self._infer_graph(inputs, centers)
        if self._use_mini_batch:
            with control_dependencies(cluster_idx):
                sync = self._mini_batch_sync_updates_op(update_in_steps, centers_var, centers_updated,
                                                        total_counts)
            with control_dependencies([sync]):
                training_op = self._mini_batch_training_op(inputs, cluster_idx, centers_updated, total_counts)
        else:
            training_op = self._full_batch_training_op(inputs, num_clusters, cluster_idx, centers_var)
        return all_scores, cluster_idx, scores, initialized, init_op, training_op

    def _mini_batch_sync_updates_op(self, update_in_steps, centers_var, centers_updated, total_counts):
        if update_in_steps is None:
            return no_op()
        steps = self._mini_batch_steps_per_iteration

        def sync():
            with control_dependencies([state.assign(update_in_steps, np.int64(steps - 1))]):
                value = centers_updated.value()
                if self._distance_metric == COSINE_DISTANCE:
                    value = nn.l2_normalize(value, axis=1)
                with control_dependencies([state.assign(centers_var, value, validate_shape=False)]):
                    with control_dependencies([state.assign(total_counts, so.zeros_like(total_counts))]):
                        return so.identity(update_in_steps.value())

        def count_down():
            return so.identity(state.assign_sub(update_in_steps, np.int64(1)))

        return control_flow.cond(cw.less_equal(update_in_steps.value(), np.int64(0)), sync, count_down)

    def _mini_batch_training_op(self, inputs, cluster_idx_list, centers, total_counts):
        # A center x with n points seen so far and new rows d_1..d_k moves to
        # x + (sum_i d_i - k x) / (n + k): the mean of everything it has seen.
        update_ops = []
        for inp, cluster_idx in zip(inputs, cluster_idx_list):
            with control_dependencies(update_ops):  # shard i sees shard i-1's update
                with colocate_with(inp, ignore_existing=True):
                    cluster_idx = so.reshape(cluster_idx, [-1])
                    unique_ids, unique_idx = unique_ops.unique(cluster_idx)
                    num_unique = so.size(unique_ids)
                    old_counts = gather_ops.gather(total_counts, unique_ids)
                    old_centers = gather_ops.gather(centers, unique_ids)
                    count_updates = unsorted_segment_sum(so.ones_like(unique_idx, dtype=dtypes.int64),
                                                         unique_idx, num_unique)
                    sums = unsorted_segment_sum(inp, unique_idx, num_unique)
                    k = so.reshape(cast_ops.cast(count_updates, inp.dtype), [-1, 1])
                    rate = so.reshape(cw.reciprocal(cast_ops.cast(old_counts + count_updates, inp.dtype)),
                                      [-1, 1])
                    delta = (sums - k * old_centers) * rate
                update_ops = [state.scatter_add(total_counts, unique_ids, count_updates),
                              state.scatter_add(centers, unique_ids, delta)]
        return group(*update_ops)

    def _full_batch_training_op(self, inputs, num_clusters, cluster_idx_list, centers_var):
        sums, counts = [], []
        epsilon = convert_to_tensor(np.asarray(1e-6, inputs[0].dtype.as_numpy_dtype))
        for inp, cluster_idx in zip(inputs, cluster_idx_list):
            with colocate_with(inp, ignore_existing=True):
                sums.append(unsorted_segment_sum(inp, cluster_idx, num_clusters))
                ones = so.reshape(so.ones(so.reshape(so.shape(inp)[0], [-1]), dtype=inp.dtype), [-1, 1])
                counts.append(unsorted_segment_sum(ones, cluster_idx, num_clusters))
        with colocate_with(centers_var, ignore_existing=True):
            new_centers = ro.add_n(sums) / (ro.add_n(counts) + epsilon)
            if self._clusters_l2_normalized():
                new_centers = nn.l2_normalize(new_centers, axis=1)
        return state.assign(centers_var, new_centers, validate_shape=False)


class _InitializeClustersOpFactory:
    """Builds the op that chooses initial centers (TF's algorithm):

        remaining = num_clusters - rows(centers)
        remaining == 0: assert initialized
        else: new = up to `remaining` centers (l2-normalized for cosine); centers := concat;
              initialized := (num_clusters == rows(centers))
    """

    def __init__(self, inputs, num_clusters, initial_clusters, distance_metric, seed, num_retries,
                 chain_length, centers, centers_updated, initialized):
        self._inputs = inputs
        self._num_clusters = num_clusters
        self._initial_clusters = initial_clusters
        self._distance_metric = distance_metric
        self._seed = seed
        self._num_retries = num_retries
        self._chain_length = chain_length
        self._centers = centers
        self._centers_updated = centers_updated
        self._initialized = initialized
        self._num_selected = so.shape(centers.value(), out_type=dtypes.int32)[0]
        self._num_remaining = num_clusters - self._num_selected
        self._num_data = ro.add_n([so.shape(i, out_type=dtypes.int32)[0] for i in inputs])
        # Normalized here, outside the cond that runs the initialization: segflow's name_scope
        # refuses an outer-graph tensor as a value inside a cond branch (l2_normalize passes one).
        self._kpp_points = (self._normalized(inputs[0]) if isinstance(initial_clusters, str)
                            and initial_clusters == KMEANS_PLUS_PLUS_INIT else None)

    def _normalized(self, x):
        return nn.l2_normalize(x, axis=1) if self._distance_metric == COSINE_DISTANCE else x

    def _random(self):
        perm = random_ops.random_shuffle(sequence_range(cast_ops.cast(self._num_data, dtypes.int64)),
                                         seed=self._seed % (2**31))
        indices = perm[:cast_ops.cast(self._num_remaining, dtypes.int64)]
        return embedding_lookup(self._inputs, indices, partition_strategy="div")

    def _kmeans_plus_plus(self):
        # Points of the first shard only, as in TF.
        return kmeans_plus_plus_initialization(self._kpp_points, cast_ops.cast(self._num_remaining, dtypes.int64),
                                               np.int64(self._seed), np.int64(self._num_retries))

    def _assign_centers(self, value):
        a = state.assign(self._centers, value, validate_shape=False)
        if self._centers_updated is not self._centers:
            a = state.assign(self._centers_updated, a.value(), validate_shape=False)
        return a.value()

    def _kmc2_multiple_centers(self):
        # One chain of `chain_length` rows of the first shard per new center; the first center
        # (when none is chosen yet) is the shard's first row.
        first = self._inputs[0]
        batch = so.shape(first, out_type=dtypes.int32)[0]
        max_to_sample = batch // self._chain_length
        num_to_sample = cw.maximum(cw.minimum(self._num_remaining, max_to_sample), 1)

        def body(i, _):
            current = self._centers.value()

            def first_row():
                return self._normalized(so.reshape(first[0], [1, -1]))

            def chain():
                start = i * self._chain_length
                subset = first[start:start + self._chain_length]
                _, distances = nearest_neighbors(subset, current, 1)
                seed = cast_ops.cast(i, dtypes.int64) + np.int64(self._seed)
                pick = kmc2_chain_initialization(so.reshape(distances, [-1]), seed)
                new = self._normalized(so.reshape(gather_ops.gather(subset, pick), [1, -1]))
                return join.concat([current, new], 0)

            new_centers = control_flow.cond(cw.equal(so.shape(current, out_type=dtypes.int32)[0], 0),
                                            first_row, chain)
            assigned = self._assign_centers(new_centers)
            return i + 1, self._num_clusters - so.shape(assigned, out_type=dtypes.int32)[0]

        _, remaining = control_flow.while_loop(lambda i, _: cw.less(i, num_to_sample), body,
                                               [np.int32(0), np.int32(0)])
        return remaining

    def _choose_initial_centers(self):
        if isinstance(self._initial_clusters, str):
            if self._initial_clusters == RANDOM_INIT:
                # With fewer rows than missing centers, all rows become centers (mini-batch).
                return control_flow.cond(cw.less_equal(self._num_data, self._num_remaining),
                                         lambda: join.concat(self._inputs, 0), self._random)
            with control_dependencies([debugging.assert_greater_equal(
                    self._num_data, self._num_remaining,
                    message="KMeans: kmeans_plus_plus needs at least num_clusters rows")]):
                return self._kmeans_plus_plus()
        if callable(self._initial_clusters):
            return self._initial_clusters(self._inputs, self._num_remaining)
        with control_dependencies([debugging.assert_equal(
                self._num_remaining, so.shape(self._initial_clusters, out_type=dtypes.int32)[0],
                message="KMeans: initial_clusters must hold num_clusters rows")]):
            return so.identity(self._initial_clusters)

    def _add_new_centers(self):
        new_centers = self._normalized(cast_ops.cast(self._choose_initial_centers(), self._inputs[0].dtype))
        all_centers = control_flow.cond(cw.equal(self._num_selected, 0), lambda: so.identity(new_centers),
                                        lambda: join.concat([self._centers.value(), new_centers], 0))
        assigned = self._assign_centers(all_centers)
        return self._num_clusters - so.shape(assigned, out_type=dtypes.int32)[0]

    def _initialize(self):
        with control_dependencies([debugging.assert_positive(self._num_remaining)]):
            if isinstance(self._initial_clusters, str) and self._initial_clusters == KMC2_INIT:
                remaining = self._kmc2_multiple_centers()
            else:
                remaining = self._add_new_centers()
            return control_flow.cond(cw.equal(remaining, 0),
                                     lambda: so.identity(state.assign(self._initialized, True).value()),
                                     lambda: so.identity(self._initialized.value()))

    def op(self):
        """A bool tensor: running it adds centers; its value is the initialized flag afterwards."""
        with name_scope("initialize_clusters"):
            def done():
                with control_dependencies([debugging.assert_equal(
                        self._initialized.value(), True,
                        message="KMeans: all centers are chosen but the initialized flag is False")]):
                    return so.identity(self._initialized.value())
            return control_flow.cond(cw.equal(self._num_remaining, 0), done, self._initialize)

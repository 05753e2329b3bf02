"""Split-handler statistics of TF's boosted trees, built from public ops (eager, graph, traced).

Every function returns `(partition_ids, bucket_ids, gradients, hessians)`: the first P rows are the
bias bucket (`BIAS_FEATURE_ID`, -1) of each of the P distinct partitions (in order of first
appearance among `example_partition_ids`), holding the partition's totals over *all* examples
(each example counted once, even when a multivalent feature gives it several values); the rows after
them hold, per distinct (partition, bucket[, dimension]) in order of first appearance, the sums over
the values that fall there. With `aggregate=False` those rows are the per-value rows unsummed (the
seed handlers' output). Sums accumulate in float64 and are returned in the gradients' dtype.
Gradients may be [N], [N, K] (multiclass) and hessians [N], [N, K] (diagonal) or [N, K, K] (full).
"""
import numpy as np

from segflow._core import dtypes
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._ops.cast import cast
from segflow._ops.elementwise import add, floordiv, floormod, multiply
from segflow._ops.gather import gather
from segflow._ops.join import concat, split, stack
from segflow._ops.reduce import reduce_max
from segflow._ops.segment import unsorted_segment_sum
from segflow._ops.sequence import range as sf_range
from segflow._ops.shape import fill, reshape, shape, size, zeros_like
from segflow._ops.sparse_tensor import SparseTensor
from segflow._ops.transpose import squeeze
from segflow._ops.unique import unique
from segflow._ops.quantiles import quantiles

__all__ = ["BIAS_FEATURE_ID", "dense_split_stats", "sparse_split_stats", "categorical_split_stats"]

BIAS_FEATURE_ID = -1
_ZERO = np.zeros(1, np.int64)  # so that max() of no values is 0


def _split_stats(example_partition_ids, value_examples, buckets, dims, gradients, hessians, aggregate):
    """The shared body: value row j belongs to example value_examples[j], bucket buckets[j] and
    dimension dims[j] (None: no dimension column)."""
    example_partition_ids = convert_to_tensor(example_partition_ids)
    gradients = convert_to_tensor(gradients)
    hessians = convert_to_tensor(hessians, dtype=gradients.dtype)
    out_dtype = gradients.dtype
    g64 = cast(gradients, dtypes.float64)
    h64 = cast(hessians, dtypes.float64)
    unique_partitions, mapped = unique(example_partition_ids, out_idx=dtypes.int64)
    num_partitions = size(unique_partitions, out_type=dtypes.int64)
    bias_g = unsorted_segment_sum(g64, mapped, num_partitions)
    bias_h = unsorted_segment_sum(h64, mapped, num_partitions)

    value_examples = cast(value_examples, dtypes.int64)
    buckets = cast(buckets, dtypes.int64)
    value_g = gather(g64, value_examples)
    value_h = gather(h64, value_examples)
    value_mapped = gather(mapped, value_examples)
    if aggregate:
        # One int64 key per (partition, dimension, bucket): ((p * D) + d) * B + b, with p the
        # partition's index among the distinct partitions, so keys never collide.
        b_span = add(reduce_max(concat([buckets, _ZERO], 0)), 1)
        key = value_mapped
        if dims is not None:
            dims = cast(dims, dtypes.int64)
            d_span = add(reduce_max(concat([dims, _ZERO], 0)), 1)
            key = add(multiply(key, d_span), dims)
        key = add(multiply(key, b_span), buckets)
        keys, slot = unique(key, out_idx=dtypes.int64)
        num_slots = size(keys, out_type=dtypes.int64)
        value_g = unsorted_segment_sum(value_g, slot, num_slots)
        value_h = unsorted_segment_sum(value_h, slot, num_slots)
        buckets = floormod(keys, b_span)
        rest = floordiv(keys, b_span)
        if dims is not None:
            dims = floormod(rest, d_span)
            rest = floordiv(rest, d_span)
        value_partitions = gather(unique_partitions, rest)
    else:
        value_partitions = gather(example_partition_ids, value_examples)

    bias_ids = fill(shape(unique_partitions), cast(BIAS_FEATURE_ID, dtypes.int64))
    bucket_ids = concat([bias_ids, buckets], 0)
    if dims is not None:
        bucket_ids = stack([bucket_ids, concat([zeros_like(bias_ids), dims], 0)], axis=1)
    partition_ids = concat([unique_partitions, value_partitions], 0)
    grads = cast(concat([bias_g, value_g], 0), out_dtype)
    hess = cast(concat([bias_h, value_h], 0), out_dtype)
    return partition_ids, bucket_ids, grads, hess


def dense_split_stats(example_partition_ids, bucket_ids, gradients, hessians, aggregate=True,
                      name=None):
    """Statistics of one dense feature already bucketized (one non-negative bucket per example).

    Args:
      example_partition_ids: [N] int32/int64 partition (tree node) of each example.
      bucket_ids: [N] int bucket of each example's value (e.g. from `quantile_ops.quantiles`).
      gradients: [N] or [N, K]; hessians: [N], [N, K] or [N, K, K] (same dtype).
      aggregate: sum per (partition, bucket) (default) or keep one row per example.
    Returns:
      (partition_ids [M], bucket_ids int64 [M], gradients [M, ...], hessians [M, ...]), the first
      rows the per-partition bias bucket (module docstring).
    """
    with name_scope(name, "DenseSplitStats"):
        bucket_ids = convert_to_tensor(bucket_ids)
        examples = sf_range(size(bucket_ids, out_type=dtypes.int64), dtype=dtypes.int64)
        return _split_stats(example_partition_ids, examples, reshape(bucket_ids, [-1]), None,
                            gradients, hessians, aggregate)


def sparse_split_stats(example_partition_ids, sparse_values, buckets, gradients, hessians,
                       aggregate=True, name=None):
    """Statistics of one sparse float feature, multivalent: its values are bucketized with
    `buckets` (TF's Quantiles rule) and each keeps its dimension (column of the SparseTensor).

    Args:
      example_partition_ids: [N] partition of each example.
      sparse_values: SparseTensor [N, D] (indices [example, dimension]) of floats.
      buckets: sorted 1-D float boundaries.
      gradients, hessians: per example, as in `dense_split_stats`.
    Returns:
      (partition_ids [M], bucket_ids int64 [M, 2] (bucket, dimension), gradients, hessians); the
      bias rows have bucket -1 and dimension 0.
    """
    with name_scope(name, "SparseSplitStats"):
        indices = convert_to_tensor(sparse_values.indices, dtype=dtypes.int64)
        _, quantized = quantiles([], [sparse_values.values], [], [buckets], [indices])
        quantized = squeeze(cast(quantized, dtypes.int64), axis=0)
        bucket, dim = split(quantized, num_or_size_splits=2, axis=1)
        examples, _ = split(indices, num_or_size_splits=2, axis=1)
        return _split_stats(example_partition_ids, squeeze(examples, [1]), squeeze(bucket, [1]),
                            squeeze(dim, [1]), gradients, hessians, aggregate)


def categorical_split_stats(example_partition_ids, sparse_int_column, gradients, hessians,
                            aggregate=True, name=None):
    """Statistics of one categorical (sparse int) feature: each value is a non-negative feature id.

    Args:
      example_partition_ids: [N] partition of each example.
      sparse_int_column: SparseTensor with indices [example, k] and int feature-id values.
      gradients, hessians: per example, as in `dense_split_stats`.
    Returns:
      (partition_ids [M], bucket_ids int64 [M, 2] (feature id, dimension 0), gradients, hessians).
    """
    with name_scope(name, "CategoricalSplitStats"):
        if not isinstance(sparse_int_column, SparseTensor):
            raise TypeError(f"sparse_int_column must be a SparseTensor, not {type(sparse_int_column).__name__}")
        indices = convert_to_tensor(sparse_int_column.indices, dtype=dtypes.int64)
        examples, _ = split(indices, num_or_size_splits=2, axis=1)
        values = cast(sparse_int_column.values, dtypes.int64)
        return _split_stats(example_partition_ids, squeeze(examples, [1]), values, zeros_like(values),
                            gradients, hessians, aggregate)

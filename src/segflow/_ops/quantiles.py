"""Quantile ops: `bucketize` (TF's Bucketize), `quantiles` (TF's old contrib boosted-trees Quantiles
op) and `quantile_boundaries` (bucket boundaries from a weighted quantile sketch). Their outputs
are ids or boundaries: none has a gradient."""
import numpy as np

from segflow._core import dtypes, errors
from segflow._core.apply import apply_op
from segflow._core.convert import convert_to_tensor, register_tensor_conversion_function
from segflow._core.graph import name_scope
from segflow._core.registry import NotDifferentiable, TensorSpec, register_op
from segflow.kernels import BadInput
from segflow.kernels import quantiles as qk
from segflow._ops import join as join_ops

__all__ = ["bucketize", "quantiles", "quantile_boundaries", "OutputList"]

_VALUES = (dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64)


# ----------------------------------------------------------------------------------------------
# Bucketize

def _infer_bucketize(op, input, boundaries=()):
    b = np.asarray(boundaries, np.float64)
    if b.ndim != 1 or (b.size > 1 and np.any(b[1:] < b[:-1])):
        raise errors.invalid_input(op, "boundaries", "must be a sorted list of numbers")
    return [TensorSpec(dtypes.int32, input.shape)]


def _bucketize_kernel(input, boundaries=()):
    return qk.bucketize(input, boundaries)


register_op("Bucketize", inputs=("input",), attrs={"T": "input"}, allowed={"T": _VALUES},
            infer=_infer_bucketize, kernel=_bucketize_kernel, defaults={"boundaries": ()})
NotDifferentiable("Bucketize")


def bucketize(input, boundaries, name=None):
    """Bucket ids of `input`: bucket = number of `boundaries` <= value (TF's Bucketize).

    Args:
      input: int32, int64, float32 or float64 tensor of any shape.
      boundaries: sorted list of floats.
    Returns:
      int32 tensor of the shape of `input`, values in [0, len(boundaries)].
    """
    return apply_op("Bucketize", input, boundaries=tuple(float(b) for b in boundaries), name=name)


# ----------------------------------------------------------------------------------------------
# Quantiles: one op per feature; `quantiles` builds TF's list-in, lists-out op from them.

def _infer_quantile_buckets(op, values, buckets, indices, multivalent=False):
    if values.dtype not in (dtypes.float32, dtypes.float64):
        raise errors.invalid_input(op, "values", f"must be float32 or float64, not {values.dtype.name}")
    if buckets.shape.rank not in (None, 1):
        raise errors.invalid_input(op, "buckets", f"must be 1-D, got shape {buckets.shape}")
    n = values.shape[0] if values.shape.rank == 1 else None
    if multivalent:
        if indices.dtype != dtypes.int64:
            raise errors.invalid_input(op, "indices", f"must be int64, not {indices.dtype.name}")
        if indices.shape.rank not in (None, 2):
            raise errors.invalid_input(op, "indices", f"must be [N, 2], got shape {indices.shape}")
        return [TensorSpec(dtypes.int32, (n, 2))]
    return [TensorSpec(dtypes.int32, (n,))]


def _quantile_buckets_kernel(values, buckets, indices, multivalent=False):
    ids = qk.quantile_buckets(values, buckets)
    if not multivalent:
        return ids
    if indices.ndim != 2 or indices.shape[1] != 2 or indices.shape[0] != ids.shape[0]:
        raise BadInput("indices", f"shape {list(indices.shape)} must be [{ids.shape[0]}, 2] "
                                  "(one [example, dimension] row per value)")
    return np.stack([ids, indices[:, 1].astype(np.int32)], axis=1)


register_op("QuantileBuckets", inputs=("values", "buckets", "indices"),
            attrs={"T": "values"}, infer=_infer_quantile_buckets, kernel=_quantile_buckets_kernel,
            defaults={"multivalent": False})
NotDifferentiable("QuantileBuckets")


class OutputList(list):
    """A list of output tensors that converts to a tensor by stacking them (TF packs a list of
    tensors this way), so `math_ops.cast(quantiles(...)[0], ...)` works in graph mode too."""


def _stack_output_list(value, dtype=None, name=None, as_ref=False):
    if not value:
        return NotImplemented
    t = join_ops.stack(list(value), name=name or "stack")
    if dtype is not None and t.dtype != dtypes.as_dtype(dtype):
        raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for a list "
                         f"of {t.dtype.name} tensors")
    return t


register_tensor_conversion_function(OutputList, _stack_output_list)


def quantiles(dense_values, sparse_values, dense_buckets, sparse_buckets, sparse_indices=None,
              name=None):
    """Bucket ids of float features given their boundaries (TF contrib boosted trees' Quantiles).

    The bucket of a value is the index of the first boundary >= value, at most
    `len(buckets) - 1` (larger values share the last bucket); with no boundaries it is 0.

    Args:
      dense_values: list of 1-D float tensors, one per dense feature.
      sparse_values: list of 1-D float tensors, the values of sparse features.
      dense_buckets, sparse_buckets: lists of sorted 1-D boundary tensors, one per feature.
      sparse_indices: optional list of int64 [N, 2] SparseTensor indices (example, dimension),
        one per sparse feature.
    Returns:
      `(dense_ids, sparse_ids)`, two lists: dense_ids[i] is an int32 [N_i] tensor; sparse_ids[j]
      is int32 [N_j, 2] (bucket, dimension = sparse_indices[j][:, 1]) when sparse_indices is
      given, else int32 [N_j]. Each list converts to a tensor by stacking (as TF packs lists).
    Raises:
      ValueError: when the lists' lengths disagree.
    """
    if len(dense_values) != len(dense_buckets):
        raise ValueError(f"{len(dense_values)} dense features but {len(dense_buckets)} bucket tensors")
    if len(sparse_values) != len(sparse_buckets):
        raise ValueError(f"{len(sparse_values)} sparse features but {len(sparse_buckets)} bucket tensors")
    if sparse_indices is not None and len(sparse_indices) not in (0, len(sparse_values)):
        raise ValueError(f"{len(sparse_values)} sparse features but {len(sparse_indices)} index tensors")
    multivalent = bool(sparse_indices)
    with name_scope(name, "Quantiles"):
        no_indices = convert_to_tensor(np.zeros((0, 2), np.int64))
        dense = OutputList(
            apply_op("QuantileBuckets", v, b, no_indices, multivalent=False)
            for v, b in zip(dense_values, _as_boundaries(dense_buckets, dense_values)))
        sparse = OutputList()
        for j, (v, b) in enumerate(zip(sparse_values, _as_boundaries(sparse_buckets, sparse_values))):
            idx = convert_to_tensor(sparse_indices[j], dtype=dtypes.int64) if multivalent else no_indices
            sparse.append(apply_op("QuantileBuckets", v, b, idx, multivalent=multivalent))
    return dense, sparse


def _as_boundaries(buckets, values):
    out = []
    for b, v in zip(buckets, values):
        v = convert_to_tensor(v, preferred_dtype=dtypes.float32)
        out.append(convert_to_tensor(b, dtype=v.dtype) if not hasattr(b, "dtype") else b)
    return out


# ----------------------------------------------------------------------------------------------
# QuantileBoundaries: sketch a feature (with weights) and return its bucket boundaries.

def _infer_boundaries(op, values, weights, num_buckets=1, epsilon=0.01):
    if values.dtype not in (dtypes.float32, dtypes.float64):
        raise errors.invalid_input(op, "values", f"must be float32 or float64, not {values.dtype.name}")
    if not weights.shape.is_compatible_with(values.shape) and weights.shape.rank != 1:
        raise errors.invalid_input(op, "weights", f"shape {weights.shape} must equal values shape {values.shape}")
    return [TensorSpec(values.dtype, (None,))]


def _boundaries_kernel(values, weights, num_buckets=1, epsilon=0.01):
    if weights.size == 0:
        weights = None
    elif weights.shape != values.shape:
        raise BadInput("weights", f"shape {list(weights.shape)} must equal values shape {list(values.shape)}")
    sketch = qk.WeightedQuantileSketch(epsilon).add(values, weights)
    return sketch.boundaries(num_buckets).astype(values.dtype)


register_op("QuantileBoundaries", inputs=("values", "weights"), attrs={"T": "values"},
            infer=_infer_boundaries, kernel=_boundaries_kernel,
            defaults={"num_buckets": 1, "epsilon": 0.01})
NotDifferentiable("QuantileBoundaries")


def quantile_boundaries(values, num_buckets, weights=None, epsilon=0.01, name=None):
    """Bucket boundaries of `values` from a weighted quantile sketch (rank error <= epsilon * W).

    Args:
      values: float32/float64 tensor; NaNs are ignored.
      num_buckets: number of buckets; boundaries sit at ranks k * W / num_buckets.
      weights: optional non-negative weights of the shape of `values`.
      epsilon: the sketch's rank-error bound as a fraction of the total weight.
    Returns:
      1-D tensor of sorted unique boundaries (minimum and maximum included), dtype of `values`.
    """
    values = convert_to_tensor(values, preferred_dtype=dtypes.float32)
    if weights is None:
        weights = np.zeros((0,), values.dtype.as_numpy_dtype)
    weights = convert_to_tensor(weights, dtype=values.dtype)
    return apply_op("QuantileBoundaries", values, weights, num_buckets=int(num_buckets),
                    epsilon=float(epsilon), name=name)

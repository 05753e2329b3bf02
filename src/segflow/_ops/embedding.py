"""Embedding lookups (TF's `embedding_ops`): rows of one table or of a table split into partitions,
and lookups of sparse id lists combined per row.

The gradient of a lookup for its table is an IndexedSlices (through gather, or sparse_read for a
Variable), never a dense tensor of the table's size.
"""

from __future__ import annotations

from typing import Optional, Sequence, Union
import numpy as np

from segflow._core import mode as context
from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._core.tensor import Tensor
from segflow._ops import clip as clip_ops, elementwise as cw
from segflow._ops import gather as gather_ops, reduce as reduction_ops, segment as segment_ops, shape as shape_ops, stitch as stitch_ops
from segflow._ops.sparse_tensor import SparseTensor
from segflow._ops.ragged import RaggedTensor
from segflow._ops import unique as unique_ops
from segflow._ops import cast as cast_ops
from segflow._ops import join as join_ops
from segflow._ops.sequence import range as range_
from segflow._ops.variable_ops import variable_shape
from segflow._core.typing import Name, TensorLike

__all__ = ["embedding_lookup", "embedding_lookup_v2", "embedding_lookup_sparse", "embedding_lookup_sparse_v2",
           "safe_embedding_lookup_sparse", "safe_embedding_lookup_sparse_v2"]


def _is_table(x):
    return isinstance(x, Tensor) or hasattr(x, "sparse_read")


def _clip(params, ids, max_norm):
    """Rows of `params` (one per id) with L2 norm over the embedding dims cut to `max_norm`
    (TF's clip_by_norm: t * max_norm / max(||t||, max_norm))."""
    if max_norm is None:
        return params
    ids_rank = ids.shape.rank
    params_rank = params.shape.rank
    if ids_rank is None or params_rank is None:
        axes = _range(shape_ops.rank(ids), shape_ops.rank(params))
    else:
        axes = list(range(ids_rank, params_rank))
    return clip_ops.clip_by_norm(params, max_norm, axes)


def _transform(rows, transform_fn):
    return rows if transform_fn is None else transform_fn(rows)


def _range(start, limit):
    return range_(start, limit)


def _rows(p):
    """Static first dimension of a table (tensor or variable), or None."""
    shape = p.shape if hasattr(p, "shape") else p.get_shape()
    if shape.rank is None or shape.rank == 0:
        return None
    return shape.as_list()[0]


def _first_dim(p):
    if hasattr(p, "sparse_read") and hasattr(p, "handle"):
        return variable_shape(p.handle)[0]
    return shape_ops.shape(p)[0]


def _shards(params):
    """The tables of `params` as a list: a PartitionedVariable is its shard variables (TF looks
    up its shards, it never concatenates them), a single table a list of one."""
    if hasattr(params, "_get_variable_list"):
        return list(params._get_variable_list())
    if not isinstance(params, (list, tuple)):
        return [params]
    return list(params)


def embedding_lookup(params: Union[TensorLike, Sequence[TensorLike]], ids: TensorLike, partition_strategy: str = "mod",
                     name: Name = None, validate_indices: bool = True, max_norm: Optional[float] = None) -> Tensor:
    """Rows `ids` of the embedding table `params`.

    Args:
      params: a tensor or Variable (the whole table), or a list of them: the table split by rows
        into partitions, all with the same inner shape.
      ids: int32 or int64 ids of any shape, each in [0, total rows).
      partition_strategy: with several partitions, "mod" puts id i in partition i % n at row
        i // n; "div" splits the ids into n contiguous ranges, the first (total % n) of them one
        longer (TF's exact mapping).
      ids may also be a RaggedTensor: the result is then ragged with the same rows.
      max_norm: if given, each looked-up embedding with a larger L2 norm is scaled down to it.
    Returns:
      Shape `ids.shape + params.shape[1:]`, dtype of params.
    Raises:
      InvalidArgumentError: an id out of range; ValueError: an unknown partition_strategy or no params.
    """
    return _embedding_lookup_and_transform(params, ids, partition_strategy, name, max_norm)


def _embedding_lookup_and_transform(params, ids, partition_strategy="mod", name=None, max_norm=None,
                                    transform_fn=None):
    """embedding_lookup, with `transform_fn` applied to the looked-up (and clipped) rows of each
    partition before they are put back in the order of `ids` (TF's private helper of that name)."""
    if isinstance(ids, RaggedTensor):
        return ids.with_flat_values(_embedding_lookup_and_transform(
            params, ids.flat_values, partition_strategy, name, max_norm, transform_fn))
    if partition_strategy not in ("mod", "div"):
        raise ValueError(f"Unrecognized partition strategy: {partition_strategy}")
    params = _shards(params)
    params = [p if _is_table(p) else convert_to_tensor(p) for p in params]
    if not params:
        raise ValueError("Need at least one param")
    with name_scope(name, "embedding_lookup"):
        n = len(params)
        if not isinstance(ids, Tensor):
            ids = convert_to_tensor(ids)
        if ids.dtype not in (dtypes.int32, dtypes.int64):
            # what gather says for one table; a partitioned table must refuse them before doing
            # arithmetic on them (uint8 / bool ids cannot even hold the -1 of an out-of-range id)
            raise errors.invalid_input(errors.OpName("GatherV2", name), "indices", f"dtype {ids.dtype.name} is not "
                                       "supported (attr Tindices: one of int32, int64)", cls=errors.DTypeError)
        if n == 1 and (transform_fn is None or ids.shape.rank == 1):
            # (a transform sees rows of flat ids, as in TF: other id ranks take the general path)
            result = _transform(_clip(gather_ops.gather(params[0], ids), ids, max_norm), transform_fn)
            return shape_ops.identity(result)
        flat_ids = shape_ops.reshape(ids, [-1])
        original_indices = _range(0, shape_ops.size(flat_ids))
        if partition_strategy == "mod":
            p_assignments = cw.floormod(flat_ids, n)
            new_ids = cw.floordiv(flat_ids, n)
        else:
            rows = [_rows(p) for p in params]
            if all(r is not None for r in rows):
                total = convert_to_tensor(sum(rows), dtype=flat_ids.dtype)
            else:
                total = reduction_ops.add_n([cast_ops.cast(_first_dim(p), flat_ids.dtype) for p in params])
            per = cw.floordiv(total, n)
            extras = cw.floormod(total, n)
            # Ids below extras * (per + 1) live in the first `extras` partitions of per + 1 rows each.
            p_assignments = cw.maximum(cw.floordiv(flat_ids, per + 1), cw.floordiv(flat_ids - extras, per))
            new_ids = cw.where_v2(cw.less(p_assignments, extras), cw.floormod(flat_ids, per + 1),
                                  cw.floormod(flat_ids - extras, per))
        # An id outside [0, total) gets a partition outside [0, n), which dynamic_partition refuses.
        # Clipped to [-1, n] first: cast to int32 as it is, the partition of a huge id wraps into
        # [0, n) ('div': -2**63 + 1 -> 0, 2**32 + 1 -> 0) and the lookup answers a wrong row.
        p_assignments = cw.minimum(cw.maximum(p_assignments, convert_to_tensor(-1, dtype=p_assignments.dtype)),
                                   convert_to_tensor(n, dtype=p_assignments.dtype))
        p_assignments = cast_ops.cast(p_assignments, dtypes.int32)
        gather_ids = stitch_ops.dynamic_partition(new_ids, p_assignments, n)
        pindices = stitch_ops.dynamic_partition(original_indices, p_assignments, n)
        partitioned = [_transform(_clip(gather_ops.gather(p, i), i, max_norm), transform_fn)
                       for p, i in zip(params, gather_ids)]
        ret = stitch_ops.dynamic_stitch(pindices, partitioned)
        # the rows' static shape: the tables' (or, with transform_fn, the transformed rows')
        inner = tensor_shape.unknown_shape()
        for s in ([p.shape for p in partitioned] if transform_fn is not None else
                  [p.shape if hasattr(p, "shape") else p.get_shape() for p in params]):
            if s.rank is not None:
                inner = inner.merge_with(s[1:]) if inner.rank is not None else s[1:]
        if inner.is_fully_defined():
            inner_t = convert_to_tensor(inner.as_list(), dtype=dtypes.int32)
        else:
            inner_t = shape_ops.shape(ret)[1:]
        out = shape_ops.reshape(ret, join_ops.concat([shape_ops.shape(ids), inner_t], 0))
        if not context.executing_eagerly() and inner.rank is not None:
            out.set_shape(ids.shape.concatenate(inner))     # what TF's lookup knows statically
        return out


def embedding_lookup_v2(params: Union[TensorLike, Sequence[TensorLike]], ids: TensorLike,
                        max_norm: Optional[float] = None, name: Name = None) -> Tensor:
    """TF2's embedding_lookup: "div" partitioning."""
    return embedding_lookup(params, ids, "div", name, max_norm=max_norm)


def _sparse_pair(sp_ids, sp_weights, what=("sp_ids", "sp_weights")):
    """(sp_ids, sp_weights) as SparseTensors: RaggedTensors (both, or ids with weights None) are
    converted; mixing kinds is a TypeError; static shapes that cannot match are a ValueError."""
    ids_name, weights_name = what
    if isinstance(sp_ids, RaggedTensor):
        if sp_weights is not None and not isinstance(sp_weights, RaggedTensor):
            raise TypeError(f"{ids_name} and {weights_name} must be of the same type: {ids_name} is a "
                            f"RaggedTensor, {weights_name} a {type(sp_weights).__name__}")
        if sp_weights is not None:
            _compatible(sp_ids.flat_values, sp_weights.flat_values, "values", what)
            for a, b in zip(sp_ids.nested_row_splits, sp_weights.nested_row_splits):
                _compatible(a, b, "row_splits", what)
            sp_weights = sp_weights.to_sparse()
        return sp_ids.to_sparse(), sp_weights
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError(f"{ids_name} must be SparseTensor or RaggedTensor, got {type(sp_ids).__name__}")
    if sp_weights is not None:
        if not isinstance(sp_weights, SparseTensor):
            raise TypeError(f"{weights_name} must be either None or SparseTensor (as {ids_name} is), got "
                            f"{type(sp_weights).__name__}")
        _compatible(sp_ids.values, sp_weights.values, "values", what)
        _compatible(sp_ids.indices, sp_weights.indices, "indices", what)
        _compatible(sp_ids.dense_shape, sp_weights.dense_shape, "dense_shape", what)
    return sp_ids, sp_weights


def _compatible(a, b, part, what):
    if not a.shape.is_compatible_with(b.shape):
        raise ValueError(f"{what[0]}.{part} shape {a.shape} and {what[1]}.{part} shape {b.shape} are "
                         "incompatible")


def embedding_lookup_sparse(params: Union[TensorLike, Sequence[TensorLike]], sp_ids: SparseTensor,
                            sp_weights: Optional[SparseTensor], partition_strategy: str = "mod", name: Name = None,
                            combiner: Optional[str] = None, max_norm: Optional[float] = None,
                            allow_fast_lookup: bool = False) -> Tensor:
    """For each row of the sparse id matrix `sp_ids`, the embeddings of its ids combined.

    Args:
      params: as for embedding_lookup.
      sp_ids: SparseTensor [batch, max_ids] of int64 ids (indices in row-major order), or a
        RaggedTensor of ids (one row per batch entry).
      sp_weights: SparseTensor (RaggedTensor) of float weights with sp_ids' indices (rows), or None
        (all weights 1).
      combiner: "mean" (default; weighted mean), "sum" (weighted sum) or "sqrtn" (weighted sum
        divided by the square root of the sum of squared weights).
      allow_fast_lookup: accepted (TF's switch between two implementations of the same result).
    Returns:
      Shape `[rows, ...] + params.shape[1:]`, rows = the largest row of sp_ids with an id, plus 1
      (as TF; rows without ids hold 0).
    Raises:
      TypeError: ids and weights of different kinds; ValueError: an unknown combiner, or ids and
        weights whose static shapes differ.
    """
    if combiner is None:
        combiner = "mean"
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner!r}")
    sp_ids, sp_weights = _sparse_pair(sp_ids, sp_weights)
    ignore_weights = sp_weights is None
    with name_scope(name, "embedding_lookup_sparse"):
        segment_ids = cast_ops.cast(sp_ids.indices[:, 0], dtypes.int32)
        ids, idx = unique_ops.unique(sp_ids.values)
        embeddings = embedding_lookup(params, ids, partition_strategy=partition_strategy, max_norm=max_norm)
        if ignore_weights:
            op = {"sum": segment_ops.sparse_segment_sum, "mean": segment_ops.sparse_segment_mean,
                  "sqrtn": segment_ops.sparse_segment_sqrt_n}[combiner]
            return op(embeddings, idx, segment_ids)
        weights = sp_weights.values
        if weights.dtype != embeddings.dtype:
            weights = cast_ops.cast(weights, embeddings.dtype)
        embeddings = gather_ops.gather(embeddings, idx)
        # weights broadcast over the embedding dims: shape [n, 1, ..., 1]
        ones = shape_ops.fill(shape_ops.reshape(shape_ops.rank(embeddings) - 1, [1]), 1)
        weights = shape_ops.reshape(weights, join_ops.concat([shape_ops.shape(weights), ones], 0))
        embeddings = embeddings * weights
        summed = segment_ops.segment_sum(embeddings, segment_ids)
        if combiner == "sum":
            return summed
        if combiner == "mean":
            return cw.div_no_nan(summed, segment_ops.segment_sum(weights, segment_ids))
        return cw.div_no_nan(summed, cw.sqrt(segment_ops.segment_sum(weights * weights, segment_ids)))


def embedding_lookup_sparse_v2(params: Union[TensorLike, Sequence[TensorLike]], sp_ids: SparseTensor,
                               sp_weights: Optional[SparseTensor], combiner: Optional[str] = None,
                               max_norm: Optional[float] = None, name: Name = None,
                               allow_fast_lookup: bool = False) -> Tensor:
    """TF2's embedding_lookup_sparse: "div" partitioning."""
    return embedding_lookup_sparse(params, sp_ids, sp_weights, "div", name, combiner, max_norm,
                                   allow_fast_lookup=allow_fast_lookup)


def _tables_for_safe_lookup(embedding_weights, dtype):
    """The tables, each a tensor (or variable) of one dtype: `dtype` (the weights') when given."""
    if embedding_weights is None:
        raise ValueError("Missing embedding_weights None.")
    tables = _shards(embedding_weights)
    if not tables:
        raise ValueError("Missing embedding_weights [].")
    out = []
    for w in tables:
        if hasattr(w, "sparse_read"):
            if dtype is not None and w.dtype.base_dtype != dtype:
                raise ValueError(f"embedding_weights of dtype {w.dtype.base_dtype.name} do not match the sparse "
                                 f"weights' dtype {dtype.name}")
            out.append(w)
        elif isinstance(w, Tensor) or dtype is None:
            out.append(convert_to_tensor(w, dtype=dtype))
        else:   # NumPy or Python values are cast to the weights' dtype (as TF's constant conversion)
            out.append(convert_to_tensor(np.asarray(w, dtype=dtype.as_numpy_dtype)))
    first = out[0].dtype.base_dtype
    for w in out[1:]:
        if w.dtype.base_dtype != first:
            raise TypeError(f"all embedding_weights must have the same dtype, got {first.name} and "
                            f"{w.dtype.base_dtype.name}")
    return out


def safe_embedding_lookup_sparse(embedding_weights: TensorLike, sparse_ids: SparseTensor,
                                 sparse_weights: Optional[SparseTensor] = None, combiner: Optional[str] = "mean",
                                 default_id: Optional[int] = None, name: Name = None, partition_strategy: str = "div",
                                 max_norm: Optional[float] = None, allow_fast_lookup: bool = False) -> Tensor:
    """embedding_lookup_sparse that drops invalid ids and gives every row of the batch an output.

    Ids < 0 are dropped, and with a combiner other than "sum" so are ids whose weight is <= 0
    (as TF). A row left without ids gets the embedding of `default_id`, or 0 without one.
    `sparse_ids` may have rank > 2 ([d0, ..., dn-1, ids]): the result is then
    [d0, ..., dn-1, embedding dims]. RaggedTensor ids (and weights) are accepted too.
    """
    sparse_ids, sparse_weights = _sparse_pair(sparse_ids, sparse_weights, ("sparse_ids", "sparse_weights"))
    dtype = sparse_weights.dtype if sparse_weights is not None else None
    tables = _tables_for_safe_lookup(embedding_weights, dtype)
    with name_scope(name, "embedding_lookup"):
        original_shape = sparse_ids.dense_shape
        rank = sparse_ids.indices.shape.as_list()[1] if sparse_ids.indices.shape.rank == 2 else None
        if rank is None:
            rank = sparse_ids.dense_shape.shape.as_list()[0] if sparse_ids.dense_shape.shape.rank == 1 else None
        if rank is None:
            raise ValueError("safe_embedding_lookup_sparse: the rank of sparse_ids must be known")
        if rank > 2:
            sparse_ids = _collapse_leading(sparse_ids)
            if sparse_weights is not None:
                sparse_weights = SparseTensor(sparse_ids.indices, sparse_weights.values, sparse_ids.dense_shape)
        keep = cw.greater_equal(sparse_ids.values, convert_to_tensor(0, dtype=sparse_ids.values.dtype))
        if sparse_weights is not None and combiner != "sum":
            keep = cw.logical_and(keep, cw.greater(sparse_weights.values,
                                                   shape_ops.zeros_like(sparse_weights.values)))
        kept = cw.where_v2(keep)[:, 0]
        ids = SparseTensor(gather_ops.gather(sparse_ids.indices, kept), gather_ops.gather(sparse_ids.values, kept),
                           sparse_ids.dense_shape)
        weights = None if sparse_weights is None else SparseTensor(
            ids.indices, gather_ops.gather(sparse_weights.values, kept), sparse_ids.dense_shape)
        result = embedding_lookup_sparse(tables, ids, weights, partition_strategy=partition_strategy,
                                         combiner=combiner, max_norm=max_norm)
        batch = cast_ops.cast(sparse_ids.dense_shape[0], dtypes.int32)
        rows = shape_ops.shape(result)[0]
        pad = shape_ops.zeros(join_ops.concat([shape_ops.reshape(batch - rows, [1]), shape_ops.shape(result)[1:]], 0),
                              dtype=result.dtype)
        result = join_ops.concat([result, pad], 0)
        if default_id is not None:
            has = segment_ops.unsorted_segment_sum(cast_ops.cast(shape_ops.ones_like(kept), result.dtype),
                                                   cast_ops.cast(ids.indices[:, 0], dtypes.int32), batch)
            # TF looks up a filled-in default_id (weight 1) in each empty row: clipped like any id
            default = embedding_lookup(tables, [default_id], partition_strategy=partition_strategy,
                                       max_norm=max_norm)
            empty = cw.equal(has, shape_ops.zeros_like(has))
            # one bool per row, broadcast over every embedding dimension
            ones = shape_ops.ones(shape_ops.reshape(shape_ops.rank(result) - 1, [1]), dtype=dtypes.int32)
            empty = shape_ops.reshape(empty, join_ops.concat([[-1], ones], 0))
            result = cw.where_v2(empty, default, result)
        inner = result.shape[1:]
        if rank > 2:
            lead = cast_ops.cast(original_shape[:-1], dtypes.int32)
            result = shape_ops.reshape(result, join_ops.concat([lead, shape_ops.shape(result)[1:]], 0))
        if not context.executing_eagerly() and inner.rank is not None:
            result.set_shape(tensor_shape.unknown_shape(rank=rank - 1).concatenate(inner))
        return result


def _collapse_leading(sp):
    """A SparseTensor of rank > 2 as rank 2: its leading dimensions merged into one (row-major)."""
    lead = sp.dense_shape[:-1]
    strides = reduction_ops.cumprod(lead, exclusive=True, reverse=True)   # of each leading dimension
    rows = reduction_ops.reduce_sum(sp.indices[:, :-1] * shape_ops.reshape(strides, [1, -1]), 1)
    indices = join_ops.stack([rows, sp.indices[:, -1]], 1)
    dense_shape = join_ops.stack([reduction_ops.reduce_prod(lead), sp.dense_shape[-1]])
    return SparseTensor(indices, sp.values, dense_shape)


def safe_embedding_lookup_sparse_v2(embedding_weights: TensorLike, sparse_ids: SparseTensor,
                                    sparse_weights: Optional[SparseTensor] = None, combiner: Optional[str] = "mean",
                                    default_id: Optional[int] = None, max_norm: Optional[float] = None,
                                    name: Name = None, allow_fast_lookup: bool = False) -> Tensor:
    """TF2's safe_embedding_lookup_sparse: "div" partitioning (`allow_fast_lookup` is accepted; the
    lookup is the same)."""
    return safe_embedding_lookup_sparse(embedding_weights, sparse_ids, sparse_weights, combiner=combiner,
                                        default_id=default_id, name=name, partition_strategy="div",
                                        max_norm=max_norm)

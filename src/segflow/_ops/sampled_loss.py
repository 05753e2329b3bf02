"""Sampled losses (TF's nn_impl): `nce_loss` and `sampled_softmax_loss`, and the logits both are
computed from (`_compute_sampled_logits`), built from public ops only.

For each example the logits are those of its `num_true` true classes and of the `num_sampled`
classes a candidate sampler drew for the whole batch (log-uniform, unique, by default), each minus
the log of its expected count; with `remove_accidental_hits`, a sampled class equal to one of the
row's true classes gets -FLT_MAX added. The weights and biases are looked up with
`embedding_lookup`, so their gradients are IndexedSlices of the rows used. NCE scores the logits
with sigmoid cross entropy (true labels 1 / num_true, sampled 0) summed per row; sampled softmax
with softmax cross entropy.

Deliberate difference from TF: the expected counts (float32 from the samplers) are cast to the
inputs' dtype, so float64 inputs work with the default sampler (TF fails on a float64 - float32 Sub).
"""
from segflow._core import dtypes
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._core.tensor import Tensor
from segflow._ops import cast as cast_ops, elementwise as cw, join as join_ops, linalg as linalg_ops
from segflow._ops import reduce as ro, scatter as scatter_ops, shape as so, slicing, transpose as transpose_ops
from segflow._ops import nn as nn_ops
from segflow._ops.candidate_sampling import compute_accidental_hits, log_uniform_candidate_sampler
from segflow._ops.embedding import embedding_lookup

__all__ = ["nce_loss", "nce_loss_v2", "sampled_softmax_loss", "sampled_softmax_loss_v2"]


def _tensor(x, dtype=None):
    return x if isinstance(x, Tensor) else convert_to_tensor(x, dtype=dtype)


def _as(x, dtype):
    return x if x.dtype == dtype else cast_ops.cast(x, dtype)


def _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
                            sampled_values=None, subtract_log_q=True, remove_accidental_hits=False,
                            partition_strategy="mod", name=None, seed=None):
    """(logits, labels), both [batch_size, num_true + num_sampled]: the true classes' columns first.

    Args as `nce_loss`; `subtract_log_q`: subtract log(expected count) from each logit.
    """
    with name_scope(name, "compute_sampled_logits"):
        inputs = _tensor(inputs)
        labels = _as(_tensor(labels, dtypes.int64), dtypes.int64)
        labels_flat = so.reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(labels, num_true, num_sampled, True, num_classes,
                                                           seed=seed)
        sampled, true_count, sampled_count = (so.stop_gradient(_tensor(s)) for s in sampled_values)
        sampled = _as(sampled, dtypes.int64)

        # one lookup of the true and sampled rows: the tables' gradients are one IndexedSlices each
        all_ids = join_ops.concat([labels_flat, sampled], 0)
        all_w = _as(embedding_lookup(weights, all_ids, partition_strategy=partition_strategy), inputs.dtype)
        all_b = _as(embedding_lookup(biases, all_ids, partition_strategy=partition_strategy), inputs.dtype)
        n_true = so.shape(labels_flat)[0]
        true_w = slicing.slice(all_w, [0, 0], join_ops.stack([n_true, -1]))
        sampled_w = slicing.slice(all_w, join_ops.stack([n_true, 0]), [-1, -1])
        true_b = slicing.slice(all_b, [0], so.shape(labels_flat))
        sampled_b = slicing.slice(all_b, so.shape(labels_flat), [-1])

        # sampled logits [batch, num_sampled]: every example against every sampled class
        sampled_logits = cw.add(linalg_ops.matmul(inputs, sampled_w, transpose_b=True), sampled_b)
        # true logits [batch, num_true]: each example against its own true classes
        dim = so.shape(true_w)[1:2]
        true_w = so.reshape(true_w, join_ops.concat([[-1, num_true], dim], 0))
        true_logits = ro.reduce_sum(cw.multiply(transpose_ops.expand_dims(inputs, 1), true_w), axis=2)
        true_logits = cw.add(true_logits, so.reshape(true_b, [-1, num_true]))

        if remove_accidental_hits:
            rows, cols, hit_weights = compute_accidental_hits(labels, sampled, num_true=num_true)
            where = join_ops.concat([so.reshape(rows, [-1, 1]), so.reshape(_as(cols, dtypes.int32), [-1, 1])], 1)
            logits_shape = join_ops.concat([so.shape(labels)[:1], [num_sampled]], 0)
            # assigned, not added: a class that is twice a row's true class is masked once
            mask = scatter_ops.tensor_scatter_nd_update(so.zeros(logits_shape, sampled_logits.dtype), where,
                                                        _as(hit_weights, sampled_logits.dtype))
            sampled_logits = cw.add(sampled_logits, mask)

        if subtract_log_q:
            true_logits = cw.subtract(true_logits, cw.log(_as(true_count, true_logits.dtype)))
            sampled_logits = cw.subtract(sampled_logits, cw.log(_as(sampled_count, sampled_logits.dtype)))

        out_logits = join_ops.concat([true_logits, sampled_logits], 1)
        out_labels = join_ops.concat([cw.truediv(so.ones_like(true_logits), cast_ops.cast(num_true, true_logits.dtype)),
                                      so.zeros_like(sampled_logits)], 1)
        return out_logits, out_labels


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=None,
             remove_accidental_hits=False, partition_strategy="mod", name="nce_loss"):
    """Noise-contrastive estimation loss per example (TF1 spelling: `partition_strategy` "mod").

    Args:
      weights: [num_classes, dim] tensor or Variable, or a list of them (a table split by rows; a
        PartitionedVariable too). biases: [num_classes].
      labels: int [batch_size, num_true] true classes. inputs: [batch_size, dim] float.
      num_sampled: classes sampled for the batch; num_classes: their range.
      sampled_values: (sampled_candidates, true_expected_count, sampled_expected_count) from a
        candidate sampler; default: log_uniform_candidate_sampler(unique=True).
      remove_accidental_hits: mask sampled classes that are a row's true class.
    Returns:
      [batch_size]: the sum over the row's true and sampled logits of their sigmoid cross entropy.
    """
    logits, labels = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true=num_true, sampled_values=sampled_values,
        subtract_log_q=True, remove_accidental_hits=remove_accidental_hits, partition_strategy=partition_strategy,
        name=name)
    losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="sampled_losses")
    return ro.reduce_sum(losses, axis=1)


def nce_loss_v2(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=None,
                remove_accidental_hits=False, name="nce_loss"):
    """TF2's nce_loss: as `nce_loss`, a list of weights split by "div"."""
    return nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=num_true,
                    sampled_values=sampled_values, remove_accidental_hits=remove_accidental_hits,
                    partition_strategy="div", name=name)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1, sampled_values=None,
                         remove_accidental_hits=True, partition_strategy="mod", name="sampled_softmax_loss",
                         seed=None):
    """Sampled softmax loss per example (TF1 spelling): softmax cross entropy over the true and sampled
    logits, the true classes' target 1 / num_true each. Args as `nce_loss`; `seed` seeds the default
    sampler. Returns [batch_size]."""
    logits, labels = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true=num_true, sampled_values=sampled_values,
        subtract_log_q=True, remove_accidental_hits=remove_accidental_hits, partition_strategy=partition_strategy,
        name=name, seed=seed)
    labels = so.stop_gradient(labels, name="labels_stop_gradient")
    return nn_ops.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)


def sampled_softmax_loss_v2(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
                            sampled_values=None, remove_accidental_hits=True, seed=None, name="sampled_softmax_loss"):
    """TF2's sampled_softmax_loss: as `sampled_softmax_loss`, a list of weights split by "div"."""
    return sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=num_true,
                                sampled_values=sampled_values, remove_accidental_hits=remove_accidental_hits,
                                partition_strategy="div", name=name, seed=seed)

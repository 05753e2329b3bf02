"""`sf.compat.v1.nn` (TensorFlow 1's `tf.nn`): the TF1 spellings - `embedding_lookup(params, ids,
partition_strategy="mod", ...)` and the sparse lookups with `partition_strategy`, and the v1
`softmax_cross_entropy_with_logits` (no gradient for the labels)."""
# sampled losses and candidate samplers (issue 13 item 4)
from segflow._ops.candidate_sampling import (
    all_candidate_sampler, compute_accidental_hits, fixed_unigram_candidate_sampler, learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler, uniform_candidate_sampler
)
from segflow._ops.sampled_loss import nce_loss, sampled_softmax_loss
from segflow._ops.nn import (
    bias_add, l2_loss, l2_normalize, leaky_relu, log_softmax, relu, relu6, sigmoid,
    sigmoid_cross_entropy_with_logits, softmax, softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2, softplus, sparse_softmax_cross_entropy_with_logits, tanh,
    xw_plus_b
)
from segflow._ops.embedding import embedding_lookup, embedding_lookup_sparse, safe_embedding_lookup_sparse
from segflow._ops.sort import top_k
from segflow._ops.nn_conv import conv2d, max_pool, max_pool2d
# smallops (issue 13 item 8): dropout, moments, batch normalization (TF1 spellings)
from segflow._ops.dropout import dropout_v1 as dropout
from segflow._ops.moments import (batch_normalization, moments_v1 as moments, normalize_moments,
                                 weighted_moments_v1 as weighted_moments)

__all__ = ["bias_add", "conv2d", "max_pool", "max_pool2d", "embedding_lookup", "embedding_lookup_sparse", "l2_loss", "l2_normalize",
           "all_candidate_sampler", "compute_accidental_hits", "fixed_unigram_candidate_sampler",  # issue 13 item 4
           "learned_unigram_candidate_sampler", "log_uniform_candidate_sampler", "uniform_candidate_sampler",
           "nce_loss", "sampled_softmax_loss",
           "leaky_relu", "log_softmax", "relu", "relu6", "safe_embedding_lookup_sparse", "sigmoid",
           "sigmoid_cross_entropy_with_logits", "softmax", "softmax_cross_entropy_with_logits",
           "softmax_cross_entropy_with_logits_v2", "softplus", "sparse_softmax_cross_entropy_with_logits",
           "tanh", "top_k", "xw_plus_b",
           "dropout", "batch_normalization", "moments", "normalize_moments", "weighted_moments"]  # smallops

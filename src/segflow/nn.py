"""`sf.nn` (TensorFlow 2's `tf.nn`): activations, softmax and cross entropies, embedding lookups,
2-D convolution and max pooling.

The TF2 spellings: `embedding_lookup(params, ids, max_norm=None, name=None)` and the sparse lookups
partition a sharded table by "div", and `softmax_cross_entropy_with_logits` is the v2 op (the
labels get a gradient too). `sf.compat.v1.nn` has the TF1 spellings.
"""
# sampled losses and candidate samplers (issue 13 item 4)
from segflow._ops.candidate_sampling import (
    all_candidate_sampler, compute_accidental_hits, fixed_unigram_candidate_sampler, learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler, uniform_candidate_sampler
)
from segflow._ops.sampled_loss import nce_loss_v2 as nce_loss, sampled_softmax_loss_v2 as sampled_softmax_loss
from segflow._ops.nn import (
    bias_add, l2_loss, l2_normalize, leaky_relu, log_softmax, relu, relu6, sigmoid,
    sigmoid_cross_entropy_with_logits, softmax, softmax_cross_entropy_with_logits_v2, softplus,
    sparse_softmax_cross_entropy_with_logits, tanh, xw_plus_b
)
from segflow._ops.nn import softmax_cross_entropy_with_logits_v2 as softmax_cross_entropy_with_logits
from segflow._ops.embedding import embedding_lookup_v2 as embedding_lookup
from segflow._ops.embedding import embedding_lookup_sparse_v2 as embedding_lookup_sparse
from segflow._ops.embedding import safe_embedding_lookup_sparse_v2 as safe_embedding_lookup_sparse
from segflow._ops.sort import top_k
from segflow._ops.nn_conv import conv2d_v2 as conv2d, max_pool2d, max_pool_v2 as max_pool
# smallops (issue 13 item 8): dropout, moments, batch normalization
from segflow._ops.dropout import dropout
from segflow._ops.moments import batch_normalization, moments, normalize_moments, weighted_moments

__all__ = ["bias_add", "conv2d", "embedding_lookup", "embedding_lookup_sparse", "l2_loss", "l2_normalize",
           "all_candidate_sampler", "compute_accidental_hits", "fixed_unigram_candidate_sampler",  # issue 13 item 4
           "learned_unigram_candidate_sampler", "log_uniform_candidate_sampler", "uniform_candidate_sampler",
           "nce_loss", "sampled_softmax_loss",
           "leaky_relu", "log_softmax", "relu", "relu6", "safe_embedding_lookup_sparse", "sigmoid",
           "sigmoid_cross_entropy_with_logits", "softmax", "softmax_cross_entropy_with_logits",
           "softmax_cross_entropy_with_logits_v2", "softplus", "sparse_softmax_cross_entropy_with_logits",
           "tanh", "top_k", "xw_plus_b", "max_pool", "max_pool2d",
           "dropout", "batch_normalization", "moments", "normalize_moments", "weighted_moments"]  # smallops

"""`sf.nn` (TensorFlow's `tf.nn`): activations, softmax and cross entropies, embedding lookups."""
from segflow._ops.nn import (
    bias_add, l2_loss, l2_normalize, leaky_relu, log_softmax, relu, relu6, sigmoid,
    sigmoid_cross_entropy_with_logits, softmax, softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2, softplus, sparse_softmax_cross_entropy_with_logits, tanh,
    xw_plus_b
)
from segflow._ops.embedding import embedding_lookup, embedding_lookup_sparse, safe_embedding_lookup_sparse
from segflow._ops.sort import top_k

__all__ = ["bias_add", "embedding_lookup", "embedding_lookup_sparse", "l2_loss", "l2_normalize",
           "leaky_relu", "log_softmax", "relu", "relu6", "safe_embedding_lookup_sparse", "sigmoid",
           "sigmoid_cross_entropy_with_logits", "softmax", "softmax_cross_entropy_with_logits",
           "softmax_cross_entropy_with_logits_v2", "softplus", "sparse_softmax_cross_entropy_with_logits",
           "tanh", "top_k", "xw_plus_b"]

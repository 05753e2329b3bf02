"""TensorFlow's `ops.nn` module name (what `tf.nn` is built from: nn_ops, nn_impl and the embedding
lookups): a face over segflow._ops.nn, nn_conv, embedding and sort."""
from segflow._ops.nn import (
    bias_add, l2_loss, l2_normalize, leaky_relu, log_softmax, relu, relu6, sigmoid,
    sigmoid_cross_entropy_with_logits, softmax, softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2, softplus, sparse_softmax_cross_entropy_with_logits, tanh,
    xw_plus_b
)
from segflow._ops.embedding import (
    embedding_lookup, embedding_lookup_sparse, embedding_lookup_sparse_v2, embedding_lookup_v2,
    safe_embedding_lookup_sparse, safe_embedding_lookup_sparse_v2
)
from segflow._ops.sort import top_k
from segflow._ops.nn_conv import (
    conv2d, conv2d_backprop_filter, conv2d_backprop_input, conv2d_v2, max_pool, max_pool2d, max_pool_v2
)

__all__ = ["bias_add", "conv2d", "conv2d_backprop_filter", "conv2d_backprop_input", "conv2d_v2", "embedding_lookup", "embedding_lookup_sparse", "embedding_lookup_sparse_v2",
           "embedding_lookup_v2", "l2_loss", "l2_normalize", "leaky_relu", "log_softmax", "relu", "relu6",
           "safe_embedding_lookup_sparse", "safe_embedding_lookup_sparse_v2", "sigmoid",
           "sigmoid_cross_entropy_with_logits", "softmax", "softmax_cross_entropy_with_logits",
           "softmax_cross_entropy_with_logits_v2", "softplus", "sparse_softmax_cross_entropy_with_logits",
           "tanh", "top_k", "xw_plus_b", "max_pool", "max_pool2d", "max_pool_v2"]

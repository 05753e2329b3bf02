"""TensorFlow's `nn_impl` module name: a face over nn_ops (no logic of its own).

    from segflow.ops import nn_impl
    nn_impl.l2_normalize(x, dim=1)
"""
from segflow._ops.nn import (
    bias_add, l2_loss, l2_normalize, log_softmax, relu, relu6, leaky_relu, sigmoid,
    sigmoid_cross_entropy_with_logits, softmax, softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2, sparse_softmax_cross_entropy_with_logits, softplus, tanh
)

__all__ = ["bias_add", "l2_loss", "l2_normalize", "log_softmax", "relu", "relu6", "leaky_relu", "sigmoid",
           "sigmoid_cross_entropy_with_logits", "softmax", "softmax_cross_entropy_with_logits",
           "softmax_cross_entropy_with_logits_v2", "sparse_softmax_cross_entropy_with_logits", "softplus", "tanh"]

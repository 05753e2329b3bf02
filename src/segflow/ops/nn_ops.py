"""TensorFlow's `nn_ops` module name: a face over segflow._ops.nn."""
from segflow._ops.nn import (
    relu, relu6, leaky_relu, softmax, log_softmax, sparse_softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits, softmax_cross_entropy_with_logits_v2, bias_add, l2_normalize,
    l2_loss, sigmoid_cross_entropy_with_logits, sigmoid, tanh, softplus, xw_plus_b
)

__all__ = [
    'relu', 'relu6', 'leaky_relu', 'softmax', 'log_softmax',
    'sparse_softmax_cross_entropy_with_logits', 'softmax_cross_entropy_with_logits',
    'softmax_cross_entropy_with_logits_v2', 'bias_add', 'l2_normalize', 'l2_loss',
    'sigmoid_cross_entropy_with_logits', 'sigmoid', 'tanh', 'softplus', 'xw_plus_b'
]

"""TensorFlow's `nn_ops` module name: a face over segflow._ops.nn and nn_conv."""
from segflow._ops.nn import (
    relu, relu6, leaky_relu, softmax, log_softmax, sparse_softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits, softmax_cross_entropy_with_logits_v2, bias_add, l2_normalize,
    l2_loss, sigmoid_cross_entropy_with_logits, sigmoid, tanh, softplus, xw_plus_b
)
from segflow._ops.nn_conv import (
    conv2d, conv2d_v2, conv2d_backprop_input, conv2d_backprop_filter, max_pool, max_pool_v2, max_pool2d,
    max_pool_grad
)

__all__ = [
    'relu', 'relu6', 'leaky_relu', 'softmax', 'log_softmax',
    'sparse_softmax_cross_entropy_with_logits', 'softmax_cross_entropy_with_logits',
    'softmax_cross_entropy_with_logits_v2', 'bias_add', 'l2_normalize', 'l2_loss',
    'sigmoid_cross_entropy_with_logits', 'sigmoid', 'tanh', 'softplus', 'xw_plus_b', 'conv2d', 'conv2d_v2',
    'conv2d_backprop_input', 'conv2d_backprop_filter', 'max_pool', 'max_pool_v2', 'max_pool2d', 'max_pool_grad'
]

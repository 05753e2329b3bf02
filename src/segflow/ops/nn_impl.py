"""TensorFlow's `nn_impl` module name: a face over nn_ops (no logic of its own).

    from segflow.ops import nn_impl
    nn_impl.l2_normalize(x, dim=1)
"""
# sampled losses and candidate samplers (issue 13 item 4)
from segflow._ops.sampled_loss import nce_loss, nce_loss_v2, sampled_softmax_loss, sampled_softmax_loss_v2
from segflow._ops.nn import (
    bias_add, l2_loss, l2_normalize, log_softmax, relu, relu6, leaky_relu, sigmoid,
    sigmoid_cross_entropy_with_logits, softmax, softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2, sparse_softmax_cross_entropy_with_logits, softplus, tanh
)
# smallops (issue 13 item 8)
from segflow._ops.moments import (batch_normalization, moments as moments_v2, moments_v1 as moments, normalize_moments,
                                 weighted_moments as weighted_moments_v2, weighted_moments_v1 as weighted_moments)

__all__ = ["bias_add", "l2_loss", "l2_normalize", "log_softmax", "relu", "relu6", "leaky_relu", "sigmoid",
           "nce_loss", "nce_loss_v2", "sampled_softmax_loss", "sampled_softmax_loss_v2",  # issue 13 item 4
           "sigmoid_cross_entropy_with_logits", "softmax", "softmax_cross_entropy_with_logits",
           "softmax_cross_entropy_with_logits_v2", "sparse_softmax_cross_entropy_with_logits", "softplus", "tanh",
           "batch_normalization", "moments", "moments_v2", "normalize_moments", "weighted_moments",
           "weighted_moments_v2"]  # smallops

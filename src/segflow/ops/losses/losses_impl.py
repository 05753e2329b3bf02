"""TensorFlow's `losses_impl` module name: a face over segflow._ops.losses."""
from segflow._ops.losses import (
    Reduction, absolute_difference, compute_weighted_loss, cosine_distance, hinge_loss, huber_loss, log_loss,
    mean_pairwise_squared_error, mean_squared_error, sigmoid_cross_entropy, softmax_cross_entropy,
    sparse_softmax_cross_entropy
)

__all__ = ["Reduction", "absolute_difference", "compute_weighted_loss", "cosine_distance", "hinge_loss", "huber_loss",
           "log_loss", "mean_pairwise_squared_error", "mean_squared_error", "sigmoid_cross_entropy",
           "softmax_cross_entropy", "sparse_softmax_cross_entropy"]

"""TensorFlow's `learning_rate_decay` module name: a face over segflow._training.learning_rate_decay."""
from segflow._training.learning_rate_decay import (cosine_decay, cosine_decay_restarts, exponential_decay,
                                                   inverse_time_decay, linear_cosine_decay, natural_exp_decay,
                                                   piecewise_constant, polynomial_decay)

__all__ = ["cosine_decay", "cosine_decay_restarts", "exponential_decay", "inverse_time_decay", "linear_cosine_decay",
           "natural_exp_decay", "piecewise_constant", "polynomial_decay"]

"""`sf.random` (TensorFlow's `tf.random`): random tensors and seeds."""
from segflow._ops.random import (
    categorical, get_seed, random_normal as normal, set_random_seed, set_seed, random_shuffle as
    shuffle, truncated_normal, random_uniform as uniform
)

__all__ = ["categorical", "get_seed", "normal", "set_random_seed", "set_seed", "shuffle", "truncated_normal",
           "uniform"]

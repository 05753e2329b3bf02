"""`sf.random` (TensorFlow's `tf.random`): random tensors and seeds."""
# sampled losses and candidate samplers (issue 13 item 4)
from segflow._ops.candidate_sampling import (
    all_candidate_sampler, fixed_unigram_candidate_sampler, learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler, uniform_candidate_sampler
)
from segflow._ops.random import (
    categorical, get_seed, random_normal as normal, set_random_seed, set_seed, random_shuffle as
    shuffle, truncated_normal, random_uniform as uniform
)

__all__ = ["categorical", "get_seed", "normal", "set_random_seed", "set_seed", "shuffle", "truncated_normal",
           "all_candidate_sampler", "fixed_unigram_candidate_sampler", "learned_unigram_candidate_sampler",  # issue 13 item 4
           "log_uniform_candidate_sampler", "uniform_candidate_sampler",
           "uniform"]

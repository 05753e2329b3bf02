"""TensorFlow's `candidate_sampling_ops` module name: a face over the candidate samplers.

    from segflow.ops import candidate_sampling_ops
    sampled, true_count, sampled_count = candidate_sampling_ops.log_uniform_candidate_sampler(
        labels, num_true=1, num_sampled=64, unique=True, range_max=10000)
"""
from segflow._ops.candidate_sampling import (
    all_candidate_sampler, compute_accidental_hits, fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler, log_uniform_candidate_sampler, uniform_candidate_sampler
)

__all__ = ["all_candidate_sampler", "compute_accidental_hits", "fixed_unigram_candidate_sampler",
           "learned_unigram_candidate_sampler", "log_uniform_candidate_sampler", "uniform_candidate_sampler"]

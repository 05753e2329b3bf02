"""TensorFlow's `random_ops` module name: a face over segflow._ops.random."""
from segflow._ops.random import (
    random_normal, random_uniform, truncated_normal, random_shuffle, multinomial, set_random_seed,
    get_seed, DEFAULT_GRAPH_SEED, set_seed, categorical
)

__all__ = [
    'random_normal', 'random_uniform', 'truncated_normal', 'random_shuffle', 'multinomial',
    'set_random_seed', 'get_seed', 'DEFAULT_GRAPH_SEED', 'set_seed', 'categorical'
]

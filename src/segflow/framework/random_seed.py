"""TensorFlow's `random_seed` module name: global and per-op seeds (a face over segflow._ops.random)."""
from segflow._ops.random import set_seed, get_seed, DEFAULT_GRAPH_SEED

__all__ = [
    'set_seed', 'get_seed', 'DEFAULT_GRAPH_SEED'
]

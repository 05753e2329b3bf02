"""TensorFlow's `momentum` module name: a face over segflow._training.momentum."""
from segflow._training.momentum import MomentumOptimizer

__all__ = [
    'MomentumOptimizer'
]

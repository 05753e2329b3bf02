"""TensorFlow's `training` module name: the optimizers and the global step, re-exported
(`sf.train`, segflow/train.py, holds the same names)."""
from segflow._training.adagrad import AdagradOptimizer
from segflow._training.adam import AdamOptimizer, LazyAdamOptimizer
from segflow._training.ftrl import FtrlOptimizer
from segflow._training.gradient_descent import GradientDescentOptimizer
from segflow._training.momentum import MomentumOptimizer
from segflow._training.nadam import LazyNadamOptimizer, NadamOptimizer
from segflow._training.optimizer import Optimizer
from segflow._training.rmsprop import RMSPropOptimizer
from segflow._training import slot_creator, training_util  # noqa: F401
from segflow._training.training_util import create_global_step, get_global_step, get_or_create_global_step, global_step

__all__ = ["Optimizer", "GradientDescentOptimizer", "MomentumOptimizer", "AdagradOptimizer", "RMSPropOptimizer",
           "AdamOptimizer", "LazyAdamOptimizer", "NadamOptimizer", "LazyNadamOptimizer", "FtrlOptimizer",
           "get_global_step", "get_or_create_global_step", "create_global_step", "global_step"]

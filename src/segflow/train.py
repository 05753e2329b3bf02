"""`sf.train` (TensorFlow's `tf.compat.v1.train`): the TF1 optimizers and the global step."""
from segflow.training.optimizer import Optimizer
from segflow.training.gradient_descent import GradientDescentOptimizer
from segflow.training.momentum import MomentumOptimizer
from segflow.training.adagrad import AdagradOptimizer
from segflow.training.rmsprop import RMSPropOptimizer
from segflow.training.adam import AdamOptimizer, LazyAdamOptimizer
from segflow.training.nadam import LazyNadamOptimizer, NadamOptimizer
from segflow.training.ftrl import FtrlOptimizer
from segflow.training.training_util import (create_global_step, get_global_step, get_or_create_global_step,
                                            global_step)

__all__ = ["AdagradOptimizer", "AdamOptimizer", "FtrlOptimizer", "GradientDescentOptimizer",
           "LazyAdamOptimizer", "LazyNadamOptimizer", "MomentumOptimizer", "NadamOptimizer", "Optimizer",
           "RMSPropOptimizer", "create_global_step", "get_global_step", "get_or_create_global_step",
           "global_step"]

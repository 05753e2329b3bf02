"""`sf.train` (TensorFlow's `tf.compat.v1.train`): the TF1 optimizers and the global step."""
from segflow._training.optimizer import Optimizer
from segflow._training.gradient_descent import GradientDescentOptimizer
from segflow._training.momentum import MomentumOptimizer
from segflow._training.adagrad import AdagradOptimizer
from segflow._training.rmsprop import RMSPropOptimizer
from segflow._training.adam import AdamOptimizer, LazyAdamOptimizer
from segflow._training.nadam import LazyNadamOptimizer, NadamOptimizer
from segflow._training.ftrl import FtrlOptimizer
from segflow._training.training_util import create_global_step, get_global_step, get_or_create_global_step, global_step
# checkpoints (Saver, Checkpoint, CheckpointManager, readers)
from segflow._training.saver import Saver
from segflow._training.checkpoint import Checkpoint
from segflow._training.checkpoint_manager import CheckpointManager
from segflow._training.checkpoint_format import NewCheckpointReader
from segflow._training.checkpoint_state import (checkpoint_exists, get_checkpoint_mtimes, get_checkpoint_state,
                                                latest_checkpoint, list_variables, load_checkpoint, load_variable,
                                                remove_checkpoint, update_checkpoint_state)
# smallops (issue 13 item 8): learning-rate schedules, moving averages
from segflow._training.learning_rate_decay import (cosine_decay, cosine_decay_restarts, exponential_decay,
                                                   inverse_time_decay, linear_cosine_decay, natural_exp_decay,
                                                   piecewise_constant, polynomial_decay)
from segflow._training.moving_averages import ExponentialMovingAverage

__all__ = ["AdagradOptimizer", "AdamOptimizer", "FtrlOptimizer", "GradientDescentOptimizer",
           "LazyAdamOptimizer", "LazyNadamOptimizer", "MomentumOptimizer", "NadamOptimizer", "Optimizer",
           "RMSPropOptimizer", "create_global_step", "get_global_step", "get_or_create_global_step",
           "global_step",
           # checkpoints
           "Checkpoint", "CheckpointManager", "NewCheckpointReader", "Saver", "checkpoint_exists",
           "get_checkpoint_mtimes", "get_checkpoint_state", "latest_checkpoint", "list_variables",
           "load_checkpoint", "load_variable", "remove_checkpoint", "update_checkpoint_state",
           "cosine_decay", "cosine_decay_restarts", "exponential_decay", "inverse_time_decay", "linear_cosine_decay",
           "natural_exp_decay", "piecewise_constant", "polynomial_decay", "ExponentialMovingAverage"]  # smallops

"""TensorFlow's `checkpoint_management` module name (with `checkpoint_utils`' readers): the state
file, finding and listing checkpoints, and `CheckpointManager`."""
from segflow._training.checkpoint_format import CheckpointReader, NewCheckpointReader
from segflow._training.checkpoint_manager import CheckpointManager
from segflow._training.checkpoint_state import (
    CheckpointState, checkpoint_exists, get_checkpoint_mtimes, get_checkpoint_state, latest_checkpoint,
    list_variables, load_checkpoint, load_variable, meta_graph_filename, remove_checkpoint, update_checkpoint_state,
    update_checkpoint_state_internal)

__all__ = ["CheckpointManager", "CheckpointReader", "CheckpointState", "NewCheckpointReader", "checkpoint_exists",
           "get_checkpoint_mtimes", "get_checkpoint_state", "latest_checkpoint", "list_variables",
           "load_checkpoint", "load_variable", "meta_graph_filename", "remove_checkpoint",
           "update_checkpoint_state", "update_checkpoint_state_internal"]

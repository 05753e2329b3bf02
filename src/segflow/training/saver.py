"""TensorFlow's `training.saver` module name: `Saver` and the checkpoint-finding functions it
re-exports (the same objects as `sf.train`)."""
from segflow._training.saver import Saver
from segflow._training.checkpoint_state import (checkpoint_exists, get_checkpoint_mtimes, get_checkpoint_state,
                                                latest_checkpoint, remove_checkpoint, update_checkpoint_state)

__all__ = ["Saver", "checkpoint_exists", "get_checkpoint_mtimes", "get_checkpoint_state", "latest_checkpoint",
           "remove_checkpoint", "update_checkpoint_state"]

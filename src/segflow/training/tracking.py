"""TensorFlow's object-based checkpoint module names (`tracking.util` / `checkpoint.checkpoint`):
`Checkpoint` and its restore statuses."""
from segflow._training.checkpoint import Checkpoint, CheckpointLoadStatus, InitializationOnlyStatus

__all__ = ["Checkpoint", "CheckpointLoadStatus", "InitializationOnlyStatus"]

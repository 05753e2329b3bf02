"""`CheckpointManager` (TF's `tf.train.CheckpointManager`): numbered saves of one `Checkpoint` into
a directory, keeping the latest `max_to_keep` and recording them (with timestamps) in the
directory's state file, so a new manager on the same directory carries on where the last stopped.

    manager = sf.train.CheckpointManager(ckpt, "/ckpt", max_to_keep=3)
    ckpt.restore(manager.latest_checkpoint)
    manager.save()                  # "/ckpt/ckpt-<save_counter>"
"""
import collections
import os
import time

import numpy as np

from segflow._core import mode as context
from segflow._training import checkpoint_state
from segflow._training.checkpoint import session_or_default

__all__ = ["CheckpointManager"]


def _evaluate(value, session):
    if isinstance(value, (int, np.integer)):
        return int(value)
    if context.executing_eagerly() or not getattr(value, "_in_graph", True):
        return int(np.asarray(value.numpy() if hasattr(value, "numpy") else value))
    return int(session.run(value))


class CheckpointManager:
    """Saves a Checkpoint as `directory/<checkpoint_name>-<number>`, deleting old ones.

    Args:
      checkpoint: the `Checkpoint` to save (its `save_counter` numbers the files).
      directory: where checkpoints and the state file go (made if missing).
      max_to_keep: how many to keep (None: all).
      keep_checkpoint_every_n_hours: also keep one checkpoint per this many hours.
      checkpoint_name: the file prefix, default "ckpt".
      step_counter, checkpoint_interval: with both, `save()` saves only when `step_counter` has
        advanced by at least `checkpoint_interval` since the last save.
      init_fn: called by `restore_or_initialize()` when there is no checkpoint.
    Raises:
      ValueError: max_to_keep not positive, or checkpoint_interval without step_counter.
    """

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None, init_fn=None):
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"Expected a positive integer or `None` for `max_to_keep`, got {max_to_keep}.")
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError("`step_counter` should be passed if `checkpoint_interval` is not None.")
        self._checkpoint = checkpoint
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._directory = os.fspath(directory)
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter = step_counter
        self._checkpoint_interval = checkpoint_interval
        self._last_checkpoint_step = None
        self._init_fn = init_fn
        self._maybe_delete = collections.OrderedDict()
        now = time.time()
        state = checkpoint_state.get_checkpoint_state(self._directory)
        if state is None:
            self._latest_checkpoint = None
            self._last_preserved_timestamp = now - 1.0
            return
        self._latest_checkpoint = state.model_checkpoint_path
        self._last_preserved_timestamp = min(state.last_preserved_timestamp, now)
        stamps = state.all_model_checkpoint_timestamps or \
            [self._last_preserved_timestamp] * len(state.all_model_checkpoint_paths)
        for path, stamp in zip(state.all_model_checkpoint_paths, stamps):
            stamp = min(stamp, now)
            if stamp > self._last_preserved_timestamp:
                self._maybe_delete[path] = stamp

    @property
    def directory(self):
        return self._directory

    @property
    def checkpoint_interval(self):
        return self._checkpoint_interval

    @property
    def latest_checkpoint(self):
        """The prefix of the newest checkpoint, or None."""
        return self._latest_checkpoint

    @property
    def checkpoints(self):
        """The prefixes of the kept checkpoints, oldest first."""
        return list(self._maybe_delete)

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Saves a new checkpoint, numbered `checkpoint_number` (an int, or an integer variable or
        tensor) or by the checkpoint's `save_counter` (incremented either way).

        Returns:
          Its prefix; None when `checkpoint_interval` says it is too early.
        """
        session = session_or_default(None, "save checkpoint")
        if self._checkpoint_interval is not None:
            step = _evaluate(self._step_counter, session)
            if self._last_checkpoint_step is not None:
                if step == self._last_checkpoint_step:
                    return None
                if check_interval and step < self._last_checkpoint_step + self._checkpoint_interval:
                    return None
            self._last_checkpoint_step = step
        number = self._checkpoint._count_save(session)
        if checkpoint_number is not None:
            number = _evaluate(checkpoint_number, session)
        os.makedirs(self._directory, exist_ok=True)
        path = self._checkpoint.write(f"{self._prefix}-{number}", session=session)
        self._maybe_delete.pop(path, None)
        self._maybe_delete[path] = time.time()
        self._latest_checkpoint = path
        self._record_state()
        self._sweep()
        self._record_state()
        return path

    def _sweep(self):
        if not self._max_to_keep:
            return
        while len(self._maybe_delete) > self._max_to_keep:
            path, stamp = self._maybe_delete.popitem(last=False)
            if self._keep_checkpoint_every_n_hours and \
                    stamp - self._keep_checkpoint_every_n_hours * 3600.0 >= self._last_preserved_timestamp:
                self._last_preserved_timestamp = stamp
                continue
            checkpoint_state.remove_checkpoint(path)

    def _record_state(self):
        paths, stamps = list(self._maybe_delete), list(self._maybe_delete.values())
        checkpoint_state.update_checkpoint_state_internal(
            self._directory, self._latest_checkpoint, paths, all_model_checkpoint_timestamps=stamps,
            last_preserved_timestamp=self._last_preserved_timestamp, save_relative_paths=True)

    def restore_or_initialize(self):
        """Restores the latest checkpoint and returns its path; without one calls `init_fn` (if
        given) and returns None."""
        if self._latest_checkpoint is not None:
            self._checkpoint.restore(self._latest_checkpoint)
            return self._latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None

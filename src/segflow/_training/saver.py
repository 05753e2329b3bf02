"""`Saver` (TF1's `tf.compat.v1.train.Saver`): saves and restores variables by name.

    saver = sf.train.Saver(max_to_keep=3)                  # graph: every global variable
    path = saver.save(sess, "/ckpt/model", global_step=step)   # "/ckpt/model-<step>"
    saver.restore(sess, sf.train.latest_checkpoint("/ckpt"))

Each variable is saved under its op name ("dense/kernel"), or under the key of a dict `var_list`
({"saved name": variable}); a partitioned variable as one tensor under its whole name, so it
restores into any partitioning. Eagerly a `var_list` is required, as in TF2. The files are
described in checkpoint_format.py; the `checkpoint` state file in checkpoint_state.py.

A Checkpoint-written (object-based) checkpoint restores too: a name it lacks is looked up in
the variable names it records. A restore checks every name, dtype and shape (and reads every
value) before it assigns anything: a failed restore leaves every variable as it was.

Differences from TF: no `.meta` file is written (segflow has no MetaGraphDef; `write_meta_graph`
is accepted and ignored), and `sharded` writes the one data file a single device would; the files
are segflow's own format, not TensorFlow's.
"""
import os
import time

import numpy as np

from segflow._core import mode as context
from segflow._core.graph import get_default_graph
from segflow._ops import variables as variables_lib
from segflow._training import checkpoint_format, checkpoint_state, checkpoint_tracking, checkpoint_values

__all__ = ["Saver"]


class Saver:
    """Saves and restores variables (TF1's `Saver`).

    Args:
      var_list: a list of variables (each saved under its op name; PartitionedVariables and the
        shards of one are saved whole), or a dict {checkpoint name: variable / PartitionedVariable /
        list of shards}. Default: the global variables of the default graph (required eagerly).
      reshape: allow restoring a tensor of another shape with the same number of elements.
      max_to_keep: how many recent checkpoints to keep (None or 0: keep all, and do not track them).
      keep_checkpoint_every_n_hours: additionally keep one checkpoint per this many hours.
      allow_empty: with no variables, save and restore do nothing instead of raising.
      pad_step_number: name checkpoints `path-00000007` instead of `path-7`.
      save_relative_paths: write paths relative to the directory in the state file.
      defer_build: collect the default variables at `build()` (or the first save) instead of now.
      name, sharded, restore_sequentially, saver_def, builder, write_version, filename: accepted
        for compatibility.
    Raises:
      RuntimeError: eagerly without a var_list.
      ValueError: no variables (without allow_empty), or two variables with the same name.
      TypeError: a var_list entry that is not a variable.
    """

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False, saver_def=None,
                 builder=None, defer_build=False, allow_empty=False, write_version=2, pad_step_number=False,
                 save_relative_paths=False, filename=None):
        if context.executing_eagerly() and var_list is None:
            raise RuntimeError("When eager execution is enabled, `var_list` must specify a list or dict of "
                               "variables to save")
        self._var_list = var_list
        self._reshape = reshape
        self._sharded = sharded
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._next_checkpoint_time = time.time() + (keep_checkpoint_every_n_hours or 0) * 3600
        self._name = name
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._filename = filename
        self._last_checkpoints = []          # [(path, timestamp)]
        self._to_delete = []
        self._restore_ops = {}               # id(variable) -> (variable, placeholder, assign op)
        self._saveables = None
        self._is_empty = False
        self._graph = None if context.executing_eagerly() else get_default_graph()
        if not defer_build:
            self.build()

    # ------------------------------------------------------------------------------------------
    def build(self):
        """Collects the variables to save and, in a graph, builds their restore ops (once)."""
        if self._saveables is not None:
            return
        var_list = self._var_list
        if var_list is None:
            graph = self._graph or get_default_graph()
            with graph.as_default():
                var_list = variables_lib.global_variables()
        saveables = checkpoint_values.saveables_from_var_list(var_list)
        if not saveables:
            if not self._allow_empty:
                raise ValueError("No variables to save")
            self._is_empty = True
        if not context.executing_eagerly():
            checkpoint_values.build_restore_ops([v for s in saveables for v in s.variables], self._restore_ops)
        self._saveables = saveables

    @property
    def last_checkpoints(self):
        """The paths of the checkpoints this Saver still keeps, oldest first."""
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints):
        """Replaces the list of kept checkpoints (timestamps: now)."""
        if not isinstance(last_checkpoints, list):
            raise TypeError("last_checkpoints must be a list")
        self._last_checkpoints = [(p, time.time()) for p in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time):
        """Replaces the list of kept checkpoints with (path, timestamp) pairs."""
        if not isinstance(last_checkpoints_with_time, list):
            raise TypeError("last_checkpoints_with_time must be a list")
        self._last_checkpoints = list(last_checkpoints_with_time)

    def recover_last_checkpoints(self, checkpoint_paths):
        """Adopts the existing checkpoints among `checkpoint_paths` (timestamps: their files' mtimes),
        e.g. `get_checkpoint_state(dir).all_model_checkpoint_paths` after a restart."""
        existing = [p for p in checkpoint_paths if checkpoint_format.checkpoint_exists_internal(p)]
        self.set_last_checkpoints_with_time(list(zip(existing, checkpoint_state.get_checkpoint_mtimes(existing))))

    # ------------------------------------------------------------------------------------------
    def save(self, sess, save_path, global_step=None, latest_filename=None, meta_graph_suffix="meta",
             write_meta_graph=True, write_state=True, strip_default_attrs=False, save_debug_info=False):
        """Saves the variables to the checkpoint `save_path` (`save_path-<global_step>` when given).

        Args:
          sess: the Session holding the values (graph mode; ignored eagerly).
          save_path: the checkpoint prefix; its directory must exist.
          global_step: an int, or an integer tensor / variable (evaluated in `sess`).
          latest_filename: the state file's name (default "checkpoint"), in save_path's directory.
          write_state: update the state file and delete checkpoints past max_to_keep.
        Returns:
          The checkpoint's prefix, or None for an empty Saver with allow_empty.
        Raises:
          TypeError: graph mode without a Session.
          ValueError: save_path's directory does not exist, or latest_filename collides with it.
        """
        self.build()
        if latest_filename is None:
            latest_filename = "checkpoint"
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        save_path = os.fspath(save_path)
        if not context.executing_eagerly() and not hasattr(sess, "run"):
            raise TypeError(f"'sess' must be a Session; {sess}")
        if global_step is not None:
            step = _as_int(global_step, sess)
            checkpoint_file = f"{save_path}-{step:08d}" if self._pad_step_number else f"{save_path}-{step}"
        else:
            checkpoint_file = save_path
            if os.path.basename(save_path) == latest_filename and not self._sharded:
                raise ValueError(f"'latest_filename' collides with 'save_path': '{latest_filename}' and "
                                 f"'{save_path}'")
        if self._is_empty:
            return None
        values = checkpoint_values.read_values(self._saveables, None if context.executing_eagerly() else sess)
        checkpoint_format.write_bundle(checkpoint_file, values, {s.key: s.dtype.name for s in self._saveables})
        if write_state:
            self._record(checkpoint_file)
            checkpoint_state.update_checkpoint_state_internal(
                os.path.dirname(save_path), checkpoint_file, self.last_checkpoints, latest_filename,
                self._save_relative_paths)
            self._delete_old(meta_graph_suffix)
        return checkpoint_file

    def _record(self, path):
        if not self._max_to_keep:
            return
        self._last_checkpoints = [(p, t) for p, t in self._last_checkpoints if p != path]
        self._last_checkpoints.append((path, time.time()))
        while len(self._last_checkpoints) > self._max_to_keep:
            self._to_delete.append(self._last_checkpoints.pop(0))

    def _delete_old(self, meta_graph_suffix):
        while self._to_delete:
            path, stamp = self._to_delete.pop(0)
            if self._keep_checkpoint_every_n_hours and stamp >= self._next_checkpoint_time:
                self._next_checkpoint_time += self._keep_checkpoint_every_n_hours * 3600
                continue
            checkpoint_state.remove_checkpoint(path, meta_graph_suffix=meta_graph_suffix)

    # ------------------------------------------------------------------------------------------
    def restore(self, sess, save_path):
        """Restores every variable from the checkpoint `save_path`; on any error none is changed.

        Raises:
          ValueError: save_path is None or not a checkpoint.
          NotFoundError: a variable's name is not in the checkpoint (names the keys and checkpoint).
          InvalidArgumentError: a dtype or shape differs (a shape error is also a ValueError).
          DataLossError: the checkpoint's files are damaged.
        """
        self.build()
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        save_path = os.fspath(save_path)
        if not checkpoint_format.checkpoint_exists_internal(save_path):
            raise ValueError("The passed save_path is not a valid checkpoint: " + save_path)
        reader = checkpoint_format.CheckpointReader(save_path)
        saveables = self._saveables
        if not all(reader.has_tensor(s.key) for s in saveables):
            saveables = _by_object_keys(saveables, reader)
        pairs = checkpoint_values.prepare_restore(saveables, reader, reshape=self._reshape)
        checkpoint_values.assign_values(pairs, None if context.executing_eagerly() else sess, self._restore_ops)

    def as_saver_def(self):
        raise NotImplementedError("segflow has no SaverDef protos")

    def export_meta_graph(self, *args, **kwargs):
        raise NotImplementedError("segflow does not write MetaGraphDefs")


def _by_object_keys(saveables, reader):
    """A Checkpoint-written (object-based) checkpoint: the saveables whose names it lacks look up
    the key their variable name was saved under (as TF's Saver falls back to the object graph)."""
    mapping = checkpoint_tracking.name_to_key_map(reader)
    out = []
    for s in saveables:
        if not reader.has_tensor(s.key) and s.key in mapping:
            s = checkpoint_values.Saveable(mapping[s.key], s.parts, s.shape, s.dtype)
        out.append(s)
    return out


def _as_int(step, sess):
    """The global step as an int: a Python or NumPy int, an eager value, or a graph tensor or
    variable evaluated in `sess`."""
    if isinstance(step, (int, np.integer)):
        return int(step)
    try:
        graph = getattr(step, "graph", None)
    except (AttributeError, ValueError, RuntimeError):
        graph = None
    if graph is None or context.executing_eagerly():
        return int(np.asarray(step.numpy() if hasattr(step, "numpy") else step))
    return int(sess.run(step))

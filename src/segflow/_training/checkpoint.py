"""`Checkpoint` (TF2's `tf.train.Checkpoint`): saves and restores the variables reachable from the
objects given to it, keyed by their path (checkpoint_tracking.py).

    ckpt = sf.train.Checkpoint(model=model, optimizer=opt)
    path = ckpt.save("/ckpt/run")              # "/ckpt/run-1", "/ckpt/run-2", ...; updates the state file
    ckpt.restore(sf.train.latest_checkpoint("/ckpt")).assert_consumed()

Restoring checks every matched value (dtype, shape, data) before assigning any; a failed restore
changes no variable's value (optimizer slots it made, below, keep their initial values). Optimizer slots (and non-slot variables such as Adam's beta powers) that the
checkpoint holds but the optimizer has not made yet are made at restore time, by the optimizer's
own `_create_slots`, and restored: the next step continues exactly where the saved run stopped.

Graph mode (TF1's `CheckpointV1`): `save`/`write` read the values in `session` (default: the
default session); `restore` checks the checkpoint at once and assigns when the status's
`run_restore_ops(session)` or `initialize_or_restore(session)` runs.

Each checkpoint also holds `_CHECKPOINTABLE_OBJECT_GRAPH`, a JSON string (as TF stores its object
graph there): the objects' paths and each key's variable name, so a `Saver` can restore it by name.
Restoring a checkpoint written by `Saver` (no object graph) matches variables by name, as TF does.

Differences from TF: an object created after `restore()` (other than the optimizer state above)
is not restored when it is created: call `restore()` again once it exists. Checkpoints are
segflow's format (checkpoint_format.py).
"""
import os

import numpy as np

from segflow._core import dtypes, errors, mode as context
from segflow._core.graph import control_dependencies, get_default_graph
from segflow._core.mode import get_default_session
from segflow._ops import variables as variables_lib
from segflow._training import checkpoint_format, checkpoint_state, checkpoint_values
from segflow._training.checkpoint_tracking import OBJECT_GRAPH_KEY, ObjectGraph, is_trackable, split_slot_key

__all__ = ["Checkpoint", "CheckpointLoadStatus", "InitializationOnlyStatus", "session_or_default"]


def session_or_default(session, what):
    """None eagerly; in graph mode `session` or the default session (RuntimeError without one)."""
    if context.executing_eagerly():
        return None
    session = session or get_default_session()
    if session is None:
        raise RuntimeError(f"Unable to {what} because no session was specified and there is no default session "
                           "in graph mode. Use `with sf.compat.v1.Session():` or pass `session=`.")
    return session


class Checkpoint:
    """Groups trackable objects (variables, `sf.Module`s, layers, optimizers, lists and dicts of
    them, other Checkpoints) for saving and restoring.

    Args:
      root: optional root object: its children become the checkpoint's top-level names.
      **kwargs: objects to track, by name (also readable as attributes: `ckpt.model`).
    Raises:
      ValueError: a value that is not trackable.
    """

    def __init__(self, root=None, **kwargs):
        object.__setattr__(self, "_tracked", {})
        object.__setattr__(self, "_root", root)
        object.__setattr__(self, "_save_counter", None)
        object.__setattr__(self, "_save_counter_graph", None)
        object.__setattr__(self, "_restore_ops", {})
        object.__setattr__(self, "_counter_ops", None)
        if root is not None and not is_trackable(root):
            raise ValueError(f"`Checkpoint` was expecting root to be a trackable object (an object derived from "
                             f"`Trackable`), got {root!r}.")
        for name, value in kwargs.items():
            setattr(self, name, value)

    def __setattr__(self, name, value):
        if not name.startswith("_"):
            if not is_trackable(value):
                raise ValueError(f"`Checkpoint` was expecting {name} to be a trackable object (an object derived "
                                 f"from `Trackable`), got {value!r}. If you believe this object should be "
                                 "trackable (i.e. it is part of the TensorFlow Python API and manages state), "
                                 "please open an issue.")
            self._tracked[name] = value
        object.__setattr__(self, name, value)

    def _checkpoint_children(self):
        out = {}
        if self._root is not None:
            from_root = ObjectGraph(self._root)
            out.update((p[0], from_root.objects[i]) for i, p in from_root.paths.items() if len(p) == 1)
        out.update(self._tracked)
        counter = self._current_counter()
        if counter is not None:
            out["save_counter"] = counter
        return out

    # -- the save counter
    def _current_counter(self):
        graph = None if context.executing_eagerly() else get_default_graph()
        if self._save_counter is not None and self._save_counter_graph is graph:
            return self._save_counter
        return None

    @property
    def save_counter(self):
        """An int64 variable counting `save()` calls (made on first use; restored with the rest)."""
        counter = self._current_counter()
        if counter is None:
            graph = None if context.executing_eagerly() else get_default_graph()
            with control_dependencies(None) if graph is not None else _nothing():
                counter = variables_lib.Variable(np.int64(0), name="save_counter", trainable=False,
                                                 dtype=dtypes.int64)
            object.__setattr__(self, "_save_counter", counter)
            object.__setattr__(self, "_save_counter_graph", graph)
        return counter

    def _count_save(self, session):
        """Adds one to the save counter (in `session` in graph mode, initializing it there first if
        needed; the graph's ops are built once) and returns the new count."""
        counter = self.save_counter
        if session is None:
            counter.assign_add(1)
            return int(counter.numpy())
        ops = self._counter_ops
        if ops is None or ops[0] is not counter:
            with counter.graph.as_default(), control_dependencies(None):
                ops = (counter, counter.is_initialized(), counter.assign_add(1))
            object.__setattr__(self, "_counter_ops", ops)
        if not session.run(ops[1]):
            session.run(counter.initializer)
        return int(session.run(ops[2]))

    # -- saving
    def write(self, file_prefix, session=None, options=None):
        """Writes every tracked value to the checkpoint `file_prefix` (no numbering, no state file).

        Returns:
          The prefix written.
        """
        import json     # on first use: `import segflow` stays cheap
        session = session_or_default(session, "save checkpoint")
        graph = ObjectGraph(self)
        saveables = graph.saveables()
        values = checkpoint_values.read_values(list(saveables.values()), session)
        values[OBJECT_GRAPH_KEY] = np.array(json.dumps(graph.describe(saveables)).encode("utf-8"),
                                             dtype=object)
        return checkpoint_format.write_bundle(os.fspath(file_prefix), values,
                                              {k: s.dtype.name for k, s in saveables.items()})

    def save(self, file_prefix, session=None, options=None):
        """Adds one to `save_counter` and writes `file_prefix-<save_counter>`; the directory's state
        file then names it as the latest checkpoint (a relative path).

        Returns:
          The checkpoint's prefix.
        """
        session = session_or_default(session, "save checkpoint")
        number = self._count_save(session)
        file_prefix = os.fspath(file_prefix)
        path = self.write(f"{file_prefix}-{number}", session=session)
        checkpoint_state.update_checkpoint_state_internal(os.path.dirname(file_prefix), path, [path],
                                                          save_relative_paths=True)
        return path

    # -- restoring
    def restore(self, save_path, options=None):
        """Restores the tracked values from `save_path` (a prefix, or a directory: its latest).

        Returns:
          A status (`assert_consumed()`, `assert_existing_objects_matched()`, `expect_partial()`,
          `run_restore_ops()`, `initialize_or_restore()`); an initialization-only status when
          `save_path` is None.
        Raises:
          NotFoundError: no checkpoint at `save_path`.
          InvalidArgumentError / ValueError: a value's dtype or shape does not fit its variable.
          DataLossError: the checkpoint is damaged.
        """
        if save_path is None:
            return InitializationOnlyStatus(self)
        save_path = os.fspath(save_path)
        if os.path.isdir(save_path):
            found = checkpoint_state.latest_checkpoint(save_path)
            if found is None:
                raise errors.NotFoundError(None, None, f"Error when restoring from checkpoint at {save_path}: "
                                                       "the directory holds no checkpoint")
            save_path = found
        try:
            reader = checkpoint_format.CheckpointReader(save_path)
        except errors.NotFoundError as e:
            raise errors.NotFoundError(None, None, f"Error when restoring from checkpoint at {save_path}: {e}. "
                                       "Please double-check that the path is correct. You may be missing the "
                                       "checkpoint suffix (e.g. the '-1' in 'path/to/ckpt-1').") from None
        self.save_counter      # restored with the rest, as TF does
        if not reader.has_tensor(OBJECT_GRAPH_KEY):
            return _name_based_restore(self, reader)
        self._make_pending_slots(reader)
        graph = ObjectGraph(self)
        saveables = graph.saveables()
        ckpt_keys = set(reader.get_variable_to_shape_map()) - {OBJECT_GRAPH_KEY}
        matched = [s for k, s in saveables.items() if k in ckpt_keys]
        pairs = checkpoint_values.prepare_restore(matched, reader)
        counter = self._save_counter
        status = CheckpointLoadStatus(self, reader.prefix, pairs, sorted(ckpt_keys - set(saveables)),
                                      sorted(k for k, s in saveables.items() if k not in ckpt_keys
                                             and s.variables[0] is not counter))
        if context.executing_eagerly():
            checkpoint_values.assign_values(pairs)
        return status

    read = restore

    def _make_pending_slots(self, reader):
        """Has each optimizer make the slots the checkpoint holds for it but it lacks."""
        graph = ObjectGraph(self)
        by_path = graph.by_path()
        wanted = {}
        for key in reader.get_variable_to_shape_map():
            parts = split_slot_key(key)
            if parts is None:
                continue
            primary, opt = by_path.get(parts[0]), by_path.get(parts[1])
            if primary is None or opt is None or not hasattr(opt, "_create_slots"):
                continue
            if opt.get_slot(primary, parts[2].replace(".S", "/").replace("..", ".")) is None:
                wanted.setdefault(id(opt), (opt, []))[1].append(primary)
        for opt, primaries in wanted.values():
            unique = list({id(v): v for v in primaries}.values())
            graph_ctx = unique[0].graph.as_default() if getattr(unique[0], "_in_graph", False) else _nothing()
            with graph_ctx, (control_dependencies(None) if not context.executing_eagerly() else _nothing()):
                opt._create_slots(unique)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class CheckpointLoadStatus:
    """What a `restore()` matched: checks on it, and (graph mode) running the restore."""

    def __init__(self, checkpoint, prefix, pairs, unused_keys, unmatched_keys, by_name=False):
        self._checkpoint = checkpoint
        self._prefix = prefix
        self._pairs = pairs
        self._unused = unused_keys          # in the checkpoint, matched to no object
        self._unmatched = unmatched_keys    # objects with no value in the checkpoint
        self._by_name = by_name

    def assert_consumed(self):
        """Raises AssertionError unless every checkpoint value was matched to an object and every
        object got a value. Returns self."""
        if self._unused:
            raise AssertionError(f"Unresolved object in checkpoint {self._prefix}: {', '.join(self._unused)}")
        self.assert_existing_objects_matched()
        return self

    def assert_existing_objects_matched(self):
        """Raises AssertionError if a tracked variable got no value from the checkpoint. Returns self."""
        if self._unmatched:
            raise AssertionError(f"Some objects had no value in checkpoint {self._prefix}: "
                                 f"{', '.join(self._unmatched)}")
        return self

    def assert_nontrivial_match(self):
        """Raises AssertionError if nothing but the save counter was restored. Returns self."""
        restored = [p for p in self._pairs if p[0] is not self._checkpoint._save_counter]
        if not restored:
            raise AssertionError(f"Nothing except the root object matched a checkpointed value in {self._prefix}")
        return self

    def expect_partial(self):
        """Silences the warnings about unused values (segflow prints none). Returns self."""
        return self

    def run_restore_ops(self, session=None):
        """Graph mode: assigns the restored values in `session` (default session). Eagerly a no-op."""
        if context.executing_eagerly() or not self._pairs:
            return
        checkpoint_values.assign_values(self._pairs, session_or_default(session, "restore"),
                                        self._checkpoint._restore_ops)

    def initialize_or_restore(self, session=None):
        """Graph mode: restores the matched variables and initializes the others."""
        if context.executing_eagerly():
            return
        session = session_or_default(session, "restore")
        self.run_restore_ops(session)
        restored = {id(v) for v, _ in self._pairs}
        _initialize(self._checkpoint, session, skip=restored)


def _initialize(checkpoint, session, skip=()):
    graph = ObjectGraph(checkpoint)
    inits = [v.initializer for s in graph.saveables().values() for v in s.variables
             if id(v) not in skip and getattr(v, "initializer", None) is not None]
    if inits:
        session.run(inits)


class InitializationOnlyStatus:
    """The status of `restore(None)`: nothing restored; `initialize_or_restore` initializes."""

    def __init__(self, checkpoint):
        self._checkpoint = checkpoint

    def _fail(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being restored.")

    def assert_consumed(self):
        self._fail()

    def assert_existing_objects_matched(self):
        self._fail()

    def assert_nontrivial_match(self):
        self._fail()

    def expect_partial(self):
        return self

    def run_restore_ops(self, session=None):
        return None

    def initialize_or_restore(self, session=None):
        if not context.executing_eagerly():
            _initialize(self._checkpoint, session_or_default(session, "initialize"))


def _name_based_restore(checkpoint, reader):
    """A Saver-written checkpoint: each tracked variable is restored from its own name."""
    graph = ObjectGraph(checkpoint)
    saveables = []
    unmatched = []
    for s in graph.saveables().values():
        if len(s.parts) != 1 or s.parts[0][1] is not None:
            continue
        var = s.parts[0][0]
        key = checkpoint_values.variable_key(var)
        if reader.has_tensor(key):
            saveables.append(checkpoint_values.Saveable.of_variable(key, var))
        elif var is not checkpoint._save_counter:
            unmatched.append(key)
    pairs = checkpoint_values.prepare_restore(saveables, reader)
    used = {s.key for s in saveables}
    status = CheckpointLoadStatus(checkpoint, reader.prefix, pairs,
                                  sorted(set(reader.get_variable_to_shape_map()) - used), sorted(unmatched),
                                  by_name=True)
    if context.executing_eagerly():
        checkpoint_values.assign_values(pairs)
    return status

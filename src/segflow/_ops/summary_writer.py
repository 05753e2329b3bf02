"""TF2's summary writers and their per-thread state: `create_file_writer`, `create_noop_writer`,
`SummaryWriter.as_default` / `set_as_default`, the default step (`experimental.set_step` /
`get_step`) and the recording condition (`record_if`, `should_record_summaries`).

A file writer is TensorBoard's `EventFileWriter` (events.out.tfevents.* files, written by a
background thread). Without TensorBoard `create_file_writer` warns once and returns a no-op writer.
As in TF, the default writer, step and condition belong to the calling thread.
"""
import contextlib
import threading
import time

import numpy as np

from segflow._core import dtypes, errors
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import GraphKeys, get_default_graph
from segflow._core.tensor import EagerTensor, Tensor
from segflow._ops import summary_proto
from segflow._ops.cast import cast

__all__ = ["SummaryWriter", "create_file_writer", "create_file_writer_v2", "create_noop_writer", "set_step",
           "get_step", "record_if", "should_record_summaries", "default_writer", "recording_condition",
           "resolve_step", "has_default_writer"]


class _SummaryState(threading.local):
    def __init__(self):
        self.writer = None
        self.step = None
        self.is_recording = None     # None: always; else a bool, a bool tensor or a callable


_state = _SummaryState()


class SummaryWriter:
    """A summary writer (TF's `tf.summary.SummaryWriter`); this base writes nothing."""

    _closed = False

    def set_as_default(self, step=None):
        """Makes this the default writer of the calling thread (and `step` its default step)."""
        self._check_open()
        _state.writer = self
        if step is not None:
            _state.step = step

    @contextlib.contextmanager
    def as_default(self, step=None):
        """`with writer.as_default(step=None):` makes this the default writer (and `step` the
        default step) inside the block; restores both and flushes the writer on exit."""
        self._check_open()
        old_writer, old_step = _state.writer, _state.step
        _state.writer = self
        if step is not None:
            _state.step = step
        try:
            yield self
            self.flush()
        finally:
            _state.writer = old_writer
            if step is not None:
                _state.step = old_step

    def init(self):
        """Nothing to do: the writer is ready when made (TF's initializes its resource)."""
        return None

    def flush(self):
        return None

    def close(self):
        self._closed = True

    def _check_open(self):
        if self._closed:
            raise RuntimeError(f"SummaryWriter {self!r} is already closed")

    def _write_value(self, step, value):
        """Writes one Summary.Value at `step`; returns whether it was written."""
        return False

    def _write_event(self, event):
        return False


class _NoopSummaryWriter(SummaryWriter):
    """A writer that writes nothing (a file writer without TensorBoard)."""


class _InertSummaryWriter(_NoopSummaryWriter):
    """`create_noop_writer()`'s writer. As in TF, making it the default changes nothing: neither the
    default writer nor the default step (so it cannot be used to clear a default writer)."""

    def set_as_default(self, step=None):
        return None

    @contextlib.contextmanager
    def as_default(self, step=None):
        yield self


class _FileSummaryWriter(SummaryWriter):
    """Writes events to a new events.out.tfevents.* file in `logdir` through TensorBoard's writer."""

    def __init__(self, tb, logdir, max_queue, flush_secs, filename_suffix):
        self._tb = tb
        self._logdir = logdir
        self._writer = tb.EventFileWriter(logdir, max_queue_size=max_queue, flush_secs=flush_secs,
                                          filename_suffix=filename_suffix)
        self._lock = threading.Lock()

    def __repr__(self):
        return f"<segflow summary file writer for {self._logdir!r}>"

    def _write_event(self, event):
        with self._lock:
            if self._closed:
                raise errors.FailedPreconditionError(None, None, f"summary writer for {self._logdir!r} is closed")
            self._writer.add_event(event)
        return True

    def _write_value(self, step, value):
        tb = self._tb
        return self._write_event(tb.event_pb2.Event(wall_time=time.time(), step=int(step),
                                                    summary=tb.summary_pb2.Summary(value=[value])))

    def flush(self):
        """Writes the pending events to disk."""
        with self._lock:
            if not self._closed:
                self._writer.flush()

    def close(self):
        """Flushes and closes the event file; the writer cannot be used afterwards."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._writer.close()


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None,
                       experimental_trackable=False, experimental_mesh=None):
    """A SummaryWriter writing a new event file in `logdir` (made if missing).

    Args:
      logdir: the directory.
      max_queue: events held before writing (10).
      flush_millis: the longest wait before pending events are written (120000).
      filename_suffix: added to the file's name (".v2").
    Returns:
      The writer; a no-op writer (after one warning) when TensorBoard is not installed.
    """
    if logdir is None:
        raise ValueError("Argument `logdir` cannot be None")
    if isinstance(logdir, Tensor):
        logdir = logdir.numpy() if isinstance(logdir, EagerTensor) else logdir
    if isinstance(logdir, np.ndarray):
        logdir = logdir.item()
    if isinstance(logdir, bytes):
        logdir = logdir.decode()
    tb = summary_proto.backend()
    if tb is None:
        return _NoopSummaryWriter()
    return _FileSummaryWriter(tb, str(logdir), 10 if max_queue is None else int(max_queue),
                              120.0 if flush_millis is None else float(flush_millis) / 1000.0,
                              ".v2" if filename_suffix is None else str(filename_suffix))


create_file_writer_v2 = create_file_writer


def create_noop_writer():
    """A SummaryWriter that writes nothing; `set_as_default` and `as_default` leave the default
    writer and step as they are (as TF's)."""
    return _InertSummaryWriter()


def default_writer():
    """The calling thread's default writer, or None."""
    return _state.writer


def has_default_writer():
    return _state.writer is not None


def set_step(step):
    """Sets the default step of summaries written in this thread (an int, tensor or variable; None
    unsets it)."""
    _state.step = step


def get_step():
    """The default step set by `set_step` or `as_default(step=...)`, as given, or None."""
    return _state.step


@contextlib.contextmanager
def record_if(condition):
    """`with record_if(condition):` records summaries only while `condition` (a bool, a bool tensor
    or a callable returning one, called where a summary is made) holds."""
    old = _state.is_recording
    _state.is_recording = condition
    try:
        yield
    finally:
        _state.is_recording = old


def recording_condition():
    """Whether summaries made here record: True, False, or (building a graph) a bool tensor."""
    if _state.writer is None:
        return False
    cond = _state.is_recording
    if cond is None:
        return True
    if callable(cond):
        cond = cond()
    if isinstance(cond, EagerTensor):
        return bool(cond.numpy())
    if isinstance(cond, Tensor):
        if cond.dtype != dtypes.bool:
            raise TypeError(f"record_if's condition must be a bool tensor, not {cond.dtype.name}")
        return cond
    if hasattr(cond, "_dense_var_to_tensor") or hasattr(cond, "value") and callable(cond.value):
        cond = convert_to_tensor(cond)
        return bool(cond.numpy()) if isinstance(cond, EagerTensor) else cond
    return bool(cond)


def should_record_summaries():
    """A bool tensor: whether summaries made here would be written (a default writer is set and the
    `record_if` condition holds)."""
    cond = recording_condition()
    return cond if isinstance(cond, Tensor) else convert_to_tensor(bool(cond))


def _global_step():
    found = get_default_graph().get_collection(GraphKeys.GLOBAL_STEP)
    return found[0] if len(found) == 1 else None


def resolve_step(step, use_global_step=False):
    """`step`, else the default step (else, for TF1's ops, the global step), as an int64 tensor.

    Raises:
      ValueError: no step is given or set.
      TypeError: the step is not an integer.
    """
    if step is None:
        step = _state.step
    if step is None and use_global_step:
        step = _global_step()
    if step is None:
        raise ValueError("No step set. Please specify one either through the `step` argument or through "
                         "tf.summary.experimental.set_step()")
    if not isinstance(step, Tensor):
        if hasattr(step, "_dense_var_to_tensor") or (hasattr(step, "dtype") and hasattr(step, "read_value")):
            step = convert_to_tensor(step)
        elif isinstance(step, (bool, np.bool_)):
            raise TypeError(f"step must be an integer, not {step!r}")
        else:
            return convert_to_tensor(step, dtypes.int64)
    if not (step.dtype.is_integer or step.dtype.is_unsigned):
        raise TypeError(f"step must be an integer tensor, not {step.dtype.name}")
    if step.dtype != dtypes.int64:
        from_eager = isinstance(step, EagerTensor)
        step = convert_to_tensor(np.int64(step.numpy())) if from_eager else cast(step, dtypes.int64)
    return step

"""TF1's `FileWriter` and `FileWriterCache` (`sf.compat.v1.summary`): events written through
TensorBoard's `EventFileWriter` to a new events.out.tfevents.* file in a log directory.

`add_summary` takes what a Session computed from a summary op (bytes) or a Summary proto;
`add_graph` writes a graph's GraphDef (each node's name, op type, inputs, device and simple attrs,
which TensorBoard's graph tab draws); `add_run_metadata` writes a RunMetadata (segflow's, or a
proto) under a tag. As in TF, a summary tag's metadata is written with its first value only, and a
closed writer warns and writes nothing until `reopen()`.

Deliberate differences: it also works eagerly (TF raises RuntimeError); `add_graph` writes no
MetaGraphDef; without TensorBoard the writer is a no-op (after one warning).
"""
import threading
import time
import warnings

import numpy as np

from segflow._core.graph import get_default_graph
from segflow._core.tensor import EagerTensor
from segflow._ops import summary_proto

__all__ = ["FileWriter", "FileWriterCache"]


def _step(global_step):
    if global_step is None:
        return None
    if isinstance(global_step, EagerTensor):
        global_step = global_step.numpy()
    return int(np.asarray(global_step).item()) if isinstance(global_step, np.ndarray) else int(global_step)


class FileWriter:
    """Writes summaries, graphs and run metadata to an event file in `logdir`.

        writer = sf.compat.v1.summary.FileWriter("/tmp/logs", sess.graph)
        writer.add_summary(sess.run(merged), global_step=step)
        writer.close()
    """

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, graph_def=None, filename_suffix=None,
                 session=None):
        self._logdir = str(logdir)
        self._options = (int(max_queue), float(flush_secs), filename_suffix or "")
        self._tb = summary_proto.backend()
        self._writer = None
        self._closed = False
        self._lock = threading.Lock()
        self._seen_summary_tags = set()
        self._session_run_tags = set()
        self._open()
        if graph is not None or graph_def is not None:
            self.add_graph(graph, graph_def=graph_def)

    def _open(self):
        if self._tb is not None:
            max_queue, flush_secs, suffix = self._options
            self._writer = self._tb.EventFileWriter(self._logdir, max_queue_size=max_queue, flush_secs=flush_secs,
                                                    filename_suffix=suffix)

    def get_logdir(self):
        """The directory the event file is in."""
        return self._logdir

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # -- events
    def add_event(self, event):
        """Writes an Event proto as it is."""
        if self._closed:
            warnings.warn("Attempting to use a closed FileWriter. The operation will be a noop unless the "
                          "FileWriter is explicitly reopened.", stacklevel=3)
            return
        if self._writer is not None:
            with self._lock:
                self._writer.add_event(event)

    def _add_event(self, build, global_step):
        if self._tb is None:
            return
        event = build(self._tb)
        event.wall_time = time.time()
        step = _step(global_step)
        if step is not None:
            event.step = step
        self.add_event(event)

    def add_summary(self, summary, global_step=None):
        """Writes a Summary: the serialized bytes a summary op computed (or an eager string tensor of
        them), or a Summary proto, at `global_step`."""
        tb = self._tb
        if tb is None:
            return
        if isinstance(summary, EagerTensor):
            summary = summary.numpy()
        if isinstance(summary, np.ndarray):
            summary = summary.item()
        if isinstance(summary, (bytes, bytearray)):
            summary = summary_proto.parse_summary(tb, summary, "add_summary's summary")
        elif not isinstance(summary, tb.summary_pb2.Summary):
            raise TypeError(f"add_summary needs a Summary proto or its serialized bytes, not {type(summary).__name__}")
        else:
            copy = tb.summary_pb2.Summary()
            copy.CopyFrom(summary)
            summary = copy
        for value in summary.value:
            if not value.HasField("metadata"):
                continue
            if value.tag in self._seen_summary_tags:
                value.ClearField("metadata")
            else:
                self._seen_summary_tags.add(value.tag)
        self._add_event(lambda tb: tb.event_pb2.Event(summary=summary), global_step)

    def add_graph(self, graph, global_step=None, graph_def=None):
        """Writes the GraphDef of `graph` (a Graph, or a GraphDef) for TensorBoard's graph tab."""
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        source = graph if graph is not None else graph_def
        if hasattr(source, "as_graph_def"):
            source = source.as_graph_def()
        if not (hasattr(source, "node") or isinstance(source, (list, tuple))):
            raise TypeError(f"add_graph needs a Graph or a GraphDef, not {type(source).__name__}")
        if self._tb is None:
            return
        proto = source if hasattr(source, "SerializeToString") else summary_proto.graph_def_proto(self._tb, source)
        self._add_event(lambda tb: tb.event_pb2.Event(graph_def=proto.SerializeToString()), global_step)

    def add_run_metadata(self, run_metadata, tag, global_step=None):
        """Writes `run_metadata` (a RunMetadata, as Session.run filled it) under `tag`.

        Raises:
          ValueError: `tag` was used already.
        """
        if tag in self._session_run_tags:
            raise ValueError("The provided tag was already used for this event type")
        self._session_run_tags.add(tag)
        if self._tb is None:
            return
        proto = run_metadata if hasattr(run_metadata, "SerializeToString") else \
            summary_proto.run_metadata_proto(self._tb, run_metadata)
        self._add_event(lambda tb: tb.event_pb2.Event(tagged_run_metadata=tb.event_pb2.TaggedRunMetadata(
            tag=str(tag), run_metadata=proto.SerializeToString())), global_step)

    def add_session_log(self, session_log, global_step=None):
        """Writes a SessionLog proto (START, STOP, CHECKPOINT)."""
        self._add_event(lambda tb: tb.event_pb2.Event(session_log=session_log), global_step)

    def add_meta_graph(self, meta_graph_def, global_step=None):
        """Writes a MetaGraphDef proto."""
        if not hasattr(meta_graph_def, "SerializeToString"):
            raise TypeError(f"meta_graph_def must be a MetaGraphDef proto, not {type(meta_graph_def).__name__}")
        self._add_event(lambda tb: tb.event_pb2.Event(meta_graph_def=meta_graph_def.SerializeToString()), global_step)

    # -- file
    def flush(self):
        """Writes the pending events to disk."""
        if self._writer is not None and not self._closed:
            with self._lock:
                self._writer.flush()

    def close(self):
        """Flushes and closes the event file; later events are dropped (with a warning) until `reopen`."""
        if self._writer is not None and not self._closed:
            with self._lock:
                self._writer.close()
        self._closed = True

    def reopen(self):
        """After `close`, starts writing again, to a new event file in the same directory."""
        if self._closed:
            self._closed = False
            self._open()


class FileWriterCache:
    """One FileWriter per log directory: `FileWriterCache.get(logdir)`, `FileWriterCache.clear()`."""

    _cache = {}
    _lock = threading.Lock()

    @staticmethod
    def get(logdir):
        """The cached FileWriter for `logdir`, made (with the default graph) on first use."""
        with FileWriterCache._lock:
            writer = FileWriterCache._cache.get(logdir)
            if writer is None:
                writer = FileWriterCache._cache[logdir] = FileWriter(logdir, graph=get_default_graph())
            return writer

    @staticmethod
    def clear():
        """Closes and forgets every cached writer."""
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache.clear()

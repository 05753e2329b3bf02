"""The summaries' link to TensorBoard: its protocol buffers (`tensorboard.compat.proto`) and its
event-file writer, imported on first use (`backend()`), and the protos segflow builds from arrays
(tensors, v1/v2 summary values, a graph's GraphDef, a RunMetadata).

TensorBoard is an optional extra (`pip install segflow[summary]`): without it `backend()` is None,
warns once, and every summary is a no-op (TF raises instead).
"""
import threading
import warnings

import numpy as np

from segflow._core import dtypes

__all__ = ["backend", "tensor_proto", "plugin_metadata", "v2_value", "v1_simple_value", "v1_histogram_value", "graph_def_proto",
           "run_metadata_proto", "parse_summary", "ProtoClass", "Summary", "SummaryMetadata", "SummaryDescription",
           "HistogramProto", "Event", "SessionLog", "TaggedRunMetadata"]

INSTALL_HINT = ("segflow's summaries need TensorBoard's writer: pip install 'segflow[summary]' "
                "(tensorboard>=2.10). Until then summaries are not written.")

_BACKEND = []
_LOCK = threading.Lock()


class _Backend:
    """TensorBoard's modules that the summaries use."""

    def __init__(self):
        from tensorboard.compat.proto import (attr_value_pb2, config_pb2, event_pb2, graph_pb2, node_def_pb2,
                                              step_stats_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2)
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
        self.attr_value_pb2 = attr_value_pb2
        self.config_pb2 = config_pb2
        self.event_pb2 = event_pb2
        self.graph_pb2 = graph_pb2
        self.node_def_pb2 = node_def_pb2
        self.step_stats_pb2 = step_stats_pb2
        self.summary_pb2 = summary_pb2
        self.tensor_pb2 = tensor_pb2
        self.tensor_shape_pb2 = tensor_shape_pb2
        self.EventFileWriter = EventFileWriter


def backend():
    """TensorBoard's protos and writer (imported once), or None when TensorBoard is not installed
    (then one warning says what to install)."""
    if _BACKEND:
        return _BACKEND[0]
    with _LOCK:
        if not _BACKEND:
            try:
                found = _Backend()
            except ImportError as e:
                warnings.warn(f"{INSTALL_HINT} ({e})", RuntimeWarning, stacklevel=4)
                found = None
            _BACKEND.append(found)
    return _BACKEND[0]


class _ProtoMeta(type):
    """A name that stands for one of TensorBoard's proto classes, imported when first used:
    calling it builds that proto, its attributes (nested types, enums) are the proto's."""

    def _real(cls):
        tb = backend()
        if tb is None:
            raise ImportError(f"{cls.__name__} is TensorBoard's protocol buffer. {INSTALL_HINT}")
        out = getattr(tb, cls._module)
        for part in cls._path.split("."):
            out = getattr(out, part)
        return out

    def __call__(cls, *args, **kwargs):
        return cls._real()(*args, **kwargs)

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(cls._real(), name)

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls._real())


def ProtoClass(name, module, path):  # noqa: N802 - builds a class
    """A stand-in class named `name` for TensorBoard's `module.path` proto (e.g. summary_pb2, "Summary")."""
    return _ProtoMeta(name, (), {"_module": module, "_path": path, "__doc__": f"TensorBoard's {path} proto "
                                 f"(tensorboard.compat.proto.{module}), imported on first use."})


# -- tensors
_DT_ENUMS = {np.dtype(np.float32): 1, np.dtype(np.float64): 2, np.dtype(np.int32): 3, np.dtype(np.int64): 9,
             np.dtype(np.bool_): 10}
_DT_STRING = 7


def tensor_proto(tb, array):
    """A TensorProto of `array` (a float, int or bool array, or an object/bytes array of strings)."""
    array = np.asarray(array)
    shape = tb.tensor_shape_pb2.TensorShapeProto(
        dim=[tb.tensor_shape_pb2.TensorShapeProto.Dim(size=int(d)) for d in array.shape])
    if array.dtype == object or array.dtype.kind in "SU":
        values = [v if isinstance(v, bytes) else str(v).encode() for v in array.reshape(-1).tolist()]
        return tb.tensor_pb2.TensorProto(dtype=_DT_STRING, tensor_shape=shape, string_val=values)
    enum = _DT_ENUMS.get(array.dtype)
    if enum is None:
        array = array.astype(np.float64)
        enum = 2
    return tb.tensor_pb2.TensorProto(dtype=enum, tensor_shape=shape,
                                     tensor_content=np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"))
                                     .tobytes())


def plugin_metadata(tb, plugin, description="", data_class=None, display_name=""):
    meta = tb.summary_pb2.SummaryMetadata(plugin_data=tb.summary_pb2.SummaryMetadata.PluginData(plugin_name=plugin))
    if description:
        meta.summary_description = description
    if display_name:
        meta.display_name = display_name
    if data_class is not None:
        meta.data_class = data_class
    return meta


_DATA_CLASS = {"scalars": 1, "histograms": 2, "text": 2}     # DATA_CLASS_SCALAR, DATA_CLASS_TENSOR


def v2_value(tb, tag, plugin, array, description="", metadata=None):
    """A Summary.Value holding `array` as a tensor, with the metadata of TensorBoard's `plugin`
    ("scalars", "histograms", "text") or the given SummaryMetadata (proto or serialized bytes)."""
    if metadata is None:
        metadata = plugin_metadata(tb, plugin, description, _DATA_CLASS.get(plugin))
    elif isinstance(metadata, bytes):
        metadata = tb.summary_pb2.SummaryMetadata.FromString(metadata)
    return tb.summary_pb2.Summary.Value(tag=tag, metadata=metadata, tensor=tensor_proto(tb, array))


def v1_simple_value(tb, tag, value):
    return tb.summary_pb2.Summary.Value(tag=tag, simple_value=float(value))


def v1_histogram_value(tb, tag, stats):
    """A Summary.Value holding a HistogramProto; `stats` is summary_histogram.exponential's dict."""
    return tb.summary_pb2.Summary.Value(tag=tag, histo=tb.summary_pb2.HistogramProto(**stats))


def parse_summary(tb, data, what):
    """The Summary proto serialized in `data` (bytes); ValueError naming `what` when it is not one."""
    try:
        return tb.summary_pb2.Summary.FromString(bytes(data))
    except Exception as e:  # noqa: BLE001 - protobuf's DecodeError, whatever module it comes from
        raise ValueError(f"{what} is not a serialized Summary proto: {e}") from None


# -- graphs and run metadata
def _attr_value(tb, value):
    av = tb.attr_value_pb2.AttrValue
    if isinstance(value, dtypes.DType):
        return av(type=value.as_datatype_enum)
    if isinstance(value, (bool, np.bool_)):
        return av(b=bool(value))
    if isinstance(value, (int, np.integer)):
        return av(i=int(value))
    if isinstance(value, (float, np.floating)):
        return av(f=float(value))
    if isinstance(value, str):
        return av(s=value.encode())
    if isinstance(value, bytes):
        return av(s=value)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (int, np.integer)) and
                                                          not isinstance(v, bool) for v in value):
        return av(list=av.ListValue(i=[int(v) for v in value]))
    return None


def graph_def_proto(tb, graph_def):
    """TensorBoard's GraphDef for segflow's GraphDef (or a list of NodeDefs): each node's name, op
    type, inputs, device and the attrs that are dtypes or plain numbers and strings."""
    nodes = graph_def.node if hasattr(graph_def, "node") else list(graph_def)
    out = tb.graph_pb2.GraphDef()
    for n in nodes:
        node = out.node.add(name=n.name, op=n.op, input=list(n.input), device=n.device or "")
        for key, value in (n.attr or {}).items():
            try:
                converted = _attr_value(tb, value)
            except (TypeError, ValueError, AttributeError):
                converted = None
            if converted is not None:
                node.attr[key].CopyFrom(converted)
    versions = getattr(graph_def, "versions", None) or {}
    out.versions.producer = int(versions.get("producer", 0)) if isinstance(versions, dict) else 0
    return out


_NODE_FIELDS = ("node_name", "all_start_micros", "op_start_rel_micros", "op_end_rel_micros", "all_end_rel_micros",
                "timeline_label", "scheduled_micros", "thread_id", "all_start_nanos", "op_start_rel_nanos",
                "op_end_rel_nanos", "all_end_rel_nanos", "scheduled_nanos")


def run_metadata_proto(tb, run_metadata):
    """TensorBoard's RunMetadata proto for segflow's RunMetadata (its step_stats)."""
    out = tb.config_pb2.RunMetadata()
    for dev in run_metadata.step_stats.dev_stats:
        d = out.step_stats.dev_stats.add(device=dev.device)
        for ns in dev.node_stats:
            d.node_stats.add(**{k: getattr(ns, k) for k in _NODE_FIELDS})
    return out


# TF1's proto names (`sf.compat.v1.Summary`, `summary.Event`, ...): TensorBoard's classes on first use.
Summary = ProtoClass("Summary", "summary_pb2", "Summary")
SummaryMetadata = ProtoClass("SummaryMetadata", "summary_pb2", "SummaryMetadata")
SummaryDescription = ProtoClass("SummaryDescription", "summary_pb2", "SummaryDescription")
HistogramProto = ProtoClass("HistogramProto", "summary_pb2", "HistogramProto")
Event = ProtoClass("Event", "event_pb2", "Event")
SessionLog = ProtoClass("SessionLog", "event_pb2", "SessionLog")
TaggedRunMetadata = ProtoClass("TaggedRunMetadata", "event_pb2", "TaggedRunMetadata")

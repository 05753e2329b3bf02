"""TF2's summary ops (`sf.summary`): `scalar`, `histogram`, `text`, `write` and `flush`, written to
the default writer (`summary_writer`) at a step.

Each returns a bool tensor, True when the summary was written. With no default writer, or inside
`record_if(False)`, nothing is written and the result is False; with a writer and no step (argument
or `experimental.set_step`) it raises ValueError, as TF does. Eagerly the summary is written at
once; building a graph (TF1's Session, `sf.function`) it is a stateful `WriteSummary` op that writes
each time it runs, to the writer that was the default when it was built, as in TF.

Tags are the name under the enclosing name scopes ("outer/loss"), never made unique.
"""
import re

import numpy as np

from segflow._core import dtypes, errors
from segflow._core import mode as context
from segflow._core.apply import apply_op
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import get_default_graph
from segflow._core.registry import NotDifferentiable, TensorSpec, register_op
from segflow._core.tensor import EagerTensor, Tensor
from segflow._ops import summary_histogram, summary_proto
from segflow._ops import summary_writer as writers
from segflow.kernels import BadInput

__all__ = ["scalar", "histogram", "text", "write", "write_plugin", "flush", "summary_scope", "all_v2_summary_ops",
           "current_scope", "SUMMARY_V2_COLLECTION"]

SUMMARY_V2_COLLECTION = "_SUMMARY_V2"
_INVALID_SCOPE_CHARACTERS = re.compile(r"[^-_/.A-Za-z0-9]")


def current_scope():
    """The enclosing name scope without its trailing '/' ("" at the top), eagerly or in a graph."""
    if context.executing_eagerly():
        return context._scope_state.eager_names[-1].rstrip("/")
    return get_default_graph().get_name_scope()


def _tag(name):
    scope = current_scope()
    return f"{scope}/{name}" if scope else name


def _node_name(name, default):
    return _INVALID_SCOPE_CHARACTERS.sub("", name) or default


class summary_scope:  # noqa: N801 - TF's name
    """`with summary_scope(name, default_name) as (tag, scope):` the tag a summary named `name`
    gets here and a name scope for the ops that build it."""

    def __init__(self, name, default_name="summary", values=None):
        self._name = name or default_name
        self._default = default_name
        self._values = values
        self._scope = None

    def __enter__(self):
        tag = _tag(self._name)
        self._scope = None if context.executing_eagerly() else \
            get_default_graph().name_scope(_node_name(self._name, self._default))
        scope = self._scope.__enter__() if self._scope is not None else (tag + "/")
        return tag, scope

    def __exit__(self, *exc):
        if self._scope is not None:
            self._scope.__exit__(*exc)
        return False


# -- the ops
def _infer_write(op, step, tensor, condition, **attrs):
    if not (step.dtype.is_integer or step.dtype.is_unsigned):
        raise errors.invalid_input(op, "step", f"must be an integer, not {step.dtype.name}")
    if condition.dtype != dtypes.bool:
        raise errors.invalid_input(op, "condition", f"must be bool, not {condition.dtype.name}")
    if attrs.get("plugin") == "scalars" and tensor.shape.rank is not None and tensor.shape.rank != 0:
        raise errors.invalid_input(op, "tensor", f"Expected scalar shape, saw shape: {tensor.shape}.")
    return [TensorSpec(dtypes.bool, ())]


def _summary_array(plugin, value, buckets):
    """The array a v2 summary of `plugin` stores for `value`."""
    if plugin == "scalars":
        if np.ndim(value) != 0:
            raise BadInput("tensor", f"Expected scalar shape, saw shape: {tuple(np.shape(value))}.")
        return np.asarray(value, np.float32)
    if plugin == "histograms":
        return summary_histogram.linear(value, summary_histogram.DEFAULT_BUCKETS if buckets is None else buckets)
    return np.asarray(value)


def _write_kernel(state, step, tensor, condition, writer=None, tag="", plugin=None, description="",
                  buckets=None, metadata=None):
    if not bool(condition) or writer is None:
        return np.array(False)
    array = _summary_array(plugin, tensor, buckets)
    tb = getattr(writer, "_tb", None)
    if tb is None:       # a no-op writer
        return np.array(False)
    value = summary_proto.v2_value(tb, tag, plugin, array, description, metadata)
    return np.array(bool(writer._write_value(int(step), value)))


register_op("WriteSummary", inputs=("step", "tensor", "condition"), infer=_infer_write, kernel=_write_kernel,
            stateful=True, defaults={"writer": None, "tag": "", "plugin": None, "description": "",
                                     "buckets": None, "metadata": None})
NotDifferentiable("WriteSummary")


def _flush_kernel(state, writer=None):
    if writer is not None:
        writer.flush()
    return []


register_op("FlushSummaryWriter", inputs=(), infer=lambda op, **attrs: [], kernel=_flush_kernel, stateful=True,
            num_outputs=0, defaults={"writer": None})


def _false():
    return convert_to_tensor(False)


def _emit(tag, data, step, plugin, description="", buckets=None, metadata=None, name="write_summary"):
    """Writes `data` (a tensor, or a callable making one) under `tag` at `step`, the shared path of
    every TF2 summary: False without a writer or while not recording, else the WriteSummary op."""
    writer = writers.default_writer()
    if writer is None:
        return _false()
    cond = writers.recording_condition()
    if cond is False:
        return _false()
    step = writers.resolve_step(step)
    if callable(data) and not isinstance(data, Tensor):
        data = data()
    data = data if isinstance(data, Tensor) else convert_to_tensor(data)
    cond = convert_to_tensor(True) if cond is True else cond
    out = apply_op("WriteSummary", step, data, cond, writer=writer, tag=tag, plugin=plugin,
                   description=description or "", buckets=buckets, metadata=metadata, name=name)
    if not isinstance(out, EagerTensor):
        out.graph.add_to_collection(SUMMARY_V2_COLLECTION, out.op)
    return out


def _write(name, data, step, plugin, description="", buckets=None, default_name="summary"):
    with summary_scope(name, default_name) as (tag, _):
        return _emit(tag, data, step, plugin, description, buckets)


def write_plugin(tag, data, step, plugin):
    """Writes `data` for TensorBoard's `plugin` ("scalars", "histograms", "text") under `tag` as given."""
    return _emit(tag, data, step, plugin)


def _as_tensor(data):
    """`data` (a tensor, variable, array or Python value, or a callable returning one) as a tensor."""
    if callable(data) and not isinstance(data, Tensor):
        data = data()
    return data if isinstance(data, Tensor) else convert_to_tensor(data)


def _check_numeric(t, op_name, to):
    if t.dtype == dtypes.string:
        raise errors.UnimplementedError(None, None, f"{op_name}: Cast string to {to} is not supported")
    if t.dtype.is_complex:
        raise TypeError(f"{op_name}: data must be real, not {t.dtype.name}")


def scalar(name, data, step=None, description=None):
    """Writes the scalar `data` (cast to float32) under `name` at `step`.

    Args:
      name: the summary's name; its tag is it under the enclosing name scopes.
      data: a real or bool scalar.
      step: an int64-convertible step; defaults to `experimental.get_step()`.
      description: shown in TensorBoard (markdown).
    Returns:
      A bool tensor: whether it was written.
    Raises:
      ValueError: `data` is not a scalar, or no step is given or set.
    """
    data = _as_tensor(data)
    _check_numeric(data, "scalar", "float")
    if data.shape.rank is not None and data.shape.rank != 0:
        raise ValueError(f"Expected scalar shape, saw shape: {data.shape}.")
    return _write(name, data, step, "scalars", description, default_name="scalar_summary")


def histogram(name, data, step=None, buckets=None, description=None):
    """Writes a histogram of `data` (any shape, cast to float64): `buckets` (30) equal-width buckets
    from its min to its max, stored as rows (left edge, right edge, count).

    Returns:
      A bool tensor: whether it was written.
    """
    data = _as_tensor(data)
    _check_numeric(data, "histogram", "double")
    if buckets is not None:
        if isinstance(buckets, Tensor):
            if not isinstance(buckets, EagerTensor):
                raise TypeError("histogram: buckets must be a Python int or an eager tensor, not a graph tensor")
            buckets = buckets.numpy()
        if isinstance(buckets, (bool, np.bool_)) or not isinstance(buckets, (int, np.integer)) and \
                not (isinstance(buckets, np.ndarray) and buckets.ndim == 0 and buckets.dtype.kind in "iu"):
            raise TypeError(f"histogram: buckets must be an integer, not {buckets!r}")
        buckets = max(0, int(buckets))
    return _write(name, data, step, "histograms", description, buckets=buckets, default_name="histogram_summary")


def text(name, data, step=None, description=None):
    """Writes the string tensor `data` (any shape; TensorBoard shows it as markdown).

    Returns:
      A bool tensor: whether it was written.
    Raises:
      TypeError: `data` is not a string tensor.
    """
    data = _as_tensor(data)
    if data.dtype != dtypes.string:
        raise TypeError(f"tensor must be of type tf.string; got tf.{data.dtype.name}")
    return _write(name, data, step, "text", description, default_name="text_summary")


def write(tag, tensor, step=None, metadata=None, name=None):
    """Writes `tensor` (or what the callable `tensor` returns) under `tag` exactly, with the given
    SummaryMetadata (a proto or its serialized bytes) or none.

    Returns:
      A bool tensor: whether it was written.
    """
    if metadata is not None and not isinstance(metadata, bytes):
        if not hasattr(metadata, "SerializeToString"):
            raise TypeError(f"metadata must be a SummaryMetadata proto or bytes, not {type(metadata).__name__}")
        metadata = metadata.SerializeToString()
    return _emit(str(tag), tensor, step, None, metadata=metadata or b"", name=name or "write_summary")


def flush(writer=None, name=None):
    """Writes `writer`'s (default: the default writer's) pending events to disk. Eagerly at once
    (returns None); building a graph, returns an op that does it."""
    writer = writers.default_writer() if writer is None else writer
    if context.executing_eagerly():
        if writer is not None:
            writer.flush()
        return None
    return apply_op("FlushSummaryWriter", writer=writer, name=name or "flush")


def all_v2_summary_ops():
    """The TF2 summary ops of the default graph (None eagerly)."""
    if context.executing_eagerly():
        return None
    return get_default_graph().get_collection(SUMMARY_V2_COLLECTION)

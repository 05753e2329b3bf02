"""TF1's summary ops (`sf.compat.v1.summary`): `scalar`, `histogram`, `text`, `tensor_summary`,
`merge` and `merge_all`. Each returns a scalar string tensor holding a serialized `Summary` proto
(ops `ScalarSummary`, `HistogramSummary`, `TensorSummaryV2`, `MergeSummary`) and, in a graph, joins
the SUMMARIES collection; a `FileWriter` writes what a Session computed with `add_summary`.

Tags are the op's name (made unique in a graph: "loss", "loss_1"); with `family` they start with it
twice, as TF's do ("fam/fam/loss"). Eagerly, while a TF2 default writer is set, they write through
it (TF2's path; the result is b"") and otherwise compute the serialized proto.

Deliberate differences: the tag is an attr of the op, not a Const input; `merge` also works
eagerly (TF raises); without TensorBoard the ops give b"" (an empty Summary) after one warning.
"""
import re

import numpy as np

from segflow._core import dtypes, errors
from segflow._core import mode as context
from segflow._core.apply import apply_op
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import GraphKeys, get_default_graph
from segflow._core.registry import NotDifferentiable, TensorSpec, register_op
from segflow._core.tensor import Tensor
from segflow._ops import summary as summary_v2, summary_histogram, summary_proto
from segflow._ops import summary_writer as writers
from segflow.kernels import BadInput

__all__ = ["scalar", "histogram", "text", "tensor_summary", "merge", "merge_all", "clean_tag"]

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")


def clean_tag(name):
    """`name` with characters TensorBoard does not allow in a tag replaced by '_' (no leading '/')."""
    if name is None:
        return None
    return _INVALID_TAG_CHARACTERS.sub("_", str(name)).lstrip("/")


def _bytes(summary):
    return np.array(summary.SerializeToString() if summary is not None else b"", dtype=object)


# -- ops
def _infer_scalar(op, values, tag=""):
    if values.dtype.is_bool or values.dtype == dtypes.string or values.dtype.is_complex or \
            not (values.dtype.is_floating or values.dtype.is_integer or values.dtype.is_unsigned):
        raise errors.invalid_input(op, "values", f"must be a real number, not {values.dtype.name}")
    if values.shape.rank is not None and values.shape.rank != 0:
        raise errors.invalid_input(op, "values", f"tags and values are not the same shape: [] != "
                                                 f"{list(values.shape.as_list())} (tag '{tag}')")
    return [TensorSpec(dtypes.string, ())]


def _scalar_kernel(values, tag=""):
    if np.ndim(values) != 0:
        raise BadInput("values", f"tags and values are not the same shape: [] != {list(np.shape(values))} "
                                 f"(tag '{tag}')")
    tb = summary_proto.backend()
    if tb is None:
        return _bytes(None)
    return _bytes(tb.summary_pb2.Summary(value=[summary_proto.v1_simple_value(tb, tag, values)]))


register_op("ScalarSummary", inputs=("values",), attrs={"T": "values"}, infer=_infer_scalar, kernel=_scalar_kernel,
            defaults={"tag": ""})


def _infer_histogram(op, values, tag=""):
    if values.dtype.is_bool or values.dtype == dtypes.string or values.dtype.is_complex:
        raise errors.invalid_input(op, "values", f"must be real numbers, not {values.dtype.name}")
    return [TensorSpec(dtypes.string, ())]


def _histogram_kernel(values, tag=""):
    data = np.asarray(values, np.float64)
    if np.isnan(data).any():
        raise BadInput("values", f"Nan in summary histogram for: {tag}")
    if np.isinf(data).any():
        raise BadInput("values", f"Infinity in summary histogram for: {tag}")
    tb = summary_proto.backend()
    if tb is None:
        return _bytes(None)
    stats = summary_histogram.exponential(data)
    return _bytes(tb.summary_pb2.Summary(value=[summary_proto.v1_histogram_value(tb, tag, stats)]))


register_op("HistogramSummary", inputs=("values",), attrs={"T": "values"}, infer=_infer_histogram,
            kernel=_histogram_kernel, defaults={"tag": ""})


def _tensor_summary_kernel(tensor, tag="", serialized_summary_metadata=b""):
    tb = summary_proto.backend()
    if tb is None:
        return _bytes(None)
    value = summary_proto.v2_value(tb, tag, None, tensor, metadata=serialized_summary_metadata)
    return _bytes(tb.summary_pb2.Summary(value=[value]))


register_op("TensorSummaryV2", inputs=("tensor",), attrs={"T": "tensor"},
            infer=lambda op, tensor, **attrs: [TensorSpec(dtypes.string, ())], kernel=_tensor_summary_kernel,
            defaults={"tag": "", "serialized_summary_metadata": b""})


def _infer_merge(op, inputs):
    for i, t in enumerate(inputs):
        if t.dtype != dtypes.string:
            raise errors.invalid_input(op, "inputs", f"inputs[{i}] must be a string tensor (a serialized Summary), "
                                                     f"not {t.dtype.name}")
    return [TensorSpec(dtypes.string, ())]


def _merge_kernel(inputs):
    tb = summary_proto.backend()
    if tb is None:
        return _bytes(None)
    out = tb.summary_pb2.Summary()
    tags = set()
    for i, arr in enumerate(inputs):
        for item in np.asarray(arr, dtype=object).reshape(-1):
            data = item if isinstance(item, bytes) else str(item).encode()
            try:
                part = summary_proto.parse_summary(tb, data, f"inputs[{i}]")
            except ValueError as e:
                raise BadInput("inputs", f"Could not parse one of the summary inputs: {e}") from None
            for value in part.value:
                if value.tag and value.tag in tags:
                    raise BadInput("inputs", f"Duplicate tag {value.tag} found in summary inputs")
                tags.add(value.tag)
            out.value.extend(part.value)
    return _bytes(out)


register_op("MergeSummary", inputs=("inputs*",), infer=_infer_merge, kernel=_merge_kernel)

for _op in ("ScalarSummary", "HistogramSummary", "TensorSummaryV2", "MergeSummary"):
    NotDifferentiable(_op)


# -- public functions
def _names(name, family):
    """(tag, node name) for a summary `name` in `family` here (TF's summary_op_util.summary_scope)."""
    name = clean_tag(name) or "summary"
    family = clean_tag(family)
    base = name if family is None else f"{family}/{name}"
    if context.executing_eagerly():
        scope = summary_v2.current_scope()
        node = f"{scope}/{base}" if scope else base
    else:
        node = get_default_graph().unique_name(base, mark_as_used=False)
    return (node if family is None else f"{family}/{node}"), base


def _collect(t, collections, default):
    if context.executing_eagerly():
        return
    keys = default if collections is None else collections
    get_default_graph().add_to_collections(list(keys), t)


def _v2_active():
    """Eagerly with a TF2 default writer, TF1's summary ops write through it."""
    return context.executing_eagerly() and writers.has_default_writer()


def _input(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def _v2_write(write, tag, data, **kwargs):
    write(tag, data, step=writers.resolve_step(None, use_global_step=True), **kwargs)
    return convert_to_tensor(b"")


def scalar(name, tensor, collections=None, family=None):
    """A serialized Summary holding the real scalar `tensor` as `simple_value` under the tag `name`.

    Args:
      name: the summary's name (characters other than letters, digits, -_./ become '_').
      tensor: a real numeric scalar.
      collections: graph collections to add the result to (default [GraphKeys.SUMMARIES]).
      family: a tag prefix (TensorBoard's tab).
    Returns:
      A scalar string tensor.
    """
    tensor = _input(tensor)
    tag, node = _names(name, family)
    if _v2_active():
        return _v2_write(_write_exact_scalar, tag, tensor)
    out = apply_op("ScalarSummary", tensor, tag=tag, name=node)
    _collect(out, collections, [GraphKeys.SUMMARIES])
    return out


def histogram(name, values, collections=None, family=None):
    """A serialized Summary holding a HistogramProto of `values` (any shape; NaN or Inf is an
    InvalidArgumentError when it runs) in TF's exponential buckets.

    Returns:
      A scalar string tensor.
    """
    values = _input(values)
    tag, node = _names(name, family)
    if _v2_active():
        return _v2_write(_write_exact_histogram, tag, values)
    out = apply_op("HistogramSummary", values, tag=tag, name=node)
    _collect(out, collections, [GraphKeys.SUMMARIES])
    return out


def tensor_summary(name, tensor, summary_description=None, collections=None, summary_metadata=None,
                   family=None, display_name=None):
    """A serialized Summary holding `tensor` as a TensorProto with `summary_metadata` (a
    SummaryMetadata proto or its bytes).

    Returns:
      A scalar string tensor.
    """
    tensor = _input(tensor)
    tag, node = _names(name, family)
    meta = summary_metadata
    if meta is not None and not isinstance(meta, bytes):
        meta = meta.SerializeToString()
    if (summary_description or display_name) and summary_proto.backend() is not None:
        tb = summary_proto.backend()
        proto = tb.summary_pb2.SummaryMetadata.FromString(meta or b"")
        if summary_description:
            proto.summary_description = summary_description
        if display_name:
            proto.display_name = display_name
        meta = proto.SerializeToString()
    out = apply_op("TensorSummaryV2", tensor, tag=tag, serialized_summary_metadata=meta or b"", name=node)
    _collect(out, collections, [GraphKeys.SUMMARIES])
    return out


def text(name, tensor, collections=None):
    """A serialized Summary holding the string tensor `tensor` for TensorBoard's text plugin.

    Raises:
      TypeError: `tensor` is not a string tensor.
    """
    tensor = _input(tensor)
    if tensor.dtype != dtypes.string:
        raise TypeError(f"tensor must be of type tf.string; got tf.{tensor.dtype.name}")
    if _v2_active():
        tag, _ = _names(name, None)
        return _v2_write(_write_exact_text, tag, tensor)
    tb = summary_proto.backend()
    meta = b"" if tb is None else summary_proto.plugin_metadata(tb, "text").SerializeToString()
    return tensor_summary(name, tensor, collections=collections, summary_metadata=meta)


def merge(inputs, collections=None, name=None):
    """One serialized Summary holding the values of all `inputs` (string tensors of serialized
    Summary protos); a tag found twice is an InvalidArgumentError when it runs.

    Raises:
      ValueError: `inputs` is empty.
    """
    inputs = [_input(x) for x in inputs]
    if not inputs:
        raise ValueError("List argument 'inputs' to 'MergeSummary' Op with length 0 shorter than minimum length 1.")
    with _merge_scope(name) as node:
        out = apply_op("MergeSummary", inputs, name=node)
    _collect(out, collections, [])
    return out


class _merge_scope:  # noqa: N801
    def __init__(self, name):
        self._name = name
        self._scope = None

    def __enter__(self):
        if context.executing_eagerly():
            return "MergeSummary"
        self._scope = get_default_graph().name_scope(self._name or "Merge")
        self._scope.__enter__()
        return "MergeSummary"

    def __exit__(self, *exc):
        if self._scope is not None:
            self._scope.__exit__(*exc)
        return False


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """`merge` of the summaries in the graph collection `key` (optionally those whose names match
    `scope`), or None when there are none.

    Raises:
      RuntimeError: called eagerly (there are no collections to merge), as in TF.
    """
    if context.executing_eagerly():
        raise RuntimeError("Merging tf.summary.* ops is not compatible with eager execution. "
                           "Use tf.summary (TF2) instead.")
    found = get_default_graph().get_collection(key, scope)
    if not found:
        return None
    return merge(found, name=name)


# TF1 ops forwarded to a TF2 writer keep their full tag (the v2 functions would prefix the scope).
def _write_exact_scalar(tag, data, step):
    if data.shape.rank is not None and data.shape.rank != 0:
        raise ValueError(f"Expected scalar shape, saw shape: {data.shape}.")
    return summary_v2.write_plugin(tag, data, step, "scalars")


def _write_exact_histogram(tag, data, step):
    return summary_v2.write_plugin(tag, data, step, "histograms")


def _write_exact_text(tag, data, step):
    return summary_v2.write_plugin(tag, data, step, "text")

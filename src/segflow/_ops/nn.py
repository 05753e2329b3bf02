"""Neural-network ops: relu, relu6, leaky_relu, softmax, log_softmax, the softmax cross entropies,
bias_add, and composites built from public ops (l2_normalize, l2_loss, sigmoid cross entropy,
xw_plus_b).
Gradients in nn_grad.py.

`sf.nn` (segflow/nn.py) is TensorFlow's `tf.nn` over these; `nn_impl.py` is TF's module name for
the composites.
"""

from __future__ import annotations

import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._core.tensor import Tensor
from segflow._core.apply import apply_op
from segflow._core.registry import TensorSpec, register_op
from segflow.kernels import BadInput, ids
from segflow._ops import elementwise as cw
from segflow._ops import linalg as linalg_ops
from segflow._ops import reduce as ro
from segflow._ops import shape as so
from segflow._ops import cast as cast_ops
from segflow._ops import transpose as transpose_ops
from typing import Optional
from segflow._core.typing import AxisLike, Name, TensorLike

__all__ = ["relu", "relu6", "leaky_relu", "softmax", "log_softmax", "sparse_softmax_cross_entropy_with_logits",
           "softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_v2", "bias_add",
           "l2_normalize", "l2_loss", "sigmoid_cross_entropy_with_logits", "sigmoid", "tanh", "softplus",
           "xw_plus_b"]

_FLOAT = dtypes.FLOATING
_REAL = dtypes.REAL_NUMERIC

sigmoid = cw.sigmoid
tanh = cw.tanh
softplus = cw.softplus


def _infer_same(op, features, **attrs):
    return [TensorSpec(features.dtype, features.shape)]


# -- relu family
def _relu(x):
    return np.maximum(x, np.zeros((), x.dtype))


def _relu6(x):
    return np.minimum(np.maximum(x, np.zeros((), x.dtype)), np.asarray(6, x.dtype))


def _leaky_relu(x, alpha=0.2):
    return np.where(x > 0, x, x * np.asarray(alpha, x.dtype)).astype(x.dtype, copy=False)


register_op("Relu", inputs=("features",), attrs={"T": "features"}, allowed={"T": _REAL}, infer=_infer_same,
            kernel=_relu)
register_op("Relu6", inputs=("features",), attrs={"T": "features"}, allowed={"T": _REAL}, infer=_infer_same,
            kernel=_relu6)
register_op("LeakyRelu", inputs=("features",), attrs={"T": "features"}, allowed={"T": _FLOAT}, infer=_infer_same,
            kernel=_leaky_relu, defaults={"alpha": 0.2})


def relu(features: TensorLike, name: Name = None) -> Tensor:
    """max(features, 0), elementwise. The gradient is 0 where features <= 0."""
    return apply_op("Relu", features, name=name)


def relu6(features: TensorLike, name: Name = None) -> Tensor:
    """min(max(features, 0), 6), elementwise. The gradient is 0 outside (0, 6)."""
    return apply_op("Relu6", features, name=name)


def leaky_relu(features: TensorLike, alpha: float = 0.2, name: Name = None) -> Tensor:
    """features where positive, else alpha * features."""
    return apply_op("LeakyRelu", features, alpha=float(alpha), name=name)


# -- softmax, log_softmax (on the last axis; other axes are moved there and back)
def _infer_softmax(op, logits):
    if logits.shape.rank == 0:
        raise errors.invalid_input(op, "logits", "must have rank >= 1, got a scalar")
    return [TensorSpec(logits.dtype, logits.shape)]


def _check_rank(logits):
    if logits.ndim == 0:
        raise BadInput("logits", "must have rank >= 1, got a scalar")


def _softmax_kernel(logits):
    _check_rank(logits)
    e = np.exp(logits - np.max(logits, axis=-1, keepdims=True))
    return (e / np.sum(e, axis=-1, keepdims=True)).astype(logits.dtype, copy=False)


def _log_softmax_kernel(logits):
    _check_rank(logits)
    shifted = logits - np.max(logits, axis=-1, keepdims=True)
    return (shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))).astype(logits.dtype, copy=False)


register_op("Softmax", inputs=("logits",), attrs={"T": "logits"}, allowed={"T": _FLOAT}, infer=_infer_softmax,
            kernel=_softmax_kernel)
register_op("LogSoftmax", inputs=("logits",), attrs={"T": "logits"}, allowed={"T": _FLOAT},
            infer=_infer_softmax, kernel=_log_softmax_kernel)


def _on_last_axis(op_type, logits, axis, name):
    if not isinstance(logits, Tensor):
        logits = convert_to_tensor(logits)
    rank = logits.shape.rank
    if axis is None or axis == -1 or (rank is not None and axis == rank - 1):
        return apply_op(op_type, logits, name=name)
    if rank is None:
        raise ValueError(f"{op_type} along axis {axis} needs a tensor of known rank, got shape {logits.shape}")
    if not -rank <= axis < rank:
        raise errors.InvalidArgumentError(None, None, f"{op_type}: axis {axis} is out of range for rank {rank}")
    a = axis % rank
    perm = list(range(rank))
    perm[a], perm[-1] = perm[-1], perm[a]       # a swap is its own inverse
    out = apply_op(op_type, transpose_ops.transpose(logits, perm), name=name)
    return transpose_ops.transpose(out, perm)


def softmax(logits: TensorLike, axis: Optional[int] = None, name: Name = None, dim: Optional[int] = None) -> Tensor:
    """exp(logits) / sum(exp(logits), axis), computed stably. `dim` is TF1's name for `axis` (default -1)."""
    return _on_last_axis("Softmax", logits, dim if axis is None else axis, name)


def log_softmax(logits: TensorLike, axis: Optional[int] = None, name: Name = None, dim: Optional[int] = None) -> Tensor:
    """logits - log(sum(exp(logits), axis)), computed stably. `dim` is TF1's name for `axis`."""
    return _on_last_axis("LogSoftmax", logits, dim if axis is None else axis, name)


# -- cross entropies
def _infer_sparse_xent(op, features, labels):
    if features.shape.rank is not None and labels.shape.rank is not None:
        if features.shape.rank != labels.shape.rank + 1 or \
                not features.shape[:-1].is_compatible_with(labels.shape):
            raise errors.invalid_input(op, "labels", f"shape {labels.shape} must be the shape of logits "
                                       f"{features.shape} without its last dimension")
    if features.shape.rank == 0:
        raise errors.invalid_input(op, "features", "logits must have rank >= 1")
    loss_shape = features.shape[:-1] if features.shape.rank is not None else labels.shape
    return [TensorSpec(features.dtype, loss_shape), TensorSpec(features.dtype, features.shape)]


def _sparse_xent_kernel(features, labels):
    if features.ndim == 0 or features.shape[:-1] != labels.shape:
        raise BadInput("labels", f"shape {labels.shape} must be the shape of logits {features.shape} without its "
                                 f"last dimension")
    n = features.shape[-1]
    ids.check_index_dtype(labels, "labels")
    ids.check_in_range(labels, 0, n, "labels")
    shifted = features - np.max(features, axis=-1, keepdims=True) if n else features
    lse = np.log(np.sum(np.exp(shifted), axis=-1))
    picked = np.take_along_axis(shifted, labels[..., None].astype(np.intp), axis=-1)[..., 0] if n else lse
    loss = (lse - picked).astype(features.dtype, copy=False)
    backprop = np.exp(shifted - lse[..., None])
    np.put_along_axis(backprop, labels[..., None].astype(np.intp),
                      np.take_along_axis(backprop, labels[..., None].astype(np.intp), axis=-1) - 1, axis=-1)
    return loss, backprop.astype(features.dtype, copy=False)


register_op("SparseSoftmaxCrossEntropyWithLogits", inputs=("features", "labels"),
            attrs={"T": "features", "Tlabels": "labels"}, allowed={"T": _FLOAT, "Tlabels": dtypes.INDEX},
            infer=_infer_sparse_xent, kernel=_sparse_xent_kernel, num_outputs=2)


def sparse_softmax_cross_entropy_with_logits(_sentinel: None = None, labels: Optional[TensorLike] = None,
                                             logits: Optional[TensorLike] = None, name: Name = None) -> Tensor:
    """-log(softmax(logits)[labels]) per row: the loss of classifying each row as its label.

    Args:
      labels: int32/int64 of shape `logits.shape[:-1]`, each in [0, num_classes).
      logits: float tensor `[..., num_classes]` (unscaled log-probabilities).
    Returns:
      The loss, of shape `labels.shape` and logits' dtype.
    Raises:
      InvalidArgumentError: a label outside [0, num_classes) (naming its position), mismatched shapes.
    """
    if _sentinel is not None:
        raise ValueError("Only call `sparse_softmax_cross_entropy_with_logits` with named arguments "
                         "(labels=..., logits=...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    loss, _ = apply_op("SparseSoftmaxCrossEntropyWithLogits", logits, labels, name=name)
    return loss


def _infer_xent(op, features, labels):
    try:
        shape = tensor_shape.broadcast_shape(features.shape, labels.shape)
    except ValueError:
        raise errors.invalid_input(op, "labels", f"shape {labels.shape} does not match logits' shape "
                                   f"{features.shape}") from None
    if shape.rank == 0:
        raise errors.invalid_input(op, "features", "logits must have rank >= 1")
    return [TensorSpec(features.dtype, shape[:-1] if shape.rank is not None else shape),
            TensorSpec(features.dtype, shape)]


def _xent_kernel(features, labels):
    try:
        features, labels = np.broadcast_arrays(features, labels)
    except ValueError:
        raise BadInput("labels", f"shape {labels.shape} does not match logits' shape {features.shape}") from None
    if features.ndim == 0:
        raise BadInput("features", "logits must have rank >= 1")
    shifted = features - np.max(features, axis=-1, keepdims=True)
    log_sm = shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))
    loss = -np.sum(labels * log_sm, axis=-1)
    return loss.astype(features.dtype, copy=False), (np.exp(log_sm) - labels).astype(features.dtype, copy=False)


register_op("SoftmaxCrossEntropyWithLogits", inputs=("features", "labels"), attrs={"T": ("features", "labels")},
            allowed={"T": _FLOAT}, infer=_infer_xent, kernel=_xent_kernel, num_outputs=2)


def softmax_cross_entropy_with_logits_v2(labels: TensorLike, logits: TensorLike, axis: int = -1, name: Name = None,
                                         dim: Optional[int] = None) -> Tensor:
    """-sum(labels * log_softmax(logits), axis): cross entropy against a distribution `labels`.

    Gradients flow to both logits and labels (TF2's `tf.nn.softmax_cross_entropy_with_logits`).
    Returns the loss, of logits' shape without `axis`.
    """
    axis = dim if dim is not None else axis
    logits = logits if isinstance(logits, Tensor) else convert_to_tensor(logits)
    labels = labels if isinstance(labels, Tensor) else convert_to_tensor(labels, dtype=logits.dtype)
    rank = logits.shape.rank
    if axis != -1 and not (rank is not None and axis == rank - 1):
        if rank is None:
            raise ValueError(f"softmax_cross_entropy_with_logits along axis {axis} needs logits of known rank")
        a = axis % rank
        perm = list(range(rank))
        perm[a], perm[-1] = perm[-1], perm[a]
        logits, labels = transpose_ops.transpose(logits, perm), transpose_ops.transpose(labels, perm)
        loss, _ = apply_op("SoftmaxCrossEntropyWithLogits", logits, labels, name=name)
        # the loss lost the (moved) last axis; the swapped axis a now sits at the end of the rest
        rest = perm[:-1]
        back = sorted(range(rank - 1), key=lambda i: rest[i])
        return transpose_ops.transpose(loss, back) if rank > 2 else loss
    loss, _ = apply_op("SoftmaxCrossEntropyWithLogits", logits, labels, name=name)
    return loss


def softmax_cross_entropy_with_logits(_sentinel: None = None, labels: Optional[TensorLike] = None,
                                      logits: Optional[TensorLike] = None, dim: int = -1, name: Name = None,
                                      axis: Optional[int] = None) -> Tensor:
    """TF1's softmax cross entropy: as `_v2`, but no gradient flows into `labels` (they are wrapped in
    stop_gradient, as TensorFlow's `nn_ops.softmax_cross_entropy_with_logits` does)."""
    if _sentinel is not None:
        raise ValueError("Only call `softmax_cross_entropy_with_logits` with named arguments (labels=..., logits=...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    logits = logits if isinstance(logits, Tensor) else convert_to_tensor(logits)
    labels = so.stop_gradient(labels if isinstance(labels, Tensor)
                              else convert_to_tensor(labels, dtype=logits.dtype))
    return softmax_cross_entropy_with_logits_v2(labels, logits, axis=dim if axis is None else axis, name=name)


# -- bias_add
def _channel_axis(data_format, rank):
    if data_format is None or not data_format.startswith("NC"):
        return rank - 1
    return 1


def _infer_bias_add(op, value, bias, data_format=None):
    if bias.shape.rank not in (None, 1):
        raise errors.invalid_input(op, "bias", f"must be 1-D, got shape {bias.shape}")
    rank = value.shape.rank
    if rank is not None:
        if rank < 2:
            raise errors.invalid_input(op, "value", f"must have rank >= 2, got shape {value.shape}")
        c = value.shape.as_list()[_channel_axis(data_format, rank)]
        b = bias.shape.as_list()[0] if bias.shape.rank == 1 else None
        if c is not None and b is not None and c != b:
            raise errors.invalid_input(op, "bias", f"has {b} entries, but value {value.shape} has {c} channels "
                                       f"(data_format {data_format or 'NHWC'})")
    return [TensorSpec(value.dtype, value.shape)]


def _bias_add_kernel(value, bias, data_format=None):
    if bias.ndim != 1:
        raise BadInput("bias", f"must be 1-D, got shape {bias.shape}")
    if value.ndim < 2:
        raise BadInput("value", f"must have rank >= 2, got shape {value.shape}")
    c = _channel_axis(data_format, value.ndim)
    if value.shape[c] != bias.shape[0]:
        raise BadInput("bias", f"has {bias.shape[0]} entries, but value {value.shape} has {value.shape[c]} "
                               f"channels (data_format {data_format or 'NHWC'})")
    shape = [1] * value.ndim
    shape[c] = -1
    return value + bias.reshape(shape)


register_op("BiasAdd", inputs=("value", "bias"), attrs={"T": ("value", "bias")}, allowed={"T": dtypes.NUMERIC},
            infer=_infer_bias_add, kernel=_bias_add_kernel, defaults={"data_format": None})


def bias_add(value: TensorLike, bias: TensorLike, data_format: Optional[str] = None, name: Name = None) -> Tensor:
    """value + bias, with the 1-D `bias` added along the channel axis: the last one ("NHWC", default),
    or axis 1 for data formats starting with "NC"."""
    if data_format is not None and data_format not in ("NHWC", "NCHW", "NWC", "NCW", "NDHWC", "NCDHW", "N..C",
                                                       "NC.."):
        raise ValueError(f"bias_add: unknown data_format {data_format!r}")
    return apply_op("BiasAdd", value, bias, data_format=data_format, name=name)


# -- composites of public ops (their gradients come from their parts)
def xw_plus_b(x: TensorLike, weights: TensorLike, biases: TensorLike, name: Name = None) -> Tensor:
    """matmul(x, weights) + biases, the bias added with bias_add (TF1's `nn.xw_plus_b`), built in a
    `name` scope ("xw_plus_b" by default). TF names the BiasAdd node after the scope itself; here it
    is "<scope>/BiasAdd", as for the other composites (apply_op takes no exact "scope/" names)."""
    with name_scope(name, "xw_plus_b", [x, weights, biases]):
        x = x if isinstance(x, Tensor) else convert_to_tensor(x)
        weights = weights if isinstance(weights, Tensor) else convert_to_tensor(weights)
        biases = biases if isinstance(biases, Tensor) else convert_to_tensor(biases)
        return bias_add(linalg_ops.matmul(x, weights), biases)


def l2_normalize(x: TensorLike, axis: Optional[AxisLike] = None, epsilon: float = 1e-12, name: Name = None,
                 dim: Optional[int] = None) -> Tensor:
    """x / sqrt(max(sum(x**2, axis), epsilon)): unit L2 norm along `axis` (all axes when None).

    `dim` is TF1's name for `axis` (`nn_impl.l2_normalize(x, dim=1)`).
    """
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    with name_scope(name, "l2_normalize", [x]):
        x = x if isinstance(x, Tensor) else convert_to_tensor(x)
        square_sum = ro.reduce_sum(cw.square(x), axis, keepdims=True)
        x_inv_norm = cw.rsqrt(cw.maximum(square_sum, cast_ops.cast(epsilon, x.dtype)))
        return cw.multiply(x, x_inv_norm)


def l2_loss(t: TensorLike, name: Name = None) -> Tensor:
    """sum(t ** 2) / 2, a scalar."""
    with name_scope(name, "L2Loss", [t]):
        t = t if isinstance(t, Tensor) else convert_to_tensor(t)
        return cw.multiply(ro.reduce_sum(cw.square(t)), cast_ops.cast(0.5, t.dtype))


def sigmoid_cross_entropy_with_logits(_sentinel: None = None, labels: Optional[TensorLike] = None,
                                      logits: Optional[TensorLike] = None, name: Name = None) -> Tensor:
    """-labels * log(sigmoid(logits)) - (1 - labels) * log(1 - sigmoid(logits)), elementwise, computed
    stably as max(x, 0) - x * z + log(1 + exp(-|x|))."""
    if _sentinel is not None:
        raise ValueError("Only call `sigmoid_cross_entropy_with_logits` with named arguments")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    with name_scope(name, "logistic_loss", [logits, labels]):
        logits = logits if isinstance(logits, Tensor) else convert_to_tensor(logits)
        labels = labels if isinstance(labels, Tensor) else convert_to_tensor(labels, dtype=logits.dtype)
        if not logits.shape.is_compatible_with(labels.shape):
            raise ValueError(f"logits and labels must have the same shape ({logits.shape} vs {labels.shape})")
        zeros = so.zeros_like(logits)
        relu_logits = cw.where(cw.greater_equal(logits, zeros), logits, zeros)
        neg_abs_logits = cw.where(cw.greater_equal(logits, zeros), cw.negative(logits), logits)
        return cw.add(cw.subtract(relu_logits, cw.multiply(logits, labels)), cw.log1p(cw.exp(neg_abs_logits)))

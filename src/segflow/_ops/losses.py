"""TF1's losses (`tf.compat.v1.losses`): per-element losses reduced by `compute_weighted_loss`, and
the LOSSES / REGULARIZATION_LOSSES collections behind `get_total_loss`.

    loss = sf.compat.v1.losses.softmax_cross_entropy(onehot, logits, weights=mask)
    total = sf.compat.v1.losses.get_total_loss()     # + get_variable regularizers' losses

As in TensorFlow: the regression and hinge losses cast labels and predictions to float32; the
reduction runs in float32 and the result is cast back to the losses' dtype; the default reduction
SUM_BY_NONZERO_WEIGHTS divides the weighted sum by the number of elements with a nonzero weight;
`weights` must be a scalar or have the losses' rank with each dimension 1 or the losses' (checked
while building when the shapes are known); eagerly the losses are computed but not collected.
"""
from segflow._core import dtypes
from segflow._core import mode as context
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import add_to_collection, get_collection, name_scope
from segflow._core.tensor import Tensor
from segflow._ops import cast as cast_ops
from segflow._ops import elementwise as cw
from segflow._ops import nn as nn_ops
from segflow._ops import reduce as ro
from segflow._ops import sequence
from segflow._ops import shape as so
from segflow._ops import transpose as transpose_ops

__all__ = ["Reduction", "compute_weighted_loss", "absolute_difference", "cosine_distance", "hinge_loss",
           "huber_loss", "log_loss", "mean_pairwise_squared_error", "mean_squared_error", "sigmoid_cross_entropy",
           "softmax_cross_entropy", "sparse_softmax_cross_entropy", "add_loss", "get_losses",
           "get_regularization_loss", "get_regularization_losses", "get_total_loss", "broadcast_weights",
           "assert_broadcastable", "remove_squeezable_dimensions", "LOSSES", "REGULARIZATION_LOSSES"]

LOSSES = "losses"
REGULARIZATION_LOSSES = "regularization_losses"


class Reduction:
    """How `compute_weighted_loss` reduces the weighted losses."""
    NONE = "none"                                    # the weighted losses, unreduced
    SUM = "weighted_sum"                             # their sum
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"   # sum / number of elements
    MEAN = "weighted_mean"                           # sum / sum of the (broadcast) weights
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"   # sum / count of nonzero weights
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls):
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE, cls.SUM_OVER_NONZERO_WEIGHTS,
                cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}. Key should be one of {cls.all()}.")


def _t(x, dtype=None, name=None):
    if isinstance(x, Tensor):
        return x if dtype is None or x.dtype == dtype else cast_ops.cast(x, dtype)
    return convert_to_tensor(x, dtype=dtype, name=name) if dtype is None else cast_ops.cast(x, dtype)


def _f32(x):
    return cast_ops.cast(x if isinstance(x, Tensor) else convert_to_tensor(x), dtypes.float32)


# -- weights and shapes
def assert_broadcastable(weights, values):
    """Checks (where the shapes are known) that `weights` is a scalar or has values' rank with each
    dimension 1 or values' dimension: TensorFlow's rule for loss and metric weights.

    Raises:
      ValueError: the weights cannot be broadcast to the values.
    """
    ws, vs = weights.shape, values.shape
    if ws.rank == 0 or ws.rank is None or vs.rank is None:
        return
    if ws.rank != vs.rank:
        raise ValueError(f"weights can not be broadcast to values. values.rank={vs.rank}. weights.rank={ws.rank}. "
                         f"values.shape={vs}. weights.shape={ws}.")
    for i, (w, v) in enumerate(zip(ws.as_list(), vs.as_list())):
        if w is not None and v is not None and w not in (1, v):
            raise ValueError(f"weights can not be broadcast to values. Mismatch at dim {i}. values.shape={vs}, "
                             f"weights.shape={ws}.")


def broadcast_weights(weights, values):
    """`weights` (checked by assert_broadcastable) broadcast to values' shape, in weights' dtype."""
    weights = _t(weights)
    values = _t(values)
    if weights.shape.is_fully_defined() and values.shape.is_fully_defined() and \
            weights.shape.as_list() == values.shape.as_list():
        return weights
    assert_broadcastable(weights, values)
    return cw.multiply(weights, so.ones_like(values, dtype=weights.dtype))


def remove_squeezable_dimensions(labels, predictions, expected_rank_diff=0):
    """Squeezes a last dimension of size 1 from `predictions` (when rank(predictions) - rank(labels)
    is expected_rank_diff + 1) or from `labels` (when it is expected_rank_diff - 1); static ranks
    only, as TensorFlow's confusion_matrix helper with known ranks."""
    labels, predictions = _t(labels), _t(predictions)
    lr, pr = labels.shape.rank, predictions.shape.rank
    if lr is None or pr is None:
        return labels, predictions
    diff = pr - lr
    if diff == expected_rank_diff + 1 and predictions.shape.as_list()[-1] in (1, None):
        predictions = transpose_ops.squeeze(predictions, [-1])
    elif diff == expected_rank_diff - 1 and labels.shape.as_list()[-1] in (1, None):
        labels = transpose_ops.squeeze(labels, [-1])
    return labels, predictions


def _num_elements(losses):
    return cast_ops.cast(so.size(losses), losses.dtype)


def _num_present(losses, weights, per_batch=False):
    """The number of elements of `losses` with a nonzero (broadcast) weight (per batch row)."""
    if isinstance(weights, float) and weights != 0.0 and not per_batch:
        return _num_elements(losses)
    with name_scope(None, "num_present", [losses, weights]):
        weights = _f32(weights)
        present = cw.where_v2(cw.equal(weights, 0.0), so.zeros_like(weights), so.ones_like(weights))
        present = broadcast_weights(present, losses)
        if per_batch:
            axes = sequence.range(1, so.rank(present))
            return ro.reduce_sum(present, axis=axes, keepdims=True)
        return ro.reduce_sum(present)


def compute_weighted_loss(losses, weights=1.0, scope=None, loss_collection=LOSSES,
                          reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """losses * weights, reduced by `reduction`, added to `loss_collection` (graph mode).

    Args:
      losses: a tensor of per-element losses.
      weights: a scalar or a tensor broadcastable to losses (see assert_broadcastable).
      reduction: a `Reduction` key.
    Returns:
      A scalar (a losses-shaped tensor for Reduction.NONE) of losses' dtype; 0 where the divisor is 0.
    Raises:
      ValueError: an unknown reduction, weights that cannot broadcast to losses.
    """
    Reduction.validate(reduction)
    with name_scope(scope, "weighted_loss", [losses, weights]):
        losses = _t(losses)
        input_dtype = losses.dtype
        losses = cast_ops.cast(losses, dtypes.float32)
        raw_weights = weights
        weights = _f32(weights)
        assert_broadcastable(weights, losses)
        weighted = cw.multiply(losses, weights)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = ro.reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                loss = cw.div_no_nan(loss, ro.reduce_sum(cw.multiply(so.ones_like(losses), weights)), name="value")
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                loss = cw.div_no_nan(loss, _num_present(losses, raw_weights if isinstance(raw_weights, float)
                                                        else weights), name="value")
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                loss = cw.div_no_nan(loss, _num_elements(losses), name="value")
        loss = cast_ops.cast(loss, input_dtype)
        add_loss(loss, loss_collection)
        return loss


# -- the losses
def _need(value, name):
    if value is None:
        raise ValueError(f"Argument `{name}` must not be None.")


def _compatible(a, b):
    a.shape.assert_is_compatible_with(b.shape)


def _float_pair(labels, predictions):
    _need(labels, "labels")
    _need(predictions, "predictions")
    predictions, labels = _f32(predictions), _f32(labels)
    _compatible(predictions, labels)
    return labels, predictions


def absolute_difference(labels, predictions, weights=1.0, scope=None, loss_collection=LOSSES,
                        reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """|predictions - labels|, weighted and reduced (see compute_weighted_loss)."""
    with name_scope(scope, "absolute_difference", [predictions, labels, weights]) as scope:
        labels, predictions = _float_pair(labels, predictions)
        losses = cw.abs(cw.subtract(predictions, labels))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def mean_squared_error(labels, predictions, weights=1.0, scope=None, loss_collection=LOSSES,
                       reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """(predictions - labels)^2, weighted and reduced (see compute_weighted_loss)."""
    with name_scope(scope, "mean_squared_error", [predictions, labels, weights]) as scope:
        labels, predictions = _float_pair(labels, predictions)
        losses = cw.squared_difference(predictions, labels)
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def log_loss(labels, predictions, weights=1.0, epsilon=1e-7, scope=None, loss_collection=LOSSES,
             reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """-labels log(predictions + epsilon) - (1 - labels) log(1 - predictions + epsilon)."""
    with name_scope(scope, "log_loss", [predictions, labels, weights]) as scope:
        labels, predictions = _float_pair(labels, predictions)
        eps = convert_to_tensor(epsilon, dtype=dtypes.float32)
        one = convert_to_tensor(1.0, dtype=dtypes.float32)
        losses = cw.subtract(cw.negative(cw.multiply(labels, cw.log(cw.add(predictions, eps)))),
                             cw.multiply(cw.subtract(one, labels), cw.log(cw.add(cw.subtract(one, predictions), eps))))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def huber_loss(labels, predictions, weights=1.0, delta=1.0, scope=None, loss_collection=LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """0.5 e^2 where |e| <= delta, else delta (|e| - 0.5 delta), e = predictions - labels."""
    with name_scope(scope, "huber_loss", [predictions, labels, weights]) as scope:
        labels, predictions = _float_pair(labels, predictions)
        abs_error = cw.abs(cw.subtract(predictions, labels))
        d = convert_to_tensor(delta, dtype=dtypes.float32)
        quadratic = cw.minimum(abs_error, d)
        linear = cw.subtract(abs_error, quadratic)
        losses = cw.add(cw.multiply(convert_to_tensor(0.5, dtype=dtypes.float32), cw.multiply(quadratic, quadratic)),
                        cw.multiply(d, linear))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def hinge_loss(labels, logits, weights=1.0, scope=None, loss_collection=LOSSES,
               reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """max(0, 1 - (2 labels - 1) logits): labels in {0, 1} mapped to {-1, 1}."""
    _need(labels, "labels")
    _need(logits, "logits")
    with name_scope(scope, "hinge_loss", [logits, labels, weights]) as scope:
        logits, labels = _f32(logits), _f32(labels)
        _compatible(logits, labels)
        ones = so.ones_like(labels)
        signs = cw.subtract(cw.multiply(convert_to_tensor(2.0, dtype=dtypes.float32), labels), ones)
        losses = nn_ops.relu(cw.subtract(ones, cw.multiply(signs, logits)))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def cosine_distance(labels, predictions, axis=None, weights=1.0, scope=None, loss_collection=LOSSES,
                    reduction=Reduction.SUM_BY_NONZERO_WEIGHTS, dim=None):
    """1 - sum(labels * predictions, axis) for unit-normalized labels and predictions (the losses
    keep `axis` with length 1). `dim` is the older name of `axis`.

    Raises:
      ValueError: no axis given (or both axis and dim).
    """
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError("You must specify argument `axis`.")
    with name_scope(scope, "cosine_distance_loss", [predictions, labels, weights]) as scope:
        labels, predictions = _float_pair(labels, predictions)
        radial = cw.multiply(predictions, labels)
        losses = cw.subtract(convert_to_tensor(1.0, dtype=dtypes.float32),
                             ro.reduce_sum(radial, axis=[axis], keepdims=True))
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def sigmoid_cross_entropy(multi_class_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """sigmoid_cross_entropy_with_logits per element; label_smoothing > 0 moves the labels to
    labels * (1 - label_smoothing) + 0.5 * label_smoothing."""
    _need(multi_class_labels, "multi_class_labels")
    _need(logits, "logits")
    with name_scope(scope, "sigmoid_cross_entropy_loss", [logits, multi_class_labels, weights]) as scope:
        logits = _t(logits, name="logits")
        labels = _t(multi_class_labels, logits.dtype)
        _compatible(logits, labels)
        if label_smoothing > 0:
            labels = cw.add(cw.multiply(labels, _t(1 - label_smoothing, logits.dtype)),
                            _t(0.5 * label_smoothing, logits.dtype))
        losses = nn_ops.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def softmax_cross_entropy(onehot_labels, logits, weights=1.0, label_smoothing=0, scope=None,
                          loss_collection=LOSSES, reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """Softmax cross entropy per row (no gradient into the labels); label_smoothing > 0 moves the
    labels to labels * (1 - label_smoothing) + label_smoothing / num_classes. `weights` weigh rows."""
    _need(onehot_labels, "onehot_labels")
    _need(logits, "logits")
    with name_scope(scope, "softmax_cross_entropy_loss", [logits, onehot_labels, weights]) as scope:
        logits = _t(logits, name="logits")
        labels = _t(onehot_labels, logits.dtype)
        _compatible(logits, labels)
        if label_smoothing > 0:
            num_classes = cast_ops.cast(so.shape(labels)[-1], logits.dtype)
            labels = cw.add(cw.multiply(labels, _t(1.0 - label_smoothing, logits.dtype)),
                            cw.divide(_t(label_smoothing, logits.dtype), num_classes))
        labels = so.stop_gradient(labels, name="labels_stop_gradient")
        losses = nn_ops.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def sparse_softmax_cross_entropy(labels, logits, weights=1.0, scope=None, loss_collection=LOSSES,
                                 reduction=Reduction.SUM_BY_NONZERO_WEIGHTS):
    """sparse_softmax_cross_entropy_with_logits per row; labels (and weights) of shape [N, 1] are
    squeezed to [N] first."""
    _need(labels, "labels")
    _need(logits, "logits")
    with name_scope(scope, "sparse_softmax_cross_entropy_loss", [logits, labels, weights]) as scope:
        labels, logits = remove_squeezable_dimensions(labels, logits, expected_rank_diff=1)
        if not isinstance(weights, float):
            weights = _t(weights)
            if weights.shape.rank is not None and labels.shape.rank is not None and \
                    weights.shape.rank - labels.shape.rank == 1:
                weights = transpose_ops.squeeze(weights, [-1])
        losses = nn_ops.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def mean_pairwise_squared_error(labels, predictions, weights=1.0, scope=None, loss_collection=LOSSES):
    """Per batch row, the mean over pairs of elements (i, j) of ((p_i - p_j) - (l_i - l_j))^2,
    weighted by the row's weight and summed over rows (`weights` is a scalar or [batch] / [batch, 1...])."""
    with name_scope(scope, "mean_pairwise_squared_error", [predictions, labels, weights]) as scope:
        labels, predictions = _float_pair(labels, predictions)
        weights = _f32(weights)
        diffs = cw.subtract(predictions, labels)
        axes = sequence.range(1, so.rank(diffs))
        sum_sq = ro.reduce_sum(cw.square(diffs), axis=axes, keepdims=True)
        n = _num_present(diffs, weights, per_batch=True)
        one, two, zero = (convert_to_tensor(v, dtype=dtypes.float32) for v in (1.0, 2.0, 0.0))
        term1 = cw.multiply(two, cw.div_no_nan(sum_sq, cw.maximum(cw.subtract(n, one), zero)))
        sum_diff = ro.reduce_sum(diffs, axis=axes, keepdims=True)
        term2 = cw.multiply(two, cw.div_no_nan(cw.square(sum_diff),
                                               cw.maximum(cw.multiply(n, cw.subtract(n, one)), zero)))
        loss = ro.reduce_sum(cw.multiply(cw.subtract(term1, term2), weights))
        mean_loss = cw.where_v2(cw.greater(ro.reduce_sum(n), zero), loss, so.zeros_like(loss), name="value")
        add_loss(mean_loss, loss_collection)
        return mean_loss


# -- the collections
def add_loss(loss, loss_collection=LOSSES):
    """Adds `loss` to `loss_collection` (nothing eagerly, nor for a None collection)."""
    if loss_collection and not context.executing_eagerly():
        add_to_collection(loss_collection, loss)


def get_losses(scope=None, loss_collection=LOSSES):
    """The losses in `loss_collection` (names matching `scope`, a regex, when given)."""
    return get_collection(loss_collection, scope)


def get_regularization_losses(scope=None):
    """The REGULARIZATION_LOSSES collection (get_variable's regularizers add to it)."""
    return get_collection(REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope=None, name="total_regularization_loss"):
    """The sum of the regularization losses, or a float32 0 when there are none."""
    losses = get_regularization_losses(scope)
    if losses:
        return _sum(losses, name)
    return convert_to_tensor(0.0, dtype=dtypes.float32)


def get_total_loss(add_regularization_losses=True, name="total_loss", scope=None):
    """The sum of the LOSSES collection, plus the regularization losses by default.

    Raises:
      ValueError: there are no losses at all.
    """
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses += get_regularization_losses(scope=scope)
    if not losses:
        raise ValueError("No losses to add up: the LOSSES and REGULARIZATION_LOSSES collections are empty")
    return _sum(losses, name)


def _sum(losses, name):
    """add_n of `losses`, a node named `name` even for one loss (as TensorFlow's add_n)."""
    return ro.add_n(losses, name=name) if len(losses) > 1 else so.identity(losses[0], name=name)

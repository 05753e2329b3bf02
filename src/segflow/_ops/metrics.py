"""TF1's streaming metrics (`tf.compat.v1.metrics`): each call makes local variables that
accumulate statistics over the batches it is run on, and returns (value, update_op).

    acc, update = sf.compat.v1.metrics.accuracy(labels, predictions)
    sess.run(sf.compat.v1.local_variables_initializer())
    for batch in batches:
        sess.run(update, feed_dict=batch)          # accumulates; returns the accuracy so far
    sess.run(acc)                                  # the accuracy over all batches run

The variables are float32 (mean_iou's confusion matrix float64), not trainable, in the
LOCAL_VARIABLES and METRIC_VARIABLES collections, named `<name>/total`, `<name>/count`, ... under a
fresh variable scope per call. As in TensorFlow they exist only in graphs: eagerly every metric
raises RuntimeError. `weights` follow TensorFlow's rules: a trailing dimension of size 1 is
squeezed (or added) to match predictions' rank, then the weights must broadcast to the values
(scalar, or same rank with dimensions 1 or equal). This module: the means, accuracy and the
counts with precision and recall; metrics_curves.py: auc, the threshold counts and mean_iou.
"""
from segflow._core import dtypes
from segflow._core import mode as context
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import GraphKeys, add_to_collections, control_dependencies
from segflow._core.tensor import Tensor
from segflow._ops import cast as cast_ops
from segflow._ops import elementwise as cw
from segflow._ops import reduce as ro
from segflow._ops import shape as so
from segflow._ops import transpose as transpose_ops
from segflow._ops.losses import broadcast_weights, remove_squeezable_dimensions
from segflow._ops.variable import ResourceVariable
from segflow._ops.variable_scope import variable_scope

__all__ = ["METRIC_VARIABLES", "metric_variable", "mean", "mean_tensor", "accuracy", "mean_absolute_error",
           "mean_squared_error", "root_mean_squared_error", "true_positives", "false_positives",
           "true_negatives", "false_negatives", "precision", "recall", "squeeze_weights", "check_graph_mode",
           "mean_relative_error", "mean_cosine_distance", "percentage_below"]

METRIC_VARIABLES = "metric_variables"


def check_graph_mode(metric):
    """Raises RuntimeError eagerly, as TensorFlow's v1 metrics do."""
    if context.executing_eagerly():
        raise RuntimeError(f"tf.metrics.{metric} is not supported when eager execution is enabled.")


def metric_variable(shape, dtype, validate_shape=True, name=None):
    """A zeros-initialized, non-trainable variable in LOCAL_VARIABLES and METRIC_VARIABLES."""
    with control_dependencies(None):
        return ResourceVariable(so.zeros(shape, dtype), trainable=False, name=name, validate_shape=validate_shape,
                                collections=[GraphKeys.LOCAL_VARIABLES, METRIC_VARIABLES])


def _t(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def squeeze_weights(predictions, labels, weights):
    """TensorFlow's metric input rule: squeeze a size-1 last dimension off labels or predictions
    to make their ranks agree, check their shapes agree, then squeeze (or add) a last dimension of
    `weights` when its rank is one more (or one less) than predictions'."""
    predictions = _t(predictions)
    if labels is not None:
        labels, predictions = remove_squeezable_dimensions(labels, predictions)
        predictions.shape.assert_is_compatible_with(labels.shape)
    if weights is None:
        return predictions, labels, None
    weights = _t(weights)
    wr, pr = weights.shape.rank, predictions.shape.rank
    if wr == 0 or wr is None or pr is None:
        return predictions, labels, weights
    if wr - pr == 1:
        weights = transpose_ops.squeeze(weights, [-1])
    elif pr - wr == 1:
        weights = transpose_ops.expand_dims(weights, -1)
    return predictions, labels, weights


def _read(v):
    return so.identity(v.value() if hasattr(v, "value") else v)


def _updated(update):
    return update if isinstance(update, Tensor) else convert_to_tensor(update)


def _finish(value, update, metrics_collections, updates_collections):
    if metrics_collections:
        add_to_collections(metrics_collections, value)
    if updates_collections:
        add_to_collections(updates_collections, update)
    return value, update


def _mean(values, weights, metrics_collections, updates_collections, name, default, shape):
    with variable_scope(name, default, [values, weights]):
        values = cast_ops.cast(_t(values), dtypes.float32)
        var_shape = [] if shape is None else shape(values)
        total = metric_variable(var_shape, dtypes.float32, name="total")
        count = metric_variable(var_shape, dtypes.float32, name="count")
        reduce = ro.reduce_sum if shape is None else (lambda x: x)
        if weights is None:
            num_values = cast_ops.cast(so.size(values), dtypes.float32) if shape is None else so.ones_like(values)
        else:
            values, _, weights = squeeze_weights(values, None, weights)
            weights = broadcast_weights(cast_ops.cast(weights, dtypes.float32), values)
            values = cw.multiply(values, weights)
            num_values = reduce(weights)
        update_total = _updated(total.assign_add(reduce(values)))
        update_count = _updated(count.assign_add(num_values))
        zero = convert_to_tensor(0.0, dtype=dtypes.float32)
        value = cw.div_no_nan(_read(total), cw.maximum(_read(count), zero), name="value")
        update = cw.div_no_nan(update_total, cw.maximum(update_count, zero), name="update_op")
        return _finish(value, update, metrics_collections, updates_collections)


def mean(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) mean of every value seen: total / count, 0 before any update.

    Returns:
      (mean, update_op): a float32 scalar reading the variables, and the op that adds a batch and
      returns the updated mean.
    Raises:
      RuntimeError: eagerly. ValueError: weights that cannot broadcast to values.
    """
    check_graph_mode("mean")
    return _mean(values, weights, metrics_collections, updates_collections, name, "mean", None)


def mean_tensor(values, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The elementwise (weighted) mean of same-shaped `values` over the batches seen: a tensor of
    values' shape (which must be fully known)."""
    check_graph_mode("mean_tensor")

    def shape_of(v):
        if not v.shape.is_fully_defined():
            raise ValueError(f"mean_tensor needs values of a fully known shape, got {v.shape}")
        return v.shape.as_list()
    return _mean(values, weights, metrics_collections, updates_collections, name, "mean", shape_of)


def accuracy(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) fraction of predictions equal to labels over the batches seen.

    Args:
      labels, predictions: tensors of one shape (a size-1 last dimension on either is squeezed);
        predictions are cast to labels' dtype.
    Raises:
      RuntimeError: eagerly. ValueError: incompatible shapes.
    """
    check_graph_mode("accuracy")
    predictions, labels, weights = squeeze_weights(predictions, labels, weights)
    if labels.dtype != predictions.dtype:
        predictions = cast_ops.cast(predictions, labels.dtype)
    is_correct = cast_ops.cast(cw.equal(predictions, labels), dtypes.float32)
    return _mean(is_correct, weights, metrics_collections, updates_collections, name or "accuracy", "mean", None)


def _error_mean(metric, fn, labels, predictions, weights, metrics_collections, updates_collections, name):
    check_graph_mode(metric)
    predictions, labels, weights = squeeze_weights(predictions, labels, weights)
    return _mean(fn(labels, predictions), weights, metrics_collections, updates_collections, name or metric,
                 "mean", None)


def mean_absolute_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                        name=None):
    """The (weighted) mean of |predictions - labels| over the batches seen."""
    return _error_mean("mean_absolute_error", lambda a, b: cw.abs(cw.subtract(b, a)), labels, predictions, weights,
                       metrics_collections, updates_collections, name)


def mean_squared_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                       name=None):
    """The (weighted) mean of (labels - predictions)^2 over the batches seen."""
    return _error_mean("mean_squared_error", cw.squared_difference, labels, predictions, weights,
                       metrics_collections, updates_collections, name)


def mean_relative_error(labels, predictions, normalizer, weights=None, metrics_collections=None,
                        updates_collections=None, name=None):
    """The (weighted) mean of |labels - predictions| / normalizer (0 where normalizer is 0)."""
    check_graph_mode("mean_relative_error")
    predictions, labels, weights = squeeze_weights(predictions, labels, weights)
    predictions, normalizer = remove_squeezable_dimensions(predictions, normalizer)
    predictions.shape.assert_is_compatible_with(normalizer.shape)
    relative = cw.where_v2(cw.equal(normalizer, cast_ops.cast(0, normalizer.dtype)), so.zeros_like(labels),
                           cw.divide(cw.abs(cw.subtract(labels, predictions)), normalizer))
    return _mean(relative, weights, metrics_collections, updates_collections, name or "mean_relative_error", "mean",
                 None)


def mean_cosine_distance(labels, predictions, dim, weights=None, metrics_collections=None, updates_collections=None,
                         name=None):
    """1 - the (weighted) mean of sum(labels * predictions, dim) (for unit-normalized inputs)."""
    check_graph_mode("mean_cosine_distance")
    predictions, labels, weights = squeeze_weights(predictions, labels, weights)
    radial = ro.reduce_sum(cw.multiply(predictions, labels), axis=[dim], keepdims=True)
    value, update = _mean(radial, weights, None, None, name or "mean_cosine_distance", "mean", None)
    one = convert_to_tensor(1.0, dtype=dtypes.float32)
    return _finish(cw.subtract(one, value), cw.subtract(one, update), metrics_collections, updates_collections)


def percentage_below(values, threshold, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) fraction of values below `threshold` over the batches seen."""
    check_graph_mode("percentage_below")
    values = _t(values)
    below = cast_ops.cast(cw.less(values, cast_ops.cast(threshold, values.dtype)), dtypes.float32)
    return _mean(below, weights, metrics_collections, updates_collections, name or "percentage_below_threshold",
                 "mean", None)


def root_mean_squared_error(labels, predictions, weights=None, metrics_collections=None, updates_collections=None,
                            name=None):
    """sqrt of mean_squared_error over the batches seen."""
    check_graph_mode("root_mean_squared_error")
    mse, update_mse = mean_squared_error(labels, predictions, weights, None, None, name or "root_mean_squared_error")
    return _finish(cw.sqrt(mse), cw.sqrt(update_mse), metrics_collections, updates_collections)


def _count(metric, condition, labels, predictions, weights, metrics_collections, updates_collections, name):
    check_graph_mode(metric)
    with variable_scope(name, metric, [predictions, labels, weights]):
        predictions, labels, weights = squeeze_weights(cast_ops.cast(_t(predictions), dtypes.bool),
                                                       cast_ops.cast(_t(labels), dtypes.bool), weights)
        values = cast_ops.cast(condition(labels, predictions), dtypes.float32)
        count = metric_variable([], dtypes.float32, name="count")
        if weights is not None:
            values = cw.multiply(values, broadcast_weights(cast_ops.cast(weights, dtypes.float32), values))
        update = _updated(count.assign_add(ro.reduce_sum(values)))
        return _finish(_read(count), update, metrics_collections, updates_collections)


def true_positives(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) count of labels and predictions both true (both cast to bool: nonzero is true)."""
    return _count("true_positives", cw.logical_and, labels, predictions, weights, metrics_collections,
                  updates_collections, name)


def false_positives(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) count of false labels predicted true."""
    return _count("false_positives", lambda lab, pred: cw.logical_and(cw.logical_not(lab), pred), labels,
                  predictions, weights, metrics_collections, updates_collections, name)


def false_negatives(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) count of true labels predicted false."""
    return _count("false_negatives", lambda lab, pred: cw.logical_and(lab, cw.logical_not(pred)), labels,
                  predictions, weights, metrics_collections, updates_collections, name)


def true_negatives(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """The (weighted) count of labels and predictions both false."""
    return _count("true_negatives", lambda lab, pred: cw.logical_and(cw.logical_not(lab), cw.logical_not(pred)),
                  labels, predictions, weights, metrics_collections, updates_collections, name)


def _ratio(hits, misses, name):
    zero = convert_to_tensor(0.0, dtype=dtypes.float32)
    both = cw.add(hits, misses)
    return cw.where_v2(cw.greater(both, zero), cw.divide(hits, both), zero, name=name)


def _ratio_metric(metric, other, labels, predictions, weights, metrics_collections, updates_collections, name):
    check_graph_mode(metric)
    with variable_scope(name, metric, [predictions, labels, weights]):
        predictions, labels, weights = squeeze_weights(cast_ops.cast(_t(predictions), dtypes.bool),
                                                       cast_ops.cast(_t(labels), dtypes.bool), weights)
        tp, tp_update = true_positives(labels, predictions, weights)
        miss, miss_update = other(labels, predictions, weights)
        return _finish(_ratio(tp, miss, "value"), _ratio(tp_update, miss_update, "update_op"),
                       metrics_collections, updates_collections)


def precision(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """tp / (tp + fp) over the batches seen (0 while tp + fp is 0); labels and predictions are
    cast to bool. Variables `<name>/true_positives/count` and `<name>/false_positives/count`."""
    return _ratio_metric("precision", false_positives, labels, predictions, weights, metrics_collections,
                         updates_collections, name)


def recall(labels, predictions, weights=None, metrics_collections=None, updates_collections=None, name=None):
    """tp / (tp + fn) over the batches seen (0 while tp + fn is 0); labels and predictions are
    cast to bool."""
    return _ratio_metric("recall", false_negatives, labels, predictions, weights, metrics_collections,
                         updates_collections, name)

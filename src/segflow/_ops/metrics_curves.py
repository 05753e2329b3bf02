"""TF1's streaming metrics over thresholds and classes: `auc` (ROC or PR, from confusion counts at
fixed thresholds), the `*_at_thresholds` counts, `precision_at_thresholds`, `recall_at_thresholds`
and `mean_iou` (from a streamed confusion matrix) and `mean_per_class_accuracy`. See metrics.py for the shared rules.

A prediction counts as positive at threshold t when prediction > t. auc's default thresholds are
-1e-7, 1/(n-1), ..., (n-2)/(n-1), 1 + 1e-7 for n = num_thresholds, as in TensorFlow.
"""
from segflow._core import dtypes
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import control_dependencies
from segflow._ops import cast as cast_ops
from segflow._ops import debugging
from segflow._ops import elementwise as cw
from segflow._ops import reduce as ro
from segflow._ops import segment
from segflow._ops import shape as so
from segflow._ops.losses import broadcast_weights
from segflow._ops.metrics import _finish, _t, _updated, check_graph_mode, metric_variable, squeeze_weights
from segflow._ops.variable_scope import variable_scope

__all__ = ["auc", "true_positives_at_thresholds", "false_positives_at_thresholds",
           "true_negatives_at_thresholds", "false_negatives_at_thresholds", "precision_at_thresholds",
           "recall_at_thresholds", "mean_iou", "mean_per_class_accuracy"]

_NAMES = {"tp": "true_positives", "fn": "false_negatives", "tn": "true_negatives", "fp": "false_positives"}


def _confusion_at_thresholds(labels, predictions, thresholds, weights, includes):
    """Variables and update ops of the counts in `includes` ("tp", "fn", "tn", "fp"), each of shape
    [len(thresholds)]: the (weighted) number of items per threshold in each cell."""
    predictions, labels, weights = squeeze_weights(cast_ops.cast(_t(predictions), dtypes.float32),
                                                   cast_ops.cast(_t(labels), dtypes.bool), weights)
    n = len(thresholds)
    thresh = so.reshape(convert_to_tensor([float(t) for t in thresholds], dtype=dtypes.float32), [n, 1])
    pred_pos = cw.greater(so.reshape(predictions, [1, -1]), thresh)            # [n, items]
    label_pos = cw.logical_and(so.reshape(labels, [1, -1]), so.ones_like(pred_pos))
    w = None
    if weights is not None:
        w = so.reshape(broadcast_weights(cast_ops.cast(weights, dtypes.float32), predictions), [1, -1])
    cells = {"tp": lambda: cw.logical_and(label_pos, pred_pos),
             "fn": lambda: cw.logical_and(label_pos, cw.logical_not(pred_pos)),
             "tn": lambda: cw.logical_and(cw.logical_not(label_pos), cw.logical_not(pred_pos)),
             "fp": lambda: cw.logical_and(cw.logical_not(label_pos), pred_pos)}
    values, updates = {}, {}
    for key in includes:
        var = metric_variable([n], dtypes.float32, name=_NAMES[key])
        hits = cast_ops.cast(cells[key](), dtypes.float32)
        if w is not None:
            hits = cw.multiply(hits, w)
        updates[key] = _updated(var.assign_add(ro.reduce_sum(hits, 1)))
        values[key] = so.identity(var.value())
    return values, updates


def _checked_probabilities(predictions):
    p = _t(predictions)
    checks = [debugging.assert_greater_equal(p, cast_ops.cast(0, p.dtype), message="predictions must be in [0, 1]"),
              debugging.assert_less_equal(p, cast_ops.cast(1, p.dtype), message="predictions must be in [0, 1]")]
    with control_dependencies([c for c in checks if c is not None]):
        return so.identity(p)


def _auc_from(tp, fn, tn, fp, n, curve, summation_method, name):
    eps = convert_to_tensor(1e-6, dtype=dtypes.float32)
    half = convert_to_tensor(0.5, dtype=dtypes.float32)
    if curve == "PR" and summation_method == "careful_interpolation":
        zero = convert_to_tensor(0.0, dtype=dtypes.float32)
        dtp = cw.subtract(tp[:n - 1], tp[1:])
        p = cw.add(tp, fp)
        slope = cw.div_no_nan(dtp, cw.maximum(cw.subtract(p[:n - 1], p[1:]), zero))
        intercept = cw.subtract(tp[1:], cw.multiply(slope, p[1:]))
        ratio = cw.where_v2(cw.logical_and(cw.greater(p[:n - 1], zero), cw.greater(p[1:], zero)),
                            cw.div_no_nan(p[:n - 1], cw.maximum(p[1:], zero)), so.ones_like(p[1:]))
        increments = cw.div_no_nan(cw.multiply(slope, cw.add(dtp, cw.multiply(intercept, cw.log(ratio)))),
                                   cw.maximum(cw.add(tp[1:], fn[1:]), zero))
        return ro.reduce_sum(increments, name=name)
    rec = cw.divide(cw.add(tp, eps), cw.add(cw.add(tp, fn), eps))
    if curve == "ROC":
        x, y = cw.divide(fp, cw.add(cw.add(fp, tn), eps)), rec
    else:
        x, y = rec, cw.divide(cw.add(tp, eps), cw.add(cw.add(tp, fp), eps))
    if summation_method == "minoring":
        heights = cw.minimum(y[:n - 1], y[1:])
    elif summation_method == "majoring":
        heights = cw.maximum(y[:n - 1], y[1:])
    else:
        heights = cw.multiply(cw.add(y[:n - 1], y[1:]), half)
    return ro.reduce_sum(cw.multiply(cw.subtract(x[:n - 1], x[1:]), heights), name=name)


def auc(labels, predictions, weights=None, num_thresholds=200, metrics_collections=None, updates_collections=None,
        curve="ROC", name=None, summation_method="trapezoidal", thresholds=None):
    """The area under the ROC (or PR) curve over the batches seen, a Riemann sum over thresholds.

    Args:
      labels: bool-castable, of predictions' shape. predictions: floats in [0, 1] (checked when run).
      num_thresholds: the number of thresholds when `thresholds` is None.
      curve: "ROC" or "PR". summation_method: "trapezoidal", "minoring", "majoring" or (PR only)
        "careful_interpolation" (ROC treats it as trapezoidal).
      thresholds: explicit thresholds; -1e-7 and 1 + 1e-7 are added at the ends.
    Returns:
      (auc, update_op), float32 scalars. Variables `<name>/{true,false}_{positives,negatives}`.
    Raises:
      RuntimeError: eagerly. ValueError: a bad curve or summation_method, num_thresholds < 2.
    """
    check_graph_mode("auc")
    if curve not in ("ROC", "PR"):
        raise ValueError(f'Curve must be either ROC or PR. Curve {curve} is unknown.')
    if summation_method not in ("trapezoidal", "careful_interpolation", "minoring", "majoring"):
        raise ValueError(f"Invalid summation_method: {summation_method}")
    with variable_scope(name, "auc", [labels, predictions, weights]):
        if thresholds is not None:
            thresholds = [-1e-7] + [float(t) for t in thresholds] + [1.0 + 1e-7]
        else:
            if num_thresholds < 2:
                raise ValueError(f"num_thresholds must be > 1, got {num_thresholds}")
            thresholds = [-1e-7] + [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)] + [1.0 + 1e-7]
        n = len(thresholds)
        values, updates = _confusion_at_thresholds(labels, _checked_probabilities(predictions), thresholds, weights,
                                                   ("tp", "fn", "tn", "fp"))
        value = _auc_from(values["tp"], values["fn"], values["tn"], values["fp"], n, curve, summation_method, "value")
        update = _auc_from(updates["tp"], updates["fn"], updates["tn"], updates["fp"], n, curve, summation_method,
                           "update_op")
        return _finish(value, update, metrics_collections, updates_collections)


def _at_thresholds(key, labels, predictions, thresholds, weights, metrics_collections, updates_collections, name):
    metric = f"{_NAMES[key]}_at_thresholds"
    check_graph_mode(metric)
    with variable_scope(name, metric, [predictions, labels, weights]):
        values, updates = _confusion_at_thresholds(labels, predictions, thresholds, weights, (key,))
        return _finish(values[key], updates[key], metrics_collections, updates_collections)


def true_positives_at_thresholds(labels, predictions, thresholds, weights=None, metrics_collections=None,
                                 updates_collections=None, name=None):
    """Per threshold t, the (weighted) count of true labels with prediction > t."""
    return _at_thresholds("tp", labels, predictions, thresholds, weights, metrics_collections, updates_collections,
                          name)


def false_positives_at_thresholds(labels, predictions, thresholds, weights=None, metrics_collections=None,
                                  updates_collections=None, name=None):
    """Per threshold t, the (weighted) count of false labels with prediction > t."""
    return _at_thresholds("fp", labels, predictions, thresholds, weights, metrics_collections, updates_collections,
                          name)


def true_negatives_at_thresholds(labels, predictions, thresholds, weights=None, metrics_collections=None,
                                 updates_collections=None, name=None):
    """Per threshold t, the (weighted) count of false labels with prediction <= t."""
    return _at_thresholds("tn", labels, predictions, thresholds, weights, metrics_collections, updates_collections,
                          name)


def false_negatives_at_thresholds(labels, predictions, thresholds, weights=None, metrics_collections=None,
                                  updates_collections=None, name=None):
    """Per threshold t, the (weighted) count of true labels with prediction <= t."""
    return _at_thresholds("fn", labels, predictions, thresholds, weights, metrics_collections, updates_collections,
                          name)


def _rate_at_thresholds(metric, other, labels, predictions, thresholds, weights, metrics_collections,
                        updates_collections, name):
    check_graph_mode(metric)
    eps = convert_to_tensor(1e-7, dtype=dtypes.float32)
    with variable_scope(name, metric, [predictions, labels, weights]):
        values, updates = _confusion_at_thresholds(labels, predictions, thresholds, weights, ("tp", other))

        def rate(tp, miss, name):
            return cw.divide(tp, cw.add(cw.add(eps, tp), miss), name=name)
        return _finish(rate(values["tp"], values[other], "value"), rate(updates["tp"], updates[other], "update_op"),
                       metrics_collections, updates_collections)


def precision_at_thresholds(labels, predictions, thresholds, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """Per threshold, tp / (tp + fp + 1e-7) over the batches seen."""
    return _rate_at_thresholds("precision_at_thresholds", "fp", labels, predictions, thresholds, weights,
                               metrics_collections, updates_collections, name)


def recall_at_thresholds(labels, predictions, thresholds, weights=None, metrics_collections=None,
                         updates_collections=None, name=None):
    """Per threshold, tp / (tp + fn + 1e-7) over the batches seen."""
    return _rate_at_thresholds("recall_at_thresholds", "fn", labels, predictions, thresholds, weights,
                               metrics_collections, updates_collections, name)


def mean_iou(labels, predictions, num_classes, weights=None, metrics_collections=None, updates_collections=None,
             name=None):
    """The mean over classes of intersection / union, from a confusion matrix streamed over the
    batches seen; classes absent from both labels and predictions are left out of the mean.

    Args:
      labels, predictions: integer class ids in [0, num_classes), of one shape (flattened).
      num_classes: a Python int.
    Returns:
      (mean_iou, update_op): as in TensorFlow the update op returns the updated float64
      confusion matrix `<name>/total_confusion_matrix` ([num_classes, num_classes], rows labels).
    Raises:
      RuntimeError: eagerly. InvalidArgumentError (when run): an id outside [0, num_classes).
    """
    check_graph_mode("mean_iou")
    with variable_scope(name, "mean_iou", [predictions, labels, weights]):
        predictions, labels = _t(predictions), _t(labels)
        predictions.shape.assert_is_compatible_with(labels.shape)
        total_cm = metric_variable([num_classes, num_classes], dtypes.float64, name="total_confusion_matrix")
        pred = so.reshape(cast_ops.cast(predictions, dtypes.int64), [-1])
        lab = so.reshape(cast_ops.cast(labels, dtypes.int64), [-1])
        k = convert_to_tensor(num_classes, dtype=dtypes.int64)
        checks = [debugging.assert_non_negative(lab, message="labels must be in [0, num_classes)"),
                  debugging.assert_less(lab, k, message="labels must be in [0, num_classes)"),
                  debugging.assert_non_negative(pred, message="predictions must be in [0, num_classes)"),
                  debugging.assert_less(pred, k, message="predictions must be in [0, num_classes)")]
        with control_dependencies([c for c in checks if c is not None]):
            cell = cw.add(cw.multiply(lab, k), pred)
        w = so.ones_like(cell, dtype=dtypes.float64) if weights is None else \
            so.reshape(cast_ops.cast(_t(weights), dtypes.float64), [-1]) * so.ones_like(cell, dtype=dtypes.float64)
        current = so.reshape(segment.unsorted_segment_sum(w, cell, num_classes * num_classes),
                             [num_classes, num_classes])
        update = _updated(total_cm.assign_add(current))

        cm = cast_ops.cast(total_cm.value(), dtypes.float32)
        zero = convert_to_tensor(0.0, dtype=dtypes.float32)
        rows, cols = ro.reduce_sum(cm, 0), ro.reduce_sum(cm, 1)
        diag = so.reshape(cm, [-1])[::num_classes + 1]        # cm[i, i] sits at i * (k + 1)
        denominator = cw.subtract(cw.add(rows, cols), diag)
        valid = ro.reduce_sum(cast_ops.cast(cw.not_equal(denominator, zero), dtypes.float32))
        denominator = cw.where_v2(cw.greater(denominator, zero), denominator, so.ones_like(denominator))
        iou = cw.divide(diag, denominator)
        value = cw.where_v2(cw.greater(valid, zero), cw.divide(ro.reduce_sum(iou), valid), zero, name="value")
        return _finish(value, update, metrics_collections, updates_collections)


def _class_ids(ids, num_classes, what):
    ids = so.reshape(cast_ops.cast(_t(ids), dtypes.int64), [-1])
    k = convert_to_tensor(num_classes, dtype=dtypes.int64)
    checks = [debugging.assert_non_negative(ids, message=f"{what} must be in [0, num_classes)"),
              debugging.assert_less(ids, k, message=f"{what} must be in [0, num_classes)")]
    with control_dependencies([c for c in checks if c is not None]):
        return so.identity(ids)


def mean_per_class_accuracy(labels, predictions, num_classes, weights=None, metrics_collections=None,
                            updates_collections=None, name=None):
    """The mean over classes of the (weighted) fraction of items of that label class predicted
    right, over the batches seen.

    Returns:
      (mean_accuracy, update_op): as in TensorFlow the update op returns the per-class accuracies
      so far ([num_classes]); variables `<name>/total` (items per class) and `<name>/count`
      (right ones per class). Classes never seen count as accuracy 0 in the mean.
    Raises:
      RuntimeError: eagerly. InvalidArgumentError (when run): a label outside [0, num_classes).
    """
    check_graph_mode("mean_per_class_accuracy")
    with variable_scope(name, "mean_accuracy", [predictions, labels, weights]):
        labels = _class_ids(labels, num_classes, "labels")
        predictions = so.reshape(cast_ops.cast(_t(predictions), dtypes.int64), [-1])
        predictions.shape.assert_is_compatible_with(labels.shape)
        total = metric_variable([num_classes], dtypes.float32, name="total")
        count = metric_variable([num_classes], dtypes.float32, name="count")
        ones = so.ones_like(labels, dtype=dtypes.float32)
        right = cast_ops.cast(cw.equal(predictions, labels), dtypes.float32)
        if weights is not None:
            w = so.reshape(cast_ops.cast(_t(weights), dtypes.float32), [-1])
            ones, right = cw.multiply(ones, w), cw.multiply(right, w)
        update_total = _updated(total.assign_add(segment.unsorted_segment_sum(ones, labels, num_classes)))
        update_count = _updated(count.assign_add(segment.unsorted_segment_sum(right, labels, num_classes)))
        zero = convert_to_tensor(0.0, dtype=dtypes.float32)
        per_class = cw.div_no_nan(so.identity(count.value()), cw.maximum(so.identity(total.value()), zero))
        value = ro.reduce_mean(per_class, name="mean_accuracy")
        update = cw.div_no_nan(update_count, cw.maximum(update_total, zero), name="update_op")
        return _finish(value, update, metrics_collections, updates_collections)

"""`sf.compat.v1.metrics` (TensorFlow 1's `tf.metrics`): streaming metrics, each returning
(value, update_op) over local variables; graph mode only."""
from segflow._ops.metrics import (
    accuracy, false_negatives, false_positives, mean, mean_absolute_error, mean_cosine_distance, mean_relative_error,
    mean_squared_error, mean_tensor, percentage_below, precision, recall, root_mean_squared_error, true_negatives,
    true_positives
)
from segflow._ops.metrics_curves import (
    auc, false_negatives_at_thresholds, false_positives_at_thresholds, mean_iou, mean_per_class_accuracy,
    precision_at_thresholds, recall_at_thresholds, true_negatives_at_thresholds, true_positives_at_thresholds
)

__all__ = ["accuracy", "auc", "false_negatives", "false_negatives_at_thresholds", "false_positives",
           "false_positives_at_thresholds", "mean", "mean_absolute_error", "mean_iou", "mean_squared_error",
           "mean_tensor", "precision", "precision_at_thresholds", "recall", "recall_at_thresholds",
           "root_mean_squared_error", "true_negatives", "true_negatives_at_thresholds", "true_positives",
           "true_positives_at_thresholds", "mean_cosine_distance", "mean_per_class_accuracy", "mean_relative_error",
           "percentage_below"]

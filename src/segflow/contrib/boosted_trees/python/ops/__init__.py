"""TF contrib boosted trees ops: quantile_ops, stats_ops."""

"""TF contrib boosted trees: `from segflow.contrib.boosted_trees.python.ops import quantile_ops`."""

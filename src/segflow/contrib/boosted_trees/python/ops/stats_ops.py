"""Split-handler statistics of TF contrib boosted trees: per (partition, bucket) gradient and
hessian sums with a bias bucket per partition, for dense, sparse multivalent and categorical
features."""
from segflow.models._trees.stats import (BIAS_FEATURE_ID, categorical_split_stats, dense_split_stats,  # noqa: F401
                                         sparse_split_stats)

__all__ = ["BIAS_FEATURE_ID", "dense_split_stats", "sparse_split_stats", "categorical_split_stats"]

"""`tensorflow.contrib.boosted_trees.python.ops.quantile_ops`: bucket ids of float features
(`quantiles`), TF's Bucketize, and the weighted quantile sketch that produces bucket boundaries."""
from segflow._ops.quantiles import bucketize, quantile_boundaries, quantiles  # noqa: F401
from segflow.kernels.quantiles import WeightedQuantileSketch  # noqa: F401

__all__ = ["quantiles", "bucketize", "quantile_boundaries", "WeightedQuantileSketch"]

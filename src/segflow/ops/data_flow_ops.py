"""TensorFlow's `data_flow_ops` module name: a face over the stitch family (no logic of its own)."""
from segflow._ops.stitch import dynamic_partition, dynamic_stitch, parallel_dynamic_stitch  # noqa: F401

__all__ = ["dynamic_partition", "dynamic_stitch", "parallel_dynamic_stitch"]

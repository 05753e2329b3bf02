"""TensorFlow's `clip_ops` module name: a face over segflow._ops.clip."""
from segflow._ops.clip import clip_by_average_norm, clip_by_global_norm, clip_by_norm, clip_by_value, global_norm

__all__ = ["clip_by_average_norm", "clip_by_global_norm", "clip_by_norm", "clip_by_value", "global_norm"]

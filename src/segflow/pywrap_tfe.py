"""TensorFlow's `pywrap_tfe` module name, for what segflow has of it: the op attribute kinds
(`TF_ATTR_*`, the numbers `backprop.op_attr_type` returns and `backprop.make_attr` takes)."""
from segflow._ops.backprop import (
    TF_ATTR_BOOL, TF_ATTR_FLOAT, TF_ATTR_FUNC, TF_ATTR_INT, TF_ATTR_PLACEHOLDER, TF_ATTR_SHAPE,
    TF_ATTR_STRING, TF_ATTR_TENSOR, TF_ATTR_TYPE
)

__all__ = ["TF_ATTR_BOOL", "TF_ATTR_FLOAT", "TF_ATTR_FUNC", "TF_ATTR_INT", "TF_ATTR_PLACEHOLDER",
           "TF_ATTR_SHAPE", "TF_ATTR_STRING", "TF_ATTR_TENSOR", "TF_ATTR_TYPE"]

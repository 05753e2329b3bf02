"""TensorFlow's `tensor_util` module name: a face over segflow._core.fold and segflow._core.convert."""
from segflow._core.fold import constant_value, constant_value_as_shape, make_ndarray
from segflow._core.fold import make_ndarray as MakeNdarray  # noqa: N812 - TF's older name
from segflow._core.convert import make_tensor_proto, is_tensor

__all__ = [
    'MakeNdarray', 'constant_value', 'constant_value_as_shape', 'make_ndarray', 'make_tensor_proto', 'is_tensor'
]

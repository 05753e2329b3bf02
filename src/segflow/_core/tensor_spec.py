"""TensorSpec: the dtype and (possibly partial) shape a tensor must have (TF's `tf.TensorSpec`).

`sf.function(input_signature=[...])` takes them, and `register_op`'s infer functions may return
them (`[sf.TensorSpec(x.shape, x.dtype)]`). The older order `TensorSpec(dtype, shape)` (a DType
first) is still understood.
"""
from segflow._core import dtypes, shapes as tensor_shape

__all__ = ["TensorSpec"]

_UNSET = object()


class TensorSpec:
    """`TensorSpec(shape, dtype=sf.float32, name=None)`."""

    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape=None, dtype=_UNSET, name=None):
        if isinstance(shape, dtypes.DType):      # the older (dtype, shape) order
            shape, dtype = (None if dtype is _UNSET else dtype), shape
        if dtype is _UNSET:
            dtype = dtypes.float32
        self._shape = tensor_shape.as_shape(shape) if shape is not None else tensor_shape.unknown_shape()
        self._dtype = dtypes.as_dtype(dtype)
        self._name = name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        return cls(tensor.shape, tensor.dtype, name if name is not None else getattr(tensor, "_spec_name", None))

    @classmethod
    def from_spec(cls, spec, name=None):
        return cls(spec.shape, spec.dtype, name if name is not None else getattr(spec, "name", None))

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def name(self):
        return self._name

    def is_compatible_with(self, spec_or_tensor):
        """Same dtype, and shapes that can be the same."""
        return (self._dtype == dtypes.as_dtype(spec_or_tensor.dtype)
                and self._shape.is_compatible_with(tensor_shape.as_shape(spec_or_tensor.shape)))

    def most_specific_common_supertype(self, others):
        """The spec every one of `self` and `others` fits: dims that differ become None (and the
        rank unknown where ranks differ); None where a dtype differs. The name stays if all agree."""
        shape = self._shape
        name = self._name
        for o in others:
            if dtypes.as_dtype(o.dtype) != self._dtype:
                return None
            shape = _common(shape, tensor_shape.as_shape(o.shape))
            if getattr(o, "name", None) != name:
                name = None
        return TensorSpec(shape, self._dtype, name)

    def most_specific_compatible_type(self, other):
        """The older name: the common supertype of `self` and `other`."""
        return self.most_specific_common_supertype([other])

    # (dtype, shape) as a pair, for register_op's infer results
    def __len__(self):
        return 2

    def __iter__(self):
        return iter((self._dtype, self._shape))

    def __getitem__(self, i):
        return (self._dtype, self._shape)[i]

    def __eq__(self, other):
        if not isinstance(other, TensorSpec):
            return False
        return (_dims(self._shape) == _dims(other._shape) and self._dtype == other._dtype
                and self._name == other._name)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash((_dims(self._shape), self._dtype, self._name))

    def __repr__(self):
        dims = "<unknown>" if self._shape.rank is None else str(tuple(self._shape.as_list()))
        return f"TensorSpec(shape={dims}, dtype=sf.{self._dtype.name}, name={self._name!r})"


def _dims(shape):
    return None if shape.rank is None else tuple(shape.as_list())


def _common(a, b):
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return tensor_shape.unknown_shape()
    return tensor_shape.TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])

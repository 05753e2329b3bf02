"""Tensor (a symbolic output of an Operation) and EagerTensor (a Tensor holding its NumPy value).

Both carry the same operators, installed by the op families when they are imported
(`Tensor._override_operator`).

`==` and `!=` follow TF2: elementwise (a bool tensor) for eager tensors and for the tensors of a
function being traced, identity for the tensors of a TF1-style graph. Eager tensors are unhashable
then (use `t.ref()` as a key). `sf.compat.v1.disable_tensor_equality()` (or `disable_v2_behavior()`)
makes `==` identity and every tensor hashable again, as in TF1. Graph tensors, also those of a
traced function, always hash by identity (segflow's graph machinery keys its tables by them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from segflow._core import dtypes, html, shapes as tensor_shape
from segflow._core.mode import get_default_session

__all__ = ['EagerTensor', 'Tensor', 'is_dense_tensor_like']

# ----------------------------------------------------------------------------------------------
# Tensors


if TYPE_CHECKING:
    class TensorOperators:
        """The operators the op families install on Tensor (`_override_operator`) and ResourceVariable
        delegates, declared for type checkers; at run time this base is `object`."""

        def __add__(self, other: Any) -> Tensor: ...
        def __radd__(self, other: Any) -> Tensor: ...
        def __sub__(self, other: Any) -> Tensor: ...
        def __rsub__(self, other: Any) -> Tensor: ...
        def __mul__(self, other: Any) -> Tensor: ...
        def __rmul__(self, other: Any) -> Tensor: ...
        def __truediv__(self, other: Any) -> Tensor: ...
        def __rtruediv__(self, other: Any) -> Tensor: ...
        def __floordiv__(self, other: Any) -> Tensor: ...
        def __rfloordiv__(self, other: Any) -> Tensor: ...
        def __mod__(self, other: Any) -> Tensor: ...
        def __rmod__(self, other: Any) -> Tensor: ...
        def __pow__(self, other: Any) -> Tensor: ...
        def __rpow__(self, other: Any) -> Tensor: ...
        def __matmul__(self, other: Any) -> Tensor: ...
        def __rmatmul__(self, other: Any) -> Tensor: ...
        def __and__(self, other: Any) -> Tensor: ...
        def __rand__(self, other: Any) -> Tensor: ...
        def __or__(self, other: Any) -> Tensor: ...
        def __ror__(self, other: Any) -> Tensor: ...
        def __xor__(self, other: Any) -> Tensor: ...
        def __rxor__(self, other: Any) -> Tensor: ...
        def __lt__(self, other: Any) -> Tensor: ...
        def __le__(self, other: Any) -> Tensor: ...
        def __gt__(self, other: Any) -> Tensor: ...
        def __ge__(self, other: Any) -> Tensor: ...
        def __neg__(self) -> Tensor: ...
        def __abs__(self) -> Tensor: ...
        def __invert__(self) -> Tensor: ...
        def __getitem__(self, slice_spec: Any) -> Tensor: ...
else:
    TensorOperators = object


class Tensor(TensorOperators):
    """A symbolic value: output `value_index` of Operation `op`.

    `==` is identity in a TF1-style graph (tensors key dicts there) and elementwise inside a traced
    function; `sf.equal` is always elementwise.
    """

    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "_consumers", "__weakref__")

    # Let NumPy defer to our operators (`np_array + tensor` -> Tensor.__radd__).
    __array_priority__ = 100

    def __init__(self, op, value_index, dtype, shape):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = shape
        self._consumers = []

    # -- identity
    @property
    def op(self):
        return self._op

    @property
    def value_index(self):
        return self._value_index

    @property
    def dtype(self):
        return self._dtype

    @property
    def graph(self):
        return self._op._graph

    @property
    def name(self):
        return f"{self._op.name}:{self._value_index}"

    @property
    def device(self):
        return self._op.device

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self.shape

    def set_shape(self, shape):
        """Refines the static shape; raises ValueError when `shape` contradicts what is known."""
        self._shape = self._shape.merge_with(tensor_shape.as_shape(shape))

    @property
    def ndim(self):
        return self.shape.rank

    def consumers(self):
        return list(self._consumers)

    def ref(self):
        return _Reference(self)

    def experimental_ref(self):
        return self.ref()

    def eval(self, feed_dict=None, session=None):
        """Runs this tensor in `session` or the default session."""
        session = session or get_default_session()
        if session is None:
            raise ValueError("Cannot evaluate tensor using `eval()`: no default session is registered. "
                             "Use `with sess.as_default()` or pass an explicit session to `eval(session=sess)`")
        return session.run(self, feed_dict)

    def numpy(self):
        raise NotImplementedError(f"numpy() is only available for eager tensors; {self.name} is symbolic. "
                                  "Run it in a Session or use eval().")

    def __repr__(self):
        return f"<sf.Tensor '{self.name}' shape={self.shape} dtype={self.dtype.name}>"

    __str__ = __repr__

    def _repr_html_(self):
        return html.card("sf.Tensor", [("name", self.name), ("op", self._op.type), ("shape", self.shape),
                                       ("dtype", self.dtype.name)])

    # Identity hash, computed in C (object.__hash__) rather than by a Python-level `id(self)`: tensors
    # key the sets and dicts of gradients() and the Session's planner.
    __hash__ = object.__hash__

    def __eq__(self, other):
        if other is None:
            return False
        if _EQUALITY.on and getattr(self._op.graph, "building_function", False):
            return _elementwise(_EQUALITY.equal, self, other)
        return self is other

    def __ne__(self, other):
        if other is None:
            return True
        if _EQUALITY.on and getattr(self._op.graph, "building_function", False):
            return _elementwise(_EQUALITY.not_equal, self, other)
        return self is not other

    def __bool__(self):
        raise TypeError("Using a symbolic `sf.Tensor` as a Python `bool` is not allowed (in a graph, or inside "
                        "an sf.function trace): branch on its value with sf.cond, loop with sf.while_loop, and "
                        "use `if t is not None:` to test for presence.")

    def __iter__(self):
        shape = self.shape
        if shape.rank is None:
            raise TypeError("Cannot iterate over a tensor with unknown rank.")
        if shape.rank == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        n = shape.as_list()[0]
        if n is None:
            raise TypeError(f"Cannot iterate over a tensor whose first dimension is unknown: {shape}")
        return (self[i] for i in range(n))

    def __len__(self):
        shape = self.shape
        if shape.rank is None or shape.rank == 0 or shape.as_list()[0] is None:
            raise TypeError(f"len is not well defined for a tensor of shape {shape}")
        return shape.as_list()[0]

    @classmethod
    def _override_operator(cls, operator, func):
        """Installs `func` as `Tensor.<operator>` (used by the op families at import)."""
        setattr(cls, operator, func)


class _Equality:
    """TF2's tensor equality switch (`compat.v1.enable/disable_tensor_equality`); the comparison
    ops are installed by the elementwise module."""

    __slots__ = ("on", "equal", "not_equal")

    def __init__(self):
        self.on = True
        self.equal = None
        self.not_equal = None


_EQUALITY = _Equality()


def enable_tensor_equality():
    """`==` / `!=` compare tensors elementwise (TF2; the default)."""
    _EQUALITY.on = True


def disable_tensor_equality():
    """`==` / `!=` compare tensors by identity and tensors are hashable (TF1)."""
    _EQUALITY.on = False


def _elementwise(op, x, y):
    """x == y as TF2's operator computes it: shapes that cannot broadcast give a scalar (False for
    ==, True for !=) instead of an error."""
    yshape = getattr(y, "shape", None)
    if yshape is None:
        yshape = np.shape(y)
    try:
        tensor_shape.broadcast_shape(x.shape, tensor_shape.as_shape(yshape))
    except (ValueError, TypeError):
        return op is _EQUALITY.not_equal
    return op(x, y)


class _Reference:
    """A hashable reference to a tensor or variable (TF's `tensor.ref()`)."""

    __slots__ = ("_obj",)

    def __init__(self, obj):
        self._obj = obj

    def deref(self):
        return self._obj

    def __hash__(self):
        return id(self._obj)

    def __eq__(self, other):
        return isinstance(other, _Reference) and other._obj is self._obj


class EagerTensor(Tensor):
    """A tensor holding its value (`numpy()`). Created by ops running eagerly."""

    __slots__ = ("_value",)

    def __eq__(self, other):
        if other is None:
            return False
        if _EQUALITY.on:
            return _elementwise(_EQUALITY.equal, self, other)
        return self is other

    def __ne__(self, other):
        if other is None:
            return True
        if _EQUALITY.on:
            return _elementwise(_EQUALITY.not_equal, self, other)
        return self is not other

    def __hash__(self):
        if _EQUALITY.on:
            raise TypeError("Tensor is unhashable. Instead, use tensor.ref() as the key.")
        return object.__hash__(self)

    def __init__(self, value):
        # Fast path: callers pass an ndarray (or NumPy scalar) already of the right dtype.
        self._value = value
        self._op = None

    @property
    def dtype(self):
        return dtypes.from_numpy(self._value.dtype)

    @property
    def shape(self):
        return tensor_shape.TensorShape(self._value.shape)

    @property
    def ndim(self):
        return self._value.ndim

    @property
    def op(self):
        raise AttributeError("Tensor.op is undefined when eager execution is enabled.")

    @property
    def graph(self):
        raise AttributeError("Tensor.graph is undefined when eager execution is enabled.")

    @property
    def name(self):
        raise AttributeError("Tensor.name is undefined when eager execution is enabled.")

    @property
    def device(self):
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    @property
    def value_index(self):
        return 0

    def set_shape(self, shape):
        if not tensor_shape.as_shape(shape).is_compatible_with(self.shape):
            raise ValueError(f"Tensor's shape {self.shape} is not compatible with supplied shape {shape}")

    def consumers(self):
        raise AttributeError("consumers() is undefined for eager tensors")

    def eval(self, feed_dict=None, session=None):
        return self.numpy()

    def numpy(self):
        """The value as a NumPy array (a copy is not made; do not write to it), or a NumPy scalar
        (bytes for a string) for a scalar tensor, as in TF. A quantized tensor (qint8, ...) gives its
        plain integers, as in TF."""
        value = self._array()
        return value[()] if value.ndim == 0 else value

    def _array(self):
        value = self._value
        if type(value) is not np.ndarray:
            value = np.asarray(value)
        return value if value.dtype.names is None else value.view(value.dtype[0])

    def __array__(self, dtype=None, copy=None):
        value = self._array()
        return value if dtype is None else value.astype(dtype, copy=False)

    def __repr__(self):
        value = self._array()
        text = repr(value.tolist()) if value.ndim == 0 else repr(value)     # TF: `numpy=3.0` for a scalar
        return f"<sf.Tensor: shape={tuple(self._value.shape)}, dtype={self.dtype.name}, numpy={text}>"

    def __str__(self):
        return f"sf.Tensor({self.numpy()}, shape={tuple(self._value.shape)}, dtype={self.dtype.name})"

    def _repr_html_(self):
        return html.card("sf.Tensor", [("shape", tuple(self._value.shape)), ("dtype", self.dtype.name)],
                         html.values_table(self._value))

    def __bool__(self):
        return bool(self._value)

    def __float__(self):
        return float(self._value)

    def __int__(self):
        return int(self._value)

    def __complex__(self):
        return complex(self._value)

    def __index__(self):
        if self._value.dtype.kind not in "iu" or self._value.ndim != 0:
            raise TypeError(f"only integer scalar tensors can be used as an index, not {self.dtype.name} "
                            f"of shape {tuple(self._value.shape)}")
        return int(self._value)

    def __len__(self):
        if self._value.ndim == 0:
            raise TypeError("Scalar tensor has no `len()`")
        return self._value.shape[0]

    def __iter__(self):
        if self._value.ndim == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        return (self[i] for i in range(self._value.shape[0]))

    def __format__(self, spec):
        return format(self.numpy(), spec) if self._value.ndim == 0 else str(self)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def is_dense_tensor_like(t):
    return isinstance(t, Tensor)

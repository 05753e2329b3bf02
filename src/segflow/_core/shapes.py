"""Partially known tensor shapes, like `tensorflow.python.framework.tensor_shape`.

A `TensorShape` has an unknown rank (`TensorShape(None)`) or a known rank with each dimension an
int or None (unknown). It stores a plain tuple. As in TF2, `shape[i]` and iteration give plain ints
and Nones; after `disable_v2_tensorshape()` (or `compat.v1.disable_v2_behavior()`) they give
`Dimension` objects again, for TF1 code that writes `shape[-1].value`. `shape.dims` is always a
list of Dimensions, as in TF. Shape inference builds many shapes: `TensorShape._from_tuple` skips
validation for tuples that are already clean.
"""

import math
import operator

__all__ = [
    "Dimension", "TensorShape", "as_dimension", "as_shape", "unknown_shape", "scalar",
    "dimension_value", "dimension_at_index", "is_prefix", "broadcast_shape", "TensorShapeProto",
    "enable_v2_tensorshape", "disable_v2_tensorshape",
]


# TF2's shapes (`shape[i]` an int or None) unless switched off; a list so the switch is one store.
_V2_SHAPES = [True]


def enable_v2_tensorshape():
    """`shape[i]` and iterating a shape give ints and Nones (TF2, the default)."""
    _V2_SHAPES[0] = True


def disable_v2_tensorshape():
    """`shape[i]` and iterating a shape give `Dimension` objects (TF1)."""
    _V2_SHAPES[0] = False


def _check_value(value):
    """An int >= 0 or None from an int, None, Dimension or anything with __index__."""
    if value.__class__ is int:
        if value < 0:
            raise ValueError(f"Dimension {value} must be >= 0")
        return value
    if value is None:
        return None
    if isinstance(value, Dimension):
        return value._value
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"Dimension value must be an integer or None or have an __index__ method, "
                        f"got {value!r} of type {type(value).__name__}") from None
    if value < 0:
        raise ValueError(f"Dimension {value} must be >= 0")
    return value


def _other_value(other):
    """The value of an arithmetic/comparison operand, or NotImplemented if it is no dimension."""
    if other.__class__ is Dimension:
        return other._value
    try:
        return _check_value(other)
    except (TypeError, ValueError):
        return NotImplemented


class Dimension:
    """One dimension of a shape: a non-negative int, or unknown (`value` None).

    Unknown propagates through arithmetic; comparisons involving an unknown dimension return None
    (TensorFlow's semantics, so `Dimension(None) == 3` and `Dimension(None) == None` are None).
    Works as an int (`__index__`) when known.
    """

    __slots__ = ("_value",)

    def __init__(self, value):
        self._value = _check_value(value)

    @property
    def value(self):
        """The int size, or None if unknown."""
        return self._value

    def __repr__(self):
        return f"Dimension({self._value!r})"

    def __str__(self):
        return "?" if self._value is None else str(self._value)

    def __reduce__(self):
        return Dimension, (self._value,)

    def __hash__(self):
        return hash(self._value)

    def __bool__(self):
        return bool(self._value)

    def __int__(self):
        if self._value is None:
            raise TypeError("Cannot convert an unknown Dimension to an int")
        return self._value

    __index__ = __int__

    def __float__(self):
        return float(self.__int__())

    # Comparisons: None when either side is unknown.

    def __eq__(self, other):
        other = _other_value(other)
        if other is NotImplemented:
            return NotImplemented
        if self._value is None or other is None:
            return None
        return self._value == other

    def __ne__(self, other):
        other = _other_value(other)
        if other is NotImplemented:
            return NotImplemented
        if self._value is None or other is None:
            return None
        return self._value != other

    def _compare(self, other, op):
        other = _other_value(other)
        if other is NotImplemented:
            return NotImplemented
        if self._value is None or other is None:
            return None
        return op(self._value, other)

    def __lt__(self, other):
        return self._compare(other, operator.lt)

    def __le__(self, other):
        return self._compare(other, operator.le)

    def __gt__(self, other):
        return self._compare(other, operator.gt)

    def __ge__(self, other):
        return self._compare(other, operator.ge)

    # Arithmetic: a Dimension, unknown when either side is unknown.

    def _arith(self, other, op, reflected=False):
        other = _other_value(other)
        if other is NotImplemented:
            return NotImplemented
        if self._value is None or other is None:
            return Dimension(None)
        return Dimension(op(other, self._value) if reflected else op(self._value, other))

    def __add__(self, other):
        return self._arith(other, operator.add)

    def __radd__(self, other):
        return self._arith(other, operator.add, True)

    def __sub__(self, other):
        return self._arith(other, operator.sub)

    def __rsub__(self, other):
        return self._arith(other, operator.sub, True)

    def __mul__(self, other):
        return self._arith(other, operator.mul)

    def __rmul__(self, other):
        return self._arith(other, operator.mul, True)

    def __floordiv__(self, other):
        return self._arith(other, operator.floordiv)

    def __rfloordiv__(self, other):
        return self._arith(other, operator.floordiv, True)

    def __mod__(self, other):
        return self._arith(other, operator.mod)

    def __rmod__(self, other):
        return self._arith(other, operator.mod, True)

    def __truediv__(self, other):
        raise TypeError("unsupported operand type(s) for /: 'Dimension' and "
                        f"'{type(other).__name__}', please use // instead")

    def __rtruediv__(self, other):
        raise TypeError(f"unsupported operand type(s) for /: '{type(other).__name__}' and "
                        "'Dimension', please use // instead")

    def is_compatible_with(self, other):
        """True if the two dimensions can be the same size (either unknown, or equal)."""
        other = as_dimension(other)._value
        return self._value is None or other is None or self._value == other

    def assert_is_compatible_with(self, other):
        """Raises ValueError if `other` cannot be the same size as this dimension."""
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {as_dimension(other)} are not compatible")

    def merge_with(self, other):
        """The most specific dimension compatible with both.

        Raises:
          ValueError: if the two are known and differ.
        """
        other = as_dimension(other)
        if self._value is None:
            return other
        if other._value is not None and other._value != self._value:
            raise ValueError(f"Dimensions {self} and {other} are not compatible")
        return self


def as_dimension(value):
    """`value` (int, None or Dimension) as a Dimension."""
    return value if value.__class__ is Dimension else Dimension(value)


class TensorShapeProto:
    """A shape as TF's `TensorShapeProto` message holds it: `dim`, a list of entries with a `size`
    (-1 for an unknown dimension), and `unknown_rank`. A plain value: equal when the fields are.
    Made by `TensorShape.as_proto()`; `TensorShape(proto)` reads one back."""

    class Dim:
        __slots__ = ("size", "name")

        def __init__(self, size=0, name=""):
            self.size = size
            self.name = name

        def __eq__(self, other):
            return isinstance(other, TensorShapeProto.Dim) and (self.size, self.name) == (other.size, other.name)

        def __hash__(self):
            return hash((self.size, self.name))

        def __repr__(self):
            return f"dim {{ size: {self.size} }}"

    __slots__ = ("dim", "unknown_rank")

    def __init__(self, dim=(), unknown_rank=False):
        self.dim = [d if isinstance(d, TensorShapeProto.Dim) else TensorShapeProto.Dim(size=d) for d in dim]
        self.unknown_rank = bool(unknown_rank)

    def __eq__(self, other):
        if not isinstance(other, TensorShapeProto):
            return NotImplemented
        return self.unknown_rank == other.unknown_rank and self.dim == other.dim

    def __hash__(self):
        return hash((self.unknown_rank, tuple(self.dim)))

    def __repr__(self):
        if self.unknown_rank:
            return "unknown_rank: true"
        return " ".join(repr(d) for d in self.dim) or "<scalar>"

    __str__ = __repr__


def _dims_str(dims):
    if dims is None:
        return "<unknown>"
    if len(dims) == 1:
        return f"({dims[0]},)"
    return "(" + ", ".join(str(d) for d in dims) + ")"


class TensorShape:
    """A shape of unknown rank, or of known rank with some dimensions possibly unknown.

    Args:
      dims: None (unknown rank); an iterable of ints, Nones and Dimensions; a TensorShape; or a
        single int/Dimension (a rank-1 shape, as in TensorFlow).
    Raises:
      TypeError: for a dimension that is not an int, None or Dimension.
      ValueError: for a negative dimension.
    """

    __slots__ = ("_dims",)

    def __init__(self, dims):
        if dims is None:
            self._dims = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif isinstance(dims, TensorShapeProto):
            self._dims = None if dims.unknown_rank else \
                tuple(None if d.size == -1 else _check_value(d.size) for d in dims.dim)
        elif dims.__class__ is tuple and all(d.__class__ is int and d >= 0 for d in dims):
            self._dims = dims
        else:
            try:
                it = iter(dims)
            except TypeError:
                self._dims = (_check_value(dims),)
            else:
                if isinstance(dims, (str, bytes)):
                    raise TypeError(f"Cannot make a TensorShape from {dims!r}")
                self._dims = tuple(map(_check_value, it))

    @classmethod
    def _from_tuple(cls, dims):
        """A shape from a tuple of ints >= 0 and Nones (or None), without validation."""
        shape = object.__new__(cls)
        shape._dims = dims
        return shape

    def __reduce__(self):
        return TensorShape, (self._dims,)

    @property
    def dims(self):
        """A list of Dimension objects, or None for an unknown rank."""
        return None if self._dims is None else [Dimension(d) for d in self._dims]

    @property
    def rank(self):
        """The number of dimensions, or None if unknown."""
        return None if self._dims is None else len(self._dims)

    ndims = rank

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __bool__(self):
        return self._dims is not None

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        if _V2_SHAPES[0]:
            return iter(self._dims)
        return (Dimension(d) for d in self._dims)

    def __getitem__(self, key):
        """`shape[i]` is an int or None (a Dimension after `disable_v2_tensorshape()`); `shape[a:b]` a
        TensorShape (unknown if the rank is)."""
        if isinstance(key, slice):
            if self._dims is None:
                return _UNKNOWN
            return TensorShape._from_tuple(self._dims[key])
        if self._dims is None:
            return None if _V2_SHAPES[0] else Dimension(None)
        d = self._dims[operator.index(key)]
        return d if _V2_SHAPES[0] else Dimension(d)

    def as_list(self):
        """The dimensions as a list of ints and Nones.

        Raises:
          ValueError: for an unknown rank.
        """
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def as_proto(self):
        """This shape as a TensorShapeProto (unknown dimensions have size -1)."""
        if self._dims is None:
            return TensorShapeProto(unknown_rank=True)
        return TensorShapeProto([-1 if d is None else d for d in self._dims])

    def is_fully_defined(self):
        """True if the rank and every dimension are known."""
        return self._dims is not None and None not in self._dims

    def assert_is_fully_defined(self):
        """Raises ValueError unless the shape is fully defined."""
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    def num_elements(self):
        """The product of the dimensions, or None if the shape is not fully defined."""
        if self._dims is None or None in self._dims:
            return None
        return math.prod(self._dims)

    def is_compatible_with(self, other):
        """True if some fully defined shape matches both (unknowns match anything)."""
        other = as_shape(other)._dims
        dims = self._dims
        if dims is None or other is None:
            return True
        if len(dims) != len(other):
            return False
        return all(a is None or b is None or a == b for a, b in zip(dims, other))

    def assert_is_compatible_with(self, other):
        """Raises ValueError("Shapes (2, 3) and (4,) are incompatible") if not compatible."""
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def merge_with(self, other):
        """The most specific shape compatible with both.

        Raises:
          ValueError: if the shapes are not compatible.
        """
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if len(self._dims) != len(other._dims):
            raise ValueError(f"Shapes {self} and {other} must have the same rank")
        merged = []
        for a, b in zip(self._dims, other._dims):
            if a is None:
                merged.append(b)
            elif b is None or a == b:
                merged.append(a)
            else:
                raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape._from_tuple(tuple(merged))

    def most_specific_compatible_shape(self, other):
        """The most specific shape that both shapes are compatible with (unknown where they differ)."""
        other = as_shape(other)
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return _UNKNOWN
        return TensorShape._from_tuple(
            tuple(a if a == b else None for a, b in zip(self._dims, other._dims)))

    def concatenate(self, other):
        """This shape's dimensions followed by `other`'s; unknown rank if either rank is unknown."""
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return _UNKNOWN
        return TensorShape._from_tuple(self._dims + other._dims)

    def __add__(self, other):
        try:
            return self.concatenate(other)
        except TypeError:
            return NotImplemented

    def __radd__(self, other):
        try:
            return as_shape(other).concatenate(self)
        except TypeError:
            return NotImplemented

    def with_rank(self, rank):
        """This shape, with the rank set to `rank` if unknown.

        Raises:
          ValueError: if the rank is known and differs.
        """
        if self._dims is None:
            return unknown_shape(rank)
        if len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")
        return self

    def with_rank_at_least(self, rank):
        """This shape. Raises ValueError if its rank is known and below `rank`."""
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def with_rank_at_most(self, rank):
        """This shape. Raises ValueError if its rank is known and above `rank`."""
        if self._dims is not None and len(self._dims) > rank:
            raise ValueError(f"Shape {self} must have rank at most {rank}")
        return self

    def assert_has_rank(self, rank):
        """Raises ValueError if the rank is known and differs from `rank`."""
        if self._dims is not None and len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")

    def assert_same_rank(self, other):
        """Raises ValueError if both ranks are known and differ."""
        other = as_shape(other)
        if self._dims is not None and other._dims is not None and len(self._dims) != len(other._dims):
            raise ValueError(f"Shapes {self} and {other} must have the same rank")

    def __eq__(self, other):
        """Same known-rank-ness and the same dimension values (None == None)."""
        if other.__class__ is not TensorShape:
            try:
                other = as_shape(other)
            except (TypeError, ValueError):
                return NotImplemented
        return self._dims == other._dims

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(self._dims)

    def __repr__(self):
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({list(self._dims)!r})"

    def __str__(self):
        return _dims_str(self._dims)


_UNKNOWN = TensorShape._from_tuple(None)
_SCALAR = TensorShape._from_tuple(())


def as_shape(shape):
    """`shape` as a TensorShape (itself if it already is one)."""
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank=None):
    """A shape of unknown rank, or of rank `rank` with every dimension unknown."""
    if rank is None:
        return _UNKNOWN
    return TensorShape._from_tuple((None,) * rank)


def scalar():
    """The shape of a scalar: `TensorShape([])`."""
    return _SCALAR


def dimension_value(dimension):
    """The int or None of a Dimension; ints and None pass through."""
    if isinstance(dimension, Dimension):
        return dimension._value
    return dimension


def dimension_at_index(shape, index):
    """`shape[index]` as a Dimension; Dimension(None) if the rank of `shape` is unknown."""
    shape = as_shape(shape)
    return Dimension(None) if shape._dims is None else Dimension(shape._dims[index])


def is_prefix(prefix, shape):
    """True if `prefix` is compatible with the leading dimensions of `shape`.

    An unknown rank on either side gives True (it may turn out to be a prefix); a known prefix
    longer than a known `shape` gives False.
    """
    prefix = as_shape(prefix)._dims
    shape = as_shape(shape)._dims
    if prefix is None or shape is None:
        return True
    if len(prefix) > len(shape):
        return False
    return all(a is None or b is None or a == b for a, b in zip(prefix, shape))


def broadcast_shape(shape_x, shape_y):
    """The shape of NumPy broadcasting of values of shapes `shape_x` and `shape_y`.

    Unknown dimensions: None against 1 (or None) stays None; None against n != 1 gives n.
    An unknown rank gives an unknown shape.

    Raises:
      ValueError: "Incompatible shapes for broadcasting: (2, 3) and (4,)" when two known
        dimensions differ and neither is 1.
    """
    x = as_shape(shape_x)
    y = as_shape(shape_y)
    xd, yd = x._dims, y._dims
    if xd == yd:
        return x
    if xd is None or yd is None:
        return _UNKNOWN
    if len(xd) < len(yd):
        xd = (1,) * (len(yd) - len(xd)) + xd
    elif len(yd) < len(xd):
        yd = (1,) * (len(xd) - len(yd)) + yd
    out = []
    for a, b in zip(xd, yd):
        if a == b or b == 1:
            out.append(a)
        elif a == 1:
            out.append(b)
        elif a is None:
            out.append(b)  # b != 1 here: a must be 1 or b at run time
        elif b is None:
            out.append(a)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting: {x} and {y}")
    return TensorShape._from_tuple(tuple(out))

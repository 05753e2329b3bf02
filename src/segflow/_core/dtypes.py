"""Element types of tensors, like `tensorflow.python.framework.dtypes`.

Every dtype is a singleton `DType`: `as_dtype(np.float32) is float32`. A `DType` compares equal to
itself, to its NumPy dtype or scalar type, and to its TensorFlow name (`float32 == "float32"`).

`as_dtype` and `from_numpy` sit on the eager fast path (called on every op output), so the common
arguments (a `DType`, an `np.dtype`, a NumPy scalar type, a name) are one dict lookup away.
"""

import builtins

# Imported with segflow (about 13 ms) even though few programs use bfloat16 or float8: as after
# `import tensorflow`, NumPy must know those types by name (`x.astype("bfloat16")`, which
# TensorFlow's own tests and users' code do); importing ml_dtypes is what registers them.
import ml_dtypes
import numpy as np

__all__ = [
    "DType", "as_dtype", "from_numpy",
    "float16", "half", "bfloat16", "float32", "float64", "double",
    "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "bool", "complex64", "complex128", "string", "resource", "variant", "float8_e5m2", "float8_e4m3fn",
    "qint8", "quint8", "qint16", "quint16", "qint32",
    "FLOATING", "FLOAT8", "INTEGER", "COMPLEX", "REAL_NUMERIC", "NUMERIC", "QUANTIZED", "ALL",
]

# The module defines `bool`; keep the builtins reachable under other names.
_bool, _int, _float, _complex, _str = builtins.bool, builtins.int, builtins.float, builtins.complex, builtins.str


class DType:
    """The type of a tensor's elements: a singleton per type, created only by this module.

    Attributes (read-only):
      name: TensorFlow's name, e.g. "float32".
      as_numpy_dtype: the NumPy scalar type (np.float32; ml_dtypes.bfloat16; np.object_ for
        string, resource and variant); for the quantized types TF's one-field structured
        `np.dtype` (qint8: `np.dtype([("qint8", np.int8)])`), see QUANTIZED.
      np: the `np.dtype` instance, for fast comparisons with arrays' dtypes.
      as_datatype_enum: TensorFlow's `DataType` enum value (float32 = 1, ...).
      is_floating, is_integer, is_unsigned, is_complex, is_bool, is_quantized, is_numpy_compatible.
      real_dtype: float32 for complex64, float64 for complex128, else the dtype itself.
      base_dtype: the dtype itself (segflow has no reference dtypes).
      size: bytes per element.
    """

    __slots__ = ("name", "as_numpy_dtype", "np", "as_datatype_enum", "is_floating", "is_integer",
                 "is_unsigned", "is_complex", "is_bool", "is_quantized", "is_numpy_compatible", "real_dtype",
                 "size")

    def __init__(self, name, enum, np_type, numpy_compatible=True):
        np_dtype = np.dtype(np_type)
        kind = np_dtype.kind
        numeric = numpy_compatible and name != "string"
        quantized = np_dtype.names is not None
        sets = object.__setattr__
        sets(self, "name", name)
        # A structured dtype has no scalar type of its own (np.void): TF names the np.dtype itself.
        sets(self, "as_numpy_dtype", np_dtype if quantized else np_dtype.type)
        sets(self, "np", np_dtype)
        sets(self, "as_datatype_enum", enum)
        # ml_dtypes.bfloat16 has kind "V", so floating is decided by name, not by kind.
        sets(self, "is_floating", name in ("float16", "bfloat16", "float32", "float64") or name.startswith("float8"))
        sets(self, "is_integer", numeric and kind in "iu")
        sets(self, "is_unsigned", numeric and kind == "u")
        sets(self, "is_complex", numeric and kind == "c")
        sets(self, "is_bool", name == "bool")
        sets(self, "is_quantized", quantized)
        sets(self, "is_numpy_compatible", numpy_compatible)
        sets(self, "real_dtype", self)  # complex types are fixed up once float32/float64 exist
        sets(self, "size", np_dtype.itemsize)

    def __setattr__(self, name, value):
        raise AttributeError(f"DType is immutable: cannot set {name!r}")

    def __delattr__(self, name):
        raise AttributeError(f"DType is immutable: cannot delete {name!r}")

    @property
    def base_dtype(self):
        """The dtype itself (TensorFlow's non-reference dtype)."""
        return self

    @property
    def min(self):
        """The lowest finite value: a NumPy scalar for floats, an int for integers, False for bool.

        Raises:
          TypeError: for complex, string, resource and variant.
        """
        if self.is_floating:
            return (np.finfo if self.name in ("float16", "float32", "float64") else ml_dtypes.finfo)(self.np).min
        if self.is_integer:
            return np.iinfo(self.np).min
        if self.is_bool:
            return False
        raise TypeError(f"Cannot find minimum value of {self}.")

    @property
    def max(self):
        """The highest finite value: a NumPy scalar for floats, an int for integers, True for bool.

        Raises:
          TypeError: for complex, string, resource and variant.
        """
        if self.is_floating:
            return (np.finfo if self.name in ("float16", "float32", "float64") else ml_dtypes.finfo)(self.np).max
        if self.is_integer:
            return np.iinfo(self.np).max
        if self.is_bool:
            return True
        raise TypeError(f"Cannot find maximum value of {self}.")

    @property
    def limits(self):
        """`(min, max)`, as in TensorFlow."""
        return self.min, self.max

    def is_compatible_with(self, other):
        """True if a value of dtype `other` (anything `as_dtype` accepts) can be used as this dtype.

        Raises:
          TypeError: if `other` is not convertible to a DType.
        """
        return as_dtype(other) is self

    def __eq__(self, other):
        if other is self:
            return True
        if other is None or other.__class__ is DType:
            return False  # singletons: another DType object is another type
        try:
            return as_dtype(other) is self
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return "sf." + self.name

    __str__ = __repr__

    def __reduce__(self):
        return as_dtype, (self.name,)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


float16 = DType("float16", 19, np.float16)
bfloat16 = DType("bfloat16", 14, ml_dtypes.bfloat16)
float32 = DType("float32", 1, np.float32)
float64 = DType("float64", 2, np.float64)
int8 = DType("int8", 6, np.int8)
int16 = DType("int16", 5, np.int16)
int32 = DType("int32", 3, np.int32)
int64 = DType("int64", 9, np.int64)
uint8 = DType("uint8", 4, np.uint8)
uint16 = DType("uint16", 17, np.uint16)
uint32 = DType("uint32", 22, np.uint32)
uint64 = DType("uint64", 23, np.uint64)
bool = DType("bool", 10, np.bool_)  # noqa: A001 (TensorFlow's name)
complex64 = DType("complex64", 8, np.complex64)
complex128 = DType("complex128", 18, np.complex128)
string = DType("string", 7, np.object_)
resource = DType("resource", 20, np.object_, numpy_compatible=False)
variant = DType("variant", 21, np.object_, numpy_compatible=False)
# 8-bit floats (ml_dtypes): storage types that gather, stitch, reshape and cast move; no math and no
# gradients (TF does not backpropagate through them either).
float8_e5m2 = DType("float8_e5m2", 24, ml_dtypes.float8_e5m2)
float8_e4m3fn = DType("float8_e4m3fn", 25, ml_dtypes.float8_e4m3fn)

# Quantized integers (TF's qint8, quint8, qint16, quint16, qint32): storage types that
# dynamic_stitch, gather, identity, reshape, concat and cast move, and nothing computes with (an op
# whose dtype list does not name them refuses them with its usual dtype error). Each holds its values
# in TF's one-field structured NumPy dtype, `np.dtype([("qint8", np.int8)])`: an array of it is told
# apart from a plain int8 array by its dtype alone (a tensor's DType is its array's dtype), while
# having the same bytes, so row copies, concatenation and casts (`astype`) work on it unchanged.
# EagerTensor.numpy() returns the plain integers (a view), as TF's .numpy() does.
qint8 = DType("qint8", 11, np.dtype([("qint8", np.int8)]))
quint8 = DType("quint8", 12, np.dtype([("quint8", np.uint8)]))
qint16 = DType("qint16", 15, np.dtype([("qint16", np.int16)]))
quint16 = DType("quint16", 16, np.dtype([("quint16", np.uint16)]))
qint32 = DType("qint32", 13, np.dtype([("qint32", np.int32)]))

half = float16
double = float64

object.__setattr__(complex64, "real_dtype", float32)
object.__setattr__(complex128, "real_dtype", float64)

FLOATING = (float16, bfloat16, float32, float64)
INTEGER = (int8, int16, int32, int64, uint8, uint16, uint32, uint64)
COMPLEX = (complex64, complex128)
INDEX = (int32, int64)          # the dtypes TF's index and shape arguments take
REAL_NUMERIC = FLOATING + INTEGER
NUMERIC = REAL_NUMERIC + COMPLEX
FLOAT8 = (float8_e5m2, float8_e4m3fn)
QUANTIZED = (qint8, quint8, qint16, quint16, qint32)
ALL = NUMERIC + FLOAT8 + (bool, string, resource, variant)   # QUANTIZED stand apart: no op computes with them

# np.dtype instance -> DType. `string` owns np.dtype(object); resource and variant are reached by name.
_NP_TO_DTYPE = {d.np: d for d in NUMERIC + FLOAT8 + QUANTIZED + (bool, string)}

# TensorFlow's names (and aliases) -> DType.
_NAME_TO_DTYPE = {d.name: d for d in ALL + QUANTIZED}
_NAME_TO_DTYPE.update(half=float16, float=float32, double=float64)

# Scalar types -> DType: NumPy's, plus the Python types with convert_to_tensor's defaults.
_TYPE_TO_DTYPE = {d.as_numpy_dtype: d for d in NUMERIC + FLOAT8 + (bool, string)}
_TYPE_TO_DTYPE.update({
    _float: float32, _int: int32, _bool: bool, _complex: complex128,
    _str: string, bytes: string, np.str_: string, np.bytes_: string,
})

_ENUM_TO_DTYPE = {d.as_datatype_enum: d for d in ALL + QUANTIZED}


def _from_numpy_slow(np_dtype):
    if np_dtype.kind in "SUO":
        return string
    # A byte-swapped or aliased dtype (">f4", np.longlong) maps by its scalar type.
    found = _TYPE_TO_DTYPE.get(np_dtype.type)
    if found is None:
        raise TypeError(f"Cannot convert {np_dtype!r} to a segflow DType.")
    return found


def from_numpy(np_dtype):
    """The DType of a NumPy dtype instance (e.g. an array's `.dtype`).

    Raises:
      TypeError: for NumPy dtypes segflow has no DType for (datetime, structured, float8, ...).
    """
    try:
        return _NP_TO_DTYPE[np_dtype]
    except KeyError:
        return _from_numpy_slow(np_dtype)


def as_dtype(type_value):
    """Converts `type_value` to a DType.

    Args:
      type_value: a DType; an `np.dtype` or NumPy scalar type (np.float32, ml_dtypes.bfloat16);
        a TensorFlow name ("float32", "float", "half", "double", "string", "resource", ...);
        a Python type (float -> float32, int -> int32, bool -> bool, complex -> complex128,
        str and bytes -> string); or a TensorFlow `DataType` enum value (1 -> float32).
    Returns:
      The singleton DType.
    Raises:
      TypeError: if `type_value` names no segflow DType.
    """
    cls = type_value.__class__
    if cls is DType:
        return type_value
    found = None
    if cls is _str:
        found = _NAME_TO_DTYPE.get(type_value)
    elif isinstance(type_value, np.dtype):
        found = _NP_TO_DTYPE.get(type_value)
        if found is None:
            try:
                found = _from_numpy_slow(type_value)
            except TypeError:
                pass
    elif isinstance(type_value, type):
        found = _TYPE_TO_DTYPE.get(type_value)
        if found is None and issubclass(type_value, np.generic):
            try:
                found = from_numpy(np.dtype(type_value))
            except TypeError:
                pass
    elif cls is _int:
        found = _ENUM_TO_DTYPE.get(type_value)
    if found is None:
        raise TypeError(f"Cannot convert {type_value!r} to a segflow DType.")
    return found

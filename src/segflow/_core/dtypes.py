"""Element types of tensors, like `tensorflow.python.framework.dtypes`.

Every dtype is a singleton `DType`: `as_dtype(np.float32) is float32`. A `DType` compares equal to
itself, to its NumPy dtype or scalar type, and to its TensorFlow name (`float32 == "float32"`).

`as_dtype` and `from_numpy` sit on the eager fast path (called on every op output), so the common
arguments (a `DType`, an `np.dtype`, a NumPy scalar type, a name) are one dict lookup away.
"""

import builtins
import sys
import threading

import numpy as np

# ml_dtypes (bfloat16 and the float8 types) is imported only when one of its types is first used:
# ml_dtypes 0.7 takes 0.5-0.7 s to import next to NumPy 2.4 (it registers thousands of ufunc loops,
# and NumPy looks each new loop up in a list), where 0.4-0.6 took about 5-13 ms. Until then the
# three DTypes below have no `np` / `as_numpy_dtype`; the first read of either (`sf.bfloat16.np`,
# `as_numpy_dtype`, `min`/`max`, a bfloat16 array reaching `from_numpy`) imports ml_dtypes and
# fills them in (`ml_dtypes_module`). Everything else about these DTypes (name, size, enum, the
# is_* flags, equality with names and other DTypes) is known without it. A program that names the
# types to NumPy as strings (`x.astype("bfloat16")`) needs ml_dtypes imported first: by itself, by
# touching `sf.bfloat16.as_numpy_dtype`, or by importing segflow.framework.dtypes (TensorFlow's
# module name, which imports it as TensorFlow's does); NumPy learns the names from that import.
_ML_TYPES = {"bfloat16": 2, "float8_e5m2": 1, "float8_e4m3fn": 1}   # name -> bytes per element
_ml_lock = threading.Lock()
_ml_module = None
_ml_hooks = []        # called once ml_dtypes is loaded (tables of NumPy dtypes built before then)

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
        sets = object.__setattr__
        sets(self, "name", name)
        if np_type is None:               # an ml_dtypes type: `np` and `as_numpy_dtype` come later
            kind, quantized, size = "V", False, _ML_TYPES[name]
        else:
            np_dtype = np.dtype(np_type)
            kind, quantized, size = np_dtype.kind, np_dtype.names is not None, np_dtype.itemsize
            # A structured dtype has no scalar type of its own (np.void): TF names the np.dtype.
            sets(self, "as_numpy_dtype", np_dtype if quantized else np_dtype.type)
            sets(self, "np", np_dtype)
        numeric = numpy_compatible and name != "string"
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
        sets(self, "size", size)

    def __getattr__(self, name):
        # Reached only for an unset slot: `np` / `as_numpy_dtype` of an ml_dtypes type not yet loaded.
        if name in ("np", "as_numpy_dtype") and self.name in _ML_TYPES:
            ml_dtypes_module()
            return object.__getattribute__(self, name)
        raise AttributeError(f"'DType' object has no attribute {name!r}")

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
            return self._finfo().min
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
            return self._finfo().max
        if self.is_integer:
            return np.iinfo(self.np).max
        if self.is_bool:
            return True
        raise TypeError(f"Cannot find maximum value of {self}.")

    def _finfo(self):
        return (ml_dtypes_module().finfo if self.name in _ML_TYPES else np.finfo)(self.np)

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
bfloat16 = DType("bfloat16", 14, None)      # ml_dtypes.bfloat16, once loaded
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
float8_e5m2 = DType("float8_e5m2", 24, None)
float8_e4m3fn = DType("float8_e4m3fn", 25, None)

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
_ML = tuple(d for d in NUMERIC + FLOAT8 if d.name in _ML_TYPES)
_NP_TO_DTYPE = {d.np: d for d in NUMERIC + FLOAT8 + QUANTIZED + (bool, string) if d not in _ML}

# TensorFlow's names (and aliases) -> DType.
_NAME_TO_DTYPE = {d.name: d for d in ALL + QUANTIZED}
_NAME_TO_DTYPE.update(half=float16, float=float32, double=float64)

# Scalar types -> DType: NumPy's, plus the Python types with convert_to_tensor's defaults.
_TYPE_TO_DTYPE = {d.as_numpy_dtype: d for d in NUMERIC + FLOAT8 + (bool, string) if d not in _ML}
_TYPE_TO_DTYPE.update({
    _float: float32, _int: int32, _bool: bool, _complex: complex128,
    _str: string, bytes: string, np.str_: string, np.bytes_: string,
})

_ENUM_TO_DTYPE = {d.as_datatype_enum: d for d in ALL + QUANTIZED}


def ml_dtypes_module():
    """The ml_dtypes module, imported (and the bfloat16 / float8 DTypes completed) on first use."""
    global _ml_module
    if _ml_module is None:
        with _ml_lock:
            if _ml_module is None:
                import ml_dtypes
                sets = object.__setattr__
                for d in _ML:
                    np_dtype = np.dtype(getattr(ml_dtypes, d.name))
                    sets(d, "as_numpy_dtype", np_dtype.type)
                    sets(d, "np", np_dtype)
                    _NP_TO_DTYPE[np_dtype] = d
                    _TYPE_TO_DTYPE[np_dtype.type] = d
                _ml_module = ml_dtypes
                for hook in _ml_hooks:
                    hook()
    return _ml_module


def learn_numpy_dtype(np_dtype):
    """For a NumPy dtype that no table here knows: if it may be an ml_dtypes type (an array of
    one exists, so the program imported ml_dtypes), completes the ml_dtypes DTypes and the tables
    and returns True (ask again); else False."""
    if np_dtype.kind == "V" and _ml_module is None and "ml_dtypes" in sys.modules:
        ml_dtypes_module()
        return True
    return False


def has_numpy_dtype(d):
    """Whether DType `d`'s `np` is known without importing ml_dtypes."""
    return _ml_module is not None or d.name not in _ML_TYPES


def when_ml_dtypes_loads(hook):
    """Calls `hook()` once ml_dtypes is loaded (now, if it is)."""
    with _ml_lock:
        if _ml_module is None:
            _ml_hooks.append(hook)
            return
    hook()


def _from_numpy_slow(np_dtype):
    if np_dtype.kind in "SUO":
        return string
    if learn_numpy_dtype(np_dtype):
        found = _NP_TO_DTYPE.get(np_dtype)
        if found is not None:
            return found
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

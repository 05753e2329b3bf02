"""segflow.framework.dtypes against hand-derived expectations (TensorFlow's values)."""

import copy
import pickle

import ml_dtypes
import numpy as np
import pytest

from segflow.framework import dtypes

# name, TF DataType enum, NumPy scalar type, itemsize
TABLE = [
    ("float16", 19, np.float16, 2),
    ("bfloat16", 14, ml_dtypes.bfloat16, 2),
    ("float32", 1, np.float32, 4),
    ("float64", 2, np.float64, 8),
    ("int8", 6, np.int8, 1),
    ("int16", 5, np.int16, 2),
    ("int32", 3, np.int32, 4),
    ("int64", 9, np.int64, 8),
    ("uint8", 4, np.uint8, 1),
    ("uint16", 17, np.uint16, 2),
    ("uint32", 22, np.uint32, 4),
    ("uint64", 23, np.uint64, 8),
    ("bool", 10, np.bool_, 1),
    ("complex64", 8, np.complex64, 8),
    ("complex128", 18, np.complex128, 16),
    ("string", 7, np.object_, 8),
]


@pytest.mark.parametrize("name,enum,np_type,size", TABLE)
def test_table(name, enum, np_type, size):
    d = getattr(dtypes, name)
    assert isinstance(d, dtypes.DType)
    assert d.name == name
    assert d.as_datatype_enum == enum
    assert d.as_numpy_dtype is np_type
    assert d.np == np.dtype(np_type) and isinstance(d.np, np.dtype)
    assert d.size == size
    assert d.base_dtype is d
    assert dtypes.as_dtype(name) is d
    assert dtypes.as_dtype(np_type) is d
    assert dtypes.as_dtype(np.dtype(np_type)) is d
    assert dtypes.as_dtype(enum) is d
    assert dtypes.from_numpy(np.dtype(np_type)) is d
    assert d.is_numpy_compatible


def test_resource_and_variant():
    assert dtypes.resource.as_datatype_enum == 20
    assert dtypes.variant.as_datatype_enum == 21
    for d in (dtypes.resource, dtypes.variant):
        assert not d.is_numpy_compatible
        assert d.np == np.dtype(object)
        assert not (d.is_floating or d.is_integer or d.is_complex or d.is_bool)
        assert dtypes.as_dtype(d.name) is d
        assert d != dtypes.string
    # np.dtype(object) belongs to string, never to the handle types
    assert dtypes.as_dtype(np.dtype(object)) is dtypes.string


def test_aliases():
    assert dtypes.half is dtypes.float16
    assert dtypes.double is dtypes.float64
    assert dtypes.as_dtype("half") is dtypes.float16
    assert dtypes.as_dtype("float") is dtypes.float32
    assert dtypes.as_dtype("double") is dtypes.float64


def test_python_types():
    assert dtypes.as_dtype(float) is dtypes.float32
    assert dtypes.as_dtype(int) is dtypes.int32
    assert dtypes.as_dtype(bool) is dtypes.bool
    assert dtypes.as_dtype(complex) is dtypes.complex128
    assert dtypes.as_dtype(str) is dtypes.string
    assert dtypes.as_dtype(bytes) is dtypes.string


def test_numpy_odd_forms():
    assert dtypes.as_dtype(np.dtype("S5")) is dtypes.string
    assert dtypes.as_dtype(np.dtype("U3")) is dtypes.string
    assert dtypes.as_dtype(np.str_) is dtypes.string
    assert dtypes.as_dtype(np.bytes_) is dtypes.string
    assert dtypes.as_dtype(np.dtype(">f4")) is dtypes.float32
    assert dtypes.as_dtype(np.longlong) is dtypes.int64
    assert dtypes.from_numpy(np.arange(3, dtype=np.int16).dtype) is dtypes.int16


@pytest.mark.parametrize("bad", ["floatx", "float32_ref", np.dtype("M8[s]"), np.dtype([("a", "i4")]),
                                 object, object(), [1], 99, None, True, np.float32(1)])
def test_as_dtype_rejects(bad):
    with pytest.raises(TypeError, match="Cannot convert .* to a segflow DType"):
        dtypes.as_dtype(bad)


def test_from_numpy_rejects():
    with pytest.raises(TypeError, match="segflow DType"):
        dtypes.from_numpy(np.dtype("m8[s]"))


FLAGS = {  # name: (floating, integer, unsigned, complex, bool)
    "float16": (1, 0, 0, 0, 0), "bfloat16": (1, 0, 0, 0, 0), "float32": (1, 0, 0, 0, 0),
    "float64": (1, 0, 0, 0, 0), "int8": (0, 1, 0, 0, 0), "int16": (0, 1, 0, 0, 0),
    "int32": (0, 1, 0, 0, 0), "int64": (0, 1, 0, 0, 0), "uint8": (0, 1, 1, 0, 0),
    "uint16": (0, 1, 1, 0, 0), "uint32": (0, 1, 1, 0, 0), "uint64": (0, 1, 1, 0, 0),
    "bool": (0, 0, 0, 0, 1), "complex64": (0, 0, 0, 1, 0), "complex128": (0, 0, 0, 1, 0),
    "string": (0, 0, 0, 0, 0), "resource": (0, 0, 0, 0, 0), "variant": (0, 0, 0, 0, 0),
}


@pytest.mark.parametrize("name", sorted(FLAGS))
def test_flags(name):
    d = getattr(dtypes, name)
    got = (d.is_floating, d.is_integer, d.is_unsigned, d.is_complex, d.is_bool)
    assert got == tuple(bool(f) for f in FLAGS[name])
    assert d.is_quantized is False


def test_min_max():
    assert dtypes.int8.min == -128 and dtypes.int8.max == 127
    assert dtypes.uint8.min == 0 and dtypes.uint8.max == 255
    assert dtypes.int16.min == -32768 and dtypes.uint16.max == 65535
    assert dtypes.int32.min == -2**31 and dtypes.int32.max == 2**31 - 1
    assert dtypes.int64.min == -2**63 and dtypes.uint64.max == 2**64 - 1
    assert dtypes.uint32.max == 2**32 - 1
    assert dtypes.float16.max == 65504.0 and dtypes.float16.min == -65504.0
    assert float(dtypes.float32.max) == float.fromhex("0x1.fffffep+127")
    assert dtypes.float64.max == float.fromhex("0x1.fffffffffffffp+1023")
    assert dtypes.float64.min == -dtypes.float64.max
    assert float(dtypes.bfloat16.max) == float.fromhex("0x1.fep+127")
    assert float(dtypes.bfloat16.min) == -float.fromhex("0x1.fep+127")
    assert dtypes.bool.min is False and dtypes.bool.max is True
    assert dtypes.int8.limits == (-128, 127)
    for d in (dtypes.complex64, dtypes.complex128, dtypes.string, dtypes.resource):
        with pytest.raises(TypeError):
            d.min
        with pytest.raises(TypeError):
            d.max


def test_real_dtype():
    assert dtypes.complex64.real_dtype is dtypes.float32
    assert dtypes.complex128.real_dtype is dtypes.float64
    assert dtypes.float16.real_dtype is dtypes.float16
    assert dtypes.int32.real_dtype is dtypes.int32


def test_equality():
    f32 = dtypes.float32
    assert f32 == np.float32
    assert f32 == np.dtype("float32")
    assert f32 == "float32"
    assert f32 == "float"
    assert f32 == f32
    assert not (f32 != np.float32)
    assert f32 != dtypes.float64
    assert f32 != np.float64
    assert f32 != "float64"
    assert f32 != "nonsense"
    assert f32 != None  # noqa: E711
    assert f32 != object()
    assert dtypes.bfloat16 == ml_dtypes.bfloat16
    assert dtypes.int64 in (dtypes.int32, dtypes.int64)
    assert dtypes.int16 not in (dtypes.int32, dtypes.int64)
    assert dtypes.int64 in (np.int32, np.int64)


def test_hash_and_repr():
    assert hash(dtypes.float32) == hash("float32")
    assert len({dtypes.float32, dtypes.as_dtype("float"), dtypes.float64}) == 2
    assert {dtypes.int32: 1}[dtypes.as_dtype(np.int32)] == 1
    assert repr(dtypes.float32) == "sf.float32"
    assert str(dtypes.bfloat16) == "sf.bfloat16"
    assert f"{dtypes.int8}" == "sf.int8"


def test_is_compatible_with():
    assert dtypes.float32.is_compatible_with(np.float32)
    assert dtypes.float32.is_compatible_with("float32")
    assert not dtypes.float32.is_compatible_with(dtypes.float64)
    with pytest.raises(TypeError):
        dtypes.float32.is_compatible_with("nonsense")


def test_singletons_survive_copy_and_pickle():
    for d in dtypes.ALL:
        assert copy.copy(d) is d
        assert copy.deepcopy(d) is d
        assert pickle.loads(pickle.dumps(d)) is d


def test_immutable():
    with pytest.raises(AttributeError):
        dtypes.float32.name = "float64"
    with pytest.raises(AttributeError):
        dtypes.float32.is_floating = False
    assert dtypes.float32.name == "float32"


def test_groups():
    d = dtypes
    assert d.FLOATING == (d.float16, d.bfloat16, d.float32, d.float64)
    assert d.INTEGER == (d.int8, d.int16, d.int32, d.int64, d.uint8, d.uint16, d.uint32, d.uint64)
    assert d.COMPLEX == (d.complex64, d.complex128)
    assert d.REAL_NUMERIC == d.FLOATING + d.INTEGER
    assert d.NUMERIC == d.REAL_NUMERIC + d.COMPLEX
    assert d.FLOAT8 == (d.float8_e5m2, d.float8_e4m3fn)
    assert set(d.ALL) == set(d.NUMERIC) | set(d.FLOAT8) | {d.bool, d.string, d.resource, d.variant}
    assert len(d.ALL) == 20
    assert all(x.is_floating and x.size == 1 for x in d.FLOAT8)
    assert d.float8_e5m2.max == 57344 and d.float8_e4m3fn.max == 448
    assert all(x.is_floating for x in d.FLOATING)
    assert all(x.is_integer for x in d.INTEGER)


def test_all_exports():
    for name in dtypes.__all__:
        assert hasattr(dtypes, name), name
    for name in ("DType", "as_dtype", "from_numpy", "half", "double", "bool", "string", "resource",
                 "variant", "ALL", "NUMERIC"):
        assert name in dtypes.__all__
    for d in dtypes.ALL:
        assert d.name in dtypes.__all__


def test_module_bool_does_not_break_builtins():
    # the module rebinds `bool`; its own logic must still use the builtin where it means it
    assert dtypes.as_dtype(True.__class__) is dtypes.bool
    assert dtypes.float32.__eq__("nonsense") is False

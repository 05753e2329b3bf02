"""The quantized dtypes (qint8, quint8, qint16, quint16, qint32): TF's enums and flags, TF's structured
NumPy dtypes, the ops that move them, and the ops that refuse them."""
import numpy as np
import pytest

import segflow as sf
from segflow.framework import dtypes, errors

# name, TF DataType enum, the integer type the values are stored in
QUANTIZED = [("qint8", 11, np.int8), ("quint8", 12, np.uint8), ("qint16", 15, np.int16),
             ("quint16", 16, np.uint16), ("qint32", 13, np.int32)]


@pytest.mark.parametrize("name, enum, base", QUANTIZED)
def test_table(name, enum, base):
    d = getattr(dtypes, name)
    assert getattr(sf, name) is d
    assert d.name == name and d.as_datatype_enum == enum
    assert d.as_numpy_dtype == np.dtype([(name, base)])      # TF's one-field structured dtype
    assert d.np == np.dtype([(name, base)]) and d.size == np.dtype(base).itemsize
    assert d.is_quantized and d.is_numpy_compatible
    assert not (d.is_integer or d.is_floating or d.is_complex or d.is_bool or d.is_unsigned)
    assert dtypes.as_dtype(name) is d and dtypes.as_dtype(enum) is d
    assert dtypes.as_dtype(d.as_numpy_dtype) is d and dtypes.from_numpy(d.np) is d
    assert d in dtypes.QUANTIZED and d not in dtypes.ALL
    assert d != getattr(dtypes, name[1:])                   # qint8 is not int8
    with pytest.raises(TypeError):
        d.min


def test_plain_integer_types_are_not_quantized():
    for d in dtypes.INTEGER:
        assert not d.is_quantized
    assert dtypes.as_dtype(np.int8) is dtypes.int8


@pytest.mark.parametrize("name, enum, base", QUANTIZED)
def test_cast_stitch_gather_and_back(name, enum, base):
    q = getattr(sf, name)
    a = sf.cast(sf.constant([0, 40, 70]), q)
    b = sf.cast(sf.constant([10, 60, 20, 30, 50]), q)
    assert a.dtype is q
    out = sf.dynamic_stitch([sf.constant([0, 4, 7]), sf.constant([1, 6, 2, 3, 5])], [a, b])
    assert out.dtype is q and out.shape.as_list() == [8]
    got = out.numpy()                                       # the plain integers, as TF's .numpy()
    assert got.dtype == base
    np.testing.assert_array_equal(got, [0, 10, 20, 30, 40, 50, 60, 70])
    g = sf.gather(out, [7, 0])
    assert g.dtype is q
    np.testing.assert_array_equal(g.numpy(), [70, 0])
    np.testing.assert_array_equal(sf.cast(g, sf.int32).numpy(), np.array([70, 0], np.int32))
    np.testing.assert_array_equal(np.asarray(sf.identity(g)), [70, 0])


def test_quantized_in_a_graph():
    with sf.Graph().as_default():
        a = sf.cast(sf.constant([3, 1]), sf.qint8)
        s = sf.dynamic_stitch([sf.constant([1, 0])], [a])
        assert s.dtype is sf.qint8
        with sf.Session() as sess:
            got = sess.run(sf.cast(s, sf.int32))
    np.testing.assert_array_equal(got, [1, 3])


def test_math_refuses_quantized():
    a = sf.cast(sf.constant([1, 2]), sf.qint8)
    with pytest.raises(errors.InvalidArgumentError, match=r"AddV2.*'x'.*dtype qint8 is not supported"):
        sf.add(a, a)
    with pytest.raises(errors.InvalidArgumentError, match=r"UnsortedSegmentSum.*'data'.*qint8 is not supported"):
        sf.math.unsorted_segment_sum(a, [0, 0], 1)

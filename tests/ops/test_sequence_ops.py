"""sequence_ops: range and invert_permutation. Values against NumPy/hand-worked numbers, dtype rules,
shape inference, and errors naming the op and the input."""
import numpy as np
import pytest

import segflow as sf
from segflow.framework import errors


@pytest.mark.parametrize("args,expect", [
    ((5,), [0, 1, 2, 3, 4]),
    ((2, 9, 3), [2, 5, 8]),
    ((5, 0, -2), [5, 3, 1]),
    ((-3, 3), [-3, -2, -1, 0, 1, 2]),
    ((4, 4), []),
    ((0,), []),
    ((0, 10, 20), [0]),
])
def test_range_int(mode, args, expect):
    t = sf.range(*args)
    assert t.dtype == sf.int32 and t.shape.as_list() == [len(expect)]
    got = mode.evaluate(t)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, expect)


@pytest.mark.parametrize("args,expect", [
    ((0.0, 1.0, 0.25), [0.0, 0.25, 0.5, 0.75]),
    ((1, 2.0, 0.3), [1.0, 1.3, 1.6, 1.9]),
    ((1.0, 0.0, -0.3), [1.0, 0.7, 0.4, 0.1]),
    ((0.0, 0.3, 0.1), [0.0, 0.1, 0.2]),
])
def test_range_float(mode, args, expect):
    t = sf.range(*args)
    assert t.dtype == sf.float32 and t.shape.as_list() == [len(expect)]
    np.testing.assert_allclose(mode.evaluate(t), expect, rtol=1e-6, atol=1e-7)


def test_range_dtype_argument_and_tensor_inputs(mode):
    got = mode.evaluate(sf.range(3, dtype=sf.float64))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [0.0, 1.0, 2.0])
    got = mode.evaluate(sf.range(1, 10, 4, dtype=sf.int64))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, [1, 5, 9])
    got = mode.evaluate(sf.range(sf.constant(1, dtype=sf.int64), 4))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, [1, 2, 3])
    got = mode.evaluate(sf.range(sf.constant(0), sf.constant(1.0, dtype=sf.float64), 0.5))
    assert got.dtype == np.float64  # floats win over ints
    np.testing.assert_array_equal(got, [0.0, 0.5])


def test_range_large_int64_is_exact(mode):
    start = 2**53 + 1
    got = mode.evaluate(sf.range(start, start + 6, 2, dtype=sf.int64))
    np.testing.assert_array_equal(got, np.array([start, start + 2, start + 4], dtype=np.int64))


def test_range_with_fed_limit():
    with sf.Graph().as_default():
        n = sf.placeholder(sf.int32, [])
        r = sf.range(n)
        assert r.shape.as_list() == [None]
        with sf.Session() as sess:
            np.testing.assert_array_equal(sess.run(r, {n: 3}), [0, 1, 2])
            with pytest.raises(errors.InvalidArgumentError, match=r"Range.*input 'limit'.*start <= limit"):
                sess.run(r, {n: -1})


@pytest.mark.parametrize("args,inp,match", [
    ((0, 5, 0), "delta", "delta != 0"),
    ((5, 0, 1), "limit", "start <= limit when delta > 0"),
    ((0, 5, -1), "limit", "start >= limit when delta < 0"),
])
def test_range_errors(mode, args, inp, match):
    with pytest.raises(errors.InvalidArgumentError, match=rf"Range.*input '{inp}'.*{match}"):
        mode.evaluate(sf.range(*args))


def test_range_rejects_non_scalars():
    with sf.Graph().as_default():
        with pytest.raises(errors.InvalidArgumentError, match=r"Range.*input 'limit'.*scalar"):
            sf.range(0, sf.constant([3, 4]))


def test_invert_permutation(mode):
    for dtype in (np.int32, np.int64):
        x = np.array([3, 4, 0, 2, 1], dtype)
        got = mode.evaluate(sf.math.invert_permutation(x))
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, np.argsort(x))
    with pytest.raises(errors.InvalidArgumentError, match=r"InvertPermutation.*input 'x'.*not a permutation"):
        mode.evaluate(sf.math.invert_permutation(np.array([0, 2, 2])))
    with pytest.raises(errors.InvalidArgumentError, match=r"InvertPermutation.*input 'x'.*float"):
        sf.math.invert_permutation(sf.constant([0.0]))

"""constant() and convert_to_tensor(): TF's dtype rules, shapes, and IndexedSlices densifying."""
import warnings

import numpy as np
import pytest

import segflow as sf
from segflow.framework import ops
from segflow._core import convert


@pytest.mark.parametrize("value, dtype, shape", [
    (1.5, sf.float32, []),
    (3, sf.int32, []),
    (2**31 - 1, sf.int32, []),
    (2**31, sf.int64, []),
    (-2**31 - 1, sf.int64, []),
    (True, sf.bool, []),
    (1 + 2j, sf.complex128, []),
    ([[1, 2], [3, 4]], sf.int32, [2, 2]),
    ([1.0, 2], sf.float32, [2]),
    ([[1, 2**40]], sf.int64, [1, 2]),
    (np.array([1, 2], np.int16), sf.int16, [2]),
    (np.array([1.0], np.float64), sf.float64, [1]),
    (np.float64(1.0), sf.float64, []),
    ([], sf.float32, [0]),
])
def test_python_and_numpy_values_take_tf_dtypes(mode, value, dtype, shape):
    t = ops.convert_to_tensor(value)
    assert t.dtype == dtype and t.shape.as_list() == shape
    np.testing.assert_array_equal(mode.evaluate(t), np.asarray(value))


def test_python_ints_beyond_int64_raise():
    with pytest.raises(ValueError, match="9223372036854775808.*out of range for int64"):
        ops.convert_to_tensor([2**63])
    with pytest.raises(ValueError, match="out of range for int64"):
        sf.constant(2**64 - 1)
    assert int(ops.convert_to_tensor(2**63 - 1)) == 2**63 - 1
    assert int(ops.convert_to_tensor(-2**63)) == -2**63
    # An explicit unsigned dtype may hold them.
    assert int(ops.convert_to_tensor(2**63, dtype=sf.uint64)) == 2**63


def test_nested_list_of_eager_tensors():
    t = ops.convert_to_tensor([sf.constant(1.0), 2.0, np.float32(3.0)])
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0, 3.0])
    assert t.dtype == sf.float32


def test_ragged_or_non_numeric_values_raise():
    with pytest.raises(ValueError, match="non-rectangular"):
        ops.convert_to_tensor([[1, 2], [3]])
    with pytest.raises(TypeError, match="Cannot convert"):
        ops.convert_to_tensor([object()])


def test_list_holding_symbolic_tensor_raises():
    with ops.Graph().as_default():
        x = sf.placeholder(sf.float32, [], name="sym")
        with pytest.raises(TypeError, match="symbolic tensor sym:0.*sf.stack"):
            sf.constant([x, 1.0])


def test_dtype_casting_rules(mode):
    assert mode.evaluate(ops.convert_to_tensor(3, dtype=sf.float32)).dtype == np.float32
    assert mode.evaluate(ops.convert_to_tensor(1.0, dtype=sf.int32)) == 1
    assert mode.evaluate(ops.convert_to_tensor([1, 0], dtype=sf.float64)).dtype == np.float64
    with pytest.raises(TypeError, match="Cannot convert 1.5 to .*int32"):
        ops.convert_to_tensor(1.5, dtype=sf.int32)
    with pytest.raises(TypeError, match="out of range"):
        ops.convert_to_tensor(300, dtype=sf.uint8)
    with pytest.raises(TypeError, match="bool"):
        ops.convert_to_tensor(1, dtype=sf.bool)
    with pytest.raises(TypeError, match="NumPy array of dtype int64.*int32"):
        ops.convert_to_tensor(np.array([1, 2], np.int64), dtype=sf.int32)
    with pytest.raises(ValueError, match="requested dtype int32 for Tensor with dtype float32"):
        ops.convert_to_tensor(sf.constant(1.0), dtype=sf.int32)


def test_constant_with_explicit_dtype_casts(mode):
    v = mode.evaluate(sf.constant(np.array([1.5, 2.5]), dtype=sf.float32))
    assert v.dtype == np.float32 and v.tolist() == [1.5, 2.5]
    v = mode.evaluate(sf.constant([1, 2], dtype=sf.float16))
    assert v.dtype == np.float16


def test_preferred_dtype_falls_back():
    assert ops.convert_to_tensor(1.5, preferred_dtype=sf.int32).dtype == sf.float32
    assert ops.convert_to_tensor(3, preferred_dtype=sf.float64).dtype == sf.float64
    assert ops.convert_to_tensor(3, dtype_hint=sf.int64).dtype == sf.int64
    # An explicit dtype wins over the hint.
    assert ops.convert_to_tensor(3, dtype=sf.float32, preferred_dtype=sf.int64).dtype == sf.float32


def test_constant_shape_broadcasts_and_reshapes(mode):
    np.testing.assert_array_equal(mode.evaluate(sf.constant(7, shape=[2, 3])), np.full((2, 3), 7))
    np.testing.assert_array_equal(mode.evaluate(sf.constant([1, 2, 3, 4, 5, 6], shape=[2, 3])),
                                  [[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(mode.evaluate(sf.constant([5.0], shape=[2])), [5.0, 5.0])
    with pytest.raises(TypeError, match=r"3 elements, but got `shape` \(2, 2\) with 4 elements"):
        sf.constant([1, 2, 3], shape=[2, 2])


def test_constant_copies_numpy_input(mode):
    a = np.array([1.0, 2.0], np.float32)
    t = sf.constant(a)
    a[0] = 100.0
    np.testing.assert_array_equal(mode.evaluate(t), [1.0, 2.0])


def test_eager_tensor_into_graph_becomes_const():
    e = sf.constant([1.0, 2.0])
    with ops.Graph().as_default() as g:
        t = ops.convert_to_tensor(e)
        assert t.graph is g and t.op.type == "Const"
        with sf.Session() as s:
            np.testing.assert_array_equal(s.run(t * 2.0), [2.0, 4.0])


def test_convert_n_and_or_indexed_slices():
    a, b = ops.convert_n_to_tensor([1, 2.0])
    assert (a.dtype, b.dtype) == (sf.int32, sf.float32)
    a, b = ops.convert_n_to_tensor([1, 2], dtype=sf.float64)
    assert a.dtype == b.dtype == sf.float64
    s = ops.IndexedSlices(sf.constant([[1.0]]), sf.constant([0]), sf.constant([2, 1]))
    assert ops.convert_to_tensor_or_indexed_slices(s) is s
    with pytest.raises(ValueError, match="requested dtype int32 for IndexedSlices"):
        ops.convert_to_tensor_or_indexed_slices(s, dtype=sf.int32)


# ----------------------------------------------------------------------------------------------
# IndexedSlices -> dense


def test_indexed_slices_densify_sums_repeated_rows(mode):
    s = ops.IndexedSlices(sf.constant([[1.0, 1.0], [2.0, 2.0], [4.0, 4.0]]), sf.constant([3, 0, 3]),
                          sf.constant([4, 2]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # small and known: no warning
        d = ops.convert_to_tensor(s)
    np.testing.assert_array_equal(mode.evaluate(d), [[2, 2], [0, 0], [0, 0], [5, 5]])
    assert ops.IndexedSlices(s.values, s.indices, None).shape.rank is None
    with pytest.raises(ValueError, match="without dense_shape"):
        ops.convert_to_tensor(ops.IndexedSlices(s.values, s.indices))


def test_densify_of_unknown_shape_warns_naming_the_op():
    with ops.Graph().as_default():
        params = sf.placeholder(sf.float32, [None, 2])
        sl, = sf.gradients(sf.reduce_sum(sf.gather(params, [1, 0], name="lookup")), params)
        assert isinstance(sl, ops.IndexedSlices)
        with pytest.warns(UserWarning, match=r"IndexedSlices \(made by op 'gradients/lookup_grad/.*unknown shape"):
            d = ops.convert_to_tensor(sl)
        with sf.Session() as s:
            np.testing.assert_array_equal(s.run(d, {params: np.zeros((3, 2))}), [[1, 1], [1, 1], [0, 0]])


def test_densify_of_large_shape_warns(monkeypatch, mode):
    monkeypatch.setattr(convert, "_LARGE_DENSE_ELEMENTS", 6)
    p = sf.constant(np.zeros((5, 2), np.float32))
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(p)
            y = sf.reduce_sum(sf.gather(p, [3, 3]) * 2.0)
        sl = tape.gradient(y, p)
    else:
        sl, = sf.gradients(sf.reduce_sum(sf.gather(p, [3, 3], name="big") * 2.0), p)
    made_by = "" if mode.eager else r" \(made by op 'gradients/big_grad/.*\)"
    with pytest.warns(UserWarning, match=f"IndexedSlices{made_by} to a dense Tensor with 10 elements"):
        d = ops.convert_to_tensor(sl)
    expected = np.zeros((5, 2))
    expected[3] = 4.0
    np.testing.assert_array_equal(mode.evaluate(d), expected)


class _Box:
    def __init__(self, value):
        self.value = value


ops.register_tensor_conversion_function(
    _Box, lambda value, dtype=None, name=None, as_ref=False: sf.constant(value.value, dtype=dtype))


def test_registered_conversion_function(mode):
    np.testing.assert_array_equal(mode.evaluate(ops.convert_to_tensor(_Box([1, 2]))), [1, 2])
    np.testing.assert_array_equal(mode.evaluate(sf.constant([1.0, 2.0]) + _Box([10.0, 20.0])), [11.0, 22.0])
    assert ops.convert_to_tensor(_Box([1, 2]), dtype=sf.float64).dtype == sf.float64


def test_numpy_array_on_the_left_defers_to_tensor(mode):
    r = np.array([1.0, 2.0], np.float32) * sf.constant([3.0, 4.0])
    assert isinstance(r, ops.Tensor)
    np.testing.assert_array_equal(mode.evaluate(r), [3.0, 8.0])


def test_python_floats_never_take_an_integer_preferred_dtype():
    """TF refuses float -> int conversion for a preferred dtype and falls back to float32; the op then
    names the mismatch (once `scatter_nd([[[1.0]]], ...)` silently scattered into row 1)."""
    assert ops.convert_to_tensor([1.0, 2.0], preferred_dtype=sf.int32).dtype == sf.float32
    assert ops.convert_to_tensor(3.0, preferred_dtype=sf.int64).dtype == sf.float32
    assert ops.convert_to_tensor([1, 2], preferred_dtype=sf.int64).dtype == sf.int64
    assert ops.convert_to_tensor([1, 2], preferred_dtype=sf.float64).dtype == sf.float64
    with pytest.raises(sf.errors.InvalidArgumentError, match="ScatterNd"):
        sf.scatter_nd([[[1.0]]], np.array([[1]], np.int32), np.array([2], np.int32))


def test_python_bools_never_take_an_integer_preferred_dtype(mode):
    assert ops.convert_to_tensor([True, False], preferred_dtype=sf.int32).dtype == sf.bool
    with pytest.raises(sf.errors.InvalidArgumentError, match="ScatterNd"):
        mode.evaluate(sf.scatter_nd([[True, True], [True, True]], np.array([1, 2], np.int32),
                                    np.array([3, 3], np.int32)))

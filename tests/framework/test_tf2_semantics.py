"""TF2's tensor semantics: elementwise `==` / `!=`, unhashable eager tensors with `.ref()`, the
compat.v1 switches back to TF1's identity semantics, and NumPy values mixing with tensors."""
import numpy as np
import pytest

import segflow as sf


@pytest.fixture
def restore_behaviour():
    yield
    sf.compat.v1.enable_tensor_equality()
    sf.compat.v1.enable_v2_behavior()


def test_eager_equality_is_elementwise():
    x = sf.constant([1, 2, 3])
    got = x == sf.constant([1, 0, 3])
    assert isinstance(got, sf.Tensor) and got.numpy().tolist() == [True, False, True]
    assert (x != [1, 0, 3]).numpy().tolist() == [False, True, False]
    assert (x == 2).numpy().tolist() == [False, True, False]
    assert (x == None) is False and (x != None) is True           # noqa: E711 - TF's rule for None
    # shapes that cannot broadcast: a plain answer, no error (TF's incompatible_shape_error=False)
    assert (x == sf.constant([1, 2])) is False
    assert (x != sf.constant([1, 2])) is True


def test_accuracy_idiom():
    pred = sf.constant([1, 2, 3, 4])
    label = sf.constant([1, 0, 3, 0])
    acc = sf.reduce_mean(sf.cast(pred == label, sf.float32))
    assert acc.numpy() == 0.5


def test_eager_tensors_are_unhashable_and_ref_keys_them():
    x, y = sf.constant(1.0), sf.constant(1.0)
    with pytest.raises(TypeError, match="ref()"):
        hash(x)
    with pytest.raises(TypeError):
        {x: 1}
    table = {x.ref(): "x", y.ref(): "y"}
    assert table[x.ref()] == "x" and table[y.experimental_ref()] == "y"
    assert x.ref().deref() is x and x.ref() != y.ref()
    v = sf.Variable(1.0)
    assert {v.ref(): 1}[v.ref()] == 1


def test_graph_tensors_keep_identity_semantics_and_hash():
    with sf.Graph().as_default():
        a = sf.constant([1.0])
        b = sf.constant([1.0])
        assert (a == a) is True and (a == b) is False and (a != b) is True
        assert {a: 1, b: 2}[b] == 2


def test_equality_inside_a_traced_function_is_elementwise():
    @sf.function
    def f(x, y):
        return sf.cast(x == y, sf.int32), sf.cast(x != y, sf.int32)
    eq, ne = f(sf.constant([1.0, 2.0]), sf.constant([1.0, 5.0]))
    assert eq.numpy().tolist() == [1, 0] and ne.numpy().tolist() == [0, 1]


def test_disable_tensor_equality_restores_identity(restore_behaviour):
    sf.compat.v1.disable_tensor_equality()
    x = sf.constant([1, 2])
    assert (x == x) is True and (x == sf.constant([1, 2])) is False
    assert {x: 1}[x] == 1
    sf.compat.v1.enable_tensor_equality()
    assert (x == sf.constant([1, 2])).numpy().tolist() == [True, True]


def test_disable_v2_behavior_is_tf1(restore_behaviour):
    sf.compat.v1.disable_v2_behavior()
    assert not sf.executing_eagerly()
    x = sf.constant([1.0])
    assert not sf.executing_eagerly() and (x == x) is True and (x == sf.constant([1.0])) is False
    sf.compat.v1.enable_v2_behavior()
    assert sf.executing_eagerly()
    assert isinstance(sf.constant([1.0]) == 1.0, sf.Tensor)


@pytest.mark.parametrize("make", [
    lambda x: x / np.sqrt(2.0),
    lambda x: np.float64(2) * x,
    lambda x: x + np.array([1.0]),
    lambda x: np.array([1.0, 2.0]) - x,
    lambda x: x * np.int64(3),
])
def test_numpy_values_take_the_tensor_dtype(make):
    x = sf.constant([1.0, 2.0])
    got = make(x)
    assert got.dtype == sf.float32
    want = make(np.array([1.0, 2.0], np.float32)).astype(np.float32)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)


def test_numpy_mixing_rules():
    i = sf.constant([1, 2])
    assert (i + np.int64(3)).dtype == sf.int32
    with pytest.raises(sf.errors.InvalidArgumentError, match="float64"):
        i + np.array([1.5])                 # a float never silently becomes an integer
    assert sf.convert_to_tensor(np.array([1.0, 2.5]), dtype=sf.float32).dtype == sf.float32
    c = sf.constant([1j]) * np.float64(2)
    assert c.dtype == sf.complex128 and c.numpy().tolist() == [2j]


def test_boolean_mask_indexing():
    x = sf.constant([[1.0, -2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(x[x > 0].numpy(), [1.0, 3.0, 4.0])
    np.testing.assert_array_equal(x[np.array([True, False])].numpy(), [[1.0, -2.0]])
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = sf.reduce_sum(x[x > 0] ** 2)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[2.0, 0.0], [6.0, 8.0]])


def test_tf2_module_faces():
    from segflow.framework import tensor_util
    from segflow.ops import gen_math_ops
    np.testing.assert_array_equal(tensor_util.MakeNdarray(tensor_util.make_tensor_proto([1, 2])), [1, 2])
    got = gen_math_ops.unsorted_segment_sum(np.array([1.0, 2.0, 4.0]), [0, 0, 1], 2).numpy()
    np.testing.assert_array_equal(got, [3.0, 4.0])
    assert gen_math_ops.mat_mul is sf.matmul


def test_reshape_of_an_empty_tensor_infers_minus_one_from_the_nonzero_dims():
    # TF: the -1 is what the input's non-zero dimensions leave after the target's non-zero sizes
    assert sf.reshape(sf.zeros((0, 3)), [0, -1]).shape.as_list() == [0, 3]
    assert sf.reshape(sf.zeros((2, 0, 6)), [0, 3, -1]).shape.as_list() == [0, 3, 4]
    with sf.Graph().as_default():
        p = sf.compat.v1.placeholder(sf.float32, [None, 3])
        with sf.compat.v1.Session() as sess:
            assert sess.run(sf.reshape(p, [0, -1]), {p: np.zeros((0, 3))}).shape == (0, 3)
    with pytest.raises(sf.errors.InvalidArgumentError, match="cannot be inferred"):
        sf.reshape(sf.zeros((2, 3)), [0, -1])


def test_float_mean_keeps_the_dtype_and_is_exact():
    x = np.array([[1.0, 2.0], [3.0, 6.0]], np.float32)
    got = sf.reduce_mean(x, 0)
    assert got.dtype == sf.float32 and got.numpy().tolist() == [2.0, 4.0]
    assert np.isnan(sf.reduce_mean(sf.zeros([0])).numpy())


def test_python_scalar_operands_take_the_tensor_dtype_both_sides():
    x = sf.constant([1.0, 2.0])
    for got, want in ((x * 1.5, [1.5, 3.0]), (1.5 * x, [1.5, 3.0]), (x - 1, [0.0, 1.0]), (1 - x, [0.0, -1.0]),
                      (x / 4, [0.25, 0.5]), (4 / x, [4.0, 2.0]), (x ** 2, [1.0, 4.0]), (2 ** x, [2.0, 4.0])):
        assert got.dtype == sf.float32
        np.testing.assert_array_equal(got.numpy(), want)
    i = sf.constant([3, 4])
    assert (i * 2).dtype == sf.int32 and (i * 2).numpy().tolist() == [6, 8]
    assert (i / 2).dtype == sf.float64 and (i / 2).numpy().tolist() == [1.5, 2.0]   # truediv of ints
    with pytest.raises(sf.errors.InvalidArgumentError):
        i * 1.5                              # a float never silently becomes an integer
    with pytest.raises((sf.errors.InvalidArgumentError, TypeError, ValueError)):
        i + 2**40                            # out of int32's range
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = sf.reduce_sum(x * 3.0 + 0.5)
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [3.0, 3.0])

"""TensorSpec: TF's shape-first constructor, the older (dtype, shape) order, compatibility,
equality, hashing, repr and the common supertype."""
import numpy as np
import pytest

import segflow as sf
from segflow.framework import tensor_spec
from segflow.framework.tensor_shape import TensorShape


def test_shape_first_constructor_and_defaults():
    s = sf.TensorSpec([2, None], sf.int64, name="ids")
    assert s.shape.as_list() == [2, None]
    assert s.dtype == sf.int64
    assert s.name == "ids"
    d = sf.TensorSpec([3])
    assert d.dtype == sf.float32 and d.name is None
    u = sf.TensorSpec(None, sf.float64)
    assert u.shape.rank is None
    assert sf.TensorSpec(TensorShape([1, 2]), "float64").dtype == sf.float64
    assert sf.TensorSpec((), sf.bool).shape.as_list() == []
    assert tensor_spec.TensorSpec is sf.TensorSpec


def test_older_dtype_shape_order():
    s = sf.TensorSpec(sf.float64, [4, 2])
    assert s.dtype == sf.float64 and s.shape.as_list() == [4, 2]
    t = sf.TensorSpec(sf.int32)
    assert t.dtype == sf.int32 and t.shape.rank is None
    dtype, shape = s                     # a pair, as register_op's infer results were
    assert dtype == sf.float64 and shape.as_list() == [4, 2]
    assert len(s) == 2 and s[0] == sf.float64 and s[1].as_list() == [4, 2]


@pytest.mark.parametrize("order", ["shape_first", "dtype_first"])
def test_register_op_infer_may_return_either_order(order):
    name = f"SpecOrderDouble_{order}"

    def infer(op, x):
        if order == "shape_first":
            return [sf.TensorSpec(x.shape, x.dtype)]
        return [sf.TensorSpec(x.dtype, x.shape)]

    sf.register_op(name, inputs=("x",), infer=infer, kernel=lambda x: x * 2)
    with sf.Graph().as_default() as g:
        x = sf.constant([[1.0, 2.0, 3.0]])
        y = sf.apply_op(name, x)
        assert y.dtype == sf.float32 and y.shape.as_list() == [1, 3]
        with sf.compat.v1.Session(graph=g) as sess:
            np.testing.assert_allclose(sess.run(y), [[2.0, 4.0, 6.0]])
    np.testing.assert_allclose(sf.apply_op(name, sf.constant([1.0])).numpy(), [2.0])


def test_from_tensor_and_from_spec():
    t = sf.constant(np.zeros((2, 3), np.int32))
    s = sf.TensorSpec.from_tensor(t)
    assert s == sf.TensorSpec([2, 3], sf.int32)
    s2 = sf.TensorSpec.from_spec(s, name="copy")
    assert s2.shape == s.shape and s2.dtype == s.dtype and s2.name == "copy"


def test_is_compatible_with_specs_and_tensors():
    s = sf.TensorSpec([None, 3], sf.float32)
    assert s.is_compatible_with(sf.TensorSpec([5, 3], sf.float32))
    assert s.is_compatible_with(sf.zeros([2, 3]))
    assert not s.is_compatible_with(sf.zeros([2, 4]))
    assert not s.is_compatible_with(sf.zeros([2, 3], dtype=sf.float64))
    assert not s.is_compatible_with(sf.zeros([3]))
    assert sf.TensorSpec(None, sf.float32).is_compatible_with(sf.zeros([1, 2, 3]))
    assert sf.TensorSpec([2, 3], sf.float32).is_compatible_with(sf.TensorSpec(None, sf.float32))


def test_equality_and_hash():
    a = sf.TensorSpec([None, 3], sf.float32)
    b = sf.TensorSpec([None, 3], sf.float32)
    assert a == b and hash(a) == hash(b) and not (a != b)
    assert a != sf.TensorSpec([None, 3], sf.float64)
    assert a != sf.TensorSpec([2, 3], sf.float32)
    assert a != sf.TensorSpec([None, 3], sf.float32, name="x")
    assert a != sf.TensorSpec(None, sf.float32)
    assert sf.TensorSpec(None) == sf.TensorSpec(None)
    assert a != (sf.float32, [None, 3])
    assert len({a, b, sf.TensorSpec([1], sf.float32)}) == 2


def test_repr():
    assert repr(sf.TensorSpec([None, 3], sf.float32, "x")) == "TensorSpec(shape=(None, 3), dtype=sf.float32, name='x')"
    assert repr(sf.TensorSpec(None, sf.int64)) == "TensorSpec(shape=<unknown>, dtype=sf.int64, name=None)"
    assert repr(sf.TensorSpec([], sf.bool)) == "TensorSpec(shape=(), dtype=sf.bool, name=None)"


def test_most_specific_common_supertype():
    a = sf.TensorSpec([2, 3], sf.float32)
    assert a.most_specific_common_supertype([sf.TensorSpec([2, 5], sf.float32)]) == sf.TensorSpec([2, None])
    assert a.most_specific_common_supertype([]) == a
    assert a.most_specific_common_supertype([sf.TensorSpec([2, 3]), sf.TensorSpec([4, 3])]) == \
        sf.TensorSpec([None, 3])
    assert a.most_specific_common_supertype([sf.TensorSpec([2])]).shape.rank is None
    assert a.most_specific_common_supertype([sf.TensorSpec(None)]).shape.rank is None
    assert a.most_specific_common_supertype([sf.TensorSpec([2, 3], sf.float64)]) is None
    assert a.most_specific_compatible_type(sf.TensorSpec([1, 3])) == sf.TensorSpec([None, 3])
    named = sf.TensorSpec([2], name="x")
    assert named.most_specific_common_supertype([sf.TensorSpec([3], name="x")]) == sf.TensorSpec([None], name="x")
    assert named.most_specific_common_supertype([sf.TensorSpec([3], name="y")]).name is None

"""segflow.framework.tensor_shape against hand-derived expectations (TensorFlow's semantics)."""

import pickle

import numpy as np
import pytest

from segflow.framework import tensor_shape
from segflow.framework.tensor_shape import Dimension, TensorShape

D = Dimension
S = TensorShape
U = TensorShape(None)


# ---- Dimension -------------------------------------------------------------------------------

def test_dimension_construct():
    assert D(3).value == 3
    assert D(None).value is None
    assert D(D(3)).value == 3
    assert D(np.int64(4)).value == 4
    assert type(D(np.int64(4)).value) is int
    with pytest.raises(ValueError, match="-1"):
        D(-1)
    with pytest.raises(TypeError):
        D(1.5)
    with pytest.raises(TypeError):
        D("3")


def test_dimension_str_repr():
    assert repr(D(3)) == "Dimension(3)"
    assert repr(D(None)) == "Dimension(None)"
    assert str(D(3)) == "3"
    assert str(D(None)) == "?"


def test_dimension_eq():
    assert (D(3) == 3) is True
    assert (D(3) == D(3)) is True
    assert (3 == D(3)) is True
    assert (D(3) == 4) is False
    assert (D(3) != 4) is True
    assert (D(None) == 3) is None
    assert (D(3) == D(None)) is None
    assert (D(None) == None) is None  # noqa: E711  (TensorFlow's semantics)
    assert (D(None) != 3) is None
    assert (D(3) == "3") is False


def test_dimension_order():
    assert D(3) < 4 and D(3) <= 3 and D(4) > 3 and D(3) >= 3
    assert not D(3) > 3
    assert (D(None) < 3) is None
    assert (D(3) >= D(None)) is None


def test_dimension_int():
    assert int(D(5)) == 5
    assert list(range(D(3))) == [0, 1, 2]
    assert [10, 20, 30][D(1)] == 20
    assert np.zeros((D(2), 3)).shape == (2, 3)
    assert float(D(2)) == 2.0
    with pytest.raises(TypeError):
        int(D(None))
    with pytest.raises(TypeError):
        range(D(None))


def test_dimension_hash_and_bool():
    assert hash(D(3)) == hash(3)
    assert {D(3): "x"}[3] == "x"
    assert bool(D(2)) and not bool(D(0)) and not bool(D(None))


@pytest.mark.parametrize("a,b,add,sub,mul,fdiv,mod", [
    (7, 2, 9, 5, 14, 3, 1),
    (6, 3, 9, 3, 18, 2, 0),
    (None, 2, None, None, None, None, None),
    (7, None, None, None, None, None, None),
])
def test_dimension_arith(a, b, add, sub, mul, fdiv, mod):
    for x, y in ((D(a), D(b)), (D(a), b), (a, D(b))):
        if x is None or y is None:
            continue  # a bare None is not an operand
        assert isinstance(x + y, D) and (x + y).value == add
        assert (x - y).value == sub
        assert (x * y).value == mul
        assert (x // y).value == fdiv
        assert (x % y).value == mod


def test_dimension_arith_errors():
    with pytest.raises(ValueError):
        D(2) - 3  # a negative dimension
    with pytest.raises(TypeError, match="//"):
        D(4) / 2
    with pytest.raises(TypeError):
        D(4) * 0.5
    assert (2 * D(3)).value == 6
    assert (10 - D(3)).value == 7


def test_dimension_compat_merge():
    assert D(3).is_compatible_with(3)
    assert D(3).is_compatible_with(None)
    assert D(None).is_compatible_with(D(5))
    assert not D(3).is_compatible_with(4)
    assert D(None).merge_with(4).value == 4
    assert D(4).merge_with(None).value == 4
    assert D(4).merge_with(D(4)).value == 4
    assert D(None).merge_with(None).value is None
    with pytest.raises(ValueError, match="3 and 4"):
        D(3).merge_with(4)
    with pytest.raises(ValueError):
        D(3).assert_is_compatible_with(4)
    D(3).assert_is_compatible_with(None)


def test_dimension_pickle():
    assert pickle.loads(pickle.dumps(D(3))).value == 3
    assert pickle.loads(pickle.dumps(D(None))).value is None


# ---- TensorShape -----------------------------------------------------------------------------

def test_shape_construct():
    assert S([2, None, D(3), D(None), np.int32(5)]).as_list() == [2, None, 3, None, 5]
    assert S((2, 3)).as_list() == [2, 3]
    assert S(S([1, 2])).as_list() == [1, 2]
    assert S([]).as_list() == []
    assert S(3).as_list() == [3]  # a single int is a rank-1 shape, as in TensorFlow
    assert S(np.array([4, 5])).as_list() == [4, 5]
    assert S(None).rank is None
    with pytest.raises(ValueError):
        S([2, -1])
    with pytest.raises(ValueError):
        S((2, -1))
    with pytest.raises(TypeError):
        S([2.5])
    with pytest.raises(TypeError):
        S("ab")


def test_from_tuple():
    s = S._from_tuple((2, None))
    assert isinstance(s, S) and s.as_list() == [2, None] and s == S([2, None])
    assert S._from_tuple(None).rank is None


def test_rank_len_bool():
    s = S([2, None, 3])
    assert s.rank == 3 and s.ndims == 3 and len(s) == 3
    assert S([]).rank == 0 and bool(S([]))
    assert U.rank is None and U.ndims is None and not bool(U)
    with pytest.raises(ValueError):
        len(U)


def test_dims():
    dims = S([2, None]).dims
    assert isinstance(dims, list) and all(isinstance(d, D) for d in dims)
    assert [d.value for d in dims] == [2, None]
    assert U.dims is None


@pytest.fixture
def v1_shapes():
    """TF1's shapes for one test: `shape[i]` a Dimension."""
    tensor_shape.disable_v2_tensorshape()
    yield
    tensor_shape.enable_v2_tensorshape()


def test_getitem_int():
    # TF2 (the default): plain ints and None, as `type(tf.TensorShape([2])[0]) is int`.
    s = S([2, None, 7])
    assert type(s[0]) is int and s[0] == 2 and s[-1] == 7 and s[1] is None
    assert list(range(s[0])) == [0, 1] and s[np.int64(2)] == 7
    assert tuple(S([3, 4])) == (3, 4) and str(tuple(S([3, 4]))) == "(3, 4)"
    with pytest.raises(IndexError):
        s[3]
    assert U[5] is None
    assert tensor_shape.dimension_value(s[0]) == 2 and tensor_shape.dimension_at_index(s, 1).value is None


def test_getitem_int_tf1(v1_shapes):
    s = S([2, None, 7])
    assert isinstance(s[0], D)
    assert s[0].value == 2 and s[-1].value == 7 and s[1].value is None
    assert s[0] == 2 and s[0] * 2 == 4 and list(range(s[0])) == [0, 1]
    assert s[np.int64(2)].value == 7
    with pytest.raises(IndexError):
        s[3]
    assert U[5].value is None


def test_disable_v2_behavior_switches_shapes_too():
    import segflow as sf
    sf.compat.v1.disable_v2_behavior()
    try:
        assert isinstance(S([2])[0], D)
    finally:
        sf.compat.v1.enable_v2_behavior()
    assert type(S([2])[0]) is int


def test_getitem_slice():
    s = S([2, None, 7])
    assert isinstance(s[1:], S) and s[1:].as_list() == [None, 7]
    assert s[:0].as_list() == []
    assert s[::-1].as_list() == [7, None, 2]
    assert U[1:].rank is None


def test_iter():
    assert list(S([2, None])) == [2, None] and [type(d) for d in S([2, None])] == [int, type(None)]
    a, b = S([4, 5])
    assert a * b == 20
    assert all(isinstance(d, D) for d in S([2, None]).dims)
    with pytest.raises(ValueError):
        iter(U)


def test_iter_tf1(v1_shapes):
    items = list(S([2, None]))
    assert all(isinstance(d, D) for d in items)
    assert [d.value for d in items] == [2, None]


def test_as_list():
    assert S([1, None]).as_list() == [1, None]
    assert all(type(v) is int for v in S([np.int64(3), D(4)]).as_list())
    with pytest.raises(ValueError):
        U.as_list()


def test_fully_defined_num_elements():
    assert S([2, 3]).is_fully_defined() and S([2, 3]).num_elements() == 6
    assert S([]).is_fully_defined() and S([]).num_elements() == 1
    assert S([2, 0]).num_elements() == 0
    assert not S([2, None]).is_fully_defined() and S([2, None]).num_elements() is None
    assert not U.is_fully_defined() and U.num_elements() is None
    S([1]).assert_is_fully_defined()
    with pytest.raises(ValueError, match=r"\(2, None\)"):
        S([2, None]).assert_is_fully_defined()


def test_compatible():
    assert S([2, 3]).is_compatible_with(S([2, 3]))
    assert S([2, 3]).is_compatible_with([None, 3])
    assert S([2, 3]).is_compatible_with(U)
    assert U.is_compatible_with([1, 2, 3])
    assert not S([2, 3]).is_compatible_with([2, 4])
    assert not S([2, 3]).is_compatible_with([2])
    with pytest.raises(ValueError, match=r"^Shapes \(2, 3\) and \(4,\) are incompatible$"):
        S([2, 3]).assert_is_compatible_with(S([4]))
    S([2, None]).assert_is_compatible_with([2, 9])


def test_merge_with():
    assert S([2, None]).merge_with([None, 3]) == S([2, 3])
    assert U.merge_with([1, None]) == S([1, None])
    assert S([1, None]).merge_with(U) == S([1, None])
    with pytest.raises(ValueError, match="rank"):
        S([1, 2]).merge_with([1])
    with pytest.raises(ValueError, match=r"\(1, 2\) and \(1, 3\)"):
        S([1, 2]).merge_with([1, 3])


def test_most_specific_compatible_shape():
    assert S([2, 3, None]).most_specific_compatible_shape([2, 4, None]) == S([2, None, None])
    assert S([2, 3]).most_specific_compatible_shape([2]).rank is None
    assert S([2, 3]).most_specific_compatible_shape(U).rank is None


def test_concatenate_and_add():
    assert S([1, 2]).concatenate([3]) == S([1, 2, 3])
    assert S([1]).concatenate(U).rank is None
    assert (S([1]) + [None, 2]).as_list() == [1, None, 2]
    assert ([5] + S([1])).as_list() == [5, 1]
    r = (7,) + S([1, 2])[1:]
    assert isinstance(r, S) and r.as_list() == [7, 2]
    assert (S([1]) + S([2])).as_list() == [1, 2]


def test_rank_checks():
    assert S([1, 2]).with_rank(2) == S([1, 2])
    assert U.with_rank(3) == S([None, None, None])
    with pytest.raises(ValueError, match=r"Shape \(1, 2\) must have rank 3"):
        S([1, 2]).with_rank(3)
    assert S([1, 2]).with_rank_at_least(2) == S([1, 2])
    assert U.with_rank_at_least(5).rank is None
    with pytest.raises(ValueError, match="at least 3"):
        S([1, 2]).with_rank_at_least(3)
    assert S([1, 2]).with_rank_at_most(2) == S([1, 2])
    with pytest.raises(ValueError, match="at most 1"):
        S([1, 2]).with_rank_at_most(1)
    S([1, 2]).assert_has_rank(2)
    U.assert_has_rank(7)
    with pytest.raises(ValueError, match="must have rank 1"):
        S([1, 2]).assert_has_rank(1)
    S([1, 2]).assert_same_rank([None, None])
    with pytest.raises(ValueError, match="same rank"):
        S([1, 2]).assert_same_rank([1])


def test_eq_hash():
    assert S([2, None]) == S([2, None])
    assert S([2, 3]) == [2, 3] and S([2, 3]) == (2, 3)
    assert S([2, 3]) != S([2, 4])
    assert S([2]) != S([2, 1])
    assert S([None]) != U
    assert U == S(None)
    assert S([]) != U
    assert S([2]) != "ab"
    assert not (S([2, 3]) != [2, 3])
    assert hash(S([2, None])) == hash(S([2, None]))
    assert len({S([1, 2]), S((1, 2)), S([1, None]), U, S(None)}) == 3


def test_repr_str():
    assert repr(S([2, None])) == "TensorShape([2, None])"
    assert repr(U) == "TensorShape(None)"
    assert repr(S([])) == "TensorShape([])"
    assert str(S([2, None])) == "(2, None)"
    assert str(S([4])) == "(4,)"
    assert str(S([])) == "()"
    assert str(U) == "<unknown>"


def test_pickle():
    for s in (S([2, None]), U, S([])):
        assert pickle.loads(pickle.dumps(s)) == s


# ---- module functions ------------------------------------------------------------------------

def test_as_shape_unknown_scalar():
    s = S([1])
    assert tensor_shape.as_shape(s) is s
    assert tensor_shape.as_shape([1, None]) == S([1, None])
    assert tensor_shape.as_shape(None).rank is None
    assert tensor_shape.unknown_shape().rank is None
    assert tensor_shape.unknown_shape(rank=2).as_list() == [None, None]
    assert tensor_shape.unknown_shape(0) == S([])
    assert tensor_shape.scalar() == S([]) and tensor_shape.scalar().rank == 0


def test_dimension_value_and_at_index():
    assert tensor_shape.dimension_value(D(3)) == 3
    assert tensor_shape.dimension_value(D(None)) is None
    assert tensor_shape.dimension_value(4) == 4
    assert tensor_shape.dimension_value(None) is None
    assert tensor_shape.dimension_at_index(S([2, 5]), 1).value == 5
    assert tensor_shape.dimension_at_index(U, 4).value is None
    assert tensor_shape.as_dimension(3).value == 3
    d = D(2)
    assert tensor_shape.as_dimension(d) is d


@pytest.mark.parametrize("prefix,shape,expected", [
    ([2], [2, 3], True),
    ([2, 3], [2, 3], True),
    ([], [2, 3], True),
    ([None], [2, 3], True),
    ([2], [None, 3], True),
    ([3], [2, 3], False),
    ([2, 3, 4], [2, 3], False),
    (None, [2, 3], True),
    ([2, 3, 4], None, True),
])
def test_is_prefix(prefix, shape, expected):
    assert tensor_shape.is_prefix(S(prefix), S(shape)) is expected


@pytest.mark.parametrize("a,b,expected", [
    ([2, 3], [2, 3], [2, 3]),
    ([None, 3], [4, 1], [4, 3]),
    ([2, 3], [3], [2, 3]),
    ([5, 1, 4], [3, 1], [5, 3, 4]),
    ([], [2, 3], [2, 3]),
    ([None], [1], [None]),
    ([1], [None], [None]),
    ([None], [5], [5]),
    ([5], [None], [5]),
    ([None], [None], [None]),
    ([None], [0], [0]),
    ([0], [1], [0]),
    ([2, None], [None, 3], [2, 3]),
    (None, [2, 3], None),
    ([2, 3], None, None),
])
def test_broadcast_shape(a, b, expected):
    got = tensor_shape.broadcast_shape(S(a), S(b))
    assert isinstance(got, S)
    if expected is None:
        assert got.rank is None
    else:
        assert got.as_list() == expected


@pytest.mark.parametrize("a,b,text", [
    ([2, 3], [4], r"\(2, 3\) and \(4,\)"),
    ([2], [3], r"\(2,\) and \(3,\)"),
    ([0], [2], r"\(0,\) and \(2,\)"),
])
def test_broadcast_shape_incompatible(a, b, text):
    with pytest.raises(ValueError, match="^Incompatible shapes for broadcasting: " + text + "$"):
        tensor_shape.broadcast_shape(S(a), S(b))


def test_broadcast_matches_numpy():
    rng = np.random.default_rng(0)
    for _ in range(200):
        a = tuple(int(v) for v in rng.integers(0, 4, rng.integers(0, 4)))
        b = tuple(int(v) for v in rng.integers(0, 4, rng.integers(0, 4)))
        try:
            want = np.broadcast_shapes(a, b)
        except ValueError:
            with pytest.raises(ValueError):
                tensor_shape.broadcast_shape(a, b)
        else:
            assert tensor_shape.broadcast_shape(a, b).as_list() == list(want)


def test_all_exports():
    for name in tensor_shape.__all__:
        assert hasattr(tensor_shape, name), name

"""Session: fetch structures, feeds, errors, default session, plan cache."""
import collections

import numpy as np
import pytest

import segflow as sf
from segflow.client.session import InteractiveSession, Session
from segflow.framework import errors, ops

Pair = collections.namedtuple("Pair", "a b")


@pytest.fixture
def g():
    graph = ops.Graph()
    with graph.as_default():
        yield graph


def test_fetch_structures(g):
    a = sf.constant(1.0, name="a")
    b = sf.constant([2, 3], name="b")
    c = a + 1.0
    with Session() as s:
        out = s.run({"x": [a, (c, b)], "n": Pair(a, {"k": c})})
        assert set(out) == {"x", "n"}
        assert isinstance(out["x"], list) and isinstance(out["x"][1], tuple)
        assert float(out["x"][0]) == 1.0 and float(out["x"][1][0]) == 2.0
        np.testing.assert_array_equal(out["x"][1][1], [2, 3])
        assert isinstance(out["n"], Pair) and float(out["n"].b["k"]) == 2.0
        assert isinstance(s.run((a, c)), tuple)
        assert float(s.run(c)) == 2.0


def test_fetch_by_tensor_and_op_name(g):
    a = sf.constant(1.0, name="a")
    sf.constant([2, 3], name="b")
    with Session() as s:
        va, vb = s.run(["a:0", "b:0"])
        assert float(va) == 1.0 and vb.tolist() == [2, 3]
        assert s.run("a") is None
        assert s.run(a.op) is None
        assert s.run([a.op, a])[0] is None
        with pytest.raises(KeyError, match="'nope'"):
            s.run("nope:0")


def test_fetch_none_and_foreign_objects_raise(g):
    with Session() as s:
        with pytest.raises(TypeError, match="None"):
            s.run(None)
        with pytest.raises(TypeError, match="int"):
            s.run(3)


def test_fetch_indexed_slices_gives_value(g):
    params = sf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    sl, = sf.gradients(sf.reduce_sum(sf.gather(params, [2, 0])), params)
    with Session() as s:
        v = s.run(sl)
    assert isinstance(v, ops.IndexedSlicesValue)
    values, indices, dense_shape = v
    np.testing.assert_array_equal(indices, [2, 0])
    np.testing.assert_array_equal(values, np.ones((2, 2)))
    np.testing.assert_array_equal(dense_shape, [3, 2])


def test_feeds_by_tensor_and_name_and_non_placeholder(g):
    p = sf.placeholder(sf.float32, [2], name="p")
    a = sf.constant(1.0, name="a")
    q = p * 2.0
    c = a + 1.0
    with Session() as s:
        np.testing.assert_array_equal(s.run(q, {"p:0": [1.0, 2.0]}), [2.0, 4.0])
        np.testing.assert_array_equal(s.run(q, {p: np.array([3.0, 4.0], np.float32)}), [6.0, 8.0])
        assert float(s.run(c, {a: 10.0})) == 11.0        # any tensor can be fed, as in TF
        assert float(s.run(c)) == 2.0                    # and the feed does not stick
        with pytest.raises(TypeError, match="feed_dict key.*'p' refers to an Operation, not a Tensor"):
            s.run(q, {"p": [1.0, 2.0]})                 # an op name, not a tensor name


def test_feed_dtype_rules(g):
    pi = sf.placeholder(sf.int32, [2], name="pi")
    pf = sf.placeholder(sf.float32, [2], name="pf")
    qi, qf = pi + 1, pf * 1.0
    with Session() as s:
        out = s.run(qi, {pi: [1.5, -2.7]})             # floats into int truncate toward zero (TF)
        assert out.dtype == np.int32 and out.tolist() == [2, -1]
        with pytest.raises(errors.InvalidArgumentError, match="NaN or infinity to tensor pi:0"):
            s.run(qi, {pi: [np.nan, 2.0]})
        with pytest.raises(errors.InvalidArgumentError, match="pi:0 of dtype int32"):
            s.run(qi, {pi: np.array([1 + 2j, 2.0])})      # complex never loses its imaginary part
        out = s.run(qf, {pf: [1, 2]})                   # int into float converts
        assert out.dtype == np.float32 and out.tolist() == [1.0, 2.0]
        out = s.run(qi, {pi: np.array([1, 2], np.int64)})
        assert out.dtype == np.int32 and out.tolist() == [2, 3]
        with pytest.raises(errors.InvalidArgumentError, match="out of range for tensor pi:0 of dtype int32"):
            s.run(qi, {pi: [2**40, 1]})                # would wrap around to [1, 2]
        with pytest.raises(errors.InvalidArgumentError, match="out of range for tensor pi:0"):
            s.run(qi, {pi: np.array([-1.0, 3e9])})
        with pytest.raises(TypeError, match="Cannot feed value of type str.*pf:0 of dtype float32"):
            s.run(qf, {pf: "ab"})


def test_feed_shape_and_missing_feed_errors(g):
    p = sf.placeholder(sf.float32, [None, 2], name="inp")
    unused = sf.placeholder(sf.float32, [3], name="unused")
    y = p + 1.0
    c = sf.constant(4.0) * 2.0
    with Session() as s:
        with pytest.raises(ValueError, match=r"shape \(2, 3\).*inp:0"):
            s.run(y, {p: np.zeros((2, 3))})
        with pytest.raises(errors.InvalidArgumentError, match="'inp'.*must feed"):
            s.run(y)
        # Pruning: neither placeholder is needed for c.
        assert float(s.run(c)) == 8.0
        np.testing.assert_array_equal(s.run(y, {p: [[1.0, 2.0]]}), [[2.0, 3.0]])
    assert unused is not None


def test_kernel_errors_name_op_and_node(g):
    ids = sf.placeholder(sf.int32, [None], name="ids")
    seg = sf.math.unsorted_segment_sum(sf.constant([1.0, 2.0]), ids, 2, name="seg")
    with Session() as s:
        with pytest.raises(errors.InvalidArgumentError, match=r"UnsortedSegmentSum 'seg'.*segment_ids\[1\] = 5"):
            s.run(seg, {ids: [0, 5]})
        np.testing.assert_array_equal(s.run(seg, {ids: [1, 1]}), [0.0, 3.0])


def test_run_after_close_raises(g):
    c = sf.constant(1.0)
    s = Session()
    s.close()
    with pytest.raises(RuntimeError, match="closed Session"):
        s.run(c)


def test_with_session_is_default(g):
    c = sf.constant(1.0) + 1.0
    assert ops.get_default_session() is None
    with Session() as s:
        assert ops.get_default_session() is s
        assert float(c.eval()) == 2.0
        assert c.op.run() is None
    assert ops.get_default_session() is None
    with pytest.raises(ValueError, match="no default session"):
        c.eval()


def test_interactive_session(g):
    c = sf.constant(3.0) * 2.0
    s = InteractiveSession()
    try:
        assert ops.get_default_session() is s
        assert float(c.eval()) == 6.0
    finally:
        s.close()
    assert ops.get_default_session() is None


def test_session_with_explicit_graph_outside_as_default():
    g = ops.Graph()
    with g.as_default():
        c = sf.constant(2.0) * 3.0
    assert sf.executing_eagerly()
    s = Session(graph=g)
    assert s.graph is g
    assert float(s.run(c)) == 6.0
    with Session(graph=g) as s2:
        assert float(c.eval()) == 6.0
        assert ops.get_default_graph() is g
    assert sf.executing_eagerly()
    s.close()
    s2.close()


def test_fetch_from_another_graph_raises(g):
    c = sf.constant(1.0)
    other = ops.Graph()
    with other.as_default():
        d = sf.constant(1.0, name="other_const")
    with Session() as s:
        with pytest.raises(ValueError, match="other_const:0 is not an element of this graph"):
            s.run(d)
        assert float(s.run(c)) == 1.0


def test_fetching_an_eager_tensor_raises():
    e = sf.constant(1.0)
    g = ops.Graph()
    with Session(graph=g) as s:
        with pytest.raises(TypeError, match="eager tensor"):
            s.run(e)


def test_plan_cache_reused_per_signature(g):
    p = sf.placeholder(sf.float32, [2], name="p")
    y = p * 2.0
    z = y + 1.0
    with Session() as s:
        s.run(y, {p: [1.0, 2.0]})
        assert len(s._plans) == 1
        plan = next(iter(s._plans.values()))
        np.testing.assert_array_equal(s.run(y, {"p:0": [3.0, 4.0]}), [6.0, 8.0])
        assert len(s._plans) == 1 and next(iter(s._plans.values())) is plan
        s.run(z, {p: [1.0, 2.0]})
        assert len(s._plans) == 2
        s.run(z, {y: [1.0, 2.0]})        # a different feed: a different plan
        assert len(s._plans) == 3


def test_variables_live_in_the_session(g):
    v = sf.Variable([1.0, 2.0])
    inc = v.assign_add([1.0, 1.0])
    with Session() as s1, Session() as s2:
        s1.run(sf.global_variables_initializer())
        s2.run(sf.global_variables_initializer())
        s1.run(inc)
        np.testing.assert_array_equal(s1.run(v), [2.0, 3.0])
        np.testing.assert_array_equal(s2.run(v), [1.0, 2.0])


def test_feeding_one_output_of_an_op_that_still_runs(g):
    # split runs for `b`; the fed `a` must not be overwritten by split's own value.
    x = sf.constant([1.0, 2.0])
    a, b = sf.split(x, 2)
    y = a * 10.0 + b
    with Session() as s:
        np.testing.assert_array_equal(s.run(y), [12.0])
        va, vy = s.run([a, y], {a: [100.0]})
        np.testing.assert_array_equal(va, [100.0])
        np.testing.assert_array_equal(vy, [1002.0])


def test_scalars_come_back_as_numpy_scalars_and_strings_as_bytes():
    # TF: sess.run of a scalar gives np.float32 (not a 0-d array); of a string scalar, bytes.
    with ops.Graph().as_default():
        with Session() as sess:
            got = sess.run([sf.constant(1.5) + 1.0, sf.constant(b"ab"), sf.constant([1, 2])])
    assert type(got[0]) is np.float32 and got[0] == 2.5
    assert got[1] == b"ab" and type(got[1]) is bytes
    assert isinstance(got[2], np.ndarray) and got[2].tolist() == [1, 2]
    assert type(sf.constant(2.0).numpy()) is np.float32 and sf.constant(b"x").numpy() == b"x"
    assert type(np.asarray(sf.constant(2.0))) is np.ndarray


def test_strings_are_fed_as_bytes_or_str():
    with ops.Graph().as_default():
        p = sf.compat.v1.placeholder(sf.string, [])
        q = sf.compat.v1.placeholder(sf.string, [None])
        with Session() as sess:
            assert sess.run(sf.identity(p), {p: "héllo"}) == "héllo".encode()
            assert sess.run(sf.identity(q), {q: ["a", b"bc"]}).tolist() == [b"a", b"bc"]
            with pytest.raises(TypeError, match="dtype string"):
                sess.run(sf.identity(q), {q: [1, 2]})


def test_a_control_dependency_on_a_fed_placeholder_does_not_run_it():
    with ops.Graph().as_default():
        p = sf.compat.v1.placeholder(sf.float32, [])
        with sf.control_dependencies([p]):
            y = sf.constant(1.0) + 1.0
        with Session() as sess:
            assert sess.run(y, {p: 3.0}) == 2.0
            with pytest.raises(sf.errors.InvalidArgumentError, match="must feed"):
                sess.run(y)

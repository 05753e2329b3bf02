"""sf.data in graph mode: TF1's iterators (one-shot, initializable, from_structure) read by a
Session until OutOfRangeError, initializers restarting fed pipelines, and a small training loop."""
import numpy as np
import pytest

import segflow as sf

v1 = sf.compat.v1
D1 = v1.data.Dataset


@pytest.fixture
def graph():
    g = sf.Graph()
    with g.as_default():
        yield g


def drain(sess, t, limit=1000):
    out = []
    while True:
        try:
            out.append(sess.run(t))
        except sf.errors.OutOfRangeError:
            return out
        assert len(out) < limit


def test_one_shot_iterator_loops_to_out_of_range(graph):
    x = np.arange(10.0).reshape(5, 2)
    ds = D1.from_tensor_slices({"x": x, "i": np.arange(5)}).batch(2)
    it = ds.make_one_shot_iterator()
    nxt = it.get_next()
    assert nxt["x"].shape.as_list() == [None, 2] and nxt["x"].dtype == sf.float64
    assert nxt["i"].dtype == sf.int64 and nxt["x"].op.type == "IteratorGetNext"
    with pytest.raises(ValueError, match="does not have an initializer"):
        it.initializer
    with v1.Session() as sess:
        both = sess.run([nxt, nxt["i"]])          # one step: both fetches see the same element
        np.testing.assert_array_equal(both[0]["i"], [0, 1])
        np.testing.assert_array_equal(both[1], [0, 1])
        rest = drain(sess, nxt)
        assert [r["i"].tolist() for r in rest] == [[2, 3], [4]]
        np.testing.assert_array_equal(rest[1]["x"], x[4:])
        with pytest.raises(sf.errors.OutOfRangeError):
            sess.run(nxt)
    with v1.Session() as sess:                    # a new session starts again
        assert sess.run(nxt["i"]).tolist() == [0, 1]


def test_module_functions_and_static_shapes(graph):
    ds = D1.range(7).batch(3, drop_remainder=True)
    nxt = v1.data.make_one_shot_iterator(ds).get_next()
    assert nxt.shape.as_list() == [3] and nxt.dtype == sf.int64
    assert v1.data.get_output_shapes(ds).as_list() == [3] and ds.output_types == sf.int64
    with v1.Session() as sess:
        assert [v.tolist() for v in drain(sess, nxt)] == [[0, 1, 2], [3, 4, 5]]


def test_v2_dataset_through_v1_iterator_functions(graph):
    ds = sf.data.Dataset.range(3).map(lambda x: x * x)
    assert not hasattr(ds, "make_one_shot_iterator")
    nxt = v1.data.make_one_shot_iterator(ds).get_next()
    with v1.Session() as sess:
        assert drain(sess, nxt) == [0, 1, 4]


def test_initializable_iterator_with_a_fed_placeholder_restarts(graph):
    p = v1.placeholder(sf.float32, [None, 2])
    ds = D1.from_tensor_slices(p).map(lambda r: sf.reduce_sum(r)).batch(2)
    it = v1.data.make_initializable_iterator(ds)
    nxt = it.get_next()
    assert nxt.shape.as_list() == [None] and nxt.dtype == sf.float32
    a = np.arange(10, dtype=np.float32).reshape(5, 2)
    with v1.Session() as sess:
        with pytest.raises(sf.errors.FailedPreconditionError, match="not been initialized"):
            sess.run(nxt)
        for _ in range(2):
            sess.run(it.initializer, feed_dict={p: a})
            got = drain(sess, nxt)
            assert [g.tolist() for g in got] == [[1.0, 5.0], [9.0, 13.0], [17.0]]
        sess.run(it.initializer, feed_dict={p: np.ones((1, 2), np.float32)})
        sess.run(nxt)
        assert sess.run(ds.cardinality(), feed_dict={p: a}) == 3
        # re-running the initializer mid-way restarts
        sess.run(it.initializer, feed_dict={p: a})
        sess.run(nxt)
        sess.run(it.initializer, feed_dict={p: a})
        assert sess.run(nxt).tolist() == [1.0, 5.0]


def test_graph_tensors_as_sources_and_arguments(graph):
    c = sf.constant(np.arange(6).reshape(3, 2))
    nxt = v1.data.make_one_shot_iterator(D1.from_tensor_slices(c).map(lambda r: r[1])).get_next()
    size = v1.placeholder(sf.int64, [])
    it = D1.range(7).batch(size).make_initializable_iterator()
    batch = it.get_next()
    with v1.Session() as sess:
        assert drain(sess, nxt) == [1, 3, 5]
        sess.run(it.initializer, feed_dict={size: 3})
        assert [b.tolist() for b in drain(sess, batch)] == [[0, 1, 2], [3, 4, 5], [6]]
        sess.run(it.initializer, feed_dict={size: 5})
        assert [b.tolist() for b in drain(sess, batch)] == [[0, 1, 2, 3, 4], [5, 6]]


def test_one_shot_refuses_placeholders(graph):
    p = v1.placeholder(sf.float32, [None])
    with pytest.raises(ValueError, match="placeholder"):
        v1.data.make_one_shot_iterator(D1.from_tensor_slices(p))


def test_seeded_shuffle_in_a_session_restarts_the_same_and_reshuffles_epochs(graph):
    ds = D1.range(8).shuffle(8, seed=5).repeat(2)
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    with v1.Session() as sess:
        sess.run(it.initializer)
        first = drain(sess, nxt)
        sess.run(it.initializer)
        again = drain(sess, nxt)
    assert first == again
    assert sorted(first[:8]) == sorted(first[8:]) == list(range(8)) and first[:8] != first[8:]


def test_from_structure_reinitializable(graph):
    it = v1.data.Iterator.from_structure(sf.int64, sf.TensorShape([]))
    nxt = it.get_next()
    train = it.make_initializer(D1.range(3))
    test = it.make_initializer(D1.range(10, 12))
    with pytest.raises(TypeError):
        it.make_initializer(D1.from_tensor_slices([1.0]))
    with v1.Session() as sess:
        sess.run(train)
        assert sess.run(nxt) == 0
        sess.run(test)
        assert drain(sess, nxt) == [10, 11]
        sess.run(train)
        assert drain(sess, nxt) == [0, 1, 2]


def test_iterating_in_graph_mode_is_refused(graph):
    with pytest.raises(RuntimeError, match="eager mode"):
        iter(D1.range(3))
    assert len(D1.range(3)) == 3
    with pytest.raises(TypeError, match="eager mode"):
        len(D1.range(3).filter(lambda x: x > 0))


def test_eager_v1_iterators():
    ds = D1.range(3)
    it = ds.make_one_shot_iterator()
    assert [it.get_next().numpy() for _ in range(3)] == [0, 1, 2]
    with pytest.raises(RuntimeError, match="eager"):
        ds.make_initializable_iterator()


def test_training_loop_reads_batches_in_a_session(graph):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 3)).astype(np.float32)
    w_true = np.array([[1.0], [-2.0], [0.5]], np.float32)
    y = x @ w_true
    xp = v1.placeholder(sf.float32, [None, 3])
    yp = v1.placeholder(sf.float32, [None, 1])
    ds = D1.from_tensor_slices((xp, yp)).shuffle(64, seed=1).repeat(40).batch(16)
    it = ds.make_initializable_iterator()
    xb, yb = it.get_next()
    w = v1.Variable(np.zeros((3, 1), np.float32))
    loss = sf.reduce_mean(sf.square(sf.matmul(xb, w) - yb))
    step = v1.train.GradientDescentOptimizer(0.2).minimize(loss)
    steps = 0
    with v1.Session() as sess:
        sess.run(v1.global_variables_initializer())
        sess.run(it.initializer, feed_dict={xp: x, yp: y})
        while True:
            try:
                sess.run(step)
            except sf.errors.OutOfRangeError:
                break
            steps += 1
        w_got = sess.run(w)
    assert steps == 40 * 64 // 16
    np.testing.assert_allclose(w_got, w_true, atol=1e-3)


def test_from_generator_in_a_session(graph):
    ds = D1.from_generator(lambda: iter([[1, 2], [3, 4]]), output_signature=sf.TensorSpec([2], sf.int64))
    nxt = ds.map(lambda v: sf.reduce_sum(v)).make_one_shot_iterator().get_next()
    with v1.Session() as sess:
        assert drain(sess, nxt) == [3, 7]


def test_from_structure_with_nested_types_and_shapes(graph):
    it = v1.data.Iterator.from_structure((sf.int64, sf.float32), ((), (None,)))
    assert it.output_shapes[1].as_list() == [None] and it.output_types == (sf.int64, sf.float32)
    ds = D1.from_tensor_slices((np.arange(3), np.ones((3, 2), np.float32)))
    init = it.make_initializer(ds)
    i, x = it.get_next()
    assert x.shape.as_list() == [None]
    with v1.Session() as sess:
        sess.run(init)
        got = drain(sess, (i, x))
    assert [g[0] for g in got] == [0, 1, 2] and got[0][1].tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="structure"):
        v1.data.Iterator.from_structure((sf.int64, sf.float32), ((),))


def test_map_fn_capturing_a_graph_tensor_is_refused_clearly(graph):
    w = sf.constant(2, sf.int64)
    with pytest.raises(ValueError, match="cannot capture graph tensors"):
        D1.range(3).map(lambda x: x * w)
    k = np.int64(2)
    nxt = D1.range(3).map(lambda x: x * k).make_one_shot_iterator().get_next()
    with v1.Session() as sess:
        assert drain(sess, nxt) == [0, 2, 4]


def test_get_next_has_no_gradient(graph):
    p = v1.placeholder(sf.float32, [None])
    it = D1.from_tensor_slices(p).make_initializable_iterator()
    x = it.get_next()
    assert sf.gradients(x * 2.0, [p]) == [None]

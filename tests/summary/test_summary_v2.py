"""sf.summary (TF2): values written through the default writer, read back from the event file with
TensorBoard's loader: tags, steps, scalar values, histogram buckets (against np.histogram), text;
eagerly, in sf.function and in a Session graph; the step and record_if rules; errors."""
import numpy as np
import pytest

import segflow as sf
from segflow._ops import summary_histogram, summary_writer
from summary_events import tensor, values


def _written(logdir):
    return [(step, tag) for step, tag, _ in values(logdir)]


def test_scalar_histogram_text_eager(tmp_path):
    data = np.random.default_rng(0).normal(size=200)
    w = sf.summary.create_file_writer(str(tmp_path))
    with w.as_default():
        assert bool(sf.summary.scalar("loss", 1.5, step=3, description="the loss")) is True
    with w.as_default(step=5):
        assert sf.summary.experimental.get_step() == 5
        assert bool(sf.summary.histogram("h", data))
        assert bool(sf.summary.histogram("h3", data.astype(np.float32), buckets=3))
        assert bool(sf.summary.text("t", "hello"))
        assert bool(sf.summary.text("t2", [["a", "b"], ["c", "d"]]))
        with sf.name_scope("outer"):
            assert bool(sf.summary.scalar("inner", sf.constant(7)))
        with sf.summary.record_if(False):
            assert bool(sf.summary.scalar("skipped", 1.0)) is False
    assert sf.summary.experimental.get_step() is None
    w.close()
    got = {tag: (step, v) for step, tag, v in values(tmp_path)}
    assert _written(tmp_path) == [(3, "loss"), (5, "h"), (5, "h3"), (5, "t"), (5, "t2"), (5, "outer/inner")]
    step, v = got["loss"]
    assert v.metadata.plugin_data.plugin_name == "scalars" and v.metadata.summary_description == "the loss"
    assert tensor(v).dtype == np.float32 and tensor(v) == 1.5
    assert tensor(got["outer/inner"][1]) == 7.0
    for tag, k in (("h", 30), ("h3", 3)):
        v = got[tag][1]
        assert v.metadata.plugin_data.plugin_name == "histograms"
        rows = tensor(v)
        x = data.astype(np.float32).astype(np.float64) if k == 3 else data
        counts, edges = np.histogram(x, bins=k, range=(x.min(), x.max()))
        assert rows.shape == (k, 3) and rows.dtype == np.float64
        np.testing.assert_array_equal(rows[:, 2], counts)
        np.testing.assert_allclose(rows[:, 0], edges[:-1], rtol=1e-12)
        np.testing.assert_allclose(rows[:, 1], edges[1:], rtol=1e-12)
        assert rows[-1, 1] == x.max() and rows[0, 0] == x.min()
    assert got["t"][1].metadata.plugin_data.plugin_name == "text"
    assert tensor(got["t"][1]) == b"hello"
    assert tensor(got["t2"][1]).tolist() == [[b"a", b"b"], [b"c", b"d"]]


def test_histogram_edge_cases():
    assert summary_histogram.linear([], 30).shape == (30, 3) and not summary_histogram.linear([], 30).any()
    assert summary_histogram.linear([1.0, 2.0], 0).shape == (0, 3)
    same = summary_histogram.linear([2.0, 2.0, 2.0], 4)
    np.testing.assert_array_equal(same, [[2, 2, 0], [2, 2, 0], [2, 2, 0], [2, 2, 3]])
    # the maximum counts in the last bucket, a value on an inner edge in the bucket it starts
    np.testing.assert_array_equal(summary_histogram.linear([0.0, 1.0, 2.0, 4.0], 4)[:, 2], [1, 1, 1, 1])
    np.testing.assert_array_equal(summary_histogram.linear([[1, 2], [3, 4]], 2),
                                  [[1, 2.5, 2], [2.5, 4, 2]])


def test_no_writer_no_step_and_the_default_step(tmp_path):
    assert bool(sf.summary.scalar("a", 1.0)) is False          # no writer: nothing, even without a step
    assert bool(sf.summary.should_record_summaries()) is False
    w = sf.summary.create_file_writer(str(tmp_path))
    with w.as_default():
        assert bool(sf.summary.should_record_summaries()) is True
        with pytest.raises(ValueError, match="No step set"):
            sf.summary.scalar("a", 1.0)
        sf.summary.experimental.set_step(11)
        try:
            assert bool(sf.summary.scalar("a", 1.0))
            step = sf.Variable(4, dtype=sf.int64)
            sf.summary.experimental.set_step(step)
            assert sf.summary.experimental.get_step() is step
            assert bool(sf.summary.scalar("b", 2.0))
            step.assign(6)
            assert bool(sf.summary.scalar("c", 3.0))
            assert bool(sf.summary.scalar("d", 4.0, step=np.int64(2)))
        finally:
            sf.summary.experimental.set_step(None)
        with sf.summary.record_if(lambda: False):
            assert bool(sf.summary.scalar("e", 1.0, step=1)) is False
            assert bool(sf.summary.should_record_summaries()) is False
    w.close()
    assert _written(tmp_path) == [(11, "a"), (4, "b"), (6, "c"), (2, "d")]
    with pytest.raises(RuntimeError, match="closed"):
        w.as_default().__enter__()
    with sf.summary.create_noop_writer().as_default(step=1):
        assert bool(sf.summary.scalar("x", 1.0)) is False


def test_errors(tmp_path):
    w = sf.summary.create_file_writer(str(tmp_path))
    with w.as_default(step=0):
        with pytest.raises(ValueError, match=r"Expected scalar shape, saw shape: \(2,\)"):
            sf.summary.scalar("v", [1.0, 2.0])
        with pytest.raises(sf.errors.UnimplementedError, match="Cast string to float"):
            sf.summary.scalar("s", "a")
        with pytest.raises(TypeError, match="tensor must be of type tf.string; got tf.float32"):
            sf.summary.text("t", 1.0)
        with pytest.raises(TypeError, match="Cannot convert 1.5 to EagerTensor of dtype int64"):
            sf.summary.scalar("f", 1.0, step=1.5)
        with pytest.raises(TypeError, match="buckets"):
            sf.summary.histogram("h", [1.0], buckets=2.5)
    w.close()
    with pytest.raises(ValueError, match="logdir"):
        sf.summary.create_file_writer(None)
    assert _written(tmp_path) == []


def test_in_a_function_and_a_session(tmp_path):
    w = sf.summary.create_file_writer(str(tmp_path))

    @sf.function
    def train_step(x, step):
        with sf.summary.record_if(lambda: sf.equal(step % 2, 0)):
            sf.summary.scalar("fn", x * 2.0, step=step)
            sf.summary.histogram("fh", sf.stack([x, x + 1.0]), step=step, buckets=2)
        return x + 1.0

    with w.as_default():
        for i in range(4):
            train_step(sf.constant(float(i)), sf.constant(i, dtype=sf.int64))
    g = sf.Graph()
    with g.as_default():
        x = sf.compat.v1.placeholder(sf.float32, [])
        step = sf.compat.v1.placeholder(sf.int64, [])
        with w.as_default():
            op = sf.summary.scalar("graph", x, step=step)
            flush = sf.summary.flush()
        assert op.dtype == sf.bool and op.op.type == "WriteSummary"
        assert op.op in sf.compat.v1.summary.all_v2_summary_ops()
        with sf.compat.v1.Session(graph=g) as sess:       # runs outside as_default: the writer was captured
            assert sess.run(op, {x: 0.5, step: 10}) is not None
            assert bool(sess.run(op, {x: 0.25, step: 11}))
            sess.run(flush)
    w.close()
    got = values(tmp_path)
    assert [(s, t) for s, t, _ in got] == [(0, "fn"), (0, "fh"), (2, "fn"), (2, "fh"), (10, "graph"), (11, "graph")]
    assert [float(tensor(v)) for _, t, v in got if t != "fh"] == [0.0, 4.0, 0.5, 0.25]
    np.testing.assert_array_equal(tensor(got[3][2]), [[2.0, 2.5, 1.0], [2.5, 3.0, 1.0]])


def test_function_traced_without_a_writer_writes_nothing(tmp_path):
    @sf.function
    def f(x):
        return sf.summary.scalar("x", x, step=0)

    assert bool(f(sf.constant(1.0))) is False
    w = sf.summary.create_file_writer(str(tmp_path))
    with w.as_default():
        assert bool(f(sf.constant(2.0))) is False       # as in TF: the writer is the one at tracing
    w.close()
    assert _written(tmp_path) == []


def test_write_and_flush(tmp_path):
    w = sf.summary.create_file_writer(str(tmp_path), max_queue=100, flush_millis=10 ** 7, filename_suffix=".mine")
    w.set_as_default(step=3)
    try:
        assert bool(sf.summary.write("raw", sf.constant([1, 2], dtype=sf.int64)))
        assert bool(sf.summary.write("lazy", lambda: sf.constant(2.5), step=4))
        sf.summary.flush()
        got = values(tmp_path)
        sf.summary.create_noop_writer().set_as_default(step=9)     # as TF's: changes nothing
        assert summary_writer.default_writer() is w and int(sf.summary.experimental.get_step()) == 3
    finally:
        summary_writer._state.writer = None    # TF has no public way to unset a default writer
        sf.summary.experimental.set_step(None)
        w.close()
    assert [(s, t) for s, t, _ in got] == [(3, "raw"), (4, "lazy")]
    assert tensor(got[0][2]).tolist() == [1, 2] and tensor(got[1][2]) == np.float32(2.5)
    assert all(p.name.endswith(".mine") for p in tmp_path.iterdir())

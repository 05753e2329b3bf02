"""sf.compat.v1.summary (TF1): the summary ops' serialized protos in a Session and eagerly,
merge / merge_all, and the FileWriter's events (summaries, the graph, run metadata) read back
with TensorBoard's loader. Expected histogram protos are TensorFlow 2.21's for the same input."""
import sys
import warnings

import numpy as np
import pytest

import segflow as sf
from summary_events import event_files, events, tensor, values

v1 = sf.compat.v1
DBL_MAX = sys.float_info.max


def _graph_summaries():
    x = v1.placeholder(sf.float32, [None], name="x")
    loss = v1.summary.scalar("loss", sf.reduce_mean(x))
    hist = v1.summary.histogram("hist", x)
    txt = v1.summary.text("txt", sf.constant("hi"))
    fam = v1.summary.scalar("fam", 2.0, family="myfam")
    return x, loss, hist, txt, fam


def test_merge_all_in_a_session_with_a_file_writer(tmp_path):
    g = sf.Graph()
    with g.as_default():
        x, loss, hist, txt, fam = _graph_summaries()
        assert [t.name for t in (loss, hist, txt, fam)] == ["loss:0", "hist:0", "txt:0", "myfam/fam:0"]
        assert [t.op.type for t in (loss, hist, txt)] == ["ScalarSummary", "HistogramSummary", "TensorSummaryV2"]
        assert all(t.dtype == sf.string and t.shape == () for t in (loss, hist, txt, fam))
        assert v1.get_collection(v1.GraphKeys.SUMMARIES) == [loss, hist, txt, fam]
        merged = v1.summary.merge_all()
        assert merged.op.type == "MergeSummary" and merged.op.name == "Merge/MergeSummary"
        assert v1.summary.merge_all(key="nothing") is None
        with v1.Session() as sess, v1.summary.FileWriter(str(tmp_path), sess.graph) as writer:
            out = sess.run(merged, {x: [1.0, 2.0, -3.0, 0.0]})
            assert isinstance(out, bytes)      # a string scalar fetches as bytes, as in TF
            writer.add_summary(out, 7)
            writer.add_summary(sess.run(merged, {x: [4.0]}), global_step=8)
    proto = v1.Summary.FromString(out)
    assert [v.tag for v in proto.value] == ["loss", "hist", "txt", "myfam/myfam/fam"]
    assert proto.value[0].simple_value == 0.0 and proto.value[3].simple_value == 2.0
    h = proto.value[1].histo
    assert (h.min, h.max, h.num, h.sum, h.sum_squares) == (-3.0, 2.0, 4.0, 0.0, 14.0)
    assert list(h.bucket_limit) == [-3.1665833053880363, -2.8787120958073054, 0.0, 1e-12, 0.917246389039776,
                                    1.0089710279437536, 1.9661990955585713, 2.1628190051144287, DBL_MAX]
    assert list(h.bucket) == [0, 1, 0, 1, 0, 1, 0, 1, 0]
    assert proto.value[2].metadata.plugin_data.plugin_name == "text" and tensor(proto.value[2]) == b"hi"

    raw = events(tmp_path, legacy=True)
    graphs = [e for e in raw if e.HasField("graph_def")]
    assert len(graphs) == 1
    from tensorboard.compat.proto import graph_pb2
    gd = graph_pb2.GraphDef.FromString(graphs[0].graph_def)
    nodes = {n.name: n for n in gd.node}
    assert set(nodes) == {op.name for op in g.get_operations()}
    assert nodes["x"].op == "Placeholder" and nodes["x"].attr["dtype"].type == 1
    assert nodes["loss"].op == "ScalarSummary" and list(nodes["loss"].input) == [g.get_tensor_by_name(
        "loss:0").op.inputs[0].op.name]
    assert list(nodes["Merge/MergeSummary"].input) == ["loss", "hist", "txt", "myfam/fam"]
    summaries = [(e.step, [v.tag for v in e.summary.value]) for e in raw if e.HasField("summary")]
    assert summaries == [(7, ["loss", "hist", "txt", "myfam/myfam/fam"])] * 1 + [(8, ["loss", "hist", "txt",
                                                                                       "myfam/myfam/fam"])]
    second = [e for e in raw if e.HasField("summary")][1].summary.value
    assert second[0].simple_value == 4.0 and not second[2].HasField("metadata")   # metadata once per tag
    migrated = {(s, t): v for s, t, v in values(tmp_path)}     # as TensorBoard's backend reads them
    assert float(tensor(migrated[(8, "loss")])) == 4.0
    assert tensor(migrated[(7, "hist")])[:, 2].sum() == 4


def test_names_tags_and_collections():
    with sf.Graph().as_default() as g:
        a, b = v1.summary.scalar("c", 1.0), v1.summary.scalar("c", 2.0)
        with sf.name_scope("sc"):
            c = v1.summary.scalar("c", 3.0)
        d = v1.summary.scalar("bad name!", 1.0, collections=["mine"])
        e = v1.summary.scalar("c", 3.0, family="f")
        assert [t.op.name for t in (a, b, c, d, e)] == ["c", "c_1", "sc/c", "bad_name_", "f/c"]
        assert v1.get_collection("mine") == [d] and d not in v1.get_collection(v1.GraphKeys.SUMMARIES)
        with v1.Session(graph=g) as sess:
            tags = [v.tag for v in v1.Summary.FromString(sess.run(v1.summary.merge([a, b, c, d, e]))).value]
    assert tags == ["c", "c_1", "sc/c", "bad_name_", "f/f/c"]


def test_eager_v1_ops(tmp_path):
    s = v1.summary.scalar("a", 1.5)
    proto = v1.Summary.FromString(s.numpy())
    assert proto.value[0].tag == "a" and proto.value[0].simple_value == 1.5
    m = v1.summary.merge([s, v1.summary.histogram("h", [5.0, 5.0])])
    merged = v1.Summary.FromString(m.numpy())
    assert [v.tag for v in merged.value] == ["a", "h"]
    h = merged.value[1].histo
    assert list(h.bucket_limit) == [4.6361946174186253, 5.0998140791604882, DBL_MAX] and list(h.bucket) == [0, 2, 0]
    empty = v1.Summary.FromString(v1.summary.histogram("e", np.zeros(0)).numpy()).value[0].histo
    assert (empty.min, empty.max, empty.num, list(empty.bucket_limit)) == (DBL_MAX, -DBL_MAX, 0, [DBL_MAX])
    with pytest.raises(RuntimeError, match="eager"):
        v1.summary.merge_all()
    w = sf.summary.create_file_writer(str(tmp_path))
    with w.as_default(step=3):                       # TF2's writer: the TF1 ops write through it
        with sf.name_scope("n"):
            assert v1.summary.scalar("b", 2.5).numpy() == b""
        assert v1.summary.histogram("hh", [1.0, 2.0]).numpy() == b""
        assert v1.summary.text("tt", sf.constant("x")).numpy() == b""
    w.close()
    got = values(tmp_path)
    assert [(s, t) for s, t, _ in got] == [(3, "n/b"), (3, "hh"), (3, "tt")]
    assert float(tensor(got[0][2])) == 2.5 and tensor(got[1][2]).shape == (30, 3)


def test_errors():
    with sf.Graph().as_default() as g:
        with pytest.raises(ValueError, match="tags and values are not the same shape"):
            v1.summary.scalar("v", [1.0, 2.0])
        with pytest.raises(ValueError, match="length 0"):
            v1.summary.merge([])
        with pytest.raises(TypeError, match="tensor must be of type tf.string"):
            v1.summary.text("t", sf.constant(1.0))
        with pytest.raises(sf.errors.InvalidArgumentError, match="MergeSummary.*inputs"):
            v1.summary.merge([sf.constant(1.0)])
        x = v1.placeholder(sf.float32, [None])
        h = v1.summary.histogram("h", x)
        s = v1.summary.scalar("s", 1.0)
        dup = v1.summary.merge([s, s])
        with v1.Session(graph=g) as sess:
            with pytest.raises(sf.errors.InvalidArgumentError, match="Nan in summary histogram for: h"):
                sess.run(h, {x: [1.0, np.nan]})
            with pytest.raises(sf.errors.InvalidArgumentError, match="Infinity in summary histogram for: h"):
                sess.run(h, {x: [np.inf]})
            with pytest.raises(sf.errors.InvalidArgumentError, match="Duplicate tag s found in summary inputs"):
                sess.run(dup)


def test_run_metadata_graph_and_writer_lifecycle(tmp_path):
    from tensorboard.compat.proto import config_pb2
    with sf.Graph().as_default() as g:
        x = v1.placeholder(sf.float32, [2], name="x")
        y = sf.reduce_sum(x * 2.0, name="y")
        with v1.Session(graph=g) as sess:
            md = v1.RunMetadata()
            opts = v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE)
            assert sess.run(y, {x: [1.0, 2.0]}, options=opts, run_metadata=md) == 6.0
        writer = v1.summary.FileWriter(str(tmp_path))
        writer.add_graph(g)
        writer.add_run_metadata(md, "step1", global_step=1)
        with pytest.raises(ValueError, match="already used"):
            writer.add_run_metadata(md, "step1", global_step=2)
        writer.add_summary(v1.Summary(value=[v1.Summary.Value(tag="manual", simple_value=0.5)]), 2)
        writer.close()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            writer.add_summary(v1.Summary(value=[v1.Summary.Value(tag="dropped", simple_value=1.0)]), 3)
        assert any("closed FileWriter" in str(w.message) for w in caught)
        writer.reopen()
        writer.add_summary(v1.Summary(value=[v1.Summary.Value(tag="reopened", simple_value=1.0)]), 4)
        writer.close()
    assert len(event_files(tmp_path)) == 2
    raw = events(tmp_path, legacy=True)
    tagged = [e for e in raw if e.HasField("tagged_run_metadata")]
    assert [(e.step, e.tagged_run_metadata.tag) for e in tagged] == [(1, "step1")]
    back = config_pb2.RunMetadata.FromString(tagged[0].tagged_run_metadata.run_metadata)
    nodes = [n.node_name for d in back.step_stats.dev_stats for n in d.node_stats]
    assert "y" in nodes and "Mul" in nodes and len(nodes) == len(set(nodes))
    assert [(e.step, e.summary.value[0].tag) for e in raw if e.HasField("summary")] == [(2, "manual"), (4, "reopened")]
    with pytest.raises(TypeError, match="Summary"):
        v1.summary.FileWriter(str(tmp_path)).add_summary(1.5)


def test_file_writer_cache(tmp_path):
    a = v1.summary.FileWriterCache.get(str(tmp_path))
    assert v1.summary.FileWriterCache.get(str(tmp_path)) is a and a.get_logdir() == str(tmp_path)
    v1.summary.FileWriterCache.clear()
    assert v1.summary.FileWriterCache.get(str(tmp_path)) is not a
    v1.summary.FileWriterCache.clear()

"""compat.v1.metrics in a Session: each metric updated over several batches (fed through
placeholders) against NumPy over the union of the batches seen; variables, collections, errors."""
import numpy as np
import pytest

import segflow as sf
from segflow.ops import metrics as metrics_face

v1 = sf.compat.v1
M = v1.metrics
RNG = np.random.default_rng(5)
BATCHES = 3
B = 8


def _batches(make):
    return [make() for _ in range(BATCHES)]


def _stream(sess, metric, feeds, placeholders):
    """Runs `metric` = (value, update) over the batches in `sess`; returns each update's result and
    the final value."""
    value, update = metric
    sess.run(v1.local_variables_initializer())
    assert np.all(sess.run(value) == 0)
    seen = [sess.run(update, dict(zip(placeholders, batch))) for batch in feeds]
    return seen, sess.run(value)


@pytest.fixture
def graph():
    """A fresh default graph; yields its Session (the metrics run there)."""
    with sf.Graph().as_default() as g:
        sess = v1.Session(graph=g)
        with sess.as_default():
            yield sess
        sess.close()


def _union(feeds, i, upto):
    return np.concatenate([f[i] for f in feeds[:upto]])


def _check(seen, final, feeds, ref):
    for k in range(1, len(feeds) + 1):
        np.testing.assert_allclose(seen[k - 1], ref(*[_union(feeds, i, k) for i in range(len(feeds[0]))]),
                                   rtol=1e-5, atol=1e-6, err_msg=f"after batch {k}")
    np.testing.assert_allclose(final, seen[-1], rtol=1e-6)


def _ph(dtype, shape):
    return v1.placeholder(dtype, shape)


def _wmean(v, w):
    w = np.broadcast_to(w, v.shape)
    return (v * w).sum() / w.sum() if w.sum() else 0.0


def test_accuracy_and_mean(graph):
    feeds = _batches(lambda: (RNG.integers(0, 3, B), RNG.integers(0, 3, B), RNG.uniform(0, 1, B) * (RNG.uniform(size=B)
                                                                                                  > 0.3)))
    lab, pred, w = _ph(sf.int64, [None]), _ph(sf.int64, [None]), _ph(sf.float32, [None])
    seen, final = _stream(graph, M.accuracy(lab, pred), [f[:2] for f in feeds], [lab, pred])
    _check(seen, final, [f[:2] for f in feeds], lambda a, b: np.mean(a == b))
    seen, final = _stream(graph, M.accuracy(lab, pred, weights=w), feeds, [lab, pred, w])
    _check(seen, final, feeds, lambda a, b, c: _wmean((a == b).astype(float), c))
    vals = _ph(sf.float32, [None, 2])
    wrow = _ph(sf.float32, [None])          # [batch] weights get a trailing 1 to match values' rank
    feeds2 = _batches(lambda: (RNG.normal(size=(B, 2)), RNG.uniform(size=B)))
    seen, final = _stream(graph, M.mean(vals, weights=wrow), feeds2, [vals, wrow])
    _check(seen, final, feeds2, lambda x, c: _wmean(x, c[:, None]))
    seen, final = _stream(graph, M.mean(vals), [f[:1] for f in feeds2], [vals])
    _check(seen, final, [f[:1] for f in feeds2], np.mean)


def test_mean_tensor_and_errors(graph):
    vals = _ph(sf.float32, [2, 3])
    w = _ph(sf.float32, [2, 1])
    feeds = _batches(lambda: (RNG.normal(size=(2, 3)), RNG.uniform(size=(2, 1))))
    value, update = M.mean_tensor(vals, weights=w)
    sess = graph
    sess.run(v1.local_variables_initializer())
    for f in feeds:
        got = sess.run(update, {vals: f[0], w: f[1]})
    x = np.stack([f[0] for f in feeds])
    ws = np.stack([np.broadcast_to(f[1], (2, 3)) for f in feeds])
    np.testing.assert_allclose(got, (x * ws).sum(0) / ws.sum(0), rtol=1e-5)
    np.testing.assert_allclose(sess.run(value), got, rtol=1e-6)


@pytest.mark.parametrize("name,ref", [
    ("mean_squared_error", lambda y, p, w: _wmean((y - p) ** 2, w)),
    ("mean_absolute_error", lambda y, p, w: _wmean(np.abs(y - p), w)),
    ("root_mean_squared_error", lambda y, p, w: np.sqrt(_wmean((y - p) ** 2, w))),
])
def test_errors(graph, name, ref):
    feeds = _batches(lambda: (RNG.normal(size=(B, 1)), RNG.normal(size=B), RNG.uniform(size=B)))
    lab, pred, w = _ph(sf.float64, [None, 1]), _ph(sf.float64, [None]), _ph(sf.float64, [None])
    seen, final = _stream(graph, getattr(M, name)(lab, pred, weights=w), feeds, [lab, pred, w])
    _check(seen, final, feeds, lambda y, p, c: ref(y[:, 0], p, c))


COUNTS = {"true_positives": lambda y, p: y & p, "false_positives": lambda y, p: ~y & p,
          "false_negatives": lambda y, p: y & ~p, "true_negatives": lambda y, p: ~y & ~p}


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_counts(graph, name):
    feeds = _batches(lambda: (RNG.integers(0, 2, B), RNG.uniform(size=B) * (RNG.uniform(size=B) > 0.5),
                              RNG.uniform(size=B)))
    lab, pred, w = _ph(sf.int32, [None]), _ph(sf.float32, [None]), _ph(sf.float32, [None])
    seen, final = _stream(graph, getattr(M, name)(lab, pred, weights=w), feeds, [lab, pred, w])
    _check(seen, final, feeds, lambda y, p, c: (COUNTS[name](y != 0, p != 0) * c).sum())


@pytest.mark.parametrize("name", ["precision", "recall"])
def test_precision_recall(graph, name):
    feeds = _batches(lambda: (RNG.integers(0, 2, B).astype(bool), RNG.integers(0, 2, B).astype(bool),
                              RNG.uniform(size=B)))
    lab, pred, w = _ph(sf.bool, [None]), _ph(sf.bool, [None]), _ph(sf.float32, [None])

    def ref(y, p, c):
        tp = (y & p) @ c
        miss = ((~y & p) if name == "precision" else (y & ~p)) @ c
        return tp / (tp + miss) if tp + miss > 0 else 0.0
    seen, final = _stream(graph, getattr(M, name)(lab, pred, weights=w), feeds, [lab, pred, w])
    _check(seen, final, feeds, ref)
    names = [v.name for v in v1.local_variables()]
    other = "false_positives" if name == "precision" else "false_negatives"
    assert names == [f"{name}/true_positives/count:0", f"{name}/{other}/count:0"]


def _ref_auc(y, p, w, n, curve="ROC", how="trapezoidal"):
    th = np.array([-1e-7] + [(i + 1) / (n - 1) for i in range(n - 2)] + [1 + 1e-7])
    pos = p[None, :] > th[:, None]
    tp, fp = (pos & y) @ w, (pos & ~y) @ w
    fn, tn = (~pos & y) @ w, (~pos & ~y) @ w
    rec = (tp + 1e-6) / (tp + fn + 1e-6)
    x, h = (fp / (fp + tn + 1e-6), rec) if curve == "ROC" else (rec, (tp + 1e-6) / (tp + fp + 1e-6))
    heights = {"trapezoidal": (h[:-1] + h[1:]) / 2, "minoring": np.minimum(h[:-1], h[1:]),
               "majoring": np.maximum(h[:-1], h[1:])}[how]
    return np.sum((x[:-1] - x[1:]) * heights)


@pytest.mark.parametrize("curve,how", [("ROC", "trapezoidal"), ("PR", "trapezoidal"), ("ROC", "minoring"),
                                       ("PR", "majoring")])
def test_auc(graph, curve, how):
    feeds = _batches(lambda: (RNG.integers(0, 2, B).astype(bool), RNG.uniform(size=B), RNG.uniform(size=B)))
    lab, pred, w = _ph(sf.bool, [None]), _ph(sf.float32, [None]), _ph(sf.float32, [None])
    seen, final = _stream(graph, M.auc(lab, pred, weights=w, num_thresholds=11, curve=curve, summation_method=how),
                          feeds, [lab, pred, w])
    _check(seen, final, feeds, lambda y, p, c: _ref_auc(y, p.astype(np.float32), c, 11, curve, how))


def test_auc_approaches_the_rank_statistic(graph):
    y = RNG.integers(0, 2, 200).astype(bool)
    p = np.clip(RNG.normal(0.5 + 0.2 * y, 0.2), 0, 1)
    value, update = M.auc(y, p.astype(np.float32), num_thresholds=2000)
    sess = graph
    sess.run(v1.local_variables_initializer())
    sess.run(update)
    exact = np.mean(p[y][:, None] > p[~y][None, :])
    assert abs(sess.run(value) - exact) < 2e-3
    bad = M.auc([True, False], [0.5, 1.5])
    sess.run(v1.local_variables_initializer())
    with pytest.raises(sf.errors.InvalidArgumentError, match=r"predictions must be in \[0, 1\]"):
        sess.run(bad[1])


def test_thresholds_counts_and_rates(graph):
    y = np.array([0, 1, 1, 0, 1], bool)
    p = np.array([0.2, 0.6, 0.9, 0.7, 0.4], np.float32)
    th = [0.3, 0.65]
    sess = graph
    ops = {k: M.__dict__[f"{k}_at_thresholds"](y, p, th) for k in ("true_positives", "false_positives",
                                                                   "true_negatives", "false_negatives")}
    prec = M.precision_at_thresholds(y, p, th)
    rec = M.recall_at_thresholds(y, p, th)
    sess.run(v1.local_variables_initializer())
    got = sess.run({k: u for k, (_, u) in ops.items()})
    pos = p[None, :] > np.array(th)[:, None]
    np.testing.assert_array_equal(got["true_positives"], (pos & y).sum(1))
    np.testing.assert_array_equal(got["false_positives"], (pos & ~y).sum(1))
    np.testing.assert_array_equal(got["true_negatives"], (~pos & ~y).sum(1))
    np.testing.assert_array_equal(got["false_negatives"], (~pos & y).sum(1))
    tp = (pos & y).sum(1)
    np.testing.assert_allclose(sess.run(prec[1]), tp / (tp + (pos & ~y).sum(1) + 1e-7), rtol=1e-6)
    np.testing.assert_allclose(sess.run(rec[1]), tp / (tp + (~pos & y).sum(1) + 1e-7), rtol=1e-6)


def test_mean_iou(graph):
    k = 4
    feeds = _batches(lambda: (RNG.integers(0, k, (B, 2)), RNG.integers(0, k, (B, 2)), RNG.uniform(size=(B, 2))))
    lab, pred, w = _ph(sf.int32, [None, 2]), _ph(sf.int32, [None, 2]), _ph(sf.float32, [None, 2])
    value, update = M.mean_iou(lab, pred, k, weights=w)
    sess = graph
    sess.run(v1.local_variables_initializer())
    for f in feeds:
        cm_got = sess.run(update, {lab: f[0], pred: f[1], w: f[2]})
    cm = np.zeros((k, k))
    for f in feeds:
        np.add.at(cm, (f[0].ravel(), f[1].ravel()), f[2].ravel())
    np.testing.assert_allclose(cm_got, cm, rtol=1e-6)
    union = cm.sum(0) + cm.sum(1) - np.diag(cm)
    want = np.mean(np.diag(cm)[union > 0] / union[union > 0])
    np.testing.assert_allclose(sess.run(value), want, rtol=1e-5)
    bad_value, bad_update = M.mean_iou([0, 5], [0, 1], 3)
    sess.run(v1.local_variables_initializer())
    with pytest.raises(sf.errors.InvalidArgumentError, match=r"labels must be in \[0, num_classes\)"):
        sess.run(bad_update)


def test_variables_collections_and_reset(graph):
    acc, update = M.accuracy([1, 0, 1], [1, 1, 1], metrics_collections=["m"], updates_collections=["u"])
    assert acc.name == "accuracy/value:0" and update.name == "accuracy/update_op:0"
    assert [v.name for v in v1.local_variables()] == ["accuracy/total:0", "accuracy/count:0"]
    assert [v.name for v in v1.get_collection("metric_variables")] == ["accuracy/total:0", "accuracy/count:0"]
    assert v1.global_variables() == [] and v1.trainable_variables() == []
    assert v1.get_collection("m") == [acc] and v1.get_collection("u") == [update]
    acc2, _ = M.accuracy([1], [1])
    assert acc2.name.startswith("accuracy_1/")
    sess = graph
    sess.run(v1.local_variables_initializer())
    assert sess.run(acc) == 0.0
    sess.run(update)
    sess.run(update)
    np.testing.assert_allclose(sess.run(acc), 2 / 3, rtol=1e-6)
    sess.run(v1.local_variables_initializer())
    assert sess.run(acc) == 0.0
    with pytest.raises(ValueError, match="incompatible"):
        M.accuracy([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="squeeze"):
        M.accuracy([1, 2], [1, 1], weights=[[1.0, 2.0]])
    assert M.accuracy is metrics_face.accuracy and M.auc is metrics_face.auc


@pytest.mark.parametrize("name", ["accuracy", "mean", "precision", "auc", "mean_iou", "true_positives"])
def test_eager_raises(name):
    args = {"mean": ([1.0],), "mean_iou": ([0], [0], 2)}.get(name, ([1], [1]))
    with pytest.raises(RuntimeError, match=f"tf.metrics.{name} is not supported when eager execution is enabled"):
        getattr(M, name)(*args)


def test_mean_per_class_accuracy(graph):
    k = 4
    feeds = _batches(lambda: (RNG.integers(0, 3, B), RNG.integers(0, 3, B), RNG.uniform(size=B)))
    lab, pred, w = _ph(sf.int64, [None]), _ph(sf.int64, [None]), _ph(sf.float32, [None])
    value, update = M.mean_per_class_accuracy(lab, pred, k, weights=w)
    assert [v.name for v in v1.local_variables()] == ["mean_accuracy/total:0", "mean_accuracy/count:0"]
    graph.run(v1.local_variables_initializer())
    for f in feeds:
        per_class = graph.run(update, dict(zip([lab, pred, w], f)))
    y, p, c = (np.concatenate([f[i] for f in feeds]) for i in range(3))
    total = np.array([c[y == j].sum() for j in range(k)])
    right = np.array([c[(y == j) & (p == j)].sum() for j in range(k)])
    want = np.where(total > 0, right / np.where(total > 0, total, 1), 0)
    np.testing.assert_allclose(per_class, want, rtol=1e-5)
    np.testing.assert_allclose(graph.run(value), want.mean(), rtol=1e-5)       # class 3 never seen: 0


def test_relative_error_cosine_distance_percentage_below(graph):
    r = M.mean_relative_error([1., 2., 3.], [1.5, 2., 1.], normalizer=[2., 0., 4.])
    c = M.mean_cosine_distance([[1., 0.], [0., 1.]], [[0.6, 0.8], [0.6, 0.8]], dim=1)
    values = _ph(sf.float32, [None])
    p = M.percentage_below(values, 2.5, weights=[1., 1., 2., 0.])
    graph.run(v1.local_variables_initializer())
    np.testing.assert_allclose(graph.run(r[1]), (0.5 / 2 + 0 + 2 / 4) / 3, rtol=1e-6)   # 0 where normalizer is 0
    np.testing.assert_allclose(graph.run(c[1]), 1 - (0.6 + 0.8) / 2, rtol=1e-6)
    np.testing.assert_allclose(graph.run(p[1], {values: [1., 2., 3., 4.]}), 2 / 4, rtol=1e-6)
    np.testing.assert_allclose(graph.run(p[1], {values: [3., 3., 1., 1.]}), (2 + 2) / 8, rtol=1e-6)

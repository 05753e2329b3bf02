"""nce_loss and sampled_softmax_loss: values against a NumPy reference of TF's _compute_sampled_logits
with fixed sampled_values (and numbers from TF 2.21), partitioned tables, the relation to the full
softmax when every class is a candidate, the mean over many seeds against the exact expectation,
gradients against numerical Jacobians in both modes, and sparse (IndexedSlices) weight gradients
through an optimizer step."""
import itertools

import numpy as np
import pytest

import segflow as sf
from gradcheck import check_gradients
from segflow.ops import nn_impl

FLT_MAX = float(np.finfo(np.float32).max)


def _data():
    """The data the TF 2.21 numbers below were computed on."""
    rng = np.random.default_rng(7)
    C, D, B = 9, 4, 3
    return dict(w=rng.normal(size=(C, D)), b=rng.normal(size=C), x=rng.normal(size=(B, D)),
                l=np.array([[1, 4], [2, 2], [8, 0]]), s=np.array([4, 2, 7, 2, 5]),
                tc=rng.uniform(0.1, 1, size=(B, 2)), sc=rng.uniform(0.1, 1, size=5))


# TF 2.21 on _data(), num_true=2, num_sampled=5, num_classes=9 (any partitioning)
TF_NCE = {False: [11.723245018988013, 6.423188162972392, 5.66209644373929],
          True: [8.581301538223867, 6.089362125869543, 5.66209644373929]}
TF_SOFTMAX = {False: [2.7116801935787844, 4.95087561899242, 1.248434133193788],
              True: [2.2494485649497244, 4.925615362371188, 1.248434133193788]}


def ref_logits(w, b, labels, x, sampled, true_count, sampled_count, remove_accidental_hits):
    """TF's _compute_sampled_logits in NumPy: a sampled class is masked where it equals one of the row's
    true classes, at its last position in `sampled` (where compute_accidental_hits points)."""
    num_true = labels.shape[1]
    true_logits = np.einsum("bd,btd->bt", x, w[labels]) + b[labels] - np.log(true_count)
    sampled_logits = x @ w[sampled].T + b[sampled]
    if remove_accidental_hits:
        last = {v: j for j, v in enumerate(sampled.tolist())}
        for i, row in enumerate(labels.tolist()):
            for j, v in enumerate(sampled.tolist()):
                if v in row and last[v] == j:
                    sampled_logits[i, j] += -FLT_MAX
    sampled_logits = sampled_logits - np.log(sampled_count)
    logits = np.concatenate([true_logits, sampled_logits], 1)
    targets = np.concatenate([np.full(true_logits.shape, 1.0 / num_true), np.zeros(sampled_logits.shape)], 1)
    return logits, targets


def ref_nce(*args):
    z, y = ref_logits(*args)
    return np.sum(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))), axis=1)


def ref_softmax(*args):
    z, y = ref_logits(*args)
    m = z.max(axis=1, keepdims=True)
    return -np.sum(y * (z - m - np.log(np.exp(z - m).sum(axis=1, keepdims=True))), axis=1)


LOSSES = {"nce_v1": (sf.compat.v1.nn.nce_loss, ref_nce, "mod"), "nce_v2": (sf.nn.nce_loss, ref_nce, "div"),
          "softmax_v1": (sf.compat.v1.nn.sampled_softmax_loss, ref_softmax, "mod"),
          "softmax_v2": (sf.nn.sampled_softmax_loss, ref_softmax, "div")}


def _shards(w, n, strategy):
    if n == 1:
        return w
    if strategy == "mod":
        return [w[i::n] for i in range(n)]
    return np.array_split(w, n)


@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("hits", [False, True])
@pytest.mark.parametrize("shards", [1, 3])
def test_values_against_reference_and_tf(mode, loss, hits, shards):
    fn, ref, strategy = LOSSES[loss]
    d = _data()
    sv = (d["s"], d["tc"], d["sc"])
    got = mode.evaluate(fn(_shards(d["w"], shards, strategy), d["b"], d["l"], d["x"], 5, 9, num_true=2,
                           sampled_values=sv, remove_accidental_hits=hits))
    want = ref(d["w"], d["b"], d["l"], d["x"], d["s"], d["tc"], d["sc"], hits)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got, (TF_NCE if loss.startswith("nce") else TF_SOFTMAX)[hits], rtol=1e-12)
    assert got.shape == (3,) and got.dtype == np.float64


def test_float32_and_num_true_1(mode):
    rng = np.random.default_rng(2)
    w, b, x = rng.normal(size=(12, 5)), rng.normal(size=12), rng.normal(size=(4, 5))
    labels = np.array([[3], [0], [11], [3]])
    sampled, tc, sc = np.array([3, 7, 1]), rng.uniform(0.2, 1, (4, 1)), rng.uniform(0.2, 1, 3)
    sv = (sampled, tc.astype(np.float32), sc.astype(np.float32))
    for fn, ref in ((sf.nn.nce_loss, ref_nce), (sf.nn.sampled_softmax_loss, ref_softmax)):
        got = mode.evaluate(fn(w.astype(np.float32), b.astype(np.float32), labels, x.astype(np.float32), 3, 12,
                               sampled_values=sv, remove_accidental_hits=True))
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, ref(w, b, labels, x, sampled, sv[1], sv[2], True), rtol=2e-5)


def test_all_classes_as_candidates_give_the_full_softmax(mode):
    rng = np.random.default_rng(1)
    C, D, B = 7, 3, 4
    w, b, x = rng.normal(size=(C, D)), rng.normal(size=C), rng.normal(size=(B, D))
    labels = np.array([[1], [6], [0], [3]])
    logits = x @ w.T + b
    # every class once, each with expected count 1: the sampled softmax is the full softmax (TF 2.21 too)
    sv = sf.random.all_candidate_sampler(labels, 1, C, True)
    got = mode.evaluate(sf.nn.sampled_softmax_loss(w, b, labels, x, C, C, sampled_values=sv))
    full = mode.evaluate(sf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels[:, 0], logits=logits))
    np.testing.assert_allclose(got, full, rtol=1e-12)
    # a unique log-uniform sample of all C classes: the full softmax of logits - log Q (Q the expected
    # counts): the true class's sampled copy is masked, so each class counts once (as in TF 2.21)
    sv = sf.random.log_uniform_candidate_sampler(labels, 1, C, True, C, seed=3)
    got, (sampled, true_count, sampled_count) = mode.evaluate(
        (sf.nn.sampled_softmax_loss(w, b, labels, x, C, C, sampled_values=sv), sv))
    q = np.zeros(C)
    q[sampled] = sampled_count
    np.testing.assert_allclose(true_count[:, 0], q[labels[:, 0]], rtol=1e-7)
    z = logits - np.log(q)
    np.testing.assert_allclose(got, np.log(np.exp(z).sum(1)) - z[np.arange(B), labels[:, 0]], rtol=1e-6)


def _expected_loss(ref, w, b, labels, x, num_classes):
    """The exact mean and variance (per row) of a loss over TF's default sampler for num_sampled=2:
    unique log-uniform draws a, then b != a after t - 2 rejections (probability p_a ** (t - 1) * p_b),
    with expected counts 2p when t == 2 and 1 - (1 - p) ** t otherwise."""
    k = np.arange(num_classes)
    p = np.log((k + 2.0) / (k + 1.0)) / np.log(num_classes + 1.0)
    first, second = np.zeros(labels.shape[0]), np.zeros(labels.shape[0])
    total = 0.0
    for a, c in itertools.permutations(range(num_classes), 2):
        for t in range(2, 70):       # p_a <= 0.36: p_a ** 68 < 1e-30
            prob = p[a] ** (t - 1) * p[c]
            q = (2 * p if t == 2 else -np.expm1(t * np.log1p(-p))).astype(np.float32)
            loss = ref(w, b, labels, x, np.array([a, c]), q[labels], q[[a, c]], True)
            first += prob * loss
            second += prob * loss ** 2
            total += prob
    assert abs(total - 1) < 1e-12
    return first, second - first ** 2


@pytest.mark.parametrize("fn, ref", [(sf.nn.sampled_softmax_loss, ref_softmax), (sf.nn.nce_loss, ref_nce)])
def test_mean_over_seeds_approaches_the_expectation(fn, ref):
    # The mean of N = 300 losses, each with its own seed, lies within 4 standard errors (sqrt(var / N),
    # var exact) of the exact expectation: the central limit theorem puts a correct sampler outside
    # with probability 6e-5, and the seeds are fixed, so the test is deterministic.
    rng = np.random.default_rng(4)
    C, D = 6, 3
    w, b, x = rng.normal(size=(C, D)), rng.normal(size=C), rng.normal(size=(2, D))
    labels = np.array([[0], [4]])
    kwargs = {"remove_accidental_hits": True} if fn is sf.nn.nce_loss else {}
    n = 300
    try:
        losses = np.array([fn(w, b, labels, x, 2, C, seed=s, **kwargs).numpy() for s in range(n)]
                          if fn is sf.nn.sampled_softmax_loss else
                          [_nce_with_default_sampler(w, b, labels, x, C, s) for s in range(n)])
    finally:
        sf.random.set_seed(None)          # drops the samplers kept per seed
    mean, var = _expected_loss(ref, w, b, labels, x, C)
    assert np.all(np.abs(losses.mean(axis=0) - mean) < 4 * np.sqrt(var / n)), (losses.mean(axis=0), mean)


def _nce_with_default_sampler(w, b, labels, x, num_classes, seed):
    # nce_loss has no seed argument (as in TF): seed its default sampler through the global seed
    sf.random.set_seed(seed)
    return sf.nn.nce_loss(w, b, labels, x, 2, num_classes, remove_accidental_hits=True).numpy()


@pytest.mark.parametrize("loss, shards", [("nce_v1", 2), ("softmax_v2", 1), ("softmax_v1", 2)])
def test_gradients_match_numerical_jacobians(mode, loss, shards):
    fn, _, strategy = LOSSES[loss]
    rng = np.random.default_rng(3)
    C, D, B = 6, 2, 2
    x, w, b = rng.normal(size=(B, D)), rng.normal(size=(C, D)), rng.normal(size=C)
    labels = np.array([[1, 3], [4, 4]])
    sv = (np.array([3, 0, 4, 5]), rng.uniform(0.1, 1, (B, 2)).astype(np.float32),
          rng.uniform(0.1, 1, 4).astype(np.float32))

    def f(x, w, b):
        ws = w if shards == 1 else [sf.slice(w, [0, 0], [3, -1]), sf.slice(w, [3, 0], [-1, -1])]
        return fn(ws, b, labels, x, 4, C, num_true=2, sampled_values=sv, remove_accidental_hits=True)

    if shards == 2 and strategy == "mod":     # the shards hold ids 0, 2, 4 and 1, 3, 5
        w = np.concatenate([w[0::2], w[1::2]])
    check_gradients(mode, f, [x, w, b], tol=1e-7)


def _numeric_grad(fun, w, eps=1e-6):
    g = np.zeros_like(w)
    for i in np.ndindex(w.shape):
        up, down = w.copy(), w.copy()
        up[i] += eps
        down[i] -= eps
        g[i] = (fun(up) - fun(down)) / (2 * eps)
    return g


def test_weight_gradient_is_indexed_slices():
    d = _data()
    sv = (d["s"], d["tc"], d["sc"])
    w, b = sf.Variable(d["w"]), sf.Variable(d["b"])
    with sf.GradientTape() as tape:
        loss = sf.reduce_sum(sf.nn.sampled_softmax_loss(w, b, d["l"], d["x"], 5, 9, num_true=2, sampled_values=sv))
    gw, gb = tape.gradient(loss, [w, b])
    for g in (gw, gb):
        assert isinstance(g, sf.IndexedSlices)
        np.testing.assert_array_equal(g.indices.numpy(), np.concatenate([d["l"].ravel(), d["s"]]))
    dense = sf.convert_to_tensor(gw).numpy()
    want = _numeric_grad(lambda v: ref_softmax(v, d["b"], d["l"], d["x"], d["s"], d["tc"], d["sc"], True).sum(),
                         d["w"])
    np.testing.assert_allclose(dense, want, rtol=1e-6, atol=1e-8)
    untouched = sorted(set(range(9)) - set(d["l"].ravel()) - set(d["s"]))
    assert untouched and np.all(dense[untouched] == 0)


class _RecordingSGD(sf.compat.v1.train.GradientDescentOptimizer):
    """Gradient descent that records which variables got a sparse and which a dense update."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sparse, self.dense = [], []

    def _apply_sparse_duplicate_indices(self, grad, var):
        self.sparse.append(var)
        return super()._apply_sparse_duplicate_indices(grad, var)

    def _apply_dense(self, grad, var):
        self.dense.append(var)
        return super()._apply_dense(grad, var)

    def _resource_apply_dense(self, grad, var):
        self.dense.append(var)
        return super()._resource_apply_dense(grad, var)


def test_optimizer_step_applies_the_weight_gradient_sparsely():
    d = _data()
    sv = (d["s"], d["tc"], d["sc"])
    with sf.Graph().as_default():
        w, b = sf.Variable(d["w"]), sf.Variable(d["b"])
        loss = sf.reduce_sum(sf.compat.v1.nn.nce_loss(w, b, d["l"], d["x"], 5, 9, num_true=2, sampled_values=sv,
                                                      remove_accidental_hits=True))
        grads = sf.gradients(loss, [w, b])
        assert all(isinstance(g, sf.IndexedSlices) for g in grads)
        opt = _RecordingSGD(0.5)
        step = opt.apply_gradients(zip(grads, [w, b]))
        with sf.compat.v1.Session() as sess:
            sess.run(sf.compat.v1.global_variables_initializer())
            sess.run(step)
            new_w = sess.run(w)
    assert set(map(id, opt.sparse)) == {id(w), id(b)} and not opt.dense
    want = _numeric_grad(lambda v: ref_nce(v, d["b"], d["l"], d["x"], d["s"], d["tc"], d["sc"], True).sum(), d["w"])
    np.testing.assert_allclose(new_w, d["w"] - 0.5 * want, rtol=1e-6, atol=1e-8)


def test_default_sampler_runs_in_a_graph_and_is_seeded():
    d = _data()
    with sf.Graph().as_default():
        out = sf.compat.v1.nn.sampled_softmax_loss(d["w"], d["b"], d["l"], d["x"], 4, 9, num_true=2, seed=1)
        runs = []
        for _ in range(2):
            with sf.compat.v1.Session() as sess:
                runs.append([sess.run(out) for _ in range(2)])
    np.testing.assert_array_equal(runs[0], runs[1])
    assert np.all(np.isfinite(runs[0])) and not np.array_equal(runs[0][0], runs[0][1])


def test_faces():
    assert sf.nn.nce_loss is nn_impl.nce_loss_v2 and sf.compat.v1.nn.nce_loss is nn_impl.nce_loss
    assert sf.nn.sampled_softmax_loss is nn_impl.sampled_softmax_loss_v2
    assert sf.compat.v1.nn.sampled_softmax_loss is nn_impl.sampled_softmax_loss


def test_partitioned_variable_weights():
    d = _data()
    sv = (d["s"], d["tc"], d["sc"])
    with sf.Graph().as_default():
        w = sf.compat.v1.get_variable("w", [9, 4], dtype=sf.float64, initializer=sf.compat.v1.zeros_initializer(),
                                      partitioner=sf.compat.v1.fixed_size_partitioner(3))
        fill = [shard.assign(d["w"][3 * i:3 * i + 3]) for i, shard in enumerate(w)]
        loss = sf.compat.v1.nn.nce_loss(w, d["b"], d["l"], d["x"], 5, 9, num_true=2, sampled_values=sv,
                                        remove_accidental_hits=True, partition_strategy="div")
        grads = sf.gradients(sf.reduce_sum(loss), list(w))
        with sf.compat.v1.Session() as sess:
            sess.run(sf.compat.v1.global_variables_initializer())
            sess.run(fill)
            got, got_grads = sess.run([loss, grads])
    np.testing.assert_allclose(got, TF_NCE[True], rtol=1e-12)
    assert all(isinstance(g, sf.IndexedSlices) for g in grads)
    dense = np.zeros((3, 3, 4))
    for shard, g in enumerate(got_grads):
        np.add.at(dense[shard], g.indices, g.values)
    dense = dense.reshape(9, 4)
    want = _numeric_grad(lambda v: ref_nce(v, d["b"], d["l"], d["x"], d["s"], d["tc"], d["sc"], True).sum(), d["w"])
    np.testing.assert_allclose(dense, want, rtol=1e-6, atol=1e-8)

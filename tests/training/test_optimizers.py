"""TF1 optimizers against NumPy references of TensorFlow's update formulas, eagerly and in graphs.

Dense steps match the reference; sparse gradients (IndexedSlices with repeated indices) give the dense
update for the TF-faithful optimizers and touch only the gathered rows for the lazy ones; a custom
optimizer written like TF1 user code (slots, unique + unsorted_segment_sum, scatter ops, group)
trains in a graph.
"""
import numpy as np
import pytest

import segflow as sf
from segflow import train
from segflow.framework import dtypes, ops
from segflow.ops import array_ops, math_ops, state_ops
from segflow.ops import control_flow_ops, variables
from segflow.training import training
from segflow.training.optimizer import Optimizer

ROWS, COLS = 6, 3
STEPS = 4
INIT = np.linspace(-1.0, 1.5, ROWS * COLS).reshape(ROWS, COLS).astype(np.float32)
SPARSE_INDICES = [np.array([0, 2, 0, 4]), np.array([5, 5, 5]), np.array([2, 0, 1, 2, 2]), np.array([3])]


def dense_grads(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(ROWS, COLS)).astype(np.float32) for _ in range(STEPS)]


def sparse_grads(seed=1):
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=(len(i), COLS)).astype(np.float32), i.astype(np.int32)) for i in SPARSE_INDICES]


def densify(values, indices):
    out = np.zeros((ROWS, COLS), np.float64)
    np.add.at(out, indices, values)
    return out


# ----------------------------------------------------------------------------------------------
# NumPy references: `step(var, g, t)` on whole arrays (dense) and `rows(var, idx, g, t)` on unique rows
# (lazy sparse), in float64. t counts from 1.


class Ref:
    lazy_sparse = False     # True: a sparse step only updates the gathered rows (TF's sparse kernels)

    def __init__(self, **hyper):
        self.h = hyper
        self.slots = {}

    def slot(self, name, init=0.0):
        if name not in self.slots:
            self.slots[name] = np.full((ROWS, COLS), init, np.float64)
        return self.slots[name]

    def dense(self, var, g, t):
        return self.update(var, g, t, {k: v for k, v in self.all_slots().items()}, None)

    def all_slots(self):
        return self.slots

    def sparse(self, var, values, indices, t):
        if not self.lazy_sparse:
            return self.dense(var, densify(values, indices), t)
        uniq = np.unique(indices)
        g = densify(values, indices)[uniq]
        self.all_slots()
        rows = {k: v[uniq].copy() for k, v in self.slots.items()}
        new_rows = self.update(var[uniq].copy(), g, t, rows, uniq)
        for k, v in rows.items():
            self.slots[k][uniq] = v
        var = var.copy()
        var[uniq] = new_rows
        return var


class GDRef(Ref):
    def update(self, var, g, t, s, rows):
        return var - self.h["learning_rate"] * g


class MomentumRef(Ref):
    lazy_sparse = True

    def all_slots(self):
        self.slot("accum")
        return self.slots

    def update(self, var, g, t, s, rows):
        lr, mu = self.h["learning_rate"], self.h["momentum"]
        s["accum"][...] = mu * s["accum"] + g
        if self.h.get("use_nesterov"):
            return var - (lr * g + lr * mu * s["accum"])
        return var - lr * s["accum"]


class AdagradRef(Ref):
    def all_slots(self):
        self.slot("acc", self.h.get("initial_accumulator_value", 0.1))
        return self.slots

    def update(self, var, g, t, s, rows):
        s["acc"][...] += g * g
        return var - self.h["learning_rate"] * g / np.sqrt(s["acc"])


class RMSPropRef(Ref):
    lazy_sparse = True

    def all_slots(self):
        self.slot("ms", 1.0)
        self.slot("mg")
        self.slot("mom")
        return self.slots

    def update(self, var, g, t, s, rows):
        lr, rho, mu, eps = (self.h[k] for k in ("learning_rate", "decay", "momentum", "epsilon"))
        s["ms"][...] = rho * s["ms"] + (1 - rho) * g * g
        denom = s["ms"] + eps
        if self.h.get("centered"):
            s["mg"][...] = rho * s["mg"] + (1 - rho) * g
            denom = s["ms"] - s["mg"] ** 2 + eps
        s["mom"][...] = mu * s["mom"] + lr * g / np.sqrt(denom)
        return var - s["mom"]


class AdamRef(Ref):
    nesterov = False

    def all_slots(self):
        self.slot("m")
        self.slot("v")
        return self.slots

    def update(self, var, g, t, s, rows):
        lr, b1, b2, eps = (self.h.get(k, d) for k, d in (("learning_rate", 0.001), ("beta1", 0.9),
                                                         ("beta2", 0.999), ("epsilon", 1e-8)))
        lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        s["m"][...] = b1 * s["m"] + (1 - b1) * g
        s["v"][...] = b2 * s["v"] + (1 - b2) * g * g
        m = b1 * s["m"] + (1 - b1) * g if self.nesterov else s["m"]
        return var - lr_t * m / (np.sqrt(s["v"]) + eps)


class LazyAdamRef(AdamRef):
    lazy_sparse = True


class NadamRef(AdamRef):
    nesterov = True


class LazyNadamRef(NadamRef):
    lazy_sparse = True


class FtrlRef(Ref):
    lazy_sparse = True

    def all_slots(self):
        self.slot("accum", self.h.get("initial_accumulator_value", 0.1))
        self.slot("linear")
        return self.slots

    def update(self, var, g, t, s, rows):
        lr = self.h["learning_rate"]
        p = self.h.get("learning_rate_power", -0.5)
        l1 = self.h.get("l1_regularization_strength", 0.0)
        l2 = self.h.get("l2_regularization_strength", 0.0)
        l2s = self.h.get("l2_shrinkage_regularization_strength", 0.0)
        accum_new = s["accum"] + g * g
        s["linear"][...] += g + 2 * l2s * var - (accum_new ** -p - s["accum"] ** -p) / lr * var
        quadratic = accum_new ** -p / lr + 2 * l2
        lin = s["linear"]
        s["accum"][...] = accum_new
        return np.where(np.abs(lin) > l1, (np.sign(lin) * l1 - lin) / quadratic, 0.0)


# (segflow optimizer class, reference class, hyper-parameters)
CONFIGS = {
    "gd": (train.GradientDescentOptimizer, GDRef, dict(learning_rate=0.1)),
    "momentum": (train.MomentumOptimizer, MomentumRef, dict(learning_rate=0.1, momentum=0.9)),
    "nesterov": (train.MomentumOptimizer, MomentumRef, dict(learning_rate=0.1, momentum=0.9, use_nesterov=True)),
    "adagrad": (train.AdagradOptimizer, AdagradRef, dict(learning_rate=0.1, initial_accumulator_value=0.2)),
    "rmsprop": (train.RMSPropOptimizer, RMSPropRef, dict(learning_rate=0.01, decay=0.9, momentum=0.5,
                                                         epsilon=1e-6)),
    "rmsprop_centered": (train.RMSPropOptimizer, RMSPropRef, dict(learning_rate=0.01, decay=0.8, momentum=0.3,
                                                                  epsilon=1e-3, centered=True)),
    "adam": (train.AdamOptimizer, AdamRef, dict(learning_rate=0.1, beta1=0.8, beta2=0.95, epsilon=1e-7)),
    "lazy_adam": (train.LazyAdamOptimizer, LazyAdamRef, dict(learning_rate=0.1, beta1=0.8, beta2=0.95,
                                                             epsilon=1e-7)),
    "nadam": (train.NadamOptimizer, NadamRef, dict(learning_rate=0.1, beta1=0.8, beta2=0.95, epsilon=1e-7)),
    "lazy_nadam": (train.LazyNadamOptimizer, LazyNadamRef, dict(learning_rate=0.1, beta1=0.8, beta2=0.95,
                                                                epsilon=1e-7)),
    "ftrl": (train.FtrlOptimizer, FtrlRef, dict(learning_rate=0.5, l1_regularization_strength=0.01,
                                                l2_regularization_strength=0.1)),
    "ftrl_power": (train.FtrlOptimizer, FtrlRef, dict(learning_rate=0.3, learning_rate_power=-0.7,
                                                      initial_accumulator_value=0.5, l1_regularization_strength=0.2,
                                                      l2_shrinkage_regularization_strength=0.05)),
}
FAITHFUL = ["gd", "adagrad", "adam", "nadam"]        # sparse update == dense update
LAZY = ["momentum", "nesterov", "rmsprop", "rmsprop_centered", "lazy_adam", "lazy_nadam", "ftrl", "ftrl_power"]


def make(name):
    cls, ref_cls, hyper = CONFIGS[name]
    return cls(**hyper), ref_cls(**hyper)


# ----------------------------------------------------------------------------------------------
# Running an optimizer for several steps in the current mode


def run_steps(mode, opt, grads, init=INIT, sparse=False):
    """Applies `grads` (arrays, or (values, indices) pairs when sparse) one step at a time; returns
    the variable's value after every step."""
    var = variables.Variable(init, name="table")
    history = []
    if mode.eager:
        for g in grads:
            grad = ops.IndexedSlices(sf.constant(g[0]), sf.constant(g[1]), sf.constant([ROWS, COLS])) if sparse \
                else sf.constant(g)
            opt.apply_gradients([(grad, var)])
            history.append(np.array(var.numpy()))
        return history, var
    if sparse:
        values = array_ops.placeholder(dtypes.as_dtype(init.dtype), [None, COLS])
        indices = array_ops.placeholder(dtypes.int32, [None])
        train_op = opt.apply_gradients([(ops.IndexedSlices(values, indices, sf.constant([ROWS, COLS])), var)])
    else:
        dense = array_ops.placeholder(dtypes.as_dtype(init.dtype), [ROWS, COLS])
        train_op = opt.apply_gradients([(dense, var)])
    mode.session.run(variables.global_variables_initializer())
    for g in grads:
        feed = {values: g[0], indices: g[1]} if sparse else {dense: g}
        mode.session.run(train_op, feed_dict=feed)
        history.append(mode.session.run(var))
    return history, var


def reference_steps(ref, grads, init=INIT, sparse=False):
    var = init.astype(np.float64)
    history = []
    for t, g in enumerate(grads, start=1):
        var = ref.sparse(var, g[0], g[1], t) if sparse else ref.dense(var, g.astype(np.float64), t)
        history.append(var)
    return history


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_dense_steps_match_reference(mode, name):
    opt, ref = make(name)
    grads = dense_grads()
    got, _ = run_steps(mode, opt, grads)
    for step, (g, want) in enumerate(zip(got, reference_steps(ref, grads)), start=1):
        np.testing.assert_allclose(g, want, rtol=2e-5, atol=2e-6, err_msg=f"{name}, step {step}")


@pytest.mark.parametrize("name", FAITHFUL)
def test_sparse_equals_dense(mode, name):
    # Repeated indices sum; rows without gradient follow the dense update with a zero gradient.
    grads = sparse_grads()
    sparse_opt, ref = make(name)
    got, _ = run_steps(mode, sparse_opt, grads, sparse=True)
    dense_opt, _ = make(name)
    dense, _ = run_steps(mode, dense_opt, [densify(v, i).astype(np.float32) for v, i in grads])
    for step, (g, d, want) in enumerate(zip(got, dense, reference_steps(ref, grads, sparse=True)), start=1):
        np.testing.assert_allclose(g, d, rtol=1e-5, atol=1e-6, err_msg=f"{name}, step {step}: sparse != dense")
        np.testing.assert_allclose(g, want, rtol=2e-5, atol=2e-6, err_msg=f"{name}, step {step}")


@pytest.mark.parametrize("name", LAZY)
def test_sparse_touches_only_gathered_rows(mode, name):
    grads = sparse_grads()
    opt, ref = make(name)
    got, var = run_steps(mode, opt, grads, sparse=True)
    before = INIT
    for step, (g, want, (_, idx)) in enumerate(zip(got, reference_steps(ref, grads, sparse=True), grads), start=1):
        untouched = np.setdiff1d(np.arange(ROWS), idx)
        np.testing.assert_array_equal(g[untouched], before[untouched], err_msg=f"{name}, step {step}")
        np.testing.assert_allclose(g, want, rtol=2e-5, atol=2e-6, err_msg=f"{name}, step {step}")
        before = g


@pytest.mark.parametrize("name", ["lazy_adam", "lazy_nadam", "momentum", "rmsprop", "ftrl", "adagrad", "gd"])
def test_sparse_step_builds_nothing_of_table_size(name):
    # Graph mode: after the first apply (which creates the slots), a sparse step reads no whole
    # table or slot and builds no tensor with the table's number of rows.
    rows = 10007
    graph = ops.Graph()
    with graph.as_default():
        opt, _ = make(name)
        var = variables.Variable(np.zeros((rows, 2), np.float32), name="big")
        values = array_ops.placeholder(dtypes.float32, [None, 2])
        indices = array_ops.placeholder(dtypes.int32, [None])
        grad = ops.IndexedSlices(values, indices, sf.constant([rows, 2]))
        opt.apply_gradients([(grad, var)])
        before = len(graph.get_operations())
        train_op = opt.apply_gradients([(grad, var)])
        new_ops = graph.get_operations()[before:]
        tables = {id(v.handle) for v in [var] + [opt.get_slot(var, n) for n in opt.get_slot_names()]
                  if v is not None}
        for op in new_ops:
            assert not (op.type == "ReadVariableOp" and id(op.inputs[0]) in tables), f"{name}: {op.name} reads a table"
            for out in op.outputs:
                dims = out.shape.as_list() if out.shape.rank else []
                assert rows not in dims, f"{name}: {op.name} has output shape {out.shape}"
        with sf.Session(graph=graph) as sess:
            sess.run(variables.global_variables_initializer())
            sess.run(train_op, {values: np.ones((3, 2), np.float32), indices: [7, 7, 10000]})
            table = sess.run(var)
        assert np.count_nonzero(np.any(table != 0, axis=1)) == 2


def test_lazy_adam_moments_of_untouched_rows_stay(mode):
    opt = train.LazyAdamOptimizer(0.1)
    grads = [(np.ones((2, COLS), np.float32), np.array([1, 1], np.int32)),
             (np.ones((1, COLS), np.float32), np.array([4], np.int32))]
    _, var = run_steps(mode, opt, grads, sparse=True)
    m = mode.evaluate(opt.get_slot(var, "m").read_value())
    np.testing.assert_allclose(m[1], (1 - 0.9) * 2.0, rtol=1e-6)     # duplicates summed; not decayed at step 2
    np.testing.assert_allclose(m[4], 0.1, rtol=1e-6)
    assert not np.any(m[[0, 2, 3, 5]])


def test_adam_float64_and_callable_hyper_parameters(mode):
    init = INIT.astype(np.float64)
    grads = [g.astype(np.float64) for g in dense_grads(3)]
    # float64 hyper-parameters make float64 beta powers: the whole update runs in float64.
    opt = train.AdamOptimizer(learning_rate=lambda: np.float64(0.05), beta1=np.float64(0.85),
                              beta2=np.float64(0.999), epsilon=np.float64(1e-8))
    got, _ = run_steps(mode, opt, grads, init=init)
    want = reference_steps(AdamRef(learning_rate=0.05, beta1=0.85), grads, init=init)
    np.testing.assert_allclose(got[-1], want[-1], rtol=1e-10)
    if not mode.eager:
        b1p, b2p = opt._get_beta_accumulators()
        np.testing.assert_allclose(mode.session.run([b1p, b2p]), [0.85 ** (STEPS + 1), 0.999 ** (STEPS + 1)], rtol=1e-12)


# ----------------------------------------------------------------------------------------------
# minimize, compute_gradients, global step


TARGET = np.arange(ROWS * COLS, dtype=np.float32).reshape(ROWS, COLS) / 10


def test_minimize_with_global_step(mode):
    var = variables.Variable(INIT, name="w")
    opt = train.MomentumOptimizer(0.05, 0.5)
    loss = lambda: math_ops.reduce_sum(math_ops.square(var - TARGET))  # noqa: E731
    ref = MomentumRef(learning_rate=0.05, momentum=0.5)
    want = INIT.astype(np.float64)
    if mode.eager:
        step = variables.Variable(0, trainable=False, name="step", dtype=dtypes.int64)
        for t in range(1, 4):
            opt.minimize(loss, global_step=step)
            want = ref.dense(want, 2 * (want - TARGET), t)
            assert int(step.numpy()) == t
        np.testing.assert_allclose(var.numpy(), want, rtol=1e-5, atol=1e-6)
        return
    step = train.get_or_create_global_step()
    assert train.get_or_create_global_step() is step and train.get_global_step() is step
    train_op = opt.minimize(loss(), global_step=step)
    assert isinstance(train_op, ops.Operation)
    assert train_op in ops.get_collection(ops.GraphKeys.TRAIN_OP)
    mode.session.run(variables.global_variables_initializer())
    for t in range(1, 4):
        mode.session.run(train_op)
        want = ref.dense(want, 2 * (want - TARGET), t)
        assert mode.session.run(step) == t
    np.testing.assert_allclose(mode.session.run(var), want, rtol=1e-5, atol=1e-6)


def test_minimize_embedding_lookup_gives_sparse_update(mode):
    table = variables.Variable(INIT, name="emb")
    other = variables.Variable(np.ones(2, np.float32), name="unused")
    ids = np.array([4, 1, 4], np.int32)
    weights = np.array([[1.0], [2.0], [3.0]], np.float32)
    loss = lambda: math_ops.reduce_sum(array_ops.gather(table, ids) * weights)  # noqa: E731
    opt = train.AdagradOptimizer(0.1)
    if mode.eager:
        grads_and_vars = opt.compute_gradients(loss, var_list=[table, other])
    else:
        grads_and_vars = opt.compute_gradients(loss())
        assert [v for _, v in grads_and_vars] == [table, other]
    (g, v), (g_other, _) = grads_and_vars
    assert isinstance(g, ops.IndexedSlices) and v is table and g_other is None
    train_op = opt.apply_gradients(grads_and_vars)
    if not mode.eager:
        mode.session.run(variables.global_variables_initializer())
        mode.session.run(train_op)
    got = mode.evaluate(table.read_value())
    dense_g = densify(np.broadcast_to(weights, (3, COLS)), ids)
    want = AdagradRef(learning_rate=0.1).dense(INIT.astype(np.float64), dense_g, 1)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_array_equal(got[[0, 2, 3, 5]], INIT[[0, 2, 3, 5]])


class SignSGD(Optimizer):
    """Written TF2-style, with only the `_resource_apply_*` methods: var -= lr * sign(grad)."""

    def __init__(self, lr):
        super().__init__(False, "SignSGD")
        self._lr = lr

    def _resource_apply_dense(self, grad, handle):
        return handle.assign_sub(self._lr * math_ops.sign(grad))

    def _resource_apply_sparse(self, grad, handle, indices):
        return state_ops.scatter_sub(handle, indices, self._lr * math_ops.sign(grad))


def test_resource_apply_methods_get_deduplicated_gradients(mode):
    # sign(sum of duplicates) differs from the sum of their signs: the base class must dedup first.
    grads = [(np.array([[1.0, -2.0, 3.0], [-4.0, 1.0, -1.0]], np.float32), np.array([1, 1], np.int32))]
    got, _ = run_steps(mode, SignSGD(0.5), grads, sparse=True)
    want = INIT.astype(np.float64).copy()
    want[1] -= 0.5 * np.sign([-3.0, -1.0, 2.0])
    np.testing.assert_allclose(got[-1], want, rtol=1e-6)
    dense, _ = run_steps(mode, SignSGD(0.5), [densify(*grads[0]).astype(np.float32)])
    np.testing.assert_allclose(dense[-1], want, rtol=1e-6)


def test_gate_graph_and_gate_errors(mode):
    var = variables.Variable(INIT, name="gated")
    opt = train.GradientDescentOptimizer(0.25)
    loss = lambda: math_ops.reduce_sum(math_ops.square(var - TARGET))  # noqa: E731
    with pytest.raises(ValueError, match="gate_gradients"):
        opt.compute_gradients(loss if mode.eager else loss(), gate_gradients=7)
    if mode.eager:
        opt.minimize(loss, gate_gradients=Optimizer.GATE_GRAPH)
    else:
        train_op = opt.minimize(loss(), gate_gradients=Optimizer.GATE_GRAPH)
        mode.session.run(variables.global_variables_initializer())
        mode.session.run(train_op)
    got = mode.evaluate(var.read_value())
    np.testing.assert_allclose(got, INIT - 0.25 * 2 * (INIT - TARGET), rtol=1e-6, atol=1e-7)


def test_errors(mode):
    var = variables.Variable(INIT, name="e")
    opt = train.GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match="No gradients provided"):
        opt.apply_gradients([(None, var)])
    with pytest.raises(ValueError, match="No variables provided"):
        opt.apply_gradients([])
    with pytest.raises(ValueError, match="optimizer name"):
        Optimizer(False, "")
    if mode.eager:
        with pytest.raises(RuntimeError, match="should be a function"):
            opt.compute_gradients(sf.constant(1.0))
    else:
        unrelated = variables.Variable(1.0, name="u")
        with pytest.raises(ValueError, match="No gradients provided for any variable"):
            opt.minimize(sf.constant(1.0) * 2.0, var_list=[unrelated])
    with pytest.raises(ValueError, match="initial_accumulator_value"):
        train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)
    with pytest.raises(ValueError, match="learning_rate_power"):
        train.FtrlOptimizer(0.1, learning_rate_power=0.5)


def test_slots_created_once_and_listed(mode):
    var = variables.Variable(INIT, name="s")
    opt = train.AdamOptimizer(0.1)
    grad = np.ones((ROWS, COLS), np.float32)
    g = sf.constant(grad) if mode.eager else array_ops.placeholder(dtypes.float32, [ROWS, COLS])
    first = opt.apply_gradients([(g, var)])
    m = opt.get_slot(var, "m")
    second = opt.apply_gradients([(g, var)])
    assert opt.get_slot(var, "m") is m
    assert opt.get_slot_names() == ["m", "v"]
    assert opt.get_slot(var, "nope") is None
    assert not m.trainable and m.shape == var.shape and m.dtype == var.dtype
    names = sorted(v.name for v in opt.variables())
    assert len(names) == 4 and any("beta1_power" in n for n in names)
    if not mode.eager:
        assert m.name.startswith("s/Adam")
        assert m not in variables.trainable_variables() and m in variables.global_variables()
        mode.session.run(variables.global_variables_initializer())
        mode.session.run([first], {g: grad})
        mode.session.run(second, {g: grad})


# ----------------------------------------------------------------------------------------------
# A custom optimizer written the way TF1 user code writes one (seed: a Nadam variant)


class SeedNadam(Optimizer):
    """m = mu m + (1 - mu) g;  m_bar = mu2 m / (1 - mu2 mu^t) + (1 - mu) g / (1 - mu^t);  var -= lr m_bar."""

    def __init__(self, lr=0.1, mu=0.8, mu2=0.7, use_locking=False, name="SeedNadam"):
        super().__init__(use_locking, name)
        self._lr, self._mu, self._mu2 = lr, mu, mu2

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "g", self._name)
        self._create_non_slot_variable(self._mu, "mu_power", var_list[0])

    def _prepare(self, grads_and_vars):
        self._lr_t = ops.convert_to_tensor(self._lr)
        self._mu_t = ops.convert_to_tensor(self._mu)
        self._mu2_t = ops.convert_to_tensor(self._mu2)
        self._mu_power = self._get_non_slot_variable("mu_power").read_value()
        # As in the seed's _prepare: statistics over the (deduplicated) gradients, built per variable.
        gTg = 0
        for g_t, x_tm1 in grads_and_vars:
            if g_t is None:
                continue
            with ops.name_scope('update_' + x_tm1.op.name), ops.device(x_tm1.device):
                if isinstance(g_t, ops.Tensor):
                    gTg += math_ops.reduce_sum(g_t ** 2)
                else:
                    idxs, idxs_ = array_ops.unique(g_t.indices)
                    g_t_ = math_ops.unsorted_segment_sum(g_t.values, idxs_, array_ops.size(idxs))
                    g_tm1_ = array_ops.gather(self.get_slot(x_tm1, 'g'), idxs)
                    gTg += math_ops.reduce_sum(g_t_ ** 2) + 0 * math_ops.reduce_sum(g_tm1_)
        self._gTg = gTg

    def _apply_dense(self, grad, var):
        m = self.get_slot(var, "m")
        m_t = state_ops.assign(m, self._mu_t * m + (1 - self._mu_t) * grad)
        m_bar = self._mu2_t * m_t / (1 - self._mu2_t * self._mu_power) + (1 - self._mu_t) * grad / (1 - self._mu_power)
        return control_flow_ops.group(*[state_ops.assign_sub(var, self._lr_t * m_bar), m_t])

    def _apply_sparse(self, grad, var):
        if len(grad.indices.get_shape()) == 1:
            grad_indices = grad.indices
            grad_values = grad.values
        else:
            grad_indices = array_ops.reshape(grad.indices, [-1])
            grad_values = array_ops.reshape(grad.values, [-1, grad.values.get_shape()[-1]])
        gidxs, metagidxs = array_ops.unique(grad_indices)
        sizegidxs = array_ops.size(gidxs)
        gvals = math_ops.unsorted_segment_sum(grad_values, metagidxs, sizegidxs)
        # m_t = mu * m + (1 - mu) * g_t
        m = self.get_slot(var, "m")
        m_scaled_g_values = gvals * (1 - self._mu_t)
        m_t = state_ops.scatter_update(m, gidxs, array_ops.gather(m, gidxs) * self._mu_t,
                                       use_locking=self._use_locking)
        m_t = state_ops.scatter_add(m_t, gidxs, m_scaled_g_values, use_locking=self._use_locking)
        m_t_ = array_ops.gather(m_t, gidxs) / (1 - self._mu2_t * self._mu_power)
        # m_bar = mu * m_t + (1 - mu) * g_t
        m_bar = self._mu2_t * m_t_ + m_scaled_g_values / (1 - self._mu_power)
        var_update = state_ops.scatter_sub(var, gidxs, self._lr_t * m_bar, use_locking=self._use_locking)
        return control_flow_ops.group(*[var_update, m_t])

    def _finish(self, update_ops, name_scope):
        with ops.control_dependencies(update_ops):
            mu_power = self._get_non_slot_variable("mu_power")
            update_mu = mu_power.assign(mu_power * self._mu_t)
        return control_flow_ops.group(*update_ops + [update_mu], name=name_scope)


def seed_nadam_reference(init, steps, lr=0.1, mu=0.8, mu2=0.7):
    """`steps`: (dense gradient, touched rows); only touched rows change (the sparse path)."""
    var, m = init.astype(np.float64), np.zeros(init.shape)
    for t, (g, rows) in enumerate(steps, start=1):
        m[rows] = mu * m[rows] + (1 - mu) * g[rows]
        m_bar = mu2 * m[rows] / (1 - mu2 * mu ** t) + (1 - mu) * g[rows] / (1 - mu ** t)
        var[rows] -= lr * m_bar
    return var


def test_seed_style_custom_optimizer_trains_in_a_graph():
    graph = ops.Graph()
    with graph.as_default():
        table = variables.Variable(INIT, name="emb")
        ids = array_ops.placeholder(dtypes.int32, [None])
        weights = array_ops.placeholder(dtypes.float32, [None, 1])
        loss = math_ops.reduce_sum(array_ops.gather(table, ids) * weights)
        opt = SeedNadam()
        step = train.get_or_create_global_step()
        train_op = opt.minimize(loss, global_step=step)
        assert any(op.name.startswith("SeedNadam/update_emb/") for op in graph.get_operations())
        feeds = [(np.array([0, 3, 0], np.int32), np.array([[1.0], [-2.0], [0.5]], np.float32)),
                 (np.array([3, 5], np.int32), np.array([[1.5], [1.0]], np.float32)),
                 (np.array([0, 0, 0, 2], np.int32), np.array([[1.0], [1.0], [1.0], [-1.0]], np.float32))]
        steps = []
        with sf.Session(graph=graph) as sess:
            sess.run(variables.global_variables_initializer())
            for t, (i, w) in enumerate(feeds, start=1):
                _, gTg = sess.run([train_op, opt._gTg], {ids: i, weights: w})
                g = densify(np.broadcast_to(w, (len(i), COLS)), i)
                steps.append((g, np.unique(i)))
                np.testing.assert_allclose(gTg, np.sum(g ** 2), rtol=1e-6)
                assert sess.run(step) == t
            got = sess.run(table)
    np.testing.assert_allclose(got, seed_nadam_reference(INIT, steps), rtol=1e-5, atol=1e-6)


def test_custom_optimizer_dense_path_eager():
    var = variables.Variable(INIT, name="d")
    opt = SeedNadam()
    g = dense_grads(5)[:2]
    for grad in g:
        opt.apply_gradients([(sf.constant(grad), var)])
    want = seed_nadam_reference(INIT, [(x.astype(np.float64), np.arange(ROWS)) for x in g])
    np.testing.assert_allclose(var.numpy(), want, rtol=1e-5, atol=1e-6)


def test_sf_train_namespace():
    for name in ("AdamOptimizer", "GradientDescentOptimizer", "MomentumOptimizer", "AdagradOptimizer",
                 "RMSPropOptimizer", "NadamOptimizer", "FtrlOptimizer", "Optimizer", "get_or_create_global_step"):
        assert getattr(sf.train, name) is getattr(training, name)
    assert sf.train.Optimizer.GATE_OP == 1


def test_optimizer_variables_are_those_of_the_current_graph():
    opt = train.MomentumOptimizer(0.1, 0.9)
    for names in (("var0", "var1"), ("var2", "var3")):
        with sf.Graph().as_default():
            a = sf.Variable([1.0, 2.0], name=names[0])
            b = sf.Variable([3.0, 4.0], name=names[1])
            opt.minimize(sf.reduce_sum(a + b))
            assert [v.name for v in opt.variables()] == [f"{names[0]}/Momentum:0", f"{names[1]}/Momentum:0"]

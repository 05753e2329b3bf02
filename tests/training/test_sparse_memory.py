"""Sparse training end to end: one optimizer step on a 1e6 x 64 float32 embedding table allocates
no array of the table's size besides the table and its slots.

The model: `loss = reduce_sum(square(embedding_lookup(table, ids) * w))` with a batch of 1e4 ids
(with repeats), one step taken eagerly (GradientTape + apply_gradients) and in a graph (Session).
A warm-up step creates the slots first; the measured step's peak traced allocation (tracemalloc,
which NumPy reports its array buffers to) must stay far below one table (256 MB): the gradient is
an IndexedSlices, duplicates are summed with unique + unsorted_segment_sum, the table is read with
ResourceGather (rows only) and updated with scatter ops in place (no copy-on-write copy).

AdamOptimizer (TF-faithful: the moments of every row decay each step) may touch the whole slot, but
only in place; it must not allocate a new table-sized array either (its sparse step is one fused op,
ResourceSparseApplyAdam; LazyAdam's is ResourceSparseApplyLazyAdam: both checked here bit for bit
against the unfused ops).
"""
import gc
import tracemalloc

import numpy as np
import pytest

import segflow as sf
from segflow import train
from segflow.client.session import Session
from segflow.framework import ops
from segflow.ops import array_ops, math_ops
from segflow.ops import control_flow_ops
from segflow.training import adam

ROWS, DIM, BATCH = 1_000_000, 64, 10_000
TABLE_BYTES = ROWS * DIM * 4                # 256 MB
LIMIT = TABLE_BYTES // 4                    # the step's extra allocations stay far below one table

OPTIMIZERS = {"lazy_adam": train.LazyAdamOptimizer, "adam": train.AdamOptimizer}
NAMES = ["lazy_adam", "adam"]


def _data():
    rng = np.random.default_rng(0)
    init = np.full((ROWS, DIM), 0.01, np.float32)
    ids = rng.integers(0, ROWS // 50, BATCH).astype(np.int64)     # ~20k distinct: many repeats
    assert np.unique(ids).size < BATCH
    w = rng.standard_normal(DIM).astype(np.float32)
    return init, ids, w


def _peak_extra(step):
    """The peak of the memory traced while `step()` runs, above what was traced before it."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        step()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak - base


def _check(peak, what):
    assert peak < LIMIT, (
        f"{what}: one step allocated up to {peak / 2**20:.1f} MiB at once (limit {LIMIT / 2**20:.0f} MiB, "
        f"table {TABLE_BYTES / 2**20:.0f} MiB): something made a table-sized array (a dense gradient, a "
        f"read that copies, zeros_like of the table, a copy-on-write copy). Find it with "
        f"tracemalloc.take_snapshot().statistics('traceback') around the step.")


@pytest.mark.parametrize("opt_name", NAMES)
def test_eager_step_allocates_no_table_sized_array(opt_name):
    init, ids_np, w_np = _data()
    table = sf.Variable(init, name="table")
    del init
    ids, w = sf.constant(ids_np), sf.constant(w_np)
    opt = OPTIMIZERS[opt_name](0.01)

    def step():
        with sf.GradientTape() as tape:
            loss = sf.reduce_sum(sf.square(sf.nn.embedding_lookup(table, ids) * w))
        grads = tape.gradient(loss, [table])
        assert isinstance(grads[0], ops.IndexedSlices)
        opt.apply_gradients(zip(grads, [table]))

    step()                                   # warm-up: creates the slots m and v
    before = table.sparse_read(ids[:5]).numpy().copy()
    peak = _peak_extra(step)
    assert not np.allclose(table.sparse_read(ids[:5]).numpy(), before)    # the step did update rows
    assert table.sparse_read([ROWS - 1]).numpy()[0, 0] == np.float32(0.01) or opt_name == "adam"
    _check(peak, f"eager {opt_name}")


@pytest.mark.parametrize("opt_name", NAMES)
def test_graph_step_allocates_no_table_sized_array(opt_name):
    init, ids_np, w_np = _data()
    graph = ops.Graph()
    with graph.as_default():
        table = sf.Variable(init, name="table")
        del init
        ids, w = sf.constant(ids_np), sf.constant(w_np)
        loss = sf.reduce_sum(sf.square(sf.nn.embedding_lookup(table, ids) * w))
        train_op = OPTIMIZERS[opt_name](0.01).minimize(loss)
        probe = table.sparse_read(ids[:5])
        sess = Session(graph=graph)
        try:
            sess.run(sf.global_variables_initializer())
            sess.run(train_op)                       # warm-up
            before = sess.run(probe)
            peak = _peak_extra(lambda: sess.run(train_op))
            assert not np.allclose(sess.run(probe), before)
        finally:
            sess.close()
    _check(peak, f"graph {opt_name}")


class _UnfusedAdam(adam.AdamOptimizer):
    """AdamOptimizer's sparse step written with the unfused ops (table-sized temporaries)."""

    def _apply_sparse(self, grad, var):
        lr, b1, b2, eps = self._hyper(var)
        m_t, v_t = self._decayed_moments(grad, var, b1, b2)
        update = var.assign_sub(lr * m_t / (math_ops.sqrt(v_t) + eps), read_value=False)
        return control_flow_ops.group(update, m_t, v_t)


class _UnfusedLazyAdam(adam.LazyAdamOptimizer):
    """LazyAdamOptimizer's sparse step written with gather / scatter_update / scatter_sub."""

    def _apply_sparse(self, grad, var):
        lr, b1, b2, eps = self._hyper(var)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        idx, g = grad.indices, grad.values
        m_rows = b1 * array_ops.gather(m, idx) + (1 - b1) * g
        v_rows = b2 * array_ops.gather(v, idx) + (1 - b2) * g * g
        m_t = m.scatter_update(ops.IndexedSlices(m_rows, idx))
        v_t = v.scatter_update(ops.IndexedSlices(v_rows, idx))
        update = var.scatter_sub(ops.IndexedSlices(lr * m_rows / (math_ops.sqrt(v_rows) + eps), idx))
        return control_flow_ops.group(update, m_t, v_t)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("fused, unfused", [(train.AdamOptimizer, _UnfusedAdam),
                                            (train.LazyAdamOptimizer, _UnfusedLazyAdam)])
def test_fused_sparse_steps_match_unfused_ops(mode, fused, unfused, dtype):
    rng = np.random.default_rng(3)
    init = rng.standard_normal((50, 3, 2)).astype(dtype)
    steps = [(rng.integers(0, 50, 30), rng.standard_normal((30, 3, 2)).astype(dtype)) for _ in range(3)]
    results = []
    for cls in (unfused, fused):
        var = sf.Variable(init)
        opt = cls(0.05)
        grads = [ops.IndexedSlices(sf.constant(g), sf.constant(i), sf.constant([50, 3, 2])) for i, g in steps]
        if mode.eager:
            for g in grads:
                opt.apply_gradients([(g, var)])
        else:
            train_ops = [opt.apply_gradients([(g, var)]) for g in grads]
            mode.evaluate(sf.global_variables_initializer())
            for t in train_ops:
                mode.evaluate(t)
        results.append([mode.evaluate(x) for x in (var, opt.get_slot(var, "m"), opt.get_slot(var, "v"))])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_array_equal(got, want)

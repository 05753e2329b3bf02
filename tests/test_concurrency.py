"""Several Python threads at once: per-thread mode, graph stack, scopes, tapes and default session
(as in TensorFlow), a Session shared by threads, and parallel kernels launched concurrently.

Every thread compares its results with NumPy exactly; worker exceptions are collected and re-raised
in the test. All waits are bounded."""
import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np

import segflow as sf
from segflow.client.session import Session
from segflow._core import mode as context
from segflow.framework import ops

_TIMEOUT = 30  # seconds a test waits for its threads at most


def _run_threads(targets, failed=None):
    """Runs each callable in its own thread; re-raises the first exception any of them raised.
    `failed` (an Event) is set as soon as one raises, so that the others can stop waiting."""
    errors = []

    def wrap(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)
                if failed is not None:
                    failed.set()
        return run

    threads = [threading.Thread(target=wrap(fn), daemon=True) for fn in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(_TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a worker thread did not finish in time"
    if errors:
        raise errors[0]


# ----------------------------------------------------------------------------------------------
# Eager execution and tapes


def _tape_step(v, x, c):
    with sf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = sf.reduce_sum(v * v * c + x * x * x + v * x)
    return tape, y


def test_gradient_tapes_in_four_threads_see_only_their_own_thread():
    n_threads, steps = 4, 60
    # How many ops one step records, run alone.
    tape, _ = _tape_step(sf.Variable(np.ones(3)), sf.constant(np.ones(3)), 1.0)
    n_records = len(tape._tape.records)
    start = threading.Barrier(n_threads, timeout=_TIMEOUT)
    results = {}

    def worker(k):
        def run():
            rng = np.random.default_rng(k)
            # Small integers: every product and sum below is exact in float64.
            v0 = rng.integers(-9, 10, size=32).astype(np.float64)
            x0 = rng.integers(-9, 10, size=32).astype(np.float64)
            v = sf.Variable(v0, name=f"v{k}")
            x = sf.constant(x0)
            c = float(k + 1)
            start.wait()
            for step in range(steps):
                tape, y = _tape_step(v, x, c)
                gv, gx = tape.gradient(y, [v, x])
                np.testing.assert_array_equal(gv.numpy(), 2 * c * v0 + x0)
                np.testing.assert_array_equal(gx.numpy(), 3 * x0 * x0 + v0)
                np.testing.assert_array_equal(y.numpy(), np.sum(v0 * v0 * c + x0 * x0 * x0 + v0 * x0))
                # The tape watched this thread's variable only, and recorded this thread's ops only.
                watched = tape.watched_variables()
                assert len(watched) == 1 and watched[0] is v, watched
                assert len(tape._tape.records) == n_records, (len(tape._tape.records), n_records)
            results[k] = True
        return run

    _run_threads([worker(k) for k in range(n_threads)])
    assert sorted(results) == list(range(n_threads))


def test_tape_of_one_thread_ignores_variable_reads_of_another():
    v_main = sf.Variable(np.arange(4.0))
    v_other = sf.Variable(np.arange(4.0) + 10)
    entered, read = threading.Event(), threading.Event()

    def other():
        assert entered.wait(_TIMEOUT)
        for _ in range(20):
            (v_other * 2.0).numpy()     # reads v_other while the main thread's tape records
        read.set()

    t = threading.Thread(target=other, daemon=True)
    t.start()
    with sf.GradientTape() as tape:
        entered.set()
        assert read.wait(_TIMEOUT)
        y = sf.reduce_sum(v_main * 3.0)
    t.join(_TIMEOUT)
    assert [w is v_main for w in tape.watched_variables()] == [True]
    np.testing.assert_array_equal(tape.gradient(y, v_main).numpy(), np.full(4, 3.0))


def test_graph_building_in_one_thread_while_three_threads_run_eagerly():
    n_chain = 200

    def build(g):
        x = sf.placeholder(sf.float64, [None], name="x")
        y = x
        for i in range(n_chain):
            y = y * 2.0 + float(i) if i % 2 else y - 1.0
        return x, y

    ref_graph = sf.Graph()
    with ref_graph.as_default():
        build(ref_graph)
    ref_names = [op.name for op in ref_graph.get_operations()]

    inside, built, failed = threading.Event(), threading.Event(), threading.Event()

    def wait(event):
        for _ in range(int(_TIMEOUT / 0.01)):
            if event.is_set() or failed.is_set():
                break
            time.sleep(0.01)
        assert event.is_set(), "another thread failed"
    eager_steps = [0, 0, 0]
    feed = np.arange(5, dtype=np.float64)
    expected = feed.copy()
    for i in range(n_chain):
        expected = expected * 2.0 + float(i) if i % 2 else expected - 1.0
    graph_box = {}

    def graph_thread():
        g = sf.Graph()
        with g.as_default():
            assert not sf.executing_eagerly()
            assert sf.get_default_graph() is g
            inside.set()
            x, y = build(g)
            # Stay inside as_default() until every eager thread has run many ops meanwhile.
            for _ in range(int(_TIMEOUT / 0.01)):
                if min(eager_steps) >= 50 or failed.is_set():
                    break
                time.sleep(0.01)
            with Session(graph=g) as sess:
                np.testing.assert_array_equal(sess.run(y, {x: feed}), expected)
            assert not sf.executing_eagerly()
        built.set()
        graph_box["g"] = g

    def eager_thread(k):
        def run():
            rng = np.random.default_rng(100 + k)
            a0 = rng.integers(-50, 50, size=(8, 8)).astype(np.float64)
            b0 = rng.integers(-50, 50, size=(8, 8)).astype(np.float64)
            a, b = sf.constant(a0), sf.constant(b0)
            wait(inside)
            while (not built.is_set() or eager_steps[k] < 50) and not failed.is_set():
                assert sf.executing_eagerly()
                np.testing.assert_array_equal((a + b).numpy(), a0 + b0)
                np.testing.assert_array_equal(sf.matmul(a, b).numpy(), a0 @ b0)
                np.testing.assert_array_equal(sf.reduce_sum(a * b, axis=1).numpy(), np.sum(a0 * b0, axis=1))
                eager_steps[k] += 1
                if eager_steps[k] > 100_000:  # pragma: no cover - bounded regardless
                    break
        return run

    _run_threads([graph_thread] + [eager_thread(k) for k in range(3)], failed)
    assert min(eager_steps) >= 50
    # The graph holds exactly the ops its thread built (the eager threads added none).
    assert [op.name for op in graph_box["g"].get_operations()] == ref_names


def test_new_thread_starts_eager_inside_as_default_and_scopes_do_not_leak():
    g = sf.Graph()
    seen = {}
    ready, done = threading.Event(), threading.Event()

    def thread():
        assert ready.wait(_TIMEOUT)
        seen["eager"] = sf.executing_eagerly()
        seen["default_is_g"] = sf.get_default_graph() is g
        seen["value"] = (sf.constant(2.0) * 3.0).numpy()
        with sf.name_scope("inner") as scope:
            seen["eager_scope"] = scope
        with g.as_default():
            # g's name scope and control dependencies of the main thread are not this thread's.
            c = sf.constant(1.0, name="c")
            seen["name"] = c.name
            seen["control"] = list(c.op.control_inputs)
            seen["graph_eager"] = sf.executing_eagerly()
        seen["eager_after"] = sf.executing_eagerly()
        done.set()

    t = threading.Thread(target=thread, daemon=True)
    t.start()
    global_graph = sf.get_default_graph()
    with g.as_default():
        dep = sf.constant(0.0, name="dep")
        with sf.name_scope("outer"), sf.control_dependencies([dep]):
            ready.set()
            assert done.wait(_TIMEOUT)
            mine = sf.constant(5.0, name="mine")
    t.join(_TIMEOUT)
    assert seen == {"eager": True, "default_is_g": False, "value": 6.0, "eager_scope": "inner/",
                    "name": "c:0", "control": [], "graph_eager": False, "eager_after": True}
    assert mine.name == "outer/mine:0"
    assert [op.name for op in mine.op.control_inputs] == ["dep"]
    # Outside any as_default() each thread has its own global default graph (TF's rule), and
    # resetting it in one thread leaves the others' alone.
    box = {}

    def other():
        box["g"] = sf.get_default_graph()
        box["again"] = sf.get_default_graph()
        sf.reset_default_graph()
        box["reset"] = sf.get_default_graph()
    t = threading.Thread(target=other, daemon=True)
    t.start()
    t.join(_TIMEOUT)
    assert box["g"] is box["again"] and box["g"] is not global_graph
    assert box["reset"] is not box["g"]
    assert sf.get_default_graph() is global_graph


def test_eager_name_scopes_are_per_thread():
    a_inside, b_done = threading.Event(), threading.Event()
    scopes = {}

    def a():
        with sf.name_scope("a") as outer:
            a_inside.set()
            assert b_done.wait(_TIMEOUT)   # b enters and leaves its scopes while a is inside "a"
            with sf.name_scope("x") as inner:
                scopes["a"] = (outer, inner)

    def b():
        assert a_inside.wait(_TIMEOUT)
        try:
            with sf.name_scope("b") as outer:
                with sf.name_scope("x") as inner:
                    scopes["b"] = (outer, inner)
        finally:
            b_done.set()

    _run_threads([a, b])
    assert scopes == {"a": ("a/", "a/x/"), "b": ("b/", "b/x/")}


def test_default_session_is_per_thread():
    g = sf.Graph()
    with g.as_default():
        sess = Session(graph=g)
    seen = {}
    inside = threading.Event()

    def other():
        assert inside.wait(_TIMEOUT)
        seen["other"] = ops.get_default_session()

    t = threading.Thread(target=other, daemon=True)
    t.start()
    with sess.as_default():
        inside.set()
        t.join(_TIMEOUT)
        assert ops.get_default_session() is sess
    assert seen == {"other": None}
    assert ops.get_default_session() is None
    sess.close()


def test_thread_started_after_disable_eager_execution_builds_graphs():
    assert sf.executing_eagerly()
    box = {}
    sf.disable_eager_execution()
    try:
        assert not sf.executing_eagerly()
        t = threading.Thread(target=lambda: box.setdefault("eager", sf.executing_eagerly()), daemon=True)
        t.start()
        t.join(_TIMEOUT)
    finally:
        sf.enable_eager_execution()
    assert box == {"eager": False}
    assert sf.executing_eagerly()
    assert (sf.constant(1.0) + 1.0).numpy() == 2.0
    t = threading.Thread(target=lambda: box.setdefault("later", sf.executing_eagerly()), daemon=True)
    t.start()
    t.join(_TIMEOUT)
    assert box["later"] is True
    # With every thread eager again, eager ops take the fast path (no thread-local read).
    assert context._shared.all_eager


def test_session_shared_by_four_threads_with_different_feeds():
    g = sf.Graph()
    with g.as_default():
        x = sf.placeholder(sf.float64, [None], name="x")
        y = x * 3.0 + 1.0
        z = sf.reduce_sum(y * y)
    sess = Session(graph=g)
    start = threading.Barrier(4, timeout=_TIMEOUT)

    def worker(k):
        def run():
            rng = np.random.default_rng(k)
            start.wait()
            for step in range(150):
                feed = rng.integers(-100, 100, size=16 + k).astype(np.float64)
                got_y, got_z = sess.run([y, z], {x: feed})
                want_y = feed * 3.0 + 1.0
                np.testing.assert_array_equal(got_y, want_y)
                assert got_z == np.sum(want_y * want_y)
        return run

    _run_threads([worker(k) for k in range(4)])
    sess.close()


# ----------------------------------------------------------------------------------------------
# Parallel kernels launched from several threads on the workqueue threading layer

_WORKQUEUE_SCRIPT = textwrap.dedent("""
    import threading
    import numpy as np
    import numba
    import segflow as sf

    rng = np.random.default_rng(0)
    data = rng.integers(-8, 8, size=(200_000, 16)).astype(np.float32)
    ids = rng.integers(0, 10_000, size=200_000).astype(np.int32)
    want = sf.math.unsorted_segment_sum(data, ids, 10_000).numpy()
    assert numba.threading_layer() == "workqueue", numba.threading_layer()
    ref = np.zeros((10_000, 16), np.float64)
    np.add.at(ref, ids, data.astype(np.float64))
    assert np.array_equal(want, ref.astype(np.float32))
    errors = []
    start = threading.Barrier(4)

    def work():
        try:
            start.wait()
            for _ in range(12):
                got = sf.math.unsorted_segment_sum(data, ids, 10_000).numpy()
                if not np.array_equal(got, want):
                    errors.append("wrong result")
        except BaseException as e:
            errors.append(repr(e))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    from segflow.kernels import _common
    assert _common.threading_layer_is_threadsafe() is False   # launches were serialised
    print("ok")
""")


def test_parallel_kernels_from_four_threads_on_the_workqueue_layer():
    env = dict(os.environ, NUMBA_THREADING_LAYER="workqueue", NUMBA_NUM_THREADS="4")
    proc = subprocess.run([sys.executable, "-c", _WORKQUEUE_SCRIPT], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", \
        f"exit {proc.returncode}\nstdout: {proc.stdout[-2000:]}\nstderr: {proc.stderr[-4000:]}"


def test_parallel_kernels_from_four_threads_on_the_default_layer():
    rng = np.random.default_rng(1)
    data = rng.integers(-8, 8, size=(100_000, 8)).astype(np.float32)
    ids = rng.integers(0, 5_000, size=100_000).astype(np.int64)
    ref = np.zeros((5_000, 8), np.float64)
    np.add.at(ref, ids, data.astype(np.float64))
    ref = ref.astype(np.float32)
    start = threading.Barrier(4, timeout=_TIMEOUT)

    def worker():
        start.wait()
        for _ in range(8):
            np.testing.assert_array_equal(sf.math.unsorted_segment_sum(data, ids, 5_000).numpy(), ref)

    _run_threads([worker] * 4)
    from segflow.kernels import _common
    assert _common.threading_layer_is_threadsafe() in (True, False)   # known after a launch

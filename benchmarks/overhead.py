"""Framework overhead: segflow against TensorFlow and PyTorch, side by side in one process.

    .venv/bin/python benchmarks/overhead.py [--quick] [--json out.json]

What is timed (all on tiny float32 tensors, so the numbers are pure framework overhead):

  eager_add      one eager `a + b` on two 1-element tensors, per op (us)
  chain10_grad   GradientTape: forward through a 10-op elementwise chain (mul, add, tanh, ...) on a
                 16-element tensor, then tape.gradient w.r.t. the chain's input (us)
  chain10_scalars  the chain10_grad work with Python floats for w and b (`y * 1.01 + 0.5`): the
                 cost of converting Python scalars (issue target: <= torch eager) (us)
  chain30_grad   the same with y = tanh(y * w + b) ten times (30 ops); reported, no target (us)
  session_1op    Session.run of a graph with one small op: the fixed cost of a run (us)
  session_100op  Session.run of a 100-op elementwise chain fed through a placeholder (us)
  gradients_100  building gradients() of a 100-op chain in a graph (ms)
  fn_chain10_grad  the chain10_grad work in one sf.function call (the tape inside the function) (us)
  fn_chain10_tape  tape.gradient through an sf.function call of the 10-op chain (tape outside) (us)
  embed_step     one training step of a small embedding model, eagerly: embedding_lookup of a
                 [1000, 16] table, mean-pool, matmul, squared loss, tape.gradient (an IndexedSlices
                 for the table), TF1 AdagradOptimizer.apply_gradients (us)
  fn_embed_step  the same step wrapped in sf.function (us)
  small_slice    `m[1:3]` of an eager 4 x 4 tensor (us)
  small_gather   `gather(m, [1, 2, 3])` with a Python list of indices (torch: `m[[1, 2, 3]]`) (us)
  small_matmul   `matmul(m, m)` of two 4 x 4 tensors (us)

TensorFlow (eager; tf.compat.v1 Graph + Session for the graph rows) and PyTorch (eager + autograd)
are timed the same way when importable; missing ones are skipped. TensorFlow's fn_* rows use
tf.function; PyTorch has no traced function, so its fn_* rows are its eager numbers (the step
with a sparse nn.functional.embedding and torch.optim.Adagrad), which makes the ratio column "PyTorch
eager against segflow's sf.function". Every number is the median over many repeats of a timed loop
(the machine is shared and noisy); ratios are theirs / ours, so 10x means segflow is ten times
faster. Below the table, each framework's eager / traced ratio for the two pairs of rows.
"""
import argparse
import gc
import json
import statistics
import sys
import time

import numpy as np

# (key, description, unit, target or None)
ROWS = [
    ("eager_add", "eager a + b (1 element), per op", "us", 3.0),
    ("chain10_grad", "10-op chain forward + tape.gradient", "us", 100.0),
    ("chain10_scalars", "10-op chain, Python-scalar operands (y*1.01+0.5)", "us", None),
    ("chain30_grad", "10x tanh(y*w+b) (30 ops) fwd + gradient", "us", None),
    ("session_1op", "Session.run, 1-op graph (fixed cost)", "us", 15.0),
    ("session_100op", "Session.run, 100-op chain", "us", None),
    ("gradients_100", "gradients() of a 100-op chain", "ms", 5.0),
    ("fn_chain10_grad", "10-op chain fwd + gradient in sf.function", "us", None),
    ("fn_chain10_tape", "10-op chain: tape around sf.function call", "us", None),
    ("embed_step", "embedding train step (Adagrad), eager", "us", None),
    ("fn_embed_step", "embedding train step in sf.function", "us", None),
    ("small_slice", "m[1:3] of a 4 x 4 tensor", "us", None),
    ("small_gather", "gather(m, [1, 2, 3]), a Python list", "us", None),
    ("small_matmul", "matmul of two 4 x 4 tensors", "us", None),
]

# (eager row, traced row) pairs whose ratio is printed below the table
TRACED_PAIRS = [("chain10_grad", "fn_chain10_grad"), ("chain10_grad", "fn_chain10_tape"),
                ("embed_step", "fn_embed_step")]

_UNIT_SCALE = {"us": 1e6, "ms": 1e3}

# Wall-clock by default; `--timer cpu` uses this process's CPU time, which a machine shared with
# other busy processes disturbs much less (the time spent waiting for a core is not counted).
_timer = time.perf_counter


def measure(fn, number, repeat):
    """Median seconds per call of `fn` over `repeat` timed loops of `number` calls each."""
    fn()  # warm up (first-call imports, caches)
    times = []
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            t0 = _timer()
            for _ in range(number):
                fn()
            times.append((_timer() - t0) / number)
    finally:
        if gc_was:
            gc.enable()
    return statistics.median(times)


def measure_with_setup(setup, fn, repeat):
    """Median seconds of `fn(state)` where `state = setup()` is built fresh (untimed) every time."""
    fn(setup())
    times = []
    for _ in range(repeat):
        state = setup()
        gc.collect()
        t0 = _timer()
        fn(state)
        times.append(_timer() - t0)
    return statistics.median(times)


# The 10-op chain: a fixed mix of elementwise ops, each taking the previous result.
def _chain10(y, w, b, tanh):
    y = y * w
    y = y + b
    y = tanh(y)
    y = y * w
    y = y - b
    y = tanh(y)
    y = y * y
    y = y + b
    y = tanh(y)
    y = y * w
    return y


def _chain30(y, w, b, tanh):
    for _ in range(10):
        y = tanh(y * w + b)
    return y


def _chain100(y, w, b, tanh):
    # 25 x (mul, add, tanh, sub) = 100 ops
    for _ in range(25):
        y = tanh(y * w + b) - b
    return y


_X = np.linspace(-1.0, 1.0, 16, dtype=np.float32)
_W = np.full(16, 0.9, dtype=np.float32)
_B = np.full(16, 0.1, dtype=np.float32)

# The embedding model: a [1000, 16] table, a [16, 1] weight, batches of 64 examples of 4 ids.
_EMB_RNG = np.random.default_rng(0)
_TABLE = _EMB_RNG.normal(size=(1000, 16)).astype(np.float32)
_WEIGHT = _EMB_RNG.normal(size=(16, 1)).astype(np.float32)
_IDS = _EMB_RNG.integers(0, 1000, size=(64, 4)).astype(np.int32)
_LABELS = _EMB_RNG.normal(size=(64, 1)).astype(np.float32)


_M = np.arange(16, dtype=np.float32).reshape(4, 4)


def _small_ops(r, q, m, gather, matmul):
    """The small_* rows for the eager 4 x 4 tensor `m` of one framework."""
    r["small_slice"] = measure(lambda: m[1:3], q.n_op, q.repeat)
    r["small_gather"] = measure(lambda: gather(m, [1, 2, 3]), q.n_op, q.repeat)
    r["small_matmul"] = measure(lambda: matmul(m, m), q.n_op, q.repeat)


def _embedding_step(framework, lookup, reduce_mean, matmul):
    """A training step (ids, labels) -> loss for `framework` (segflow or TensorFlow): its own
    variables and TF1 Adagrad optimizer."""
    emb = framework.Variable(_TABLE)
    w = framework.Variable(_WEIGHT)
    opt = framework.compat.v1.train.AdagradOptimizer(0.1)

    def step(ids, labels):
        with framework.GradientTape() as tape:
            pooled = reduce_mean(lookup(emb, ids), axis=1)
            loss = reduce_mean((matmul(pooled, w) - labels) ** 2)
        grads = tape.gradient(loss, [emb, w])
        opt.apply_gradients(zip(grads, [emb, w]))
        return loss

    return step


# ----------------------------------------------------------------------------------------------
# segflow


def bench_segflow(q):
    import segflow as sf
    from segflow.framework import ops

    r = {}
    a = sf.constant([1.0])
    b = sf.constant([2.0])
    r["eager_add"] = measure(lambda: a + b, q.n_op, q.repeat)

    x, w, bb = sf.constant(_X), sf.constant(_W), sf.constant(_B)

    def grad_of(chain):
        def run():
            with sf.GradientTape() as tape:
                tape.watch(x)
                y = chain(x, w, bb, sf.tanh)
            return tape.gradient(y, x)
        return run

    r["chain10_grad"] = measure(grad_of(_chain10), q.n_chain, q.repeat)
    r["chain10_scalars"] = measure(grad_of(lambda y, w, b, tanh: _chain10(y, 1.01, 0.5, tanh)), q.n_chain, q.repeat)
    r["chain30_grad"] = measure(grad_of(_chain30), q.n_chain // 3, q.repeat)

    g1 = ops.Graph()
    with g1.as_default():
        c1, c2 = sf.constant([1.0]), sf.constant([2.0])
        y1 = c1 + c2
    sess1 = sf.Session(graph=g1)
    r["session_1op"] = measure(lambda: sess1.run(y1), q.n_op, q.repeat)

    g100 = ops.Graph()
    with g100.as_default():
        x100 = sf.compat.v1.placeholder(sf.float32, _X.shape)     # fed: nothing to fold
        y100 = _chain100(x100, sf.constant(_W), sf.constant(_B), sf.tanh)
    sess100 = sf.Session(graph=g100)
    r["session_100op"] = measure(lambda: sess100.run(y100, {x100: _X}), q.n_chain // 5, q.repeat)

    def setup():
        g = ops.Graph()
        with g.as_default():
            xg = sf.constant(_X)
            yg = _chain100(xg, sf.constant(_W), sf.constant(_B), sf.tanh)
        return g, xg, yg

    def build(state):
        g, xg, yg = state
        with g.as_default():
            sf.gradients(yg, xg)

    r["gradients_100"] = measure_with_setup(setup, build, q.repeat_build)
    sess1.close()
    sess100.close()

    @sf.function
    def fn_grad(x):
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = _chain10(x, w, bb, sf.tanh)
        return tape.gradient(y, x)

    fn_chain = sf.function(lambda x: _chain10(x, w, bb, sf.tanh))

    def fn_tape():
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = fn_chain(x)
        return tape.gradient(y, x)

    r["fn_chain10_grad"] = measure(lambda: fn_grad(x), q.n_chain, q.repeat)
    r["fn_chain10_tape"] = measure(fn_tape, q.n_chain, q.repeat)
    ids, labels = sf.constant(_IDS), sf.constant(_LABELS)
    for key, wrap in (("embed_step", lambda f: f), ("fn_embed_step", sf.function)):
        step = wrap(_embedding_step(sf, sf.nn.embedding_lookup, sf.reduce_mean, sf.matmul))
        r[key] = measure(lambda: step(ids, labels), q.n_chain // 2, q.repeat)
    _small_ops(r, q, sf.constant(_M), sf.gather, sf.matmul)
    return r


# ----------------------------------------------------------------------------------------------
# TensorFlow


def bench_tensorflow(q):
    import os
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    r = {}
    a = tf.constant([1.0])
    b = tf.constant([2.0])
    r["eager_add"] = measure(lambda: a + b, q.n_op, q.repeat)

    x, w, bb = tf.constant(_X), tf.constant(_W), tf.constant(_B)

    def grad_of(chain):
        def run():
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = chain(x, w, bb, tf.tanh)
            return tape.gradient(y, x)
        return run

    r["chain10_grad"] = measure(grad_of(_chain10), q.n_chain // 10, q.repeat)
    r["chain10_scalars"] = measure(grad_of(lambda y, w, b, tanh: _chain10(y, 1.01, 0.5, tanh)), q.n_chain // 10,
                                   q.repeat)
    r["chain30_grad"] = measure(grad_of(_chain30), q.n_chain // 30, q.repeat)

    v1 = tf.compat.v1
    g1 = tf.Graph()
    with g1.as_default():
        y1 = v1.constant([1.0]) + v1.constant([2.0])
    sess1 = v1.Session(graph=g1)
    r["session_1op"] = measure(lambda: sess1.run(y1), q.n_op // 10, q.repeat)

    g100 = tf.Graph()
    with g100.as_default():
        x100 = v1.placeholder(tf.float32, _X.shape)                 # fed: nothing to fold
        y100 = _chain100(x100, v1.constant(_W), v1.constant(_B), tf.tanh)
    sess100 = v1.Session(graph=g100)
    r["session_100op"] = measure(lambda: sess100.run(y100, {x100: _X}), q.n_chain // 50, q.repeat)

    def setup():
        g = tf.Graph()
        with g.as_default():
            xg = v1.constant(_X)
            yg = _chain100(xg, v1.constant(_W), v1.constant(_B), tf.tanh)
        return g, xg, yg

    def build(state):
        g, xg, yg = state
        with g.as_default():
            v1.gradients(yg, xg)

    r["gradients_100"] = measure_with_setup(setup, build, max(3, q.repeat_build // 4))
    sess1.close()
    sess100.close()

    @tf.function
    def fn_grad(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = _chain10(x, w, bb, tf.tanh)
        return tape.gradient(y, x)

    fn_chain = tf.function(lambda x: _chain10(x, w, bb, tf.tanh))

    def fn_tape():
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn_chain(x)
        return tape.gradient(y, x)

    r["fn_chain10_grad"] = measure(lambda: fn_grad(x), q.n_chain // 10, q.repeat)
    r["fn_chain10_tape"] = measure(fn_tape, q.n_chain // 10, q.repeat)
    ids, labels = tf.constant(_IDS), tf.constant(_LABELS)
    for key, wrap in (("embed_step", lambda f: f), ("fn_embed_step", tf.function)):
        step = wrap(_embedding_step(tf, tf.nn.embedding_lookup, tf.reduce_mean, tf.matmul))
        r[key] = measure(lambda: step(ids, labels), q.n_chain // 10, q.repeat)
    _small_ops(r, _Slow(q), tf.constant(_M), tf.gather, tf.matmul)
    return r


# ----------------------------------------------------------------------------------------------
# PyTorch (eager + autograd; it has no graph/Session, so those rows stay empty)


def bench_torch(q):
    import torch

    torch.set_num_threads(1)
    r = {}
    a = torch.tensor([1.0])
    b = torch.tensor([2.0])
    r["eager_add"] = measure(lambda: a + b, q.n_op, q.repeat)

    w, bb = torch.from_numpy(_W), torch.from_numpy(_B)

    def grad_of(chain):
        def run():
            x = torch.from_numpy(_X).requires_grad_()
            y = chain(x, w, bb, torch.tanh)
            return torch.autograd.grad(y, x, torch.ones_like(y))
        return run

    r["chain10_grad"] = measure(grad_of(_chain10), q.n_chain, q.repeat)
    r["chain10_scalars"] = measure(grad_of(lambda y, w, b, tanh: _chain10(y, 1.01, 0.5, tanh)), q.n_chain, q.repeat)
    r["chain30_grad"] = measure(grad_of(_chain30), q.n_chain // 3, q.repeat)
    r["fn_chain10_grad"] = r["fn_chain10_tape"] = r["chain10_grad"]      # eager: no traced functions

    emb = torch.nn.Parameter(torch.from_numpy(_TABLE.copy()))
    weight = torch.nn.Parameter(torch.from_numpy(_WEIGHT.copy()))
    opt = torch.optim.Adagrad([emb, weight], lr=0.1)
    ids, labels = torch.from_numpy(_IDS.astype(np.int64)), torch.from_numpy(_LABELS)

    def step():
        opt.zero_grad()
        pooled = torch.nn.functional.embedding(ids, emb, sparse=True).mean(dim=1)
        loss = ((pooled @ weight - labels) ** 2).mean()
        loss.backward()
        opt.step()
        return loss

    r["embed_step"] = measure(step, q.n_chain // 2, q.repeat)
    r["fn_embed_step"] = r["embed_step"]
    _small_ops(r, q, torch.from_numpy(_M.copy()), lambda m, i: m[i], torch.matmul)
    return r


# ----------------------------------------------------------------------------------------------


class _Slow:
    """A repeat setting with a tenth of the op loops (TensorFlow's eager ops take ~10x longer)."""

    def __init__(self, q):
        self.n_op, self.repeat = max(1, q.n_op // 10), q.repeat


class _Quick:
    n_op, n_chain, repeat, repeat_build = 2000, 100, 5, 5


class _Full:
    n_op, n_chain, repeat, repeat_build = 20000, 500, 21, 21


def run(quick=False, frameworks=("segflow", "tensorflow", "torch")):
    """Runs every benchmark; returns {framework: {row key: seconds}} (a framework that cannot be
    imported is left out, with a message)."""
    q = _Quick if quick else _Full
    benches = {"segflow": bench_segflow, "tensorflow": bench_tensorflow, "torch": bench_torch}
    results = {}
    for name in frameworks:
        try:
            results[name] = benches[name](q)
        except ImportError as e:
            print(f"[overhead] {name} not importable, skipped ({e})", flush=True)
    return results


def _fmt(seconds, unit):
    return "-" if seconds is None else f"{seconds * _UNIT_SCALE[unit]:.1f}"


def format_table(results, before=None, markdown=False):
    """The results as a text table (or a Markdown one); `before` adds a column of earlier segflow
    numbers (a `--json` file of a previous run)."""
    ours = results.get("segflow", {})
    others = [n for n in ("tensorflow", "torch") if n in results]
    head = ["benchmark", "unit"] + (["before"] if before else []) + ["segflow", "target", "met"]
    for n in others:
        head += [n, f"{n}/segflow"]
    rows = [head]
    for key, desc, unit, target in ROWS:
        s = ours.get(key)
        met = "-" if target is None or s is None else ("yes" if s * _UNIT_SCALE[unit] <= target else "NO")
        row = [desc, unit] + ([_fmt(before.get(key), unit)] if before else [])
        row += [_fmt(s, unit), "-" if target is None else f"<= {target:g}", met]
        for n in others:
            v = results[n].get(key)
            row += [_fmt(v, unit), "-" if v is None or not s else f"{v / s:.1f}x"]
        rows.append(row)
    if markdown:
        lines = ["| " + " | ".join(r) + " |" for r in rows]
        lines.insert(1, "|" + "|".join("---" if i == 0 else "---:" for i in range(len(head))) + "|")
        return "\n".join(lines)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = []
    for i, r in enumerate(rows):
        lines.append("  ".join(c.ljust(wd) if j == 0 else c.rjust(wd) for j, (c, wd) in enumerate(zip(r, widths))))
        if i == 0:
            lines.append("  ".join("-" * wd for wd in widths))
    return "\n".join(lines)


def format_traced(results):
    """Lines giving, per framework, eager time / traced time for each TRACED_PAIRS pair (how much
    faster the traced function is), and PyTorch eager / segflow traced."""
    lines = ["eager / traced (higher: the traced function is faster):"]
    for eager_key, traced_key in TRACED_PAIRS:
        parts = []
        for name in ("segflow", "tensorflow"):
            r = results.get(name, {})
            if r.get(eager_key) and r.get(traced_key):
                parts.append(f"{name} {r[eager_key] / r[traced_key]:.2f}x")
        t, s = results.get("torch", {}).get(eager_key), results.get("segflow", {}).get(traced_key)
        if t and s:
            parts.append(f"torch eager / segflow traced {t / s:.2f}x")
        lines.append(f"  {eager_key} -> {traced_key}: " + (", ".join(parts) if parts else "-"))
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer repeats (a smoke run)")
    p.add_argument("--only", choices=("segflow", "tensorflow", "torch"), action="append",
                   help="time only these frameworks (repeatable)")
    p.add_argument("--json", help="also write the raw results (seconds) to this file")
    p.add_argument("--timer", choices=("wall", "cpu"), default="wall",
                   help="wall-clock (default) or process CPU time (steadier on a busy machine)")
    p.add_argument("--before", help="a --json file of an earlier run: show its segflow numbers beside")
    p.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    p.add_argument("--table-only", metavar="JSON", help="print the table of a saved --json run; time nothing")
    args = p.parse_args(argv)
    global _timer
    _timer = time.perf_counter if args.timer == "wall" else time.process_time
    before = None
    if args.before:
        with open(args.before) as f:
            before = json.load(f).get("segflow")
    if args.table_only:
        with open(args.table_only) as f:
            print(format_table(json.load(f), before, args.markdown))
        return 0
    results = run(args.quick, tuple(args.only) if args.only else ("segflow", "tensorflow", "torch"))
    print(f"Framework overhead ({args.timer} time, median; ratio = other / segflow, higher is better "
          "for segflow)")
    print(format_table(results, before, args.markdown))
    print(format_traced(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

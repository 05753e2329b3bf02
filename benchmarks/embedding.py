"""One eager embedding training step, segflow next to PyTorch and JAX, each in its own process.

Not a test. Run `python benchmarks/embedding.py` (`--quick`: fewer steps). The model: a 1e6 x 64
float32 table, a batch of 1e4 ids drawn from a Zipf distribution (a few hot rows, a long tail, many
repeats), loss = mean(square(lookup(table, ids) - 1)), one optimizer step with lazy (sparse) Adam:

- segflow: `sf.Variable`, `sf.nn.embedding_lookup` -> loss -> `GradientTape.gradient` (an
  IndexedSlices) -> `sf.train.LazyAdamOptimizer.apply_gradients` (duplicates summed, one fused update
  of the touched rows of the table and both slots);
- torch: `nn.Embedding(sparse=True)` -> loss -> `backward` -> `optim.SparseAdam.step` (it also
  coalesces duplicate rows first);
- JAX: the same step as one `jax.jit` function with the table and slots donated: gather, the
  gradient of the loss with respect to the gathered rows, `jnp.unique` + `segment_sum` for the
  duplicates, and lazy Adam's update of those rows with `.at[].set` (there is no sparse optimizer in
  JAX itself; this is the shortest faithful equivalent).

Each framework runs in a fresh process (their thread pools never share one), median of the timed
steps after warm-up steps. `segflow bench` (`make bench`) runs it as a script.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

ROWS, DIM, BATCH = 1_000_000, 64, 10_000
LR, B1, B2, EPS = 0.001, 0.9, 0.999, 1e-8


def _ids(seed=0):
    rng = np.random.default_rng(seed)
    return ((rng.zipf(1.2, BATCH) - 1) % ROWS).astype(np.int64)


def _table():
    return np.random.default_rng(1).standard_normal((ROWS, DIM), dtype=np.float32) * 0.01


def run_segflow(steps):
    import segflow as sf
    table = sf.Variable(_table())
    opt = sf.train.LazyAdamOptimizer(LR, B1, B2, EPS)
    batches = [sf.constant(_ids(s)) for s in range(4)]

    def step(ids):
        with sf.GradientTape() as tape:
            loss = sf.reduce_mean(sf.square(sf.nn.embedding_lookup(table, ids) - 1.0))
        grads = tape.gradient(loss, [table])
        opt.apply_gradients(zip(grads, [table]))
        return loss

    return _time(lambda k: step(batches[k % 4]), steps)


def run_torch(steps):
    import torch
    emb = torch.nn.Embedding(ROWS, DIM, sparse=True)
    with torch.no_grad():
        emb.weight.copy_(torch.from_numpy(_table()))
    opt = torch.optim.SparseAdam(emb.parameters(), lr=LR, betas=(B1, B2), eps=EPS)
    batches = [torch.from_numpy(_ids(s)) for s in range(4)]

    def step(ids):
        opt.zero_grad()
        loss = (emb(ids) - 1.0).square().mean()
        loss.backward()
        opt.step()
        return loss

    return _time(lambda k: step(batches[k % 4]), steps)


def run_jax(steps):
    import functools
    import jax
    import jax.numpy as jnp

    @functools.partial(jax.jit, donate_argnums=(0, 1, 2))
    def step(W, M, V, ids, t):
        rows = W[ids]
        loss, g = jax.value_and_grad(lambda r: jnp.mean(jnp.square(r - 1.0)))(rows)
        uniq, inv = jnp.unique(ids, size=BATCH, fill_value=ROWS, return_inverse=True)
        g = jax.ops.segment_sum(g, inv.reshape(-1), BATCH)
        safe = jnp.minimum(uniq, ROWS - 1)
        m = B1 * M[safe] + (1 - B1) * g
        v = B2 * V[safe] + (1 - B2) * g * g
        lr_t = LR * jnp.sqrt(1 - B2 ** t) / (1 - B1 ** t)
        w = W[safe] - lr_t * m / (jnp.sqrt(v) + EPS)
        return (W.at[uniq].set(w, mode="drop"), M.at[uniq].set(m, mode="drop"),
                V.at[uniq].set(v, mode="drop"), loss)

    state = [jnp.asarray(_table()), jnp.zeros((ROWS, DIM), jnp.float32), jnp.zeros((ROWS, DIM), jnp.float32)]
    batches = [jnp.asarray(_ids(s)) for s in range(4)]

    def one(k):
        W, M, V, loss = step(*state, batches[k % 4], jnp.float32(k + 1))
        state[:] = [W, M, V]
        jax.block_until_ready(loss)

    return _time(one, steps)


def _time(fn, steps, warmup=3):
    for k in range(warmup):
        fn(k)
    ts = []
    for k in range(steps):
        t = time.perf_counter()
        fn(warmup + k)
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


RUNNERS = {"segflow": run_segflow, "torch": run_torch, "jax": run_jax}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--worker")
    ap.add_argument("--steps", type=int, default=0)
    args = ap.parse_args(argv)
    steps = args.steps or (5 if args.quick else 21)
    if args.worker:
        print(json.dumps({"s": RUNNERS[args.worker](steps)}))
        return 0
    results = {}
    for name in RUNNERS:
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", name, "--steps", str(steps)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            last = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["?"]
            print(f"  ({name}: not run: {last[0][:100]})")
            continue
        results[name] = json.loads(r.stdout.strip().splitlines()[-1])["s"]
    print(f"\n# Eager embedding step: {ROWS:.0e} x {DIM} table, {BATCH:.0e} Zipf ids, lazy Adam "
          f"(median of {steps} steps, each framework in its own process)\n")
    print("| framework | ms / step | x torch |")
    print("|---|---|---|")
    base = results.get("torch")
    for name, t in results.items():
        ratio = f"{t / base:.2f}" if base else "-"
        print(f"| {name} | {t * 1e3:.2f} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

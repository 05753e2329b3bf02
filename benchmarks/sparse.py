"""Sparse training paths: segflow against NumPy, PyTorch, TensorFlow and JAX, side by side in one process.

    .venv/bin/python benchmarks/sparse.py [--quick] [--timer wall|cpu] [--json out.json]

What is timed (a 1e6 x 64 float32 embedding table, 256 MB):

  gather       1e5 random rows of the table: segflow eager `sf.gather` on a tensor and
               `Variable.sparse_read`; NumPy `table[idx]` and `np.take`; torch `index_select`;
               `tf.gather`; JAX `jit(jnp.take)`. Ratio to the bandwidth floor: bytes read + written (rows, ids, output)
               over the copy bandwidth measured in this run with a large `np.copyto`.
               Target: segflow <= 1.4x the floor.
  dedup        an IndexedSlices gradient of 1e5 rows (64 wide) with ids drawn from 1e6 with repeats,
               duplicates summed as the optimizers do: segflow `unique` + `unsorted_segment_sum`
               (eager ops); torch `unique(return_inverse=True)` + `index_add_`; TF `unique` +
               `unsorted_segment_sum`; JAX `jit(unique(size=n) + segment_sum)`. Target: segflow
               <= 0.7x torch.
  adam_step    one sparse Adam step on the table with that gradient: segflow LazyAdamOptimizer and
               AdamOptimizer (TF-faithful: every row's moments decay, so it touches the whole table)
               eagerly; torch SparseAdam (lazy) and TF's tf.compat.v1.train.AdamOptimizer (eager).

Every number is the median of several timed calls (the machine is shared and noisy); ratios are
ours / theirs (or / floor), so below 1 means segflow is faster. Missing frameworks are skipped.
`--timer cpu` uses this process's CPU time (less disturbed by other busy processes; it adds up all
threads of a parallel kernel).

Three thread pools share the cores here (Numba's, PyTorch's OpenMP, TensorFlow's Eigen). OpenMP
threads that spin-wait after a parallel region starve the others' next kernel (torch's
unique + index_add_ went from 8 to 300 ms, segflow's segment sum from 4 to 47 ms), so this script
sets OMP_WAIT_POLICY=PASSIVE (unless already set) before anything starts a pool. TensorFlow's (and
JAX's) rows are timed in their own rounds after the others (its pool threads spin after each op). With both
torch and TensorFlow loaded, Numba's parallel kernels still lose most of their second thread
(gather 3.2 -> 5.5 ms; `OMP_WAIT_POLICY=ACTIVE` restores them but makes every other row 2-10x
slower), so compare with one framework at a time: `--no-tf` (torch rows), `--no-torch` (TF rows).
"""
import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")   # before NumPy/Numba/torch start thread pools

import numpy as np  # noqa: E402

ROWS, DIM = 1_000_000, 64
GATHER_N = 100_000
GRAD_N = 100_000

_timer = time.perf_counter


def measure(fn, repeat):
    """Median seconds of `fn()` over `repeat` calls after a warm-up."""
    return measure_all({"fn": fn}, repeat)["fn"]


def measure_all(fns, repeat, repeats=None):
    """Median seconds per call of each of `fns` (name -> callable), after one warm-up call each.
    The calls are interleaved (round r calls every function once), so a burst of load from other
    processes hits all of them alike. `repeats` (name -> count) lowers the count of slow ones.
    Each timed call follows an untimed call of the same function: what is timed is the function
    called in a loop, as a training step calls it, not its first call after another library's
    (a 13 ms single-threaded `table[idx]` left the VM's second core asleep, and the next parallel
    gather took 2.9 ms instead of 1.9-2.3)."""
    repeats = repeats or {}
    for fn in fns.values():
        fn()
    times = {name: [] for name in fns}
    for r in range(repeat):
        for name, fn in fns.items():
            if r >= repeats.get(name, repeat):
                continue
            gc.collect()
            gc.disable()
            try:
                fn()
                t0 = _timer()
                fn()
                times[name].append(_timer() - t0)
            finally:
                gc.enable()
    return {name: statistics.median(t) for name, t in times.items()}


def _measure_groups(fns, tf_fns, repeat, repeats=None):
    """measure_all of `fns`, then of `tf_fns`: TensorFlow's pool threads spin after each op and,
    interleaved, slowed the next torch call 3-4x on two cores, so TF is timed in its own rounds."""
    out = measure_all(fns, repeat, repeats)
    if tf_fns:
        out.update(measure_all(tf_fns, repeat, repeats))
    return out


def copy_bandwidth(repeat):
    """Bytes moved (read + written) per second by np.copyto of a 256 MB array."""
    src = np.ones(ROWS * DIM, np.float32)
    dst = np.empty_like(src)
    t = measure(lambda: np.copyto(dst, src), repeat)
    return 2 * src.nbytes / t


def _try_torch():
    try:
        import torch
    except ImportError:
        return None
    # One tiny SparseAdam step now: its first step imports more of torch (triton, with a CUDA build)
    # and that import crashes (SIGSEGV) once TensorFlow is loaded in the process.
    p = torch.nn.Parameter(torch.zeros(4, 2))
    opt = torch.optim.SparseAdam([p], lr=0.1)
    p.grad = torch.sparse_coo_tensor(torch.tensor([[1]]), torch.ones(1, 2), (4, 2))
    opt.step()
    return torch


def _try_jax():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)   # int64 ids stay int64, as for the other libraries
    return jax, jnp


def _jax_rows(jax, make):
    """{name: callable} for JAX rows: `make()` gives (name, jitted function, its arguments already
    on the device); each call blocks until the result is ready."""
    name, fn, args = make()
    return {name: lambda: jax.block_until_ready(fn(*args))}


def _try_tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import tensorflow as tf
    except ImportError:
        return None
    return tf


# ----------------------------------------------------------------------------------------------
# (a) gather


def bench_gather(table, idx, repeat, torch, tf):
    import segflow as sf
    fns, tf_fns = {}, {}
    t_table = sf.constant(table)
    t_idx = sf.constant(idx)
    var = sf.Variable(table, name="gather_table")
    fns["segflow sf.gather (tensor)"] = lambda: sf.gather(t_table, t_idx)
    fns["segflow var.sparse_read"] = lambda: var.sparse_read(t_idx)
    fns["numpy table[idx]"] = lambda: table[idx]
    fns["numpy np.take(axis=0)"] = lambda: np.take(table, idx, axis=0)
    if torch is not None:
        tt = torch.from_numpy(table)
        ti = torch.from_numpy(idx)
        fns["torch index_select"] = lambda: torch.index_select(tt, 0, ti)
    if tf is not None:
        ft = tf.constant(table)
        fi = tf.constant(idx)
        fv = tf.Variable(ft)
        tf_fns["tf.gather (eager)"] = lambda: tf.gather(ft, fi)
        tf_fns["tf Variable.sparse_read"] = lambda: fv.sparse_read(fi)
    jx = _try_jax()
    if jx is not None:     # timed in their own rounds, as TF: XLA's pool is a third set of threads
        jax, jnp = jx
        tf_fns.update(_jax_rows(jax, lambda: ("jax jit(take)", jax.jit(lambda t, i: jnp.take(t, i, axis=0)),
                                              (jnp.asarray(table), jnp.asarray(idx)))))
    return _measure_groups(fns, tf_fns, repeat)


# ----------------------------------------------------------------------------------------------
# (b) dedup: unique + unsorted_segment_sum


def bench_dedup(values, ids, repeat, torch, tf):
    import segflow as sf
    fns, tf_fns = {}, {}
    sv, si = sf.constant(values), sf.constant(ids)

    def segflow_dedup():
        uniq, pos = sf.unique(si)
        return sf.math.unsorted_segment_sum(sv, pos, sf.size(uniq)), uniq

    uniq, pos = sf.unique(si)
    n_unique = int(uniq.shape[0])
    fns["segflow unique + unsorted_segment_sum"] = segflow_dedup
    fns["segflow unique only"] = lambda: sf.unique(si)
    fns["segflow unsorted_segment_sum only"] = lambda: sf.math.unsorted_segment_sum(sv, pos, n_unique)

    def numpy_dedup():
        u, inv = np.unique(ids, return_inverse=True)
        out = np.zeros((u.size, values.shape[1]), values.dtype)
        np.add.at(out, inv, values)
        return out, u

    fns["numpy unique + add.at"] = numpy_dedup
    if torch is not None:
        tv, ti = torch.from_numpy(values), torch.from_numpy(ids)

        def torch_dedup():
            u, inv = torch.unique(ti, return_inverse=True)
            return torch.zeros((u.shape[0], tv.shape[1]), dtype=tv.dtype).index_add_(0, inv, tv), u

        fns["torch unique + index_add_"] = torch_dedup
    if tf is not None:
        fv, fi = tf.constant(values), tf.constant(ids)

        def tf_dedup():
            u, inv = tf.unique(fi)
            return tf.math.unsorted_segment_sum(fv, inv, tf.shape(u)[0]), u

        tf_fns["tf unique + unsorted_segment_sum"] = tf_dedup
    jx = _try_jax()
    if jx is not None:
        jax, jnp = jx
        size = int(ids.shape[0])

        def jax_dedup(v, i):     # jnp.unique needs a static size under jit: padded to len(ids)
            u, inv = jnp.unique(i, size=size, fill_value=-1, return_inverse=True)
            return jax.ops.segment_sum(v, inv.reshape(-1), size), u

        tf_fns.update(_jax_rows(jax, lambda: ("jax jit(unique + segment_sum)", jax.jit(jax_dedup),
                                              (jnp.asarray(values), jnp.asarray(ids)))))
    return _measure_groups(fns, tf_fns, repeat, {"numpy unique + add.at": max(3, repeat // 3)}), n_unique


# ----------------------------------------------------------------------------------------------
# (c) one sparse Adam step


def bench_adam(table, values, ids, repeat, torch, tf):
    import segflow as sf
    from segflow.framework import ops
    fns, tf_fns = {}, {}
    slow = max(3, repeat // 3)
    grad = ops.IndexedSlices(sf.constant(values), sf.constant(ids), sf.constant([ROWS, DIM], dtype=sf.int64))
    lazy_var, adam_var = sf.Variable(table, name="lazy_table"), sf.Variable(table, name="adam_table")
    lazy, adam = sf.train.LazyAdamOptimizer(0.001), sf.train.AdamOptimizer(0.001)
    fns["segflow LazyAdamOptimizer"] = lambda: lazy.apply_gradients([(grad, lazy_var)])
    fns["segflow AdamOptimizer (all rows decay)"] = lambda: adam.apply_gradients([(grad, adam_var)])
    if torch is not None:
        p = torch.nn.Parameter(torch.from_numpy(table.copy()))
        sopt = torch.optim.SparseAdam([p], lr=0.001)
        g = torch.sparse_coo_tensor(torch.from_numpy(ids)[None], torch.from_numpy(values), (ROWS, DIM),
                                    check_invariants=False)

        def torch_step():
            p.grad = g
            sopt.step()

        fns["torch SparseAdam (lazy)"] = torch_step
    if tf is not None:
        fv = tf.Variable(table)
        fopt = tf.compat.v1.train.AdamOptimizer(0.001)
        fg = tf.IndexedSlices(tf.constant(values), tf.constant(ids), tf.constant([ROWS, DIM], dtype=tf.int64))
        tf_fns["tf v1 AdamOptimizer (all rows decay)"] = lambda: fopt.apply_gradients([(fg, fv)])
    return _measure_groups(fns, tf_fns, repeat, {"segflow AdamOptimizer (all rows decay)": slow,
                                     "tf v1 AdamOptimizer (all rows decay)": slow})


# ----------------------------------------------------------------------------------------------


def machine():
    model = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}, NumPy {np.__version__}"


def _print_table(title, rows, ref_label, ref_value, target=None):
    if title:
        print(f"\n{title}")
    print(f"  {'impl':<44} {'median ms':>10} {ref_label:>12}")
    for name, t in rows.items():
        print(f"  {name:<44} {t * 1e3:>10.2f} {t / ref_value:>11.2f}x")
    if target:
        print(f"  target: {target}")


def main(argv=None):
    global _timer
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats")
    ap.add_argument("--timer", choices=("wall", "cpu"), default="wall")
    ap.add_argument("--json", help="write the medians (seconds) to this file")
    ap.add_argument("--no-tf", action="store_true", help="skip TensorFlow even if importable")
    ap.add_argument("--no-torch", action="store_true", help="skip PyTorch even if importable")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    if args.timer == "cpu":
        _timer = time.process_time
    repeat = 5 if args.quick else 15
    torch = None if args.no_torch else _try_torch()
    tf = None if args.no_tf else _try_tf()
    print(f"machine: {machine()}")
    print(f"timer: {args.timer}; frameworks: torch {getattr(torch, '__version__', 'absent')}, "
          f"tensorflow {getattr(tf, '__version__', 'absent')}")

    rng = np.random.default_rng(0)
    table = rng.standard_normal((ROWS, DIM), dtype=np.float32)
    gather_idx = rng.integers(0, ROWS, GATHER_N).astype(np.int64)
    grad_ids = rng.integers(0, ROWS, GRAD_N).astype(np.int64)     # uniform: ~4.8% of the ids repeat
    grad_values = rng.standard_normal((GRAD_N, DIM), dtype=np.float32)

    bw = copy_bandwidth(repeat)
    row_bytes = DIM * 4
    gather_bytes = 2 * GATHER_N * row_bytes + gather_idx.nbytes
    floor = gather_bytes / bw
    print(f"copy bandwidth (np.copyto 256 MB, read + write): {bw / 1e9:.2f} GB/s; "
          f"gather floor {floor * 1e3:.2f} ms ({gather_bytes / 1e6:.1f} MB)")
    results = {"machine": machine(), "timer": args.timer, "copy_bandwidth_Bps": bw, "gather_floor_s": floor}

    g = bench_gather(table, gather_idx, repeat, torch, tf)
    _print_table(f"(a) gather {GATHER_N} rows of {ROWS} x {DIM} float32", g, "/ floor", floor,
                 "segflow <= 1.4x floor")
    results["gather"] = g

    d, n_unique = bench_dedup(grad_values, grad_ids, repeat, torch, tf)
    ref = d.get("torch unique + index_add_")
    print(f"\n(b) dedup: {GRAD_N} gradient rows, {n_unique} distinct ids")
    _print_table("", d, "/ torch" if ref else "/ numpy", ref or d["numpy unique + add.at"],
                 "segflow <= 0.7x torch")
    results["dedup"] = d
    results["dedup_unique"] = n_unique

    a = bench_adam(table, grad_values, grad_ids, repeat, torch, tf)
    lazy_bytes = GRAD_N * row_bytes + grad_ids.nbytes + 6 * n_unique * row_bytes
    lazy_floor = lazy_bytes / bw
    aref = a.get("torch SparseAdam (lazy)")
    print(f"\n(c) one sparse Adam step; lazy floor (grad read + m, v, var rows read and written) "
          f"{lazy_floor * 1e3:.2f} ms, dense-faithful floor (3 tables read + written) "
          f"{6 * ROWS * row_bytes / bw * 1e3:.0f} ms")
    _print_table("", a, "/ torch" if aref else "/ lazy floor", aref or lazy_floor)
    for name, t in a.items():
        if "lazy" in name.lower():
            print(f"  {name}: {t / lazy_floor:.1f}x the lazy floor")
    results["adam_step"] = a
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())

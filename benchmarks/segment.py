"""Segment-reduction benchmark: segflow's public ops and kernels next to NumPy, SciPy, PyTorch,
TensorFlow and JAX.

Not a test. Run `python benchmarks/segment.py` (`--quick` for a smaller matrix). It prints the
machine, the copy bandwidth, a table per case (median ms, range ms, ratio to the fastest other
implementation, ratio to the memory floor = bytes of data + ids + output / copy bandwidth), the
public op's ratio per case, then the cold-start and warm-cache costs of a fresh process.

segflow's rows: `segflow sf.math` / `sf.sparse` / `tape` are what users call (eager public ops on
NumPy inputs, forward + tape.gradient for sum+grad); `segflow kernel` rows call the kernels
directly. Each library runs in its own process (thread pools never share one) on the same seeded
data. The processes live for the whole run and take turns inside every round, in a rotating order,
so every library is timed over the same minutes: on a shared machine whose speed drifts, the
ratios compare like with like. Within a process the implementations take turns too; each timed
call follows a wait for a quiet machine and then a warm-up burst of untimed calls of the same
function (`--warm-ms`, 200 ms by default; 0: a single untimed call), and the table gives the median
and the range over the rounds. The burst is there because this kind of VM comes back slowly from
an idle pause: after a 0.3 s pause and one untimed call, a sorted 1e6 x 16 float32 segment sum took
10.1 ms on 2 threads and 10.1 ms on 1; after five untimed calls, 3.4 and 4.7 ms (in this benchmark,
with 50 ms of warm-up 4.4 ms, with 200 ms 3.4 ms; JAX's single-threaded 3.6 ms either way). What is
timed is then the op as a training loop meets it, for every library alike; `--warm-ms 0` times
it after an idle pause. JAX is timed jitted, its inputs already on the device, with
`block_until_ready`. Libraries that are not installed are skipped. `main()` is
what `benchmarks/run_all.py` calls.
"""
import argparse
import gc
import os
import platform
import subprocess
import sys
import tempfile
import json
import time
import zlib

import numpy as np

from segflow.kernels import segment as seg

MATRIX = [  # (rows N, row width D, segments S, dtype)
    (10**6, 1, 10**3, np.float32),
    (10**6, 1, 10**6, np.float32),
    (10**6, 16, 10**4, np.float32),
    (10**5, 128, 10**3, np.float32),
    (10**6, 64, 10**5, np.float32),
    (10**6, 16, 10**4, np.float64),
    (10**6, 16, 10**4, np.int64),
]
QUICK = [(2 * 10**5, 1, 10**3, np.float32), (2 * 10**5, 16, 10**3, np.float32)]


def optional(name):
    try:
        return __import__(name)
    except Exception:  # ImportError, or a broken install: the column is skipped either way
        return None


def timeit_all(fns, repeat, quiet_s=0.0, slow_s=1.0):
    """Median seconds of each of `fns` (name -> callable) over `repeat` rounds after a warm-up.
    The implementations take turns within each round, each run started when the machine is
    quiet (waiting at most quiet_s), so on a shared machine they see the same conditions.
    One taking over slow_s a run stops after 3 rounds. A failing one gets NaN."""
    times = {}
    for name, fn in fns.items():
        try:
            fn()
            times[name] = []
        except Exception as exc:  # a competitor's missing feature must not stop the table
            print(f"  ({name} failed: {type(exc).__name__}: {exc})", flush=True)
    for round_ in range(repeat):
        for name, ts in times.items():
            if round_ >= 3 and np.median(ts) > slow_s:
                continue
            wait_for_quiet(quiet_s)
            if not ts or ts[-1] < 0.05:
                # An untimed call first: after the quiet wait the worker threads (and, on a VM,
                # the idle vCPUs) are asleep, and waking them is not the kernel's cost.
                fns[name]()
            t = time.perf_counter()
            fns[name]()
            ts.append(time.perf_counter() - t)
    return {name: float(np.median(ts)) if ts else float("nan")
            for name, ts in times.items()} | {n: float("nan") for n in fns if n not in times}


def warm_up(fn, warm_s):
    """Untimed calls of `fn`: at least one, and more until `warm_s` seconds have passed."""
    start = time.perf_counter()
    fn()
    while time.perf_counter() - start < warm_s:
        fn()


def wait_for_quiet(limit_s):
    """Wait (at most limit_s) until no other process is runnable: timings on a shared machine
    are otherwise mostly a measure of the neighbours. Returns the seconds waited."""
    start = time.perf_counter()
    calm = 0
    while time.perf_counter() - start < limit_s and calm < 3:
        try:
            with open("/proc/loadavg") as f:
                running = int(f.read().split()[3].split("/")[0])
        except (OSError, ValueError, IndexError):
            return 0.0
        calm = calm + 1 if running <= 1 else 0
        time.sleep(0.1)
    return time.perf_counter() - start


def copy_bandwidth():
    """Bytes moved per second (read + write) by a 256 MiB np.copyto."""
    src = np.ones(1 << 26, np.float32)
    dst = np.empty_like(src)
    t = timeit_all({"copy": lambda: np.copyto(dst, src)}, 7, quiet_s=5.0)["copy"]
    return 2 * src.nbytes / t


def machine():
    model = platform.processor() or platform.machine()
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return f"{model}, {os.cpu_count()} logical cores"


# ----------------------------------------------------------------------------- competitors

def numpy_impls(op, data, ids, S, sorted_ids, indices=None):
    impls = {}
    tail = data.shape[1:]
    if op == "sum":
        impls["np.add.at"] = lambda: _add_at(np.add, 0, data, ids, S)
        if data.ndim == 1 and data.dtype.kind == "f":
            impls["np.bincount"] = lambda: np.bincount(ids, data, minlength=S)
        if sorted_ids:
            impls["np.add.reduceat"] = lambda: _reduceat(data, ids, S)
    elif op == "max":
        impls["np.maximum.at"] = lambda: _add_at(np.maximum, _lowest(data.dtype), data, ids, S)
    elif op == "mean":
        impls["np.add.at/bincount"] = lambda: (_add_at(np.add, 0, data, ids, S)
                                               / np.maximum(np.bincount(ids, minlength=S), 1)
                                               .reshape((S,) + (1,) * len(tail)))
    elif op == "sparse_sum":
        impls["np.add.at(data[idx])"] = lambda: _add_at(np.add, 0, data[indices], ids, S)
        impls["np.add.reduceat(data[idx])"] = lambda: _reduceat(data[indices], ids, S)
    elif op == "sum+grad":
        grad = np.ones((S,) + tail, data.dtype)
        impls["np.add.at + take"] = lambda: (_add_at(np.add, 0, data, ids, S),
                                             np.take(grad, ids, axis=0))
    return impls


def _lowest(dtype):
    return np.finfo(dtype).min if dtype.kind == "f" else np.iinfo(dtype).min


def _add_at(ufunc, start, data, ids, S):
    out = np.full((S,) + data.shape[1:], start, data.dtype)
    ufunc.at(out, ids, data)
    return out


def _reduceat(data, ids, S):
    """Sorted ids: sums of each run with np.add.reduceat, scattered to their segments."""
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    out = np.zeros((S,) + data.shape[1:], data.dtype)
    out[ids[starts]] = np.add.reduceat(data, starts, axis=0)
    return out


def scipy_impls(op, data, ids, S, sorted_ids, indices=None):
    sparse = optional("scipy.sparse")
    if sparse is None or op not in ("sum", "sparse_sum"):
        return {}
    import scipy.sparse as sp
    n = len(ids)
    cols = np.arange(n) if op == "sum" else indices
    ones = np.ones(n, data.dtype)

    def product():
        m = sp.csr_matrix((ones, (ids, cols)), shape=(S, data.shape[0]))
        return m @ data
    return {"scipy CSR @": product}


def torch_impls(op, data, ids, S, sorted_ids, indices=None):
    torch = optional("torch")
    if torch is None:
        return {}
    x = torch.from_numpy(data)
    i = torch.from_numpy(ids)
    shape = (S,) + tuple(data.shape[1:])
    impls = {}
    if op == "sum":
        impls["torch index_add_"] = lambda: torch.zeros(shape, dtype=x.dtype).index_add_(0, i, x)
    elif op == "max":
        expanded = i.view(-1, *([1] * (x.dim() - 1))).expand_as(x)
        impls["torch scatter_reduce_ amax"] = lambda: torch.full(
            shape, _lowest(data.dtype), dtype=x.dtype).scatter_reduce_(0, expanded, x, "amax")
    elif op == "mean":
        impls["torch index_reduce_ mean"] = lambda: torch.zeros(shape, dtype=x.dtype).index_reduce_(
            0, i, x, "mean", include_self=False)
    elif op == "sparse_sum":
        idx = torch.from_numpy(indices)
        impls["torch index_add_(x[idx])"] = lambda: torch.zeros(shape, dtype=x.dtype).index_add_(
            0, i, x[idx])
    elif op == "sum+grad":
        g = torch.ones(shape, dtype=x.dtype)
        impls["torch index_add_ + index_select"] = lambda: (
            torch.zeros(shape, dtype=x.dtype).index_add_(0, i, x), g.index_select(0, i))
    return impls


def tf_impls(op, data, ids, S, sorted_ids, indices=None):
    tf = optional("tensorflow")
    if tf is None:
        return {}
    x = tf.constant(data)
    i = tf.constant(ids)
    fns = {"sum": lambda: tf.math.unsorted_segment_sum(x, i, S),
           "max": lambda: tf.math.unsorted_segment_max(x, i, S),
           "mean": lambda: tf.math.unsorted_segment_mean(x, i, S)}
    if op == "sparse_sum":
        idx = tf.constant(indices)
        fns["sparse_sum"] = lambda: tf.sparse.segment_sum(x, idx, i, num_segments=S)
    if op == "sum+grad":
        g = tf.ones((S,) + data.shape[1:], x.dtype)
        fns["sum+grad"] = lambda: (tf.math.unsorted_segment_sum(x, i, S), tf.gather(g, i))
    if op not in fns:
        return {}

    def run():
        result = fns[op]()
        return [t.numpy() for t in result] if isinstance(result, tuple) else result.numpy()
    return {f"tf {op}": run}


def jax_impls(op, data, ids, S, sorted_ids, indices=None):
    jax = optional("jax")
    if jax is None:
        return {}
    import jax.numpy as jnp
    # 64-bit cases in their own dtype: by default JAX makes float64 / int64 arrays 32-bit, and
    # then reads half the bytes the other libraries do.
    jax.config.update("jax_enable_x64", True)
    x = jnp.asarray(data)
    i = jnp.asarray(ids)
    fns = {"sum": lambda x, i: jax.ops.segment_sum(x, i, S, indices_are_sorted=sorted_ids),
           "max": lambda x, i: jax.ops.segment_max(x, i, S, indices_are_sorted=sorted_ids),
           "mean": lambda x, i: jax.ops.segment_sum(x, i, S) / jnp.maximum(
               jax.ops.segment_sum(jnp.ones_like(i, x.dtype), i, S), 1).reshape(
                   (S,) + (1,) * (x.ndim - 1))}
    if op == "sparse_sum":
        idx = jnp.asarray(indices)
        fn = jax.jit(lambda x, i: jax.ops.segment_sum(x[idx], i, S, indices_are_sorted=True))
    elif op == "sum+grad":
        # The sums and the gradient for an upstream gradient of ones given as an array, as the
        # other libraries get it (a loss of jnp.sum(...) lets XLA fold the gather of ones into a
        # fill and return a scalar instead of the sums).
        g = jnp.ones((S,) + data.shape[1:], x.dtype)

        def sums_and_grad(x, i, g):
            y, pullback = jax.vjp(lambda x: jax.ops.segment_sum(x, i, S), x)
            return y, pullback(g)[0]
        fn = jax.jit(sums_and_grad)
        return {f"jax {op}": lambda: jax.block_until_ready(fn(x, i, g))}
    else:
        fn = jax.jit(fns[op])
    return {f"jax {op}": lambda: jax.block_until_ready(fn(x, i))}


def segflow_public_impls(op, data, ids, S, sorted_ids, indices=None):
    """What users call: the public ops on NumPy inputs (borrowed, not copied), eagerly."""
    import segflow as sf
    impls = {}
    if op in ("sum", "max", "mean"):
        fn = getattr(sf.math, f"unsorted_segment_{op}")
        impls["segflow sf.math"] = lambda: fn(data, ids, S)
        if sorted_ids:
            sorted_fn = getattr(sf.math, f"segment_{op}")
            impls["segflow sf.math sorted op"] = lambda: sorted_fn(data, ids)
    elif op == "sparse_sum":
        impls["segflow sf.sparse"] = lambda: sf.sparse.segment_sum(data, indices, ids, num_segments=S)
    elif op == "sum+grad":
        x = sf.constant(data)

        def forward_backward():
            with sf.GradientTape() as tape:
                tape.watch(x)
                y = sf.math.unsorted_segment_sum(x, ids, S)
            return y, tape.gradient(y, x)
        impls["segflow tape"] = forward_backward
    return impls


def segflow_impls(op, data, ids, S, sorted_ids, indices=None):
    impls = segflow_public_impls(op, data, ids, S, sorted_ids, indices)
    if op in ("sum", "max", "mean"):
        impls["segflow kernel"] = lambda: seg.unsorted_segment_reduce(op, data, ids, S)
        if op == "sum" and data.dtype == np.float32:
            impls["segflow kernel native f32"] = lambda: seg.unsorted_sum(data, ids, S,
                                                                          accumulate="native")
    elif op == "sparse_sum":
        impls["segflow kernel"] = lambda: seg.sparse_segment_reduce("sum", data, indices, ids,
                                                                    num_segments=S)
    elif op == "sum+grad":
        grad = np.ones((S,) + data.shape[1:], data.dtype)
        impls["segflow kernels"] = lambda: (seg.unsorted_sum(data, ids, S), np.take(grad, ids, axis=0))
    return impls


COMPETITORS = (numpy_impls, scipy_impls, torch_impls, tf_impls, jax_impls)
# Each group runs in its own process: thread pools (Numba's, torch's, TF's, XLA's) never share one.
GROUPS = {"segflow": (segflow_impls,), "numpy": (numpy_impls, scipy_impls), "torch": (torch_impls,),
          "tensorflow": (tf_impls,), "jax": (jax_impls,)}
MODULES = {"segflow": "numba", "numpy": "numpy", "torch": "torch", "tensorflow": "tensorflow", "jax": "jax"}


# ----------------------------------------------------------------------------- running

def floor_bytes(op, data, ids, S, indices):
    out = S * data.itemsize * int(np.prod(data.shape[1:], dtype=np.int64))
    total = data.nbytes + ids.nbytes + out
    if op == "sparse_sum":
        total += indices.nbytes
    if op == "sum+grad":  # backward reads grad rows and ids, writes one row per data row
        total += out + ids.nbytes + data.nbytes
    return total


def case_data(op, n, D, S, dtype, order, rng):
    """(label, data, ids, indices, order) of one case, the same in every process (seeded)."""
    dtype = np.dtype(dtype)
    shape = (n,) if D == 1 else (n, D)
    data = (rng.random(shape) * 100).astype(dtype) if dtype.kind != "f" else rng.random(
        shape, dtype=np.float64).astype(dtype)
    ids = rng.integers(0, S, size=n, dtype=np.int64)
    indices = None
    if op == "sparse_sum":  # rows gathered at random, sorted segment ids
        indices = rng.integers(0, n, size=n, dtype=np.int64)
        order = "sorted"
    if order == "sorted":
        ids.sort()
    label = f"{op} N={n:.0e} D={D} S={S:.0e} {dtype.name} {order}"
    return label, data, ids, indices, order


def _case(job):
    op, n, D, S, dtype, order = job
    return case_data(op, n, D, S, dtype, order, np.random.default_rng(zlib.crc32(repr(job).encode())))


def serve(group):
    """In a child process: one library group's implementations, driven over stdin / stdout by the
    parent (`interleaved`). Commands (JSON lines): ["prepare", job] builds the case's data (the
    same in every process) and its impls, each called once; ["round", quiet_s, warm_s] times every
    impl once, each after a quiet wait and a warm-up burst (`warm_up`); ["drop"]. Replies are JSON lines."""
    fns, floor = {}, 0
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd[0] == "prepare":
            fns.clear()
            label, data, ids, indices, order = _case(tuple(cmd[1]))
            S = cmd[1][3]
            for make in GROUPS[group]:
                fns.update(make(cmd[1][0], data, ids, S, order == "sorted", indices))
            failed = {}
            for name, fn in list(fns.items()):
                try:
                    fn()
                except Exception as exc:  # a competitor's missing feature must not stop the table
                    failed[name] = f"{type(exc).__name__}: {exc}"[:160]
                    del fns[name]
            reply = {"label": label, "floor_bytes": floor_bytes(cmd[1][0], data, ids, S, indices),
                     "impls": list(fns), "failed": failed}
        elif cmd[0] == "round":
            reply = {}
            for name, fn in fns.items():
                wait_for_quiet(cmd[1])
                warm_up(fn, cmd[2])   # untimed: after the quiet wait the threads (and vCPUs) sleep
                t = time.perf_counter()
                fn()
                reply[name] = time.perf_counter() - t
        else:
            fns.clear()
            gc.collect()
            reply = {}
        print(json.dumps(reply), flush=True)


class _Worker:
    def __init__(self, group, env):
        self.group = group
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve", group],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                     env=env)

    def ask(self, *cmd):
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.group} process ended (exit code {self.proc.wait()})")
        return json.loads(line)

    def close(self):
        try:
            self.proc.stdin.close()
        finally:
            self.proc.wait(timeout=60)


def interleaved(groups, jobs, repeat, quiet_s, slow_s=1.0, warm_s=0.05):
    """{label: {"floor_bytes", "times": {impl: median s}, "spread": {impl: (min, max) s}}}.
    Every library group lives in its own process for the whole run (thread pools never share a
    process), and the processes take turns inside every round, in a rotating order, so each
    library's rounds are spread over the same minutes as every other's: on a shared machine
    whose speed drifts, the ratios compare like with like. An impl over slow_s stops after 3."""
    env = dict(os.environ, PYTHONWARNINGS="ignore", TF_CPP_MIN_LOG_LEVEL="3")
    workers = []
    for g in groups:
        try:
            workers.append(_Worker(g, env))
        except OSError as exc:
            print(f"  ({g}: not started: {exc})", flush=True)
    results = {}
    try:
        for job in jobs:
            label, floor, names = None, 0, {}
            for w in list(workers):
                try:
                    rep = w.ask("prepare", list(job))
                except RuntimeError as exc:
                    print(f"  ({exc})", flush=True)
                    workers.remove(w)
                    continue
                label, floor = rep["label"], rep["floor_bytes"]
                names[w.group] = rep["impls"]
                for name, why in rep["failed"].items():
                    print(f"  ({name} failed: {why})", flush=True)
            times = {n: [] for g in names.values() for n in g}
            for r in range(repeat):
                k = r % max(1, len(workers))
                for w in workers[k:] + workers[:k]:
                    if r >= 3 and all(np.median(times[n]) > slow_s for n in names.get(w.group, [])):
                        continue
                    for name, t in w.ask("round", quiet_s, warm_s).items():
                        times[name].append(t)
            for w in workers:
                w.ask("drop")
            results[label] = {"floor_bytes": floor,
                              "times": {n: float(np.median(ts)) if ts else float("nan")
                                        for n, ts in times.items()},
                              "spread": {n: (min(ts), max(ts)) for n, ts in times.items() if ts}}
            print(f"  measured {label}", file=sys.stderr, flush=True)
    finally:
        for w in workers:
            w.close()
    return results


def print_case(label, rows, floor_s, spread=None):
    others = [t for name, t in rows.items() if not name.startswith("segflow") and np.isfinite(t)]
    best = min(others) if others else float("nan")
    for name, t in rows.items():
        lo, hi = (spread or {}).get(name, (float("nan"), float("nan")))
        print(f"| {label} | {name} | {t * 1e3:.2f} | {lo * 1e3:.1f}-{hi * 1e3:.1f} | {t / best:.2f} |"
              f" {t / floor_s:.2f} |", flush=True)
    public = [t for name, t in rows.items() if name.startswith("segflow sf.") or name == "segflow tape"]
    return (min(public) / best) if public and others else float("nan")


def cold_start(n=10**6, S=10**3):
    """Seconds for a fresh process to import segflow's kernels and make its first call: with an
    empty Numba cache (everything compiles) and then with that cache warm."""
    code = ("import time; t0 = time.perf_counter()\n"
            "import numpy as np\n"
            "from segflow.kernels import segment\n"
            "t1 = time.perf_counter()\n"
            f"data = np.ones({n}, np.float32); ids = np.arange({n}) % {S}\n"
            "t2 = time.perf_counter()\n"
            f"segment.unsorted_sum(data, ids, {S})\n"
            "t3 = time.perf_counter()\n"
            "print(t1 - t0, t3 - t2)\n")
    results = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for state in ("empty cache", "warm cache"):
            t = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                 text=True, check=True).stdout.split()
            results[state] = (time.perf_counter() - t, float(out[0]), float(out[1]))
    return results


def jobs_for(matrix):
    jobs = []
    for n, D, S, dtype in matrix:
        for order in ("random", "sorted"):
            jobs.append(("sum", n, D, S, np.dtype(dtype).name, order))
    first = matrix[2] if len(matrix) > 2 else matrix[-1]  # the D=16 S=1e4 case
    for op in ("max", "mean", "sparse_sum", "sum+grad"):
        for order in ("random", "sorted"):
            if op == "sparse_sum" and order == "sorted":
                continue
            jobs.append((op,) + tuple(first[:3]) + (np.dtype(first[3]).name, order))
    return jobs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small matrix, for a smoke run")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", default="", help="run the cases whose label has this text")
    parser.add_argument("--quiet-wait", type=float, default=5.0,
                        help="seconds to wait, before each timed run, for other processes to idle")
    parser.add_argument("--warm-ms", type=float, default=200.0,
                        help="untimed calls for this many ms before each timed call (0: one call)")
    parser.add_argument("--serve", help=argparse.SUPPRESS)   # child mode: one library's impls
    args = parser.parse_args(argv)
    matrix = QUICK if args.quick else MATRIX
    jobs = [j for j in jobs_for(matrix)
            if not args.only or args.only in f"{j[0]} N={j[1]:.0e} D={j[2]} S={j[3]:.0e} {j[4]} {j[5]}"]
    if args.serve:
        serve(args.serve)
        return 0
    import segflow.kernels._common as common
    workers = common.worker_count()
    import numba
    print(f"machine: {machine()}; numba threads: {workers} ({numba.threading_layer()})")
    present = [g for g in GROUPS if optional(MODULES[g])]
    print("libraries: " + ", ".join(f"{g} {'yes' if g in present else 'no'}" for g in GROUPS)
          + "; each in its own process, the processes taking turns in every round")
    wait_for_quiet(args.quiet_wait)
    bandwidth = copy_bandwidth()
    print(f"copy bandwidth (np.copyto, read + write): {bandwidth / 1e9:.1f} GB/s")
    print()
    print(f"protocol: quiet wait up to {args.quiet_wait} s, then {args.warm_ms:g} ms of untimed calls,"
          " then one timed call, per impl and round")
    merged = interleaved(present, jobs, args.repeat, args.quiet_wait, warm_s=args.warm_ms / 1e3)
    print("| case | impl | median ms | range ms | x fastest other | x floor |")
    print("|---|---|---|---|---|---|")
    ratios = {}
    for label, entry in merged.items():
        ratios[label] = print_case(label, entry["times"], entry["floor_bytes"] / bandwidth,
                                   entry.get("spread"))
    if ratios:
        print("\nPublic segflow op (best of its rows) / fastest other library:")
        for label, r in ratios.items():
            print(f"  {r:5.2f}  {label}")
    with open("/proc/loadavg") as f:
        print(f"\nload average at the end (1, 5, 15 min): {' '.join(f.read().split()[:3])}")
    for state, (wall, imp, call) in cold_start().items():
        print(f"fresh process, {state}: {wall:.2f} s wall (import {imp:.2f} s,"
              f" first unsorted_sum of 1e6 float32 {call * 1e3:.1f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

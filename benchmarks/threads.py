"""Parallel kernels on a machine that is not idle: segflow's public ops beside a busy process, beside
a second segflow job, and in a process where torch has run; each threading setting side by side.

Not a test. Run `python benchmarks/threads.py` (`--quick`: fewer repeats and settings). Every cell
is measured in a fresh process (thread pools never carry over), and prints the median ms and the
ratio to the same setting's idle time. The last column says whether every result was bit-identical
to the idle run's (the kernels' results must not depend on scheduling or thread count).

Scenarios:
- idle: nothing else running (as far as this machine allows);
- busy: one CPU-bound Python process beside it;
- twin: a second process running the same segflow op in a loop (two jobs on one box, or two Dask
  workers on two cores);
- torch: torch imported in the same process, a torch op run between every timed call (torch's own
  OpenMP pool next to Numba's).

Settings: segflow's default (Numba's default layer; GNU OpenMP started with passive waiting), GNU
OpenMP with its own default (long spin: what Numba does without segflow's setting), OpenMP with a
short spin (GOMP_SPINCOUNT=10000), the workqueue layer, and TBB when its library loads.
`segflow bench` (`make bench`) runs it as a script.
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

SETTINGS = {   # name -> environment changes
    "segflow default": {},
    "omp, long spin": {"NUMBA_THREADING_LAYER": "omp", "GOMP_SPINCOUNT": "300000"},
    "omp, short spin": {"NUMBA_THREADING_LAYER": "omp", "GOMP_SPINCOUNT": "10000"},
    "workqueue": {"NUMBA_THREADING_LAYER": "workqueue"},
    "tbb": {"NUMBA_THREADING_LAYER": "tbb"},
}
QUICK_SETTINGS = ("segflow default", "omp, long spin")
SCENARIOS = ("idle", "busy", "twin", "torch")

BURNER = "while True:\n    pass\n"
TWIN = """
import time, numpy as np, segflow as sf
rng = np.random.default_rng(1)
d = rng.standard_normal((10**6, 16), dtype=np.float32)
i = rng.integers(0, 10**4, 10**6).astype(np.int32)
t = time.time()
while time.time() - t < {seconds}:
    sf.math.unsorted_segment_sum(d, i, 10**4)
"""


def _cases():
    import segflow as sf
    rng = np.random.default_rng(0)
    n = 10**6
    d16 = rng.standard_normal((n, 16), dtype=np.float32)
    rand = rng.integers(0, 10**4, n).astype(np.int32)
    srt = np.sort(rand)
    d1 = rng.standard_normal(n, dtype=np.float32)
    big = rng.integers(0, n, n).astype(np.int32)
    table = rng.standard_normal((n, 64), dtype=np.float32)
    rows = rng.integers(0, n, 10**5).astype(np.int32)
    return {
        "unsorted_segment_sum 1e6x16 random": lambda: sf.math.unsorted_segment_sum(d16, rand, 10**4),
        "unsorted_segment_sum 1e6x16 sorted": lambda: sf.math.unsorted_segment_sum(d16, srt, 10**4),
        "unsorted_segment_max 1e6x1, 1e6 segs": lambda: sf.math.unsorted_segment_max(d1, big, n),
        "segment_mean 1e6x16 sorted": lambda: sf.math.segment_mean(d16, srt),
        "gather 1e5 of 1e6x64": lambda: sf.gather(table, rows),
    }


def worker(scenario, repeat):
    """Runs in the measured process: times every case, prints one JSON line."""
    others = []
    torch = None
    if scenario == "torch":
        import torch
        a = torch.randn(512, 512)
    cases = _cases()
    for fn in cases.values():
        fn()
    if scenario == "busy":
        others.append(subprocess.Popen([sys.executable, "-c", BURNER]))
    elif scenario == "twin":
        seconds = 10 + 3 * repeat
        others.append(subprocess.Popen([sys.executable, "-c", TWIN.format(seconds=seconds)]))
    try:
        if others:
            time.sleep(1.5)
        out = {}
        for name, fn in cases.items():
            ts = []
            digest = hashlib.sha1(np.asarray(fn()).tobytes()).hexdigest()
            for _ in range(repeat):
                if torch is not None:
                    (a @ a).sum()
                t = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t)
            out[name] = (float(np.median(ts)), digest)
    finally:
        for p in others:
            p.kill()
    import numba
    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "none"
    print(json.dumps({"layer": layer, "cases": out}))


def run_cell(setting, scenario, repeat):
    env = dict(os.environ)
    for k in ("NUMBA_THREADING_LAYER", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
        env.pop(k, None)
    env.update(SETTINGS[setting])
    if setting == "tbb":   # pip's tbb package puts libtbb.so.12 in <prefix>/lib, off the loader's path
        env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [os.path.join(sys.prefix, "lib"),
                                                              env.get("LD_LIBRARY_PATH")]))
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", scenario, "--repeat", str(repeat)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["?"]
        return None, tail[0][:120]
    return json.loads(r.stdout.strip().splitlines()[-1]), None


def have_torch():
    try:
        import importlib.util
        return importlib.util.find_spec("torch") is not None
    except Exception:
        return False


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--worker")
    ap.add_argument("--repeat", type=int, default=0)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.worker, args.repeat)
        return 0
    repeat = 9 if args.quick else 25
    settings = QUICK_SETTINGS if args.quick else tuple(SETTINGS)
    scenarios = [s for s in SCENARIOS if s != "torch" or have_torch()]
    if "torch" not in scenarios:
        print("(torch not installed: no 'torch' scenario)")
    print(f"# Parallel kernels on a shared machine ({os.cpu_count()} cores), median ms of {repeat}; "
          f"ratio to the setting's idle time\n", flush=True)
    worst = {}
    for setting in settings:
        results = {}
        for scenario in scenarios:
            res, err = run_cell(setting, scenario, repeat)
            if err:
                print(f"  ({setting} / {scenario}: {err})", flush=True)
            results[scenario] = res
        if results.get("idle") is None:
            continue
        layer = results["idle"]["layer"]
        print(f"## {setting} (layer: {layer})\n")
        print("| case | " + " | ".join(scenarios) + " | same bits |")
        print("|---" * (len(scenarios) + 2) + "|")
        for case, (t0, h0) in results["idle"]["cases"].items():
            cells, same = [], True
            for sc in scenarios:
                r = results.get(sc)
                if r is None:
                    cells.append("-")
                    continue
                t, h = r["cases"][case]
                same &= h == h0
                cells.append(f"{t * 1e3:.1f}" if sc == "idle" else f"{t * 1e3:.1f} ({t / t0:.2f}x)")
                if sc != "idle":
                    worst[(setting, sc)] = max(worst.get((setting, sc), 0), t / t0)
            print(f"| {case} | " + " | ".join(cells) + f" | {'yes' if same else 'NO'} |")
        print(flush=True)
    if worst:
        print("Worst ratio to idle per setting and scenario:")
        for (setting, sc), v in worst.items():
            print(f"  {setting:18s} {sc:6s} {v:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Start-up costs in fresh processes: `import segflow`, its first small segment op, its first large
one (Numba imported, kernels loaded from the warm cache), next to importing NumPy, torch, JAX and
TensorFlow.

Not a test. Run `python benchmarks/startup.py` (`--quick`: 5 processes per row instead of 10).
Every row is the median over fresh interpreters, after one untimed process has written the
bytecode (.pyc) and Numba caches, as a user's installed copy has them. PYTHONDONTWRITEBYTECODE is
removed from the children's environment for that reason. `segflow bench` (`make bench`) runs it as a script.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

SEGFLOW = """
import json, time
t0 = time.perf_counter(); c0 = time.process_time()
import segflow as sf
t1 = time.perf_counter(); c1 = time.process_time()
import numpy as np
small = sf.math.unsorted_segment_sum(np.arange(64.0).reshape(32, 2), np.arange(32) % 5, 5)
t2 = time.perf_counter()
data = np.ones((200000, 4), np.float32); ids = np.arange(200000) % 1000
t3 = time.perf_counter()
large = sf.math.unsorted_segment_sum(data, ids, 1000)
t4 = time.perf_counter()
print(json.dumps({"import segflow": t1 - t0, "import segflow (CPU)": c1 - c0,
                  "first small segment op": t2 - t1, "first large segment op": t4 - t3}))
"""

PEER = """
import json, time
t0 = time.perf_counter()
import {module}
print(json.dumps({{"import {module}": time.perf_counter() - t0}}))
"""


def _env():
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _run(code):
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env())
    if r.returncode != 0:
        return None
    return json.loads(r.stdout.strip().splitlines()[-1])


def measure(code, runs):
    if _run(code) is None:               # warm-up: writes .pyc files and Numba's cache
        return {}
    found = {}
    for _ in range(runs):
        for k, v in (_run(code) or {}).items():
            found.setdefault(k, []).append(v)
    return {k: float(np.median(v)) for k, v in found.items()}


TARGETS = {"import segflow": 0.25, "first small segment op": 0.05}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    runs = 5 if args.quick else 10
    rows = measure(SEGFLOW, runs)
    for module in ("numpy", "torch", "jax", "tensorflow"):
        rows.update(measure(PEER.format(module=module), 3 if module != "numpy" else runs))
    print(f"\n# Start-up, median of {runs} fresh processes (warm .pyc and Numba caches)\n")
    print("| what | seconds | target |")
    print("|---|---|---|")
    for k, v in rows.items():
        target = TARGETS.get(k)
        print(f"| {k} | {v:.3f} | {'<= ' + str(target) if target else ''} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The long fuzz run: many cases of tests/fuzz/cases.py in worker processes.

    python tests/fuzz/run_fuzz.py --cases 100000 --workers 2
    python tests/fuzz/run_fuzz.py --seeds 17,4242          # rerun particular cases
    python tests/fuzz/run_fuzz.py --cases 5000 --family scatter_var --mode graph --json out.json

Each worker imports segflow once and runs cases in batches of consecutive seeds, under a memory
limit (--mem-gb, RLIMIT_AS), writing one JSON line per case. A worker that dies (segfault, abort,
OOM kill) is reported as a crash of the case it was running and restarted at the next seed; one
that stops answering for --timeout seconds is a hang: it is killed and restarted the same way.

The summary counts cases run, passed, raised a segflow error (where one is allowed), and the
failures by kind (crash / hang / wrong answer / non-segflow exception), grouped by cause, each with
a reproducer: `python tests/fuzz/cases.py --seed N` prints the case and runs it. The exit status is
1 when anything failed.
"""
import argparse
import collections
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WRONG = ("accepted-invalid", "wrong-value", "rejected-valid", "state-changed", "mutated-input")


# ------------------------------------------------------------------------------------------------
# Worker side


def worker_main(mem_gb):
    if mem_gb:
        import resource
        limit = int(mem_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    sys.path.insert(0, HERE)
    import warnings
    warnings.simplefilter("ignore")
    import cases
    cases._segflow()
    out = sys.stdout
    out.write("READY\n")
    out.flush()
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        family = None if parts[0] == "-" else parts[0]
        mode = None if parts[1] == "-" else parts[1]
        safe = parts[2] == "1"
        for item in parts[3:]:
            seed = int(item) if item.lstrip("-").isdigit() else item
            t0 = time.perf_counter()
            try:
                if isinstance(seed, int):
                    o = cases.run_case(seed, family, mode, safe)
                else:     # a KNOWN_DANGEROUS case by name
                    o = cases.execute(cases.explicit_case(seed))
            except BaseException as e:  # noqa: BLE001 - a worker must report, not die
                o = {"seed": seed, "status": "fail", "kind": "bad-case", "detail": f"{type(e).__name__}: {e}",
                     "op": family, "mode": mode}
            if o.get("status") != "fail":
                o = {"seed": seed, "status": o["status"], "op": o.get("op")}
            o["t"] = round(time.perf_counter() - t0, 5)
            out.write(json.dumps(o, default=str) + "\n")
            out.flush()
        out.write("DONE\n")
        out.flush()


# ------------------------------------------------------------------------------------------------
# Parent side


class Lines:
    """Lines from a pipe, with a timeout (select on the raw fd: no hidden buffering)."""

    def __init__(self, fd):
        self.fd = fd
        self.buf = b""

    def readline(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return "TIMEOUT"
            r, _, _ = select.select([self.fd], [], [], left)
            if not r:
                return "TIMEOUT"
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode("utf-8", "replace")


class Worker:
    def __init__(self, args):
        self.err = tempfile.TemporaryFile()
        env = dict(os.environ, PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
                   OPENBLAS_NUM_THREADS="1")
        src = os.path.join(ROOT, "src")
        env["PYTHONPATH"] = (env["PYTHONPATH"] + os.pathsep if env.get("PYTHONPATH") else "") + src
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker", "--mem-gb",
                                      str(args.mem_gb)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.err, cwd=ROOT, env=env, start_new_session=True)
        self.lines = Lines(self.proc.stdout.fileno())
        first = self.lines.readline(args.start_timeout)
        if first != "READY":
            tail = self.stderr_tail()
            self.kill()
            raise RuntimeError(f"worker did not start ({first!r}): {tail}")

    def send(self, items, args):
        msg = f"{args.family or '-'} {args.mode or '-'} {1 if args.safe else 0} {' '.join(map(str, items))}\n"
        self.proc.stdin.write(msg.encode())
        self.proc.stdin.flush()

    def stderr_tail(self, n=6):
        try:
            self.err.seek(0)
            text = self.err.read().decode("utf-8", "replace").strip().splitlines()
        except Exception:  # noqa: BLE001
            return ""
        return " | ".join(text[-n:])[-800:]

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    def returncode(self):
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
            return self.proc.returncode


def _signame(rc):
    if rc is not None and rc < 0:
        try:
            return signal.Signals(-rc).name
        except ValueError:
            return f"signal {-rc}"
    return f"exit status {rc}"


class Results:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = collections.Counter()
        self.failures = []
        self.outcomes = []
        self.done = 0
        self.time_by_op = collections.defaultdict(lambda: [0, 0.0])

    def add(self, o):
        with self.lock:
            self.done += 1
            st = o.get("status")
            self.counts[st] += 1
            self.outcomes.append(o)
            if st == "fail":
                self.failures.append(o)
            if "t" in o:
                rec = self.time_by_op[o.get("op")]
                rec[0] += 1
                rec[1] += o["t"]


def run_slot(args, batches, results, lock):
    worker = None
    try:
        while True:
            with lock:
                if not batches:
                    return
                seeds = batches.pop(0)
            pending = list(seeds)
            while pending:
                if worker is None:
                    worker = Worker(args)
                worker.send(pending, args)
                while pending:
                    line = worker.lines.readline(args.timeout)
                    if line == "TIMEOUT":
                        seed = pending.pop(0)
                        worker.kill()
                        results.add({"seed": seed, "status": "fail", "kind": "hang",
                                     "detail": f"no answer within {args.timeout} s", "op": _op_of(seed, args)})
                        worker = None
                        break
                    if line is None:
                        seed = pending.pop(0)
                        rc = worker.returncode()
                        results.add({"seed": seed, "status": "fail", "kind": "crash",
                                     "detail": f"worker died: {_signame(rc)}; stderr: {worker.stderr_tail()}",
                                     "op": _op_of(seed, args)})
                        worker = None
                        break
                    if line == "DONE":
                        continue
                    try:
                        o = json.loads(line)
                    except ValueError:
                        continue
                    if pending and o.get("seed") == pending[0]:
                        pending.pop(0)
                        results.add(o)
            if worker is not None:
                # drain the DONE of this batch
                pass
    finally:
        if worker is not None:
            worker.kill()


_OP_CACHE = {}


def _seed_key(o):
    seed = o.get("seed")
    return (isinstance(seed, str), seed if isinstance(seed, int) else str(seed))


def _op_of(seed, args):
    """The op of a case (built in this process: generating a case never runs segflow)."""
    if isinstance(seed, str):
        return seed
    try:
        sys.path.insert(0, HERE)
        import cases
        c = cases.make_case(seed, args.family, args.mode, args.safe)
        return f"{c.op}" + ("" if c.mode == "eager" else " [graph]")
    except Exception as e:  # noqa: BLE001
        return f"? ({type(e).__name__})"


def _norm(text):
    text = re.sub(r"^[A-Za-z0-9_]+( '[^']*')?: ", "", (text or "").strip())
    text = re.sub(r"(input '[a-z_]+': )", r"\1", text)
    text = re.sub(r"-?\d+(\.\d+)?(e[+-]?\d+)?", "#", text)
    text = re.sub(r"\[[#, ]*\]|\([#, ]*\)", "[…]", text)
    return text[:90]


def group_key(o):
    kind = o.get("kind")
    if kind in ("crash", "hang"):
        return (kind, o.get("op"), "")
    if kind == "non-segflow-exception":
        return (kind, o.get("exc", ""), _norm(o.get("detail", "").split(":", 1)[-1]) + " @ " + (o.get("where") or ""))
    if kind == "rejected-valid":
        return (kind, o.get("exc", ""), _norm(o.get("detail", "").split(":", 1)[-1]))
    if kind == "accepted-invalid":
        return (kind, o.get("op"), _norm(o.get("why", "")))
    if kind == "wrong-value":
        d = o.get("detail", "")
        what = "values" if "values differ" in d else ("shape" if "shape" in d else ("dtype" if "dtype" in d else d))
        return (kind, o.get("op"), what)
    return (kind, o.get("op"), _norm(o.get("detail", "")))


def summarize(results, elapsed, args, out=sys.stdout):
    c = results.counts
    fails = results.failures
    kinds = collections.Counter(f.get("kind") for f in fails)
    n = results.done
    rate = n / elapsed if elapsed else 0
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p(f"cases run: {n}   passed: {c['pass']}   raised a segflow error: {c['raised']}   failed: {len(fails)}")
    busy = sum(t for _, t in results.time_by_op.values())
    timed = sum(k for k, _ in results.time_by_op.values())
    p(f"time: {elapsed:.1f} s, {rate:.0f} cases/s with {args.workers} workers ({rate / max(args.workers, 1):.0f} "
      f"per worker; {timed / busy if busy else 0:.0f} cases/s per worker while running cases, not counting "
      f"start-up, restarts and hangs)")
    wrong = sum(kinds[k] for k in WRONG)
    p(f"failures by kind: crash {kinds['crash']}, hang {kinds['hang']}, wrong answer {wrong} "
      f"({', '.join(f'{k} {kinds[k]}' for k in WRONG)}), non-segflow exception {kinds['non-segflow-exception']}"
      + (f", broken case {kinds['bad-case']}" if kinds["bad-case"] else ""))
    if args.timing:
        p("time by op (cases, mean ms, total s):")
        for op, (k, t) in sorted(results.time_by_op.items(), key=lambda kv: -kv[1][1])[:15]:
            p(f"    {op}: {k}, {t / k * 1000:.1f} ms, {t:.1f} s")
    groups = collections.defaultdict(list)
    for f in fails:
        groups[group_key(f)].append(f)
    if not groups:
        return
    p(f"\ndistinct failures: {len(groups)} groups (largest first)")
    order = {"crash": 0, "hang": 1, "non-segflow-exception": 2, "accepted-invalid": 3, "wrong-value": 4,
             "state-changed": 5, "mutated-input": 6, "rejected-valid": 7, "bad-case": 8}
    for key, items in sorted(groups.items(), key=lambda kv: (order.get(kv[0][0], 9), -len(kv[1]))):
        items.sort(key=_seed_key)
        first = items[0]
        ops = collections.Counter(f"{o.get('op')}" + ("" if o.get("mode") in (None, "eager") else " [graph]")
                                  for o in items)
        p(f"\n[{len(items)}] {key[0]}: {key[1]} {('- ' + key[2]) if key[2] else ''}")
        p(f"    ops: {', '.join(f'{k} ({v})' for k, v in ops.most_common(8))}"
          + (" ..." if len(ops) > 8 else ""))
        p(f"    first: {first.get('detail', '')[:400]}")
        if first.get("why") and first.get("why") != "valid":
            p(f"    reference: {first.get('why')}")
        feats = [set(o.get("features") or ()) for o in items]
        common = sorted(set.intersection(*feats)) if feats and all(feats) else []
        if common:
            p(f"    features in every case: {', '.join(common)}")
        how = f"--explicit {first['seed']}" if isinstance(first["seed"], str) else (
            f"--seed {first['seed']}" + (f" --family {args.family}" if args.family else "")
            + (f" --mode {args.mode}" if args.mode else "") + (" --safe" if args.safe else ""))
        p(f"    reproduce: python tests/fuzz/cases.py {how}"
          + f"   (seeds: {', '.join(str(o['seed']) for o in items[:6])}{' ...' if len(items) > 6 else ''})")


def run_items(items, args, progress=False):
    """Runs cases (seeds, or names of KNOWN_DANGEROUS cases) in args.workers worker processes."""
    batches = [items[i:i + args.batch] for i in range(0, len(items), args.batch)]
    if len(batches) < args.workers and len(items) > 1:       # spread a short list over the workers
        k = max(1, -(-len(items) // max(args.workers, 1)))
        batches = [items[i:i + k] for i in range(0, len(items), k)]
    results = Results()
    lock = threading.Lock()
    threads = [threading.Thread(target=run_slot, args=(args, batches, results, lock), daemon=True)
               for _ in range(max(1, args.workers))]
    for t in threads:
        t.start()
    last = time.time()
    try:
        while any(t.is_alive() for t in threads):
            for t in threads:
                t.join(timeout=1.0)
            if progress and time.time() - last > 30:
                last = time.time()
                print(f"... {results.done}/{len(items)} cases, {len(results.failures)} failures", file=sys.stderr,
                      flush=True)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
    return results


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--start", type=int, default=0, help="first seed")
    ap.add_argument("--seeds", help="comma-separated seeds to run instead of a range")
    ap.add_argument("--explicit", help="'all' or comma-separated names of cases.KNOWN_DANGEROUS to run instead")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=250)
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds one case may take (a hang)")
    ap.add_argument("--start-timeout", type=float, default=300.0)
    ap.add_argument("--mem-gb", type=float, default=3.0, help="address-space limit of a worker (0: none)")
    ap.add_argument("--family", help="only this family (see cases.FAMILIES)")
    ap.add_argument("--mode", choices=["eager", "graph"])
    ap.add_argument("--safe", action="store_true", help="leave out the once-crashing and huge inputs")
    ap.add_argument("--json", help="write every failure (one JSON object a line) here")
    ap.add_argument("--timing", action="store_true", help="print where the time goes, by op")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        worker_main(args.mem_gb)
        return 0
    if args.explicit:
        import importlib
        sys.path.insert(0, HERE)
        cases = importlib.import_module("cases")
        seeds = list(cases.KNOWN_DANGEROUS) if args.explicit == "all" else args.explicit.split(",")
    elif args.seeds:
        seeds = [int(s) for s in args.seeds.split(",")]
    else:
        seeds = list(range(args.start, args.start + args.cases))
    t0 = time.time()
    results = run_items(seeds, args, progress=True)
    elapsed = time.time() - t0
    summarize(results, elapsed, args)
    if args.json:
        with open(args.json, "w") as f:
            for o in sorted(results.failures, key=_seed_key):
                f.write(json.dumps(o, default=str) + "\n")
    return 1 if results.failures else 0


if __name__ == "__main__":
    sys.exit(main())

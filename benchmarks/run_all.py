"""Runs every benchmark script in this folder: `make bench` (or `.venv/bin/python benchmarks/run_all.py`).

Each script is run as `__main__` (its own `main()`), one after another in this process. A script
that is not there yet is skipped with a message; one that fails is reported and the others still
run (the exit status is then 1).
"""
import os
import runpy
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = ("startup.py", "overhead.py", "segment.py", "accuracy.py", "sparse.py", "embedding.py", "threads.py",
           "models.py", "models_trees.py", "scale.py", "plots.py")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if HERE not in sys.path:
        sys.path.insert(0, HERE)
    failed = []
    for script in SCRIPTS:
        path = os.path.join(HERE, script)
        if not os.path.exists(path):
            print(f"=== {script}: not present, skipped\n", flush=True)
            continue
        print(f"=== {script}", flush=True)
        saved_argv = sys.argv
        sys.argv = [path] + list(argv)
        t0 = time.perf_counter()
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit as e:
            if e.code not in (None, 0):
                failed.append(script)
                print(f"=== {script}: exited with status {e.code}", flush=True)
        except Exception:
            failed.append(script)
            traceback.print_exc()
            print(f"=== {script}: FAILED", flush=True)
        finally:
            sys.argv = saved_argv
        print(f"=== {script}: {time.perf_counter() - t0:.1f} s\n", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

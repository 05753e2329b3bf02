"""`segflow bench`: runs the benchmark scripts of a source checkout (benchmarks/ beside src/), each in
its own process so that one library's thread pool never slows another's, with a progress bar on a
terminal. The scripts print their own ratio tables; `make bench` is the same run plus the install of
the peers (TensorFlow, PyTorch, JAX, scikit-learn, LightGBM)."""
import os
import pathlib
import runpy
import subprocess
import sys
import time

try:
    from tqdm import tqdm
except ImportError:     # no progress bar without tqdm; the scripts' own output says the same
    tqdm = None


def benchmarks_dir():
    """The checkout's benchmarks/ folder, or None when segflow is installed without its sources."""
    here = pathlib.Path(__file__).resolve()
    for parent in here.parents:
        candidate = parent / "benchmarks" / "run_all.py"
        if candidate.exists():
            return candidate.parent
    return None


def scripts(folder):
    """The scripts `run_all.py` lists, in its order."""
    listed = runpy.run_path(str(folder / "run_all.py"))["SCRIPTS"]
    return [s for s in listed if (folder / s).exists()]


def run(names=(), list_only=False, script_args=()):
    """Runs the named scripts (default: all of run_all.SCRIPTS), each as `python script args...`."""
    folder = benchmarks_dir()
    if folder is None:
        print("segflow bench: the benchmarks live in the source checkout (benchmarks/ beside src/); "
              "clone the repository and run `make bench` there", file=sys.stderr)
        return 2
    available = scripts(folder)
    if list_only:
        print("\n".join(available))
        return 0
    chosen = [n if n.endswith(".py") else n + ".py" for n in names] or available
    unknown = [n for n in chosen if n not in available]
    if unknown:
        print(f"segflow bench: no benchmark named {', '.join(unknown)}; choose from {', '.join(available)}",
              file=sys.stderr)
        return 2
    bar = tqdm(total=len(chosen), unit="script", file=sys.stderr, disable=None) if tqdm else None
    failed = []
    for name in chosen:
        if bar is not None:
            bar.set_description(name)
        print(f"=== {name}", flush=True)
        t0 = time.perf_counter()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(folder.parent / "src"),
                                                                         os.environ.get("PYTHONPATH")])))
        rc = subprocess.call([sys.executable, str(folder / name), *script_args], cwd=str(folder.parent), env=env)
        if rc:
            failed.append(name)
        print(f"=== {name}: {'exit status ' + str(rc) if rc else 'done'} in {time.perf_counter() - t0:.1f} s\n",
              flush=True)
        if bar is not None:
            bar.update()
    if bar is not None:
        bar.close()
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0

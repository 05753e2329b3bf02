"""Every benchmark script in this folder, in order: `make bench` (`segflow bench`) runs them, or
`.venv/bin/python benchmarks/run_all.py [args]`, which passes its arguments (`--quick`) to each.

Each script runs in its own process (so one library's thread pool never slows another's) through
segflow's command line (segflow/_cli/bench.py); a script that fails is reported and the others still
run (the exit status is then 1).
"""
import sys

from segflow._cli.bench import run

SCRIPTS = ("startup.py", "overhead.py", "segment.py", "accuracy.py", "sparse.py", "embedding.py", "threads.py",
           "models.py", "models_trees.py", "scale.py", "plots.py")


def main(argv=None):
    return run(script_args=sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    sys.exit(main())

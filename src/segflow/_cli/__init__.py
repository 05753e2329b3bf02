"""segflow's command line: `python -m segflow` or the `segflow` console script.

    segflow tour       a guided run through eager ops, a graph in a Session, a custom op and its
                       gradient, a gradient check, a sparse embedding step and a k-means fit
    segflow bench      the side-by-side benchmarks of a source checkout, with a progress bar
    segflow version    segflow's version and the versions of what it runs on
"""
import argparse
import platform
import sys
from importlib.metadata import PackageNotFoundError, version as _dist_version

import numpy

import segflow
from segflow._cli import bench, tour


def _version(args):
    print(f"segflow {segflow.__version__}")
    try:
        numba = _dist_version("numba")      # from the metadata: importing numba itself takes a while
    except PackageNotFoundError:
        numba = "not installed"
    print(f"python {platform.python_version()}, numpy {numpy.__version__}, numba {numba}")
    return 0


def _tour(args):
    return tour.run(quick=args.quick)


def _bench(args):
    return bench.run(args.scripts, list_only=args.list)


def _parser():
    p = argparse.ArgumentParser(prog="segflow", description="segflow: TensorFlow's op-and-gradient system in Python.")
    sub = p.add_subparsers(dest="command", metavar="{tour,bench,version}")
    t = sub.add_parser("tour", help="a guided run through what segflow does (what `make demo` runs)")
    t.add_argument("--quick", action="store_true", help="smaller data in the k-means step")
    t.set_defaults(func=_tour)
    b = sub.add_parser("bench", help="run the benchmarks of a source checkout and print their ratio tables")
    b.add_argument("scripts", nargs="*", help="benchmark scripts to run (default: all of benchmarks/run_all.py)")
    b.add_argument("--list", action="store_true", help="list the benchmark scripts and exit")
    b.set_defaults(func=_bench)
    v = sub.add_parser("version", help="print versions")
    v.set_defaults(func=_version)
    return p


def main(argv=None):
    """Entry point of `python -m segflow` and of the `segflow` console script; returns the exit status."""
    args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    if args.command is None:
        _parser().print_help()
        return 2
    return args.func(args)

"""Submodules of the flat API loaded on first use (PEP 562 module `__getattr__`), so that
`import segflow` does not pay for what a program may never touch: `sf.train` (the optimizers and
checkpoints), `sf.compat` (TF1's names), `sf.viz`, `sf.data`, `sf.summary`, and compat.v1's `data`,
`summary`, `losses` and `metrics`. `sf.train.AdamOptimizer`, `from segflow import train` and
`import segflow.train` all work as for an ordinary submodule; after the first access the submodule
is a plain attribute of its package and this function is not called again. No op's kernel or
gradient is registered by a lazy module that an op made elsewhere could need: the ops they register
(the optimizers' apply ops, the summary ops) are made only through them."""
import importlib

LAZY = {
    "segflow": ("compat", "data", "summary", "train", "viz"),
    "segflow.compat.v1": ("data", "summary", "losses", "metrics"),
}


def _getattr_for(package):
    names = LAZY[package]

    def __getattr__(name):
        if name in names:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    return __getattr__


root_getattr = _getattr_for("segflow")
v1_getattr = _getattr_for("segflow.compat.v1")


def graph_html(obj):
    """`hooks.graph_html` until segflow.viz is loaded (which installs its own): a graph's or a
    ConcreteFunction's notebook picture, loading segflow.viz on the first one."""
    return importlib.import_module("segflow.viz.html")._notebook_html(obj)

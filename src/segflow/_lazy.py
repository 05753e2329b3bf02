"""Submodules of the flat API loaded on first use (PEP 562 module `__getattr__`), so that
`import segflow` does not pay for what a program may never touch: `sf.data`, `sf.summary`, and
compat.v1's `data`, `summary`, `losses` and `metrics`. `sf.data.Dataset`, `from segflow import
data` and `import segflow.data` all work as for an ordinary submodule; after the first access the
submodule is a plain attribute of its package and this function is not called again."""
import importlib

LAZY = {
    "segflow": ("data", "summary"),
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

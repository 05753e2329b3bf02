"""The package's import layers (ARCHITECTURE.md "Layers"), checked on the source's AST.

    kernels/, util/        NumPy, Numba and the standard library only
    _core/                 + kernels, util                 (knows no op)
    _ops/                  + _core
    _training/             + _ops
    models/, dask/, _data/ + _training
    faces                  framework/ ops/ eager/ client/ training/: only imports from the layers
                           below and `__all__`
    the flat API           segflow/__init__.py, math.py, nn.py, ..., compat/, data/: anything

Imports point down this list only, no module-level import cycle exists anywhere, and an import
inside a function is allowed only where it is listed below with its reason.
"""
import ast
import pathlib
import sys

import pytest

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "segflow"

LAYERS = {"kernels": 0, "util": 0, "_core": 1, "_ops": 2, "_training": 3, "models": 4, "dask": 4,
          "viz": 4,   # viz (issue 15): pictures of graphs, built on _ops (tracing) and _core
          "_platform": 0,     # _platform: app / flags / logging, on the standard library (and absl, lazily)
          "_data": 4,     # _data: sf.data's pipelines (over _ops and _core)
          "_cli": 6}   # the command line sits with the flat API: it may use anything
FACES = ("framework", "ops", "eager", "client", "training", "layers", "debug", "module", "contrib")
FACE_LAYER = 5
TOP_LAYER = 6
TOP_PACKAGES = ("compat",)
TOP_PACKAGES += ("summary",)   # summary: sf.summary is a flat-API package, like sf.compat
TOP_PACKAGES += ("data",)      # sf.data is a flat-API package too (data/__init__ imports data/experimental)

# Imports inside functions, each with the reason it cannot sit at module level:
# (module, imported module) -> reason.
ALLOWED_FUNCTION_IMPORTS = {
}


def _modules():
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _layer(module):
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in TOP_PACKAGES or (len(parts) == 2 and parts[1] + ".py" in
                                                       {p.name for p in SRC.glob("*.py")}):
        return TOP_LAYER
    if parts[1] in LAYERS:
        return LAYERS[parts[1]]
    if parts[1] in FACES:
        return FACE_LAYER
    raise AssertionError(f"{module}: not in any layer; add its folder to LAYERS or FACES")


def _resolve(module, node):
    """The segflow modules an import statement loads (the module itself, not its package's
    __init__, which every import of a submodule also runs and is checked on its own)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "segflow"]
    if node.level:
        base = module.split(".")
        if MODULES[module].name != "__init__.py":
            base = base[:-1]
        base = base[:len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module
    if target.split(".")[0] != "segflow":
        return []
    out = []
    for a in node.names:
        sub = f"{target}.{a.name}"
        out.append(sub if sub in MODULES else target)
    return out


def _imports(module):
    """(module-level imports, function-level imports) as lists of (lineno, target)."""
    tree = ast.parse(MODULES[module].read_text())
    top, inner = [], []

    def visit(node, nested):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                (inner if nested else top).extend((child.lineno, t) for t in _resolve(module, child))
            visit(child, nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return top, inner


def test_every_module_sits_in_a_layer():
    for module in MODULES:
        _layer(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module):
    top, inner = _imports(module)
    mine = _layer(module)
    for lineno, target in top + inner:
        if target not in MODULES and target != "segflow":
            raise AssertionError(f"{module}:{lineno} imports {target}, which does not exist")
        theirs = _layer(target)
        if mine == FACE_LAYER:
            assert theirs < FACE_LAYER, f"face {module}:{lineno} imports face {target}; import the layer below"
        elif mine < FACE_LAYER:
            assert theirs <= mine, f"{module}:{lineno} imports {target}, a layer above it"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_function_level_imports_are_listed(module):
    _, inner = _imports(module)
    for lineno, target in inner:
        assert (module, target) in ALLOWED_FUNCTION_IMPORTS, (
            f"{module}:{lineno} imports {target} inside a function; import it at module level, install "
            f"it through a registry hook, or list it in ALLOWED_FUNCTION_IMPORTS with its reason")


def test_listed_function_level_imports_still_exist():
    present = {(m, t) for m in MODULES for _, t in _imports(m)[1]}
    assert set(ALLOWED_FUNCTION_IMPORTS) <= present, set(ALLOWED_FUNCTION_IMPORTS) - present


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m) == FACE_LAYER))
def test_faces_hold_only_imports_and_all(module):
    tree = ast.parse(MODULES[module].read_text())
    for i, node in enumerate(tree.body):
        if i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # docstring
        if isinstance(node, ast.ImportFrom):
            continue
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "__all__"):
            continue
        raise AssertionError(f"face {module}:{node.lineno} holds a {type(node).__name__}; faces hold "
                             f"only `from segflow._x import y` lines and __all__")


def test_no_module_level_import_cycle():
    graph = {}
    for m in MODULES:
        deps = set()
        # Direct targets only: a package's __init__ that imports its own submodules is no cycle.
        deps.update(t for _, t in _imports(m)[0])
        deps.discard(m)
        graph[m] = sorted(d for d in deps if d in MODULES)
    # Tarjan's strongly connected components
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10000))
    index, low, stack, on, cycles = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in graph:
        if v not in index:
            strong(v)
    assert not cycles, "module-level import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)

"""The flat namespace's modules (sf.math, nn, random, train, sparse, linalg, compat.v1) are static
faces: real modules in sys.modules, importable with `from segflow.math import x`, holding only
import lines and `__all__`, and every name is the very object its op family defines."""
import ast
import importlib
import math as stdlib_math
import pathlib
import random as stdlib_random
import subprocess
import sys
import types

import pytest

import segflow as sf
from segflow._lazy import LAZY
from segflow.client import session
from segflow.ops import embedding_ops, nn_ops, random_ops, sort_ops, variables
from segflow._ops import sparse_tensor
from segflow.ops import math_ops, state_ops
from segflow.training import adam, gradient_descent, training, training_util

FACES = ["math", "nn", "random", "train", "sparse", "linalg", "initializers", "compat", "compat.v1"]

KEY_NAMES = {
    "math": ["abs", "add", "add_n", "cast", "equal", "exp", "log", "matmul", "maximum", "multiply", "range",
             "reduce_sum", "reduce_mean", "segment_sum", "sparse_segment_sum", "top_k", "unsorted_segment_sum",
             "unsorted_segment_max", "unsorted_segment_sqrt_n", "where"],
    "nn": ["relu", "relu6", "leaky_relu", "softmax", "log_softmax", "sparse_softmax_cross_entropy_with_logits",
           "softmax_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits", "bias_add", "l2_loss",
           "l2_normalize", "sigmoid", "tanh", "embedding_lookup", "embedding_lookup_sparse", "top_k"],
    "random": ["normal", "uniform", "truncated_normal", "shuffle", "categorical", "set_seed", "get_seed"],
    "train": ["Optimizer", "GradientDescentOptimizer", "MomentumOptimizer", "AdagradOptimizer", "RMSPropOptimizer",
              "AdamOptimizer", "LazyAdamOptimizer", "NadamOptimizer", "FtrlOptimizer", "get_global_step",
              "get_or_create_global_step", "create_global_step"],
    "sparse": ["SparseTensor", "SparseTensorValue", "to_dense", "from_dense"],
    "linalg": ["matmul"],
    "initializers": ["zeros", "ones", "constant", "random_normal", "random_uniform", "truncated_normal",
                     "glorot_uniform", "glorot_normal", "variance_scaling", "orthogonal", "identity", "he_normal"],
    "compat": ["v1"],
    "compat.v1": ["Session", "InteractiveSession", "placeholder", "disable_eager_execution",
                  "enable_eager_execution", "global_variables_initializer", "variables_initializer",
                  "trainable_variables", "global_variables", "get_default_graph", "reset_default_graph", "Graph",
                  "gradients", "scatter_update", "scatter_add", "scatter_nd_update", "assign", "assign_add",
                  "Variable", "train", "nn", "math", "unsorted_segment_sum", "float32", "constant",
                  "get_variable", "variable_scope", "AUTO_REUSE", "truncated_normal_initializer",
                  "glorot_uniform_initializer", "fixed_size_partitioner", "initializers"],
}


def _module(face):
    return importlib.import_module(f"segflow.{face}")


def _public(module):
    return {n for n in vars(module) if not n.startswith("_")}


@pytest.mark.parametrize("face", FACES)
def test_face_is_a_static_module(face):
    m = _module(face)
    assert sys.modules[f"segflow.{face}"] is m
    assert m.__name__ == f"segflow.{face}"
    assert m.__file__ is not None and pathlib.Path(m.__file__).is_file()
    obj = sf
    for part in face.split("."):
        obj = getattr(obj, part)
    assert obj is m


@pytest.mark.parametrize("face", FACES)
def test_all_resolves_and_is_the_whole_public_surface(face):
    m = _module(face)
    assert len(m.__all__) == len(set(m.__all__))
    for n in m.__all__:
        assert getattr(m, n) is not None or n == "newaxis", n
    assert _public(m) == set(m.__all__)
    assert set(KEY_NAMES[face]) <= set(m.__all__)


def test_from_imports():
    from segflow.math import unsorted_segment_sum, reduce_sum  # noqa: F401
    from segflow.nn import embedding_lookup, relu  # noqa: F401
    from segflow.random import normal  # noqa: F401
    from segflow.train import AdamOptimizer  # noqa: F401
    from segflow.sparse import SparseTensor  # noqa: F401
    from segflow.linalg import matmul  # noqa: F401
    from segflow.compat.v1 import Session, placeholder, train  # noqa: F401
    from segflow.compat import v1
    assert unsorted_segment_sum is math_ops.unsorted_segment_sum
    assert embedding_lookup is embedding_ops.embedding_lookup_v2
    assert AdamOptimizer is adam.AdamOptimizer
    assert placeholder is sf.placeholder and train is sf.train and v1 is sf.compat.v1


def test_from_imports_in_a_fresh_interpreter():
    code = ("from segflow.math import unsorted_segment_sum; from segflow.nn import embedding_lookup; "
            "from segflow.train import AdamOptimizer; import segflow as sf; sf.compat.v1.placeholder; "
            "import segflow.math, segflow.compat.v1; assert sf.math is segflow.math; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_names_are_the_op_families_objects():
    assert sf.math.unsorted_segment_sum is math_ops.unsorted_segment_sum
    assert sf.math.reduce_sum is sf.reduce_sum
    assert sf.math.top_k is sort_ops.top_k is sf.top_k
    assert sf.math.add_n is sf.add_n
    assert sf.linalg.matmul is sf.math.matmul is sf.matmul
    assert sf.nn.relu is nn_ops.relu
    assert sf.nn.sigmoid is sf.sigmoid
    assert sf.nn.embedding_lookup_sparse is embedding_ops.embedding_lookup_sparse_v2
    assert sf.compat.v1.nn.embedding_lookup_sparse is embedding_ops.embedding_lookup_sparse
    assert sf.random.normal is random_ops.random_normal
    assert sf.random.uniform is random_ops.random_uniform
    assert sf.random.shuffle is random_ops.random_shuffle
    assert sf.random.set_seed is random_ops.set_seed
    assert sf.sparse.SparseTensor is sparse_tensor.SparseTensor is sf.SparseTensor
    assert sf.train.GradientDescentOptimizer is gradient_descent.GradientDescentOptimizer
    assert sf.train.get_or_create_global_step is training_util.get_or_create_global_step
    for n in training.__all__:
        assert getattr(sf.train, n) is getattr(training, n), n
    for face in ("math", "nn", "random", "sparse", "linalg"):
        for n in _module(face).__all__:
            assert not isinstance(getattr(_module(face), n), types.ModuleType), (face, n)


def test_compat_v1_is_the_flat_namespace_and_the_tf1_names():
    v1 = sf.compat.v1
    differs = {"nn"}     # TF1's tf.nn spellings differ from TF2's (embedding partitions, xent labels)
    differs.add("summary")   # summary: TF1's summary ops (serialized protos, FileWriter) are not TF2's
    differs.add("data")      # TF1's tf.data has DatasetV1 and the graph iterators
    for n in v1.__all__:
        if hasattr(sf, n) and n not in differs:
            assert getattr(v1, n) is getattr(sf, n), n
    assert v1.Session is session.Session
    assert v1.placeholder is sf.placeholder
    assert v1.global_variables_initializer is variables.global_variables_initializer
    assert v1.scatter_update is state_ops.scatter_update
    assert v1.train is sf.train and v1.math is sf.math
    assert v1.nn is not sf.nn and set(v1.nn.__all__) == set(sf.nn.__all__)
    assert v1.train.AdamOptimizer is adam.AdamOptimizer
    # internal packages the flat namespace happens to hold are not TF1 API
    for n in ("ops", "framework", "kernels", "math_ops", "training"):
        assert n not in v1.__all__


def test_stdlib_math_and_random_are_not_shadowed():
    for name, mod in list(sys.modules.items()):
        if not name.startswith("segflow") or name in ("segflow", "segflow.compat.v1"):
            continue
        for attr, std in (("math", stdlib_math), ("random", stdlib_random)):
            g = vars(mod).get(attr)
            if isinstance(g, types.ModuleType) and g.__name__ != f"{name}.{attr}":  # a package's own submodule
                assert g is std, (name, attr)


def _face_path(face):
    base = pathlib.Path(sf.__file__).parent
    parts = face.split(".")
    if face.startswith("compat"):
        return base.joinpath(*parts, "__init__.py")
    return base / f"{face}.py"


@pytest.mark.parametrize("face", FACES)
def test_face_file_holds_only_imports_and_all(face):
    tree = ast.parse(_face_path(face).read_text())
    body = tree.body
    assert body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str), "a face starts with its docstring"
    bound, all_names = [], None
    for node in body[1:]:
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0 and node.module.split(".")[0] == "segflow", ast.dump(node)
            for alias in node.names:
                assert alias.name != "*", f"{face}: no star imports"
                bound.append(alias.asname or alias.name)
        elif isinstance(node, ast.Assign):
            assert all_names is None, f"{face}: one __all__"
            assert [t.id for t in node.targets if isinstance(t, ast.Name)] == ["__all__"], ast.dump(node)
            assert isinstance(node.value, ast.List)
            assert all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.value.elts)
            all_names = [e.value for e in node.value.elts]
        else:
            pytest.fail(f"{face}: only `from segflow... import` lines, __all__ and a docstring, got {ast.dump(node)}")
    assert all_names is not None, f"{face}: __all__ missing"
    assert len(bound) == len(set(bound)), f"{face}: a name imported twice"
    # A face may load some submodules on first use: it imports segflow._lazy's __getattr__ for them
    # and lists them in __all__ without importing them (segflow._lazy.LAZY names them).
    lazy = list(LAZY.get("segflow." + face, ()))
    if lazy:
        assert "__getattr__" in bound, f"{face}: lazy submodules need segflow._lazy's __getattr__"
        bound = [b for b in bound if b != "__getattr__"] + lazy
    assert sorted(bound) == sorted(all_names), f"{face}: __all__ must list exactly the imported names"

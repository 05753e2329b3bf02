"""The public API's type hints (issue 15): segflow ships `py.typed`, the hints of its key public
names resolve (`typing.get_type_hints`), and mypy accepts a typical user script and catches
deliberate mistakes in another."""
import importlib.resources
import inspect
import os
import pathlib
import re
import runpy
import subprocess
import sys
import tempfile
import tomllib
import typing

import numpy as np
import pytest

import segflow as sf
from segflow._core import typing as sf_typing

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "tests" / "typing_example.py"
EXAMPLE_ERRORS = ROOT / "tests" / "typing_example_error.py"

KEY_NAMES = {
    "constant": sf.constant, "convert_to_tensor": sf.convert_to_tensor, "cast": sf.cast,
    "identity": sf.identity, "reshape": sf.reshape, "shape": sf.shape, "zeros": sf.zeros,
    "add": sf.add, "multiply": sf.multiply, "sqrt": sf.sqrt, "maximum": sf.maximum,
    "reduce_sum": sf.reduce_sum, "reduce_mean": sf.reduce_mean, "reduce_max": sf.reduce_max,
    "argmax": sf.argmax, "matmul": sf.matmul,
    "math.unsorted_segment_sum": sf.math.unsorted_segment_sum,
    "math.unsorted_segment_mean": sf.math.unsorted_segment_mean, "math.segment_sum": sf.math.segment_sum,
    "sparse.segment_sum": sf.sparse.segment_sum,
    "math.sparse_segment_sqrt_n": sf.compat.v1.sparse_segment_sqrt_n,
    "gather": sf.gather, "gather_nd": sf.gather_nd, "nn.embedding_lookup": sf.nn.embedding_lookup,
    "nn.embedding_lookup_sparse": sf.nn.embedding_lookup_sparse, "scatter_nd": sf.scatter_nd,
    "tensor_scatter_nd_add": sf.tensor_scatter_nd_add, "unique": sf.unique,
    "dynamic_stitch": sf.dynamic_stitch, "dynamic_partition": sf.dynamic_partition, "one_hot": sf.one_hot,
    "concat": sf.concat, "stack": sf.stack, "split": sf.split,
    "GradientTape.__init__": sf.GradientTape.__init__, "GradientTape.watch": sf.GradientTape.watch,
    "GradientTape.gradient": sf.GradientTape.gradient, "GradientTape.jacobian": sf.GradientTape.jacobian,
    "gradients": sf.compat.v1.gradients, "Session.__init__": sf.compat.v1.Session.__init__,
    "Session.run": sf.compat.v1.Session.run, "Variable.__init__": sf.Variable.__init__,
    "Variable.assign": sf.Variable.assign, "Variable.scatter_add": sf.Variable.scatter_add,
    "Optimizer.minimize": sf.compat.v1.train.Optimizer.minimize,
    "Optimizer.compute_gradients": sf.compat.v1.train.Optimizer.compute_gradients,
    "Optimizer.apply_gradients": sf.compat.v1.train.Optimizer.apply_gradients,
    "GradientDescentOptimizer.__init__": sf.compat.v1.train.GradientDescentOptimizer.__init__,
    "RegisterGradient.__init__": sf.RegisterGradient.__init__, "function": sf.function,
    "global_variables_initializer": sf.compat.v1.global_variables_initializer, "group": sf.group,
    "control_dependencies": sf.control_dependencies, "executing_eagerly": sf.executing_eagerly, "cond": sf.cond,
}


def test_py_typed_ships_with_the_package():
    assert (importlib.resources.files("segflow") / "py.typed").is_file()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["segflow"]


@pytest.mark.parametrize("name", sorted(KEY_NAMES))
def test_key_public_names_have_resolvable_hints(name):
    fn = KEY_NAMES[name]
    hints = typing.get_type_hints(fn)   # evaluates the string annotations: a bad one raises
    assert "return" in hints, f"{name} has no return annotation"
    params = [p for p in inspect.signature(fn).parameters if p not in ("self", "cls")]
    assert set(params) <= set(hints), f"{name}: parameters without a hint: {set(params) - set(hints)}"


def test_hints_say_what_the_ops_take():
    seg = typing.get_type_hints(sf.math.unsorted_segment_sum)
    assert seg["data"] == sf_typing.TensorLike and seg["num_segments"] == sf_typing.IntLike
    assert seg["name"] == typing.Optional[str] and seg["return"] is sf.Tensor
    assert typing.get_type_hints(sf.split)["return"] == list[sf.Tensor]
    assert typing.get_type_hints(sf.sqrt) == typing.get_type_hints(sf.exp)   # one signature per family


def _conforms(value, hint):
    """Whether `value` is an instance of the (simple) type `hint`."""
    if hint is typing.Any:
        return True
    if hint is type(None):
        return value is None
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Union:
        return any(_conforms(value, a) for a in args)
    if origin is list:
        return isinstance(value, list) and all(_conforms(v, args[0]) for v in value)
    if origin is tuple:
        return (isinstance(value, tuple) and len(value) == len(args)
                and all(_conforms(v, a) for v, a in zip(value, args)))
    return isinstance(value, hint)


def _eager_calls():
    x = sf.constant([[1.0, -2.0], [3.0, 4.0]])
    d = sf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    ids = sf.constant([0, 1, 0])
    return [
        (sf.constant, ([1.0],)), (sf.cast, (x, sf.float64)), (sf.identity, (x,)), (sf.reshape, (x, [-1])),
        (sf.shape, (x,)), (sf.zeros, ([2],)), (sf.identity_n, ([x, x],)), (sf.add, (x, 1.0)), (sf.sqrt, (x,)),
        (sf.maximum, (x, 0.0)), (sf.reduce_sum, (x,)), (sf.argmax, (x,)), (sf.matmul, (x, x)),
        (sf.math.unsorted_segment_sum, (d, ids, 2)), (sf.math.segment_sum, (d, [0, 0, 1])),
        (sf.math.sparse_segment_mean, (d, [0, 2], [0, 0])), (sf.sparse.segment_sum, (d, [0, 2], [0, 1])),
        (sf.gather, (d, [2, 0])), (sf.gather_nd, (d, [[0, 1]])), (sf.nn.embedding_lookup, (d, [1])),
        (sf.scatter_nd, ([[1]], [5.0], [3])), (sf.unique, ([3, 1, 3],)), (sf.unique_with_counts, ([3, 1, 3],)),
        (sf.dynamic_stitch, ([[0], [1]], [[1.0], [2.0]])), (sf.dynamic_partition, (d, [0, 1, 0], 2)),
        (sf.one_hot, ([0, 1], 2)), (sf.concat, ([x, x], 0)), (sf.stack, ([x, x],)), (sf.split, (d, 3)),
        (sf.unstack, (x,)), (sf.math.top_k, ([1.0, 3.0, 2.0], 2)), (sf.nn.moments, (x, [0])),
        (sf.clip_by_global_norm, ([x, None], 1.0)), (sf.nn.softmax, (x,)), (sf.transpose, (x,)),
        (sf.range, (3,)), (sf.random.normal, ([2],)), (sf.convert_to_tensor, (np.ones(2),)),
    ]


def test_return_annotations_are_true_eagerly():
    for fn, args in _eager_calls():
        hint = typing.get_type_hints(fn)["return"]
        out = fn(*args)
        assert _conforms(out, hint), f"{fn.__qualname__} returned {type(out).__name__}, annotated {hint}"


def test_return_annotations_are_true_in_a_graph():
    with sf.Graph().as_default():
        v = sf.compat.v1.Variable([1.0, 2.0])
        e = sf.compat.v1.get_variable("e", shape=[4, 2])
        loss = sf.reduce_sum(v * v) + sf.reduce_sum(sf.gather(e, [1, 3]))
        grads = sf.compat.v1.gradients(loss, [v, e, sf.constant(1.0)])
        assert _conforms(grads, typing.get_type_hints(sf.compat.v1.gradients)["return"])
        assert isinstance(grads[1], sf.IndexedSlices) and grads[2] is None
        opt = sf.compat.v1.train.GradientDescentOptimizer(0.1)
        pairs = opt.compute_gradients(loss, var_list=[v, e])
        assert _conforms(pairs, typing.get_type_hints(opt.compute_gradients)["return"])
        init = sf.compat.v1.global_variables_initializer()
        assert _conforms(init, typing.get_type_hints(sf.compat.v1.global_variables_initializer)["return"])
        assert isinstance(init, sf.Operation)


def test_the_typed_example_runs():
    runpy.run_path(str(EXAMPLE), run_name="typing_example")


def _mypy(*paths):
    env = dict(os.environ, MYPYPATH=str(ROOT / "src"))
    cache = pathlib.Path(tempfile.gettempdir()) / "segflow-test-mypy-cache"
    cmd = [sys.executable, "-m", "mypy", "--follow-imports=silent", f"--cache-dir={cache}",
           "--no-error-summary", "--show-error-codes", *map(str, paths)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert out.returncode in (0, 1), out.stdout + out.stderr
    return out.stdout


def test_mypy_accepts_user_code_and_catches_wrong_arguments():
    report = _mypy(EXAMPLE, EXAMPLE_ERRORS)
    errors = [line for line in report.splitlines() if ": error:" in line]
    assert not [e for e in errors if e.startswith(f"tests{os.sep}typing_example.py")], report
    expected = {i for i, line in enumerate(EXAMPLE_ERRORS.read_text().splitlines(), 1) if "# error:" in line}
    found = {int(m.group(1)) for e in errors if (m := re.match(r"tests.typing_example_error\.py:(\d+):", e))}
    assert expected and found == expected, report
    assert "num_segments" in report and '"str"' in report

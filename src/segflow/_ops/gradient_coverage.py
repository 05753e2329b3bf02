"""`gradient_coverage`: which ops on the paths from the sources to the targets have no registered
gradient, found before anything runs, each with the registration line that would add one.

The ops checked are those the backward walk (`_core/backward`) would call a gradient function for:
ops that depend on a source and that a target depends on, through float, complex, resource or
variant tensors. An op is covered by a registered gradient (under its type, or under the type
`gradient_override_map` gave it), by `custom_gradient`, or by being NotDifferentiable (gradients
stop there, so the ops behind it are not reached). An op without a gradient is listed, and the walk
goes on as if it had one, so one call lists every registration a path needs. The graph of a traced
function called on the path (`PartitionedCall`) is checked too. segflow's own addition: TensorFlow
has no such function (its gradients() raises LookupError at the first op without a gradient).
"""
import re
from collections import namedtuple

from segflow._core import backward as backward_lib
from segflow._core.graph import Graph
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.operation import Operation
from segflow._core.registry import _gradient_registry
from segflow._core.tensor import EagerTensor, Tensor
from segflow._ops.function import function

__all__ = ["gradient_coverage", "MissingGradient"]

_SOURCE_TYPES = frozenset(("Placeholder", "PlaceholderWithDefault", "VarHandleOp", "VariableV2", "Variable"))


class MissingGradient(namedtuple("MissingGradient", ["op_type", "node_name", "registration"])):
    """An op on a differentiated path with no gradient: its type (the one to register under,
    after gradient_override_map), its node name, and the registration to add."""

    __slots__ = ()

    def __str__(self):
        return f"{self.op_type} '{self.node_name}' has no gradient; register one:\n{self.registration}"


def _snake(op_type):
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", op_type)
    return re.sub(r"\W", "_", s).lower()


def _registration(op, op_type):
    """The lines that register a gradient for `op_type`, shaped like `op`."""
    grads = "grad" if len(op.outputs) == 1 else "*grads"
    names = list(getattr(op.op_def, "input_names", ()) or ()) or [f"input {i}" for i in range(len(op.inputs))]
    return (f'@sf.RegisterGradient("{op_type}")\n'
            f"def _{_snake(op_type)}_grad(op, {grads}):\n"
            f"    # one gradient per input of {op_type} ({', '.join(names)}); None where an input has none\n"
            f"    return ...")


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _targets(target):
    out = []
    for t in _as_list(target):
        if isinstance(t, IndexedSlices):
            t = t.values            # an IndexedSlices target is differentiated through its values
        elif hasattr(t, "_as_graph_element") and not isinstance(t, (Tensor, Operation)):
            t = t._as_graph_element()
        if isinstance(t, EagerTensor) or not isinstance(t, Tensor):
            raise TypeError(f"gradient_coverage: targets must be graph tensors (or a Python function with "
                            f"example args=...), not {type(t).__name__}; for eager code pass the function")
        out.append(t)
    if not out:
        raise ValueError("gradient_coverage: no target given")
    graph = out[0].graph
    for t in out:
        if t.graph is not graph:
            raise ValueError(f"gradient_coverage: targets {out[0].name} and {t.name} are in different graphs")
    return out, graph


def _sources(sources, graph):
    out = []
    for s in _as_list(sources):
        if isinstance(s, str):
            s = graph.as_graph_element(s if ":" in s else s + ":0")
        if hasattr(s, "_gradient_source"):
            s = s._gradient_source()
        elif hasattr(s, "_as_graph_element") and not isinstance(s, (Tensor, Operation)):
            s = s._as_graph_element()
        if isinstance(s, Operation):
            s = s.outputs[0]
        if not isinstance(s, Tensor) or isinstance(s, EagerTensor):
            raise TypeError(f"gradient_coverage: a source must be a graph tensor, variable or name, not "
                            f"{type(s).__name__}")
        out.append(s)
    return out


def _grad_type(op):
    """(the type its gradient is looked up under, whether one is found: True / False, None for
    NotDifferentiable)."""
    if getattr(op, "grad_fn", None) is not None:
        return op.type, True
    op_type = op._gradient_type if op._gradient_type is not None else op.type
    if op_type not in _gradient_registry:
        return op_type, False
    return op_type, _gradient_registry.lookup(op_type) is not None or None


def _walk(targets, sources, missing, seen_graphs):
    ops = backward_lib.graph_ops_between(targets, frozenset())
    reach = {id(s) for s in sources}
    useful = []
    for op in ops:                  # forward: the ops a source's value flows into
        if any(id(x) in reach for x in op.inputs):
            useful.append(op)
            reach.update(id(o) for o in op.outputs)
    flowing = {id(t) for t in targets if id(t) in reach}   # tensors a gradient reaches
    for op in reversed(useful):
        if not any(id(o) in flowing for o in op.outputs):
            continue
        op_type, found = _grad_type(op)
        if found is None:
            continue                # NotDifferentiable: gradients stop here
        if not found:
            missing.append(MissingGradient(op_type, op.name, _registration(op, op_type)))
        elif op.type == "PartitionedCall" and op.grad_fn is None:
            _walk_function(op, missing, seen_graphs)
        for x in op.inputs:
            if id(x) in reach and backward_lib.is_backpropagatable(x):
                flowing.add(id(x))


def _walk_function(op, missing, seen_graphs):
    """The ops without a gradient inside the traced function a call op runs."""
    try:
        f = op.get_attr("f")
    except ValueError:
        return
    graph = getattr(f, "graph", None)
    if graph is None or id(graph) in seen_graphs or getattr(f, "_custom_grad", None) is not None:
        return
    seen_graphs.add(id(graph))
    outputs = [t for t in f.outputs if backward_lib.is_backpropagatable(t)]
    if outputs:
        _walk(outputs, list(f.inputs), missing, seen_graphs)


def gradient_coverage(target, sources=None, args=None):
    """Lists the ops on the paths from `sources` to `target` that have no registered gradient.

    Nothing runs: the graph is only inspected (a Python function is traced once).

    Args:
      target: a graph tensor, IndexedSlices or variable, or a list of them (the `ys` of
        `gradients`); or a Python function (or `sf.function`) with `args`: its outputs in the
        graph `sf.function` traces.
      sources: the tensors, variables or tensor/op names to differentiate with respect to (the
        `xs`); default: every placeholder and variable the targets depend on (for a function: its
        arguments and the variables it uses).
      args: the example arguments of a function target (a tuple; a single argument alone is fine).
    Returns:
      A list of `MissingGradient(op_type, node_name, registration)`, in the order the backward walk
      would meet them (nearest the targets first); empty when every path is differentiable.
      `op_type` is the type a gradient would be looked up under (after gradient_override_map);
      `registration` is the code to add, e.g. `@sf.RegisterGradient("MyOp")\\ndef _my_op_grad(op, grad): ...`.
    Raises:
      TypeError: eager tensors or other objects as targets or sources.
    """
    if callable(target) and not isinstance(target, (Tensor, Operation, IndexedSlices, Graph)) \
            and not hasattr(target, "_as_graph_element"):
        if sources is not None and not all(isinstance(s, str) for s in _as_list(sources)):
            raise TypeError("gradient_coverage: for a Python function, sources are names of tensors in its "
                            "traced graph; pass the function's example arguments as args=(...)")
        args = () if args is None else tuple(args) if isinstance(args, (list, tuple)) else (args,)
        traceable = target if hasattr(target, "get_concrete_function") else function(target)
        concrete = traceable.get_concrete_function(*args)
        outputs = [t for t in concrete.outputs if isinstance(t, Tensor) and backward_lib.is_backpropagatable(t)]
        if not outputs:
            return []
        targets, graph = outputs, concrete.graph
    else:
        if args is not None:
            raise TypeError("gradient_coverage: args=... are example arguments for a Python function target")
        targets, graph = _targets(target)
    if sources is None:
        between = backward_lib.graph_ops_between(targets, frozenset())
        sources = [o for op in between if op.type in _SOURCE_TYPES for o in op.outputs
                   if backward_lib.is_backpropagatable(o)]
    else:
        sources = _sources(sources, graph)
    missing = []
    _walk(targets, sources, missing, set())
    return missing

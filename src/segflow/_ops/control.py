"""Control dependencies as values: no_op, group, tuple, with_dependencies (TF's control_flow_ops).

In a graph, `group(a, b)` is a NoOp with control inputs a and b: running it (`sess.run(g)`) runs
them. Eagerly, ops have already run in program order, so group and no_op return None.
"""

from __future__ import annotations

import builtins

from segflow._core import mode as context
from segflow._core.graph import control_dependencies, name_scope
from segflow._core.operation import Operation
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.registry import NotDifferentiable
from segflow._core.tensor import EagerTensor, Tensor
from segflow._core.apply import apply_op
from segflow._core.registry import register_op
from segflow._ops import shape as so
from segflow.util import nest
from typing import Any, Optional, Sequence
from segflow._core.typing import Name

__all__ = ["no_op", "group", "tuple", "with_dependencies"]


def _infer_no_op(op):
    return []


def _no_op_kernel():
    return ()


register_op("NoOp", inputs=(), infer=_infer_no_op, kernel=_no_op_kernel, num_outputs=0, list_output=True)
NotDifferentiable("NoOp")


def no_op(name: Name = None) -> Optional[Operation]:
    """An op that does nothing (graph: an `Operation` to hang control dependencies on; eager: None)."""
    if context.executing_eagerly():
        return None
    return apply_op("NoOp", name=name)   # no outputs: apply_op returns the node itself


def _as_op(x):
    if hasattr(x, "_gradient_source") and isinstance(getattr(x, "op", None), Operation):
        # A variable, or the result of an update (assign/scatter): depend on its op. Going through
        # _as_graph_element would add a read of the whole variable.
        return x.op
    if hasattr(x, "_as_graph_element"):
        x = x._as_graph_element()
    if isinstance(x, Operation):
        return x
    if isinstance(x, (Tensor, IndexedSlices)) and not isinstance(x, EagerTensor):
        return x.op
    op = getattr(x, "op", None)
    if isinstance(op, Operation):
        return op
    raise TypeError(f"'inputs' should be zero or more (nested) Tensors or Operations, got {x!r} "
                    f"({type(x).__name__})")


def group(*inputs: Any, name: Name = None) -> Optional[Operation]:
    """An op that runs all of `inputs` (tensors, operations, or nested lists of them).

    Graph: returns an `Operation` (a NoOp with `inputs` as control inputs; `Session.run` accepts it
    as a target and fetches None). Eagerly: returns None.
    """
    if context.executing_eagerly():
        return None
    deps = []
    for x in nest.flatten(list(inputs)):
        if x is None:
            continue
        op = _as_op(x)
        if op not in deps:
            deps.append(op)
    with control_dependencies(deps):
        return no_op(name=name or "group_deps")


def with_dependencies(dependencies: Sequence[Any], output_tensor: Any, name: Name = None) -> Any:
    """`output_tensor`, computed only after `dependencies` have run (graph: an identity with control
    inputs; an IndexedSlices keeps its indices and dense_shape). Eagerly: `output_tensor`."""
    if context.executing_eagerly():
        return output_tensor
    with name_scope(name, "control_dependency"):
        with control_dependencies(dependencies):
            if isinstance(output_tensor, IndexedSlices):
                return IndexedSlices(so.identity(output_tensor.values), output_tensor.indices,
                                         output_tensor.dense_shape)
            if isinstance(output_tensor, Operation):
                return group(output_tensor)
            return so.identity(output_tensor)


def tuple(tensors, name=None, control_inputs=None):  # noqa: A001 - TF's name
    """The `tensors` (None entries kept), each available only after all of them (and
    `control_inputs`) have been computed. Eagerly: the tensors as a list."""
    tensors = builtins.list(tensors)
    if context.executing_eagerly():
        return tensors
    with name_scope(name, "tuple"):
        gate = group(*[t for t in tensors if t is not None], *(control_inputs or ()))
        return [None if t is None else with_dependencies([gate], t) for t in tensors]

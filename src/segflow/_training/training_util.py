"""The global step: one int64 counter per graph, in the GLOBAL_STEP collection (TF1's training_util).

    global_step = training_util.get_or_create_global_step()
    train_op = optimizer.minimize(loss, global_step=global_step)   # each run adds 1
"""

from __future__ import annotations

from segflow._core import mode as context
from segflow._core import dtypes
from segflow._core.graph import GraphKeys, control_dependencies, get_default_graph, name_scope
from segflow._ops import variables
from typing import Any, Optional
from segflow._core.graph import Graph

__all__ = ["get_global_step", "get_or_create_global_step", "create_global_step", "global_step"]


def get_global_step(graph: Optional[Graph] = None) -> Any:
    """The global step variable of `graph` (default: the default graph), or None if there is none.

    Raises:
      TypeError: the GLOBAL_STEP collection holds more than one variable, or one that is not an
        integer scalar.
    """
    graph = graph or get_default_graph()
    found = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if not found:
        return None
    if len(found) > 1:
        raise TypeError(f"Multiple tensors in global_step collection: {found}")
    step = found[0]
    if not step.dtype.base_dtype.is_integer:
        raise TypeError(f"Existing 'global_step' does not have integer type: {step.dtype.name}")
    if step.shape.rank not in (None, 0):
        raise TypeError(f"Existing 'global_step' is not a scalar: {step.shape}")
    return step


def create_global_step(graph: Optional[Graph] = None) -> Any:
    """Creates the int64 scalar `global_step` variable (value 0, not trainable) in `graph`.

    Raises:
      ValueError: `graph` already has a global step.
    """
    graph = graph or get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError("'global_step' already exists.")
    if context.executing_eagerly():
        step = variables.Variable(0, trainable=False, name="global_step", dtype=dtypes.int64)
    else:
        with graph.as_default(), control_dependencies(None), name_scope(None):
            step = variables.Variable(0, trainable=False, name="global_step", dtype=dtypes.int64)
    graph.add_to_collection(GraphKeys.GLOBAL_STEP, step)
    return step


def get_or_create_global_step(graph: Optional[Graph] = None) -> Any:
    """The global step of `graph` (default: the default graph), created if it does not exist yet."""
    graph = graph or get_default_graph()
    step = get_global_step(graph)
    return step if step is not None else create_global_step(graph)


def global_step(sess: Any, global_step_tensor: Any) -> int:
    """The current value of the global step as a Python int (graph mode: run in `sess`)."""
    if context.executing_eagerly():
        return int(global_step_tensor.numpy())
    return int(sess.run(global_step_tensor))

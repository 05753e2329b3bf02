"""Execution mode: eager (the default, as in TF2) or graph building.

The mode is a stack of default graphs: while a graph is the default (`with graph.as_default():`,
`graph_mode()`), ops build nodes in it; with the stack empty, ops run at once. The state lives in
one small object, `_state`, so the eager fast path reads a single attribute.
"""
import contextlib

__all__ = ["executing_eagerly", "graph_mode", "eager_mode", "context_safe",
           "disable_eager_execution", "enable_eager_execution"]


class _State:
    __slots__ = ("eager", "graph_stack", "eager_disabled", "global_graph", "suspended")

    def __init__(self):
        self.eager = True          # True while no default graph is pushed (and eager is enabled)
        self.graph_stack = []      # graphs made default with as_default(), innermost last
        self.eager_disabled = False
        self.global_graph = None   # the graph get_default_graph() returns outside any as_default()
        self.suspended = []        # graph stacks set aside by eager_mode(), innermost last


_state = _State()


def _update():
    _state.eager = not _state.graph_stack and not _state.eager_disabled


def executing_eagerly():
    """True when ops run at once; False while building a graph."""
    return _state.eager


def push_graph(graph):
    _state.graph_stack.append(graph)
    _state.eager = False


def pop_graph(graph):
    stack = _state.graph_stack
    if not stack or stack[-1] is not graph:
        raise RuntimeError("graph default stack is out of order: nested as_default() exited in the wrong order")
    stack.pop()
    _update()


@contextlib.contextmanager
def graph_mode():
    """Build ops into the global default graph (TF's `context.graph_mode()`)."""
    from segflow.framework import ops
    if _state.graph_stack and not _state.eager:
        yield
        return
    if _state.graph_stack:
        graph = _state.graph_stack[-1]
    elif _state.suspended and _state.suspended[-1]:
        graph = _state.suspended[-1][-1]   # graph_mode() inside eager_mode() inside g.as_default(): g
    else:
        graph = ops.get_default_graph()
    with graph.as_default():
        yield


@contextlib.contextmanager
def eager_mode():
    """Run ops at once, even inside a `graph.as_default()` block."""
    saved_stack, saved_disabled = _state.graph_stack, _state.eager_disabled
    _state.graph_stack, _state.eager_disabled = [], False
    _state.suspended.append(saved_stack)
    _update()
    try:
        yield
    finally:
        _state.suspended.pop()
        _state.graph_stack, _state.eager_disabled = saved_stack, saved_disabled
        _update()


def disable_eager_execution():
    """Make graph building the default for the rest of the process (TF1 style programs)."""
    _state.eager_disabled = True
    _update()


def enable_eager_execution():
    _state.eager_disabled = False
    _update()


def context_safe():
    return _state

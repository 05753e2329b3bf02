"""Execution mode: eager (the default, as in TF2) or graph building.

The mode is a stack of default graphs: while a graph is the default (`with graph.as_default():`,
`graph_mode()`), ops build nodes in it; with the stack empty, ops run at once. The state lives in
one small object, `_state`, so the eager fast path reads a single attribute.

As in TensorFlow the mode is a property of the current thread: `_state` is a `threading.local`,
so every thread has its own graph stack and starts eager (with an empty stack), whatever other
threads are building, and its own global default graph (what `get_default_graph()` returns outside
any `as_default()`: TF's is per thread too). Process-wide (`_shared`): whether eager execution is
disabled.
`disable_eager_execution()` switches the calling thread and every thread that starts using segflow
afterwards to graph building (TF does the same: threads that already run keep their mode).

Reading a `threading.local` costs several times a plain attribute, so the hottest path (every eager
op) first reads `_shared.all_eager`: True only while every thread is eager and eager execution is
not disabled, in which case the calling thread is eager too. Otherwise it reads `_state.eager`.
"""

from __future__ import annotations

import contextlib
import threading

__all__ = ["executing_eagerly", "eager_mode", "context_safe",
           "disable_eager_execution", "enable_eager_execution"]


class _Shared:
    """Process-wide state: what a thread starts with, and the hot path's shortcut `all_eager`."""

    __slots__ = ("eager_disabled", "all_eager", "non_eager", "mode_lock")

    def __init__(self):
        self.eager_disabled = False   # set by disable_eager_execution(): new threads build graphs
        # True only while no thread is building a graph and eager execution is not disabled; written
        # only under mode_lock, and set to False (by the thread leaving eager mode) before any op of
        # a non-eager thread runs. False merely sends hot paths to the per-thread `_state.eager`.
        self.all_eager = True
        self.non_eager = set()        # keys of the threads whose `_state.eager` is False
        self.mode_lock = threading.Lock()


_shared = _Shared()


class _ThreadKey:
    """One per thread, held by its `_State`: freed when the thread ends, which forgets the thread."""

    __slots__ = ()

    def __del__(self):
        try:
            _shared.non_eager.discard(id(self))  # all_eager stays False until the next mode change
        except Exception:  # pragma: no cover - interpreter shutdown
            pass


def _set_eager(state, eager):
    key = id(state.key)
    with _shared.mode_lock:
        if eager:
            _shared.non_eager.discard(key)
        else:
            _shared.non_eager.add(key)
        _shared.all_eager = not _shared.non_eager and not _shared.eager_disabled
        state.eager = eager


class _State(threading.local):
    """The calling thread's mode. `__init__` runs once in each thread, on its first use."""

    def __init__(self):
        self.key = _ThreadKey()
        self.eager_disabled = _shared.eager_disabled  # this thread's view (eager_mode() clears it)
        self.graph_stack = []      # graphs made default with as_default(), innermost last
        self.suspended = []        # graph stacks set aside by eager_mode(), innermost last
        self.eager = True          # True while no default graph is pushed (and eager is enabled)
        self.global_graph = None   # this thread's default graph outside any as_default()
        if self.eager_disabled:
            _set_eager(self, False)


_state = _State()


def _update():
    state = _state
    _set_eager(state, not state.graph_stack and not state.eager_disabled)


def executing_eagerly() -> bool:
    """True when ops run at once; False while building a graph (in the calling thread)."""
    return _state.eager


def push_graph(graph):
    state = _state
    state.graph_stack.append(graph)
    if state.eager:
        _set_eager(state, False)


def pop_graph(graph):
    stack = _state.graph_stack
    if not stack or stack[-1] is not graph:
        raise RuntimeError("graph default stack is out of order: nested as_default() exited in the wrong order")
    stack.pop()
    _update()


def global_default_graph(make):
    """The calling thread's global default graph, made with `make()` on first use."""
    state = _state
    graph = state.global_graph
    if graph is None:
        graph = state.global_graph = make()
    return graph


@contextlib.contextmanager
def eager_mode():
    """Run ops at once, even inside a `graph.as_default()` block (in the calling thread)."""
    state = _state
    saved_stack, saved_disabled = state.graph_stack, state.eager_disabled
    state.graph_stack, state.eager_disabled = [], False
    state.suspended.append(saved_stack)
    _update()
    try:
        yield
    finally:
        state.suspended.pop()
        state.graph_stack, state.eager_disabled = saved_stack, saved_disabled
        _update()


def disable_eager_execution() -> None:
    """Make graph building the default for the rest of the process (TF1 style programs): in the
    calling thread and in every thread that starts using segflow afterwards."""
    with _shared.mode_lock:
        _shared.eager_disabled = True
        _shared.all_eager = False
    _state.eager_disabled = True
    _update()


def enable_eager_execution() -> None:
    _shared.eager_disabled = False
    _state.eager_disabled = False
    _update()


def context_safe():
    return _state


# ----------------------------------------------------------------------------------------------
# Per-thread stacks that belong to no graph: eager name scopes and default sessions


class _ThreadScopes(threading.local):
    """Per-thread stacks that belong to no graph: eager name scopes and default sessions."""

    def __init__(self):
        self.eager_names = [""]   # eager name_scope strings, innermost last
        self.sessions = []        # sessions made default with `as_default()`, innermost last


_scope_state = _ThreadScopes()


def get_default_session():
    """The innermost session the calling thread made default (`with sess.as_default():`), or None."""
    stack = _scope_state.sessions
    return stack[-1] if stack else None

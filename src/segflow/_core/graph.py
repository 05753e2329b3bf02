"""Graph (nodes are `Operation`s, _core/operation.py); name scopes, devices, colocation, control dependencies and
collections (per thread, as in TF)."""

from __future__ import annotations

import contextlib
import itertools
import re
import threading
import warnings

from segflow._core import mode as context
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.mode import _scope_state
from segflow._core.registry import _OPS, _gradient_registry, hooks
from segflow._core.graph_def import GraphDef
from segflow._core.operation import Operation
from segflow._core.tensor import EagerTensor, Tensor
from typing import Any, ContextManager, Optional, Sequence

__all__ = ['Graph', 'GraphKeys', 'add_to_collection', 'add_to_collections', 'colocate_with', 'control_dependencies', 'device', 'disable_eager_execution', 'enable_eager_execution', 'executing_eagerly_outside_functions', 'get_collection', 'get_collection_ref', 'get_default_graph', 'inside_function', 'name_scope', 'op_scope', 'reset_default_graph', 'graph_mode']

_ctx_state = context._state     # the calling thread's mode and graph stack (a threading.local)
_ctx_shared = context._shared   # process-wide: `all_eager`

# ----------------------------------------------------------------------------------------------
# Graph


class GraphKeys:
    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    MODEL_VARIABLES = "model_variables"
    UPDATE_OPS = "update_ops"
    GLOBAL_STEP = "global_step"
    LOSSES = "losses"
    SUMMARIES = "summaries"
    TRAIN_OP = "train_op"
    VARIABLES = GLOBAL_VARIABLES


class _Stacks:
    """A graph's scope stacks in one thread (TF keeps them per thread too): a thread that builds
    into a graph starts with no name scope, device, colocation or control dependencies, whatever
    other threads have entered on the same graph."""

    __slots__ = ("name_stack", "device_stack", "colocation_stack", "control_stack", "original_op")

    def __init__(self):
        self.original_op = None       # set while gradients() builds the gradient of an op
        self.name_stack = ""
        self.device_stack = []
        self.colocation_stack = []
        self.control_stack = []       # list of lists of ops (None entry clears outer deps)


class _GraphStacks(threading.local):
    """`.s`: the calling thread's `_Stacks` of one graph (one thread-local read, then plain ones)."""

    def __init__(self):
        self.s = _Stacks()


def _stack_property(attr):
    def fget(self):
        return getattr(self._stacks.s, attr)

    def fset(self, value):
        setattr(self._stacks.s, attr, value)
    return property(fget, fset, doc=f"The calling thread's {attr} of this graph.")


class Graph:
    """A dataflow graph: Operations whose outputs feed other Operations."""

    _name_stack = _stack_property("name_stack")
    _device_stack = _stack_property("device_stack")
    _colocation_stack = _stack_property("colocation_stack")
    _control_stack = _stack_property("control_stack")

    def __init__(self):
        self._ops_by_name = {}
        self._ops = []
        self._op_ids = itertools.count()
        self._names_in_use = {}
        self._names_lock = threading.Lock()  # unique_name's check-and-claim, across threads
        self._stacks = _GraphStacks()        # name scope, device, colocation, control deps: per thread
        self._gradient_override_map = {}
        self._override_used = set()
        self._collections = {}
        self._finalized = False
        self.seed = None
        self._seed_offset = 0
        self._version = 0
        # viz (issue 15): what the backward walk built in this graph (_core/backward records it), so
        # a picture can colour the backward part: the ops' `_id`s, and the IndexedSlices it made.
        self._backward_ops = set()
        self._backward_slices = []

    # -- default graph
    @contextlib.contextmanager
    def as_default(self):
        context.push_graph(self)
        try:
            yield self
        finally:
            context.pop_graph(self)

    # -- lookup
    def get_operations(self):
        return list(self._ops)

    def num_operations(self):
        """How many operations the graph holds (TF's per-graph op counter, used for op seeds)."""
        return len(self._ops)

    def get_operation_by_name(self, name):
        try:
            return self._ops_by_name[name]
        except KeyError:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.") from None

    def get_tensor_by_name(self, name):
        if ":" not in name:
            raise ValueError(f"The name '{name}' looks like an (invalid) Operation name, not a Tensor. "
                             "Tensor names must be of the form \"<op_name>:<output_index>\".")
        op_name, index = name.rsplit(":", 1)
        op = self.get_operation_by_name(op_name)
        index = int(index)
        if index >= len(op.outputs):
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist: "
                           f"operation '{op_name}' has {len(op.outputs)} outputs.")
        return op.outputs[index]

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        if isinstance(obj, str):
            if ":" in obj:
                if allow_tensor:
                    return self.get_tensor_by_name(obj)
                raise ValueError(f"The name '{obj}' appears to refer to a Tensor, not an Operation.")
            if allow_operation:
                return self.get_operation_by_name(obj)
            what = "refers to an Operation, not a Tensor" if obj in self._ops_by_name else "is not a Tensor name"
            raise ValueError(f"The name '{obj}' {what}. Tensor names have the form \"<op_name>:<output_index>\".")
        if hasattr(obj, "_as_graph_element"):
            obj = obj._as_graph_element()
        if isinstance(obj, Tensor) and allow_tensor and not isinstance(obj, EagerTensor):
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj.name} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"Operation {obj.name} is not an element of this graph.")
            return obj
        raise TypeError(f"Can not convert a {type(obj).__name__} into a "
                        f"{'Tensor or Operation' if allow_tensor and allow_operation else 'Tensor' if allow_tensor else 'Operation'}.")

    @property
    def version(self):
        return self._version

    def as_graph_def(self, from_version=None, add_shapes=False):
        """The graph as a GraphDef: one NodeDef per op, in creation order (from op number
        `from_version` on, if given); with `add_shapes`, each node's `_output_shapes` attr."""
        nodes = []
        for op in self._ops[from_version or 0:]:
            node = op.node_def
            if add_shapes:
                node.attr["_output_shapes"] = [t.shape for t in op.outputs]
            nodes.append(node)
        return GraphDef(nodes, {"producer": self._version})

    def finalize(self):
        self._finalized = True

    @property
    def finalized(self):
        return self._finalized

    # -- names
    def get_name_scope(self):
        return self._stacks.s.name_stack.rstrip("/")

    def unique_name(self, name, mark_as_used=True):
        prefix = self._stacks.s.name_stack
        if prefix:
            name = prefix + name
        key = name.lower()
        lock = self._names_lock
        lock.acquire()   # check and claim at once: threads building into one graph get distinct names
        try:
            count = self._names_in_use.get(key, 0)
            if mark_as_used:
                self._names_in_use[key] = count + 1
            if count > 0:
                base = name
                while (name.lower()) in self._names_in_use:
                    name = f"{base}_{count}"
                    count += 1
                if mark_as_used:
                    self._names_in_use[name.lower()] = 1
        finally:
            lock.release()
        return name

    @contextlib.contextmanager
    def name_scope(self, name):
        stacks = self._stacks.s   # the calling thread's
        old = stacks.name_stack
        if name is None or name == "":
            new = ""
        elif name.endswith("/"):
            new = name          # re-entering a captured scope
        else:
            new = self.unique_name(name) + "/"
        stacks.name_stack = new
        try:
            yield new
        finally:
            stacks.name_stack = old

    # -- devices, colocation, control deps
    @contextlib.contextmanager
    def device(self, device_name):
        if callable(device_name):
            raise NotImplementedError("device functions are not supported; pass a device string")
        stack = self._stacks.s.device_stack
        stack.append(device_name or "")
        try:
            yield
        finally:
            stack.pop()

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing=False):
        stack = self._stacks.s.colocation_stack
        if op is None:
            stack.append(None)
        else:
            if isinstance(op, (Tensor, IndexedSlices)):
                op = op.op
            elif hasattr(op, "_as_graph_element"):
                element = op._as_graph_element()
                op = element.op if element is not None else None
            if op is not None and getattr(op, "_graph", None) is not self:
                op = None       # an eager variable's (or another graph's) op: nothing to colocate with
            stack.append(op)
        try:
            yield
        finally:
            stack.pop()

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        stacks = self._stacks.s   # the calling thread's
        if control_inputs is None:
            saved, stacks.control_stack = stacks.control_stack, []
            try:
                yield
            finally:
                stacks.control_stack = saved
            return
        ops_ = []
        for c in control_inputs:
            if hasattr(c, "_as_graph_element"):
                c = c._as_graph_element()
            if isinstance(c, (Tensor, IndexedSlices)):
                c = c.op
            if not isinstance(c, Operation):
                raise TypeError(f"Control input must be an Operation or Tensor: {c!r}")
            ops_.append(c)
        stack = stacks.control_stack
        stack.append(ops_)
        try:
            yield
        finally:
            stack.pop()

    @contextlib.contextmanager
    def _original_op(self, op):
        """Ops made inside (by the calling thread) record `op` as their `_original_op`: the forward op
        whose gradient they compute."""
        stacks = self._stacks.s
        saved, stacks.original_op = stacks.original_op, op
        try:
            yield
        finally:
            stacks.original_op = saved

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map):
        """Within the block, ops of type K take the gradient registered under op_type_map[K].

        Warns (on exit) about a map entry that names an unregistered gradient, or that no op used.
        """
        for key, value in op_type_map.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise TypeError("gradient_override_map keys and values must be op type strings")
            if key not in _OPS:
                warnings.warn(f"gradient_override_map: '{key}' is not a registered op type", stacklevel=3)
            if value not in _gradient_registry:
                warnings.warn(f"gradient_override_map: no gradient is registered under '{value}' "
                              f"(the override for op type '{key}')", stacklevel=3)
        saved = dict(self._gradient_override_map)
        self._gradient_override_map.update(op_type_map)
        used_before = set(self._override_used)
        try:
            yield
        finally:
            for key in op_type_map:
                if key not in self._override_used - used_before and key not in used_before:
                    warnings.warn(f"gradient_override_map entry '{key}' -> '{op_type_map[key]}' was never used: "
                                  f"no op of type '{key}' was created in the block", stacklevel=3)
            self._gradient_override_map = saved

    def _repr_html_(self):
        # viz (issue 15): the graph's picture in a notebook; segflow.viz installs the hook.
        return hooks.graph_html(self)

    # -- collections
    def add_to_collection(self, name, value):
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        for name in ([names] if isinstance(names, str) else names):
            self.add_to_collection(name, value)

    def get_collection(self, name, scope=None):
        items = list(self._collections.get(name, []))
        if scope is None:
            return items
        pattern = re.compile(scope)
        return [i for i in items if pattern.match(getattr(i, "name", "") or "")]

    def get_collection_ref(self, name):
        return self._collections.setdefault(name, [])

    def get_all_collection_keys(self):
        return list(self._collections)

    def clear_collection(self, name):
        self._collections.pop(name, None)

    # -- node creation (called by op_def.apply_op)
    def _create_op(self, op_type, name, inputs, attrs, output_specs, opdef, input_counts=None, kernel_attrs=None):
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        stacks = self._stacks.s
        control = []
        for level in stacks.control_stack:
            for c in level:
                if c not in control:
                    control.append(c)
        colocation = None
        device_stack, colocation_stack = stacks.device_stack, stacks.colocation_stack
        device = device_stack[-1] if device_stack else ""
        if colocation_stack and colocation_stack[-1] is not None:
            target = colocation_stack[-1]
            colocation = target._colocation or target.name
            device = target.device
        op = Operation(self, op_type, name, inputs, attrs, output_specs, opdef, input_counts,
                       control, device, colocation, kernel_attrs, stacks.original_op)
        if op_type in self._gradient_override_map:
            op._gradient_type = self._gradient_override_map[op_type]
            self._override_used.add(op_type)
        self._ops_by_name[name] = op
        self._ops.append(op)
        self._version += 1
        return op


def get_default_graph() -> Graph:
    """The innermost graph the calling thread made default with `as_default()`, else the calling
    thread's global default graph (as in TF, each thread has its own)."""
    state = _ctx_state
    stack = state.graph_stack
    if stack:
        return stack[-1]
    graph = state.global_graph
    return graph if graph is not None else context.global_default_graph(Graph)


def reset_default_graph() -> None:
    """Replaces the calling thread's global default graph; the thread must not be inside an
    `as_default()` block."""
    if context._state.graph_stack:
        raise AssertionError("Do not use reset_default_graph() inside a `with graph.as_default()` block.")
    context._state.global_graph = Graph()


def enable_eager_execution():
    context.enable_eager_execution()


def disable_eager_execution():
    context.disable_eager_execution()


def executing_eagerly_outside_functions():
    return context.executing_eagerly()


def inside_function():
    return False


# ----------------------------------------------------------------------------------------------
# Scopes usable in both modes


class name_scope:
    """`with ops.name_scope("layer"):` prefixes the names of ops built inside (graph mode).

    Takes TF1's `(name, default_name=None, values=None)`; yields the scope string ("layer/").
    In eager mode it only tracks the name.
    """

    def __init__(self, name, default_name=None, values=None, skip_on_eager=True):
        self._name = default_name if name is None else name
        self._values = values
        self._ctx = None

    def __enter__(self):
        if _ctx_shared.all_eager or _ctx_state.eager:
            # Eagerly there are no nodes to name; the scope string still nests as in TF.
            stack = self._eager_stack = _scope_state.eager_names
            outer = stack[-1]
            scope = self._name if self._name and self._name.endswith("/") else \
                (outer + self._name + "/" if self._name else "")
            stack.append(scope)
            self._eager = True
            return scope
        self._eager = False
        graph = get_default_graph()
        # Inside a function body or a cond / while branch, the values may come from outer graphs
        # (they are captured on use), as TF allows.
        if self._values and not getattr(graph, "building_function", False):
            for v in self._values:
                g = getattr(v, "graph", None) if isinstance(v, (Tensor, IndexedSlices, Operation)) \
                    and not isinstance(v, EagerTensor) else None
                if g is not None and g is not graph:
                    raise ValueError(f"{v!r} must be from the same graph as the name scope's graph")
        self._ctx = graph.name_scope(self._name)
        return self._ctx.__enter__()

    def __exit__(self, *exc):
        if self._eager:
            self._eager_stack.pop()
            return False
        if self._ctx is not None:
            return self._ctx.__exit__(*exc)
        return False


op_scope = name_scope


def device(device_name: Optional[str]) -> ContextManager[Any]:
    """`with ops.device("/cpu:0"):` records the device on ops built inside (execution is on the CPU)."""
    if _ctx_shared.all_eager or _ctx_state.eager:
        return contextlib.nullcontext()
    return get_default_graph().device(device_name)


def colocate_with(op: Any, ignore_existing: bool = False) -> ContextManager[Any]:
    """`with ops.colocate_with(t):` places ops built inside with `t`'s op (recorded, graph mode)."""
    if _ctx_shared.all_eager or _ctx_state.eager:
        return contextlib.nullcontext()
    return get_default_graph().colocate_with(op, ignore_existing)


def control_dependencies(control_inputs: Optional[Sequence[Any]]) -> ContextManager[Any]:
    """`with ops.control_dependencies([a, b]):` ops built inside run after a and b (graph mode).

    Eagerly, ops already ran in program order, so this is a no-op.
    """
    if _ctx_shared.all_eager or _ctx_state.eager:
        return contextlib.nullcontext()
    return get_default_graph().control_dependencies(control_inputs)


def add_to_collection(name: str, value: Any) -> None:
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    get_default_graph().add_to_collections(names, value)


def get_collection(name: str, scope: Optional[str] = None) -> list[Any]:
    return get_default_graph().get_collection(name, scope)


def get_collection_ref(name: str) -> list[Any]:
    return get_default_graph().get_collection_ref(name)


@contextlib.contextmanager
def graph_mode():
    """Build ops into the global default graph (TF's `context.graph_mode()`)."""
    if context._state.graph_stack and not context._state.eager:
        yield
        return
    if context._state.graph_stack:
        graph = context._state.graph_stack[-1]
    elif context._state.suspended and context._state.suspended[-1]:
        graph = context._state.suspended[-1][-1]   # graph_mode() inside eager_mode() inside g.as_default(): g
    else:
        graph = get_default_graph()
    with graph.as_default():
        yield

"""What a picture of a graph shows: its nodes (ops, or whole name scopes with `group_scopes`) and
edges, which ops the backward walk built, and which edges carry the parts of an IndexedSlices.

`picture(target, *args)` accepts a Graph, a traced function (ConcreteFunction, `sf.function`
object, or a plain Python function with example arguments, traced by `sf.function`), or fetches
(tensors, ops, IndexedSlices, variables, nested in lists/tuples/dicts): then only the ops those
depend on are shown. The renderers (dot.py, html.py) draw the `Picture` it returns.

Backward ops are the ops the backward walk (`_core/backward`) recorded on their graph
(`Graph._backward_ops`: what gradients() or a tape in a graph built) or that carry an
`_original_op`. IndexedSlices parts are the tensors of the IndexedSlices the walk recorded
(`Graph._backward_slices`) and of IndexedSlices among the fetches; an IndexedSlices no pictured op
consumes (a gradient handed back to the caller) is drawn as a node of its own.
"""
from segflow._core.graph import Graph
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.operation import Operation
from segflow._core.tensor import EagerTensor, Tensor
from segflow._ops.function import Function, function

__all__ = ["Node", "Edge", "Picture", "picture", "resolve"]

_ROLES = ("values", "indices", "dense_shape")


class Node:
    """One box: an op ("forward"/"backward"), a name scope ("scope"), or an IndexedSlices ("slices")."""

    __slots__ = ("index", "name", "type", "kind", "order", "members", "info", "is_output")

    def __init__(self, index, name, type_, kind, order, members=(), info=(), is_output=False):
        self.index, self.name, self.type, self.kind, self.order = index, name, type_, kind, order
        self.members = list(members)
        self.info = list(info)
        self.is_output = is_output

    def __repr__(self):
        return f"Node({self.name!r}, {self.type!r}, {self.kind})"


class Edge:
    """An arrow from node `src` to node `dst` (indices): "data", "control", or "slices" (the
    tensors it carries are parts of an IndexedSlices; `label` names which)."""

    __slots__ = ("src", "dst", "kind", "label", "tensors")

    def __init__(self, src, dst, kind, label="", tensors=()):
        self.src, self.dst, self.kind, self.label = src, dst, kind, label
        self.tensors = list(tensors)

    def __repr__(self):
        return f"Edge({self.src} -> {self.dst}, {self.kind}{', ' + self.label if self.label else ''})"


class Picture:
    """Nodes and edges to draw, and a title."""

    def __init__(self, nodes, edges, title):
        self.nodes, self.edges, self.title = nodes, edges, title


# ----------------------------------------------------------------------------------------------
# What to draw


def resolve(target, args=(), kwargs=None):
    """(graph, ops to draw, output tensors, fetched IndexedSlices, title) for a picture's target."""
    kwargs = kwargs or {}
    if isinstance(target, Graph):
        if args or kwargs:
            raise TypeError("example arguments are for a Python function; a Graph takes none")
        return target, list(target.get_operations()), [], [], getattr(target, "name", None) or "graph"
    concrete = None
    if hasattr(target, "get_concrete_function") and not isinstance(target, (Tensor, Operation)):
        concrete = target.get_concrete_function(*args, **kwargs)
    elif _is_concrete(target):
        if args or kwargs:
            raise TypeError("example arguments are for a Python function; a traced function takes none")
        concrete = target
    elif callable(target) and not isinstance(target, (Tensor, Operation, IndexedSlices)) \
            and not hasattr(target, "_as_graph_element"):
        concrete = function(target).get_concrete_function(*args, **kwargs)
    if concrete is not None:
        graph = concrete.graph
        name = getattr(concrete, "name", None) or getattr(graph, "name", None) or "function"
        outputs = [t for t in concrete.outputs if isinstance(t, Tensor)]
        slices = [t for t in _leaves(getattr(concrete, "structured_outputs", None))
                  if isinstance(t, IndexedSlices)]
        return graph, list(graph.get_operations()), outputs, slices, name
    if args or kwargs:
        raise TypeError(f"example arguments are for a Python function, not for a {type(target).__name__}")
    return _fetched(target)


def _is_concrete(x):
    return isinstance(getattr(x, "graph", None), Graph) and hasattr(x, "outputs") \
        and not isinstance(x, (Tensor, Operation, Function))


def _leaves(x):
    if isinstance(x, dict):
        for v in x.values():
            yield from _leaves(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _leaves(v)
    elif x is not None:
        yield x


def _fetched(target):
    """The ops the fetches depend on (through data and control inputs), in creation order."""
    tensors, ops, slices = [], [], []
    for leaf in _leaves(target):
        if isinstance(leaf, EagerTensor):
            raise TypeError("sf.viz: an eager tensor has no graph to draw; picture the function that "
                            "computes it instead: sf.viz.to_html(fn, *example_args)")
        if hasattr(leaf, "_as_graph_element") and not isinstance(leaf, (Tensor, Operation)):
            element = leaf._as_graph_element()
            if element is None or isinstance(element, EagerTensor):
                raise TypeError(f"sf.viz: {leaf!r} is eager and has no graph to draw; picture a "
                                "function that uses it instead")
            leaf = element
        if isinstance(leaf, IndexedSlices):
            slices.append(leaf)
            tensors.extend(t for t in (leaf.values, leaf.indices, leaf.dense_shape) if t is not None)
        elif isinstance(leaf, Tensor):
            tensors.append(leaf)
        elif isinstance(leaf, Operation):
            ops.append(leaf)
        else:
            raise TypeError(f"sf.viz cannot draw a {type(leaf).__name__}: pass a Graph, a function (and its "
                            "example arguments), or graph tensors, ops, IndexedSlices or variables")
    starts = [t.op for t in tensors] + ops
    if not starts:
        raise ValueError("sf.viz: nothing to draw (no tensor or op among the fetches)")
    graph = starts[0].graph
    if graph is None:
        raise TypeError("sf.viz: an eager op has no graph to draw; picture its function instead")
    for op in starts:
        if op.graph is not graph:
            raise ValueError(f"sf.viz: the fetches come from different graphs ({op.name} is not in the "
                             f"graph of {starts[0].name})")
    seen = {}
    stack = list(starts)
    while stack:
        op = stack.pop()
        if id(op) in seen:
            continue
        seen[id(op)] = op
        stack.extend(t.op for t in op.inputs if t.op is not None and id(t.op) not in seen)
        stack.extend(c for c in op.control_inputs if id(c) not in seen)
    ordered = sorted(seen.values(), key=lambda op: op._id)
    return graph, ordered, tensors, slices, getattr(graph, "name", None) or "graph"


# ----------------------------------------------------------------------------------------------
# Nodes and edges


def is_backward(op):
    """Whether the backward walk built `op` (gradients(), or a GradientTape inside a graph)."""
    graph = op.graph
    return op._id in getattr(graph, "_backward_ops", ()) or op._original_op is not None


def _op_info(op):
    lines = [f"{op.name} ({op.type})"]
    for t in op.outputs:
        lines.append(f"out {t.name}: {t.dtype.name} {t.shape}")
    for t in op.inputs:
        lines.append(f"in  {t.name}")
    for c in op.control_inputs:
        lines.append(f"after ^{c.name}")
    if op.device:
        lines.append(f"device {op.device}")
    if op._original_op is not None:
        lines.append(f"gradient of {op._original_op.name}")
    if op._gradient_type is not None:
        lines.append(f"gradient override: {op._gradient_type}")
    return lines


def _group_key(name, depth):
    parts = name.split("/")
    return "/".join(parts[:depth]) + "/" if len(parts) > depth else None


def picture(target, args=(), kwargs=None, group_scopes=False, title=None):
    """The `Picture` of `target` (see the module docstring); `group_scopes` (True, or a depth)
    draws each name scope at that depth as one node."""
    graph, ops, outputs, fetched_slices, default_title = resolve(target, args, kwargs)
    depth = 0 if group_scopes is False or group_scopes is None else 1 if group_scopes is True \
        else int(group_scopes)
    if depth < 0:
        raise ValueError(f"group_scopes must be True, False or a depth >= 1, not {group_scopes!r}")
    output_ids = {id(t.op) for t in outputs}
    nodes, node_of = [], {}      # id(op) -> node index
    groups = {}
    for op in ops:
        kind = "backward" if is_backward(op) else "forward"
        key = _group_key(op.name, depth) if depth else None
        if key is None:
            node_of[id(op)] = len(nodes)
            nodes.append(Node(len(nodes), op.name, op.type, kind, op._id, [op], _op_info(op),
                              id(op) in output_ids))
        else:
            groups.setdefault(key, []).append(op)
    for key, members in groups.items():
        if len(members) == 1:     # a scope of one op: the op itself
            op = members[0]
            node_of[id(op)] = len(nodes)
            nodes.append(Node(len(nodes), op.name, op.type, "backward" if is_backward(op) else "forward",
                              op._id, [op], _op_info(op), id(op) in output_ids))
            continue
        counts = {}
        for op in members:
            counts[op.type] = counts.get(op.type, 0) + 1
        backward = all(is_backward(op) for op in members)
        info = [f"{key} (name scope, {len(members)} ops)"] + \
            [f"{n} x {t}" for t, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
        index = len(nodes)
        nodes.append(Node(index, key, f"{len(members)} ops", "backward" if backward else "scope",
                          min(op._id for op in members), members, info,
                          any(id(op) in output_ids for op in members)))
        for op in members:
            node_of[id(op)] = index
    nodes.sort(key=lambda n: n.order)
    remap = {n.index: i for i, n in enumerate(nodes)}
    for i, n in enumerate(nodes):
        n.index = i
    node_of = {k: remap[v] for k, v in node_of.items()}

    # the tensors that are parts of an IndexedSlices, and what part
    role = {}
    all_slices = list(getattr(graph, "_backward_slices", ())) + list(fetched_slices)
    for s in all_slices:
        for r, t in zip(_ROLES, (s.values, s.indices, s.dense_shape)):
            if isinstance(t, Tensor):
                role[id(t)] = r

    edges = {}

    def add(src, dst, kind, label, tensor):
        if src == dst:
            return
        e = edges.get((src, dst, kind))
        if e is None:
            e = edges[(src, dst, kind)] = Edge(src, dst, kind)
        if label and label not in e.label.split(", "):
            e.label = f"{e.label}, {label}" if e.label else label
        if tensor is not None and tensor.name not in e.tensors:
            e.tensors.append(tensor.name)

    consumed = set()
    for op in ops:
        dst = node_of[id(op)]
        for t in op.inputs:
            src = node_of.get(id(t.op))
            if src is None:
                continue
            consumed.add(id(t))
            r = role.get(id(t))
            add(src, dst, "slices" if r else "data", r or "", t)
        for c in op.control_inputs:
            src = node_of.get(id(c))
            if src is not None:
                add(src, dst, "control", "", None)

    # IndexedSlices that no drawn op consumes (gradients handed back): a node of their own
    seen_slices = set()
    for s in all_slices:
        parts = [(r, t) for r, t in zip(_ROLES, (s.values, s.indices, s.dense_shape)) if isinstance(t, Tensor)]
        key = tuple(id(t) for _, t in parts)
        if key in seen_slices or id(s.values) in consumed or any(id(t.op) not in node_of for _, t in parts):
            continue
        seen_slices.add(key)
        index = len(nodes)
        info = [f"IndexedSlices {s.values.name}"] + [f"{r} {t.name}: {t.dtype.name} {t.shape}" for r, t in parts]
        nodes.append(Node(index, s.values.name, "IndexedSlices", "slices",
                          max(t.op._id for _, t in parts) + 0.5, [], info, True))
        for r, t in parts:
            add(node_of[id(t.op)], index, "slices", r, t)
    return Picture(nodes, list(edges.values()), title or default_title)

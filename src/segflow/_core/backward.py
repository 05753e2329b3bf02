"""The one backward walk: symbolic `gradients()` and `GradientTape.gradient()` both call `backward`.

The callers differ only in where they find the ops and in what the gradient functions do:

- `gradients()` walks graph Operations (the producers of the targets, found through `t.op`, in
  creation order); gradient functions build graph ops, each op's under `name_scope(op.name + "_grad")`.
- a tape walks its own records (eager `Operation`s, already in execution order); gradient
  functions run eagerly, so an outer tape records them (higher order).

Everything else is shared: which ops lie between the sources and the targets, the order (reverse
creation order: every consumer of a tensor is done before its producer), aggregating the gradients
that reach a tensor (`aggregate`: add_n, IndexedSlices concatenated, mixed densified), calling
gradient functions (`call_grad_fn`: zeros for missing output gradients, one result per input),
`skip_input_indices`, `stop_gradients`, integer and resource tensors, and `unconnected_gradients`.
"""
import contextlib
import enum

from segflow._core import errors
from segflow._core.convert import convert_to_tensor
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.tensor import EagerTensor, Tensor
from segflow._core import dtypes
from segflow._core.registry import _gradient_registry, get_gradient_function, hooks
from segflow._core.graph import colocate_with, get_default_graph

__all__ = ["backward", "graph_ops_between", "dense_targets", "check_unconnected", "aggregate", "call_grad_fn",
           "lookup_grad_fn", "is_backpropagatable", "AggregationMethod", "UnconnectedGradients",
           "graph_aggregate"]


class AggregationMethod:
    """How gradients that reach the same tensor are combined (TF's names)."""
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


class UnconnectedGradients(str, enum.Enum):
    """What a source unconnected to the targets gets: None, or zeros of its shape (TF's enum; its
    members equal their strings, so `unconnected_gradients="zero"` works too)."""
    NONE = "none"
    ZERO = "zero"


def _check_aggregation_method(method):
    if method not in (None, AggregationMethod.ADD_N, AggregationMethod.EXPERIMENTAL_TREE,
                      AggregationMethod.EXPERIMENTAL_ACCUMULATE_N):
        raise ValueError(f"Invalid aggregation_method specified {method}.")


def aggregate(grads, aggregation_method=None):
    """One gradient from the list of gradients that reached a tensor (None if the list is empty)."""
    # Fast path (almost every tensor gets exactly one gradient): no list building.
    if len(grads) == 1 and grads[0] is not None:
        return grads[0]
    grads = [g for g in grads if g is not None]
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    sparse = [g for g in grads if isinstance(g, IndexedSlices)]
    if len(sparse) == len(grads):
        return IndexedSlices(hooks.concat([g.values for g in grads], 0),
                                 hooks.concat([hooks.cast(g.indices, grads[0].indices.dtype)
                                                   for g in grads], 0),
                                 grads[0].dense_shape)
    dense = [hooks.densify(g) if isinstance(g, IndexedSlices) else g for g in grads]
    if aggregation_method == AggregationMethod.EXPERIMENTAL_TREE:
        while len(dense) > 1:
            paired = [hooks.add(dense[i], dense[i + 1]) for i in range(0, len(dense) - 1, 2)]
            if len(dense) % 2:
                paired.append(dense[-1])
            dense = paired
        return dense[0]
    return hooks.add_n(dense)


def graph_aggregate(grads, aggregation_method=None, producer=None, colocate_with_producer=False):
    """`aggregate` for `gradients()` in a graph, placed as TF places it: dense gradients are summed
    per device first (each partial sum colocated with its first gradient's op), then the partial sums
    together; with `colocate_with_producer` that last sum (or the whole aggregation, for sparse or
    mixed gradients) is colocated with `producer`, the op whose output the gradients are for."""
    grads = [g for g in grads if g is not None]
    if len(grads) <= 1:
        return grads[0] if grads else None
    outer = colocate_with(producer) if colocate_with_producer and producer is not None else \
        contextlib.nullcontext()
    if aggregation_method == AggregationMethod.EXPERIMENTAL_TREE or \
            any(not isinstance(g, Tensor) for g in grads):
        with outer:
            return aggregate(grads, aggregation_method)
    by_device = {}
    for g in grads:
        by_device.setdefault(g.device or "", []).append(g)
    summands = []
    for device in sorted(by_device):
        group = by_device[device]
        if len(group) == 1:
            summands.append(group[0])
        else:
            with colocate_with(group[0].op):
                summands.append(hooks.add_n(group))
    if len(summands) == 1:
        return summands[0]
    with outer:
        return hooks.add_n(summands)


_BACKPROPAGATABLE = frozenset(dtypes.FLOATING + dtypes.COMPLEX + (dtypes.resource, dtypes.variant))
# NumPy's dtypes of those (bfloat16 is told by name: its np.dtype would import ml_dtypes).
_BACKPROPAGATABLE_NP = frozenset(d.np for d in dtypes.FLOATING + dtypes.COMPLEX if d is not dtypes.bfloat16)


def is_backpropagatable(t):
    """Gradients flow through float16/bfloat16/float32/float64, complex, resource and variant
    tensors (TF's trainable dtypes); not through integers, bool, strings or 8-bit floats."""
    if type(t) is EagerTensor:      # its array's dtype decides, without making the DType (a walk asks
        dt = t._value.dtype         # about every input of every op twice)
        return dt in _BACKPROPAGATABLE_NP or (dt.kind == "V" and dt.name == "bfloat16")
    return t.dtype in _BACKPROPAGATABLE


def call_grad_fn(grad_fn, op, out_grads):
    """Calls `grad_fn(op, *out_grads)`, filling missing output gradients with zeros, and checks that
    it returns one gradient per input (as a list or tuple)."""
    filled = out_grads
    for g in out_grads:
        if g is None:  # only then are zeros needed
            filled = []
            for dy, out in zip(out_grads, op.outputs):
                if dy is None and is_backpropagatable(out) and out.dtype != dtypes.resource:
                    dy = hooks.zeros_like(out)
                filled.append(dy)
            break
    result = grad_fn(op, *filled)
    kind = type(result)
    if (kind is not list and kind is not tuple) or len(result) != len(op.inputs):
        return _per_input(result, op)
    return result


def _per_input(result, op):
    """A gradient function's result as one gradient per input of `op` (a lone tensor or None as a
    list of one), or the error when the count is wrong."""
    if type(result) is not list and type(result) is not tuple:
        if isinstance(result, (Tensor, IndexedSlices)) or result is None:
            result = [result]
        else:
            result = list(result)
    if len(result) != len(op.inputs):
        raise ValueError(f"Num gradients {len(result)} generated for op {op.name} ({op.type}) do not match "
                         f"num inputs {len(op.inputs)}")
    return result


def lookup_grad_fn(op):
    """The gradient function for `op`, None if it is NotDifferentiable; LookupError if none is defined."""
    fn = getattr(op, "grad_fn", None)
    if fn is not None:
        return fn
    return get_gradient_function(op)


def check_unconnected(unconnected_gradients):
    """The validated `unconnected_gradients` value ("none" or "zero")."""
    if unconnected_gradients is UnconnectedGradients.NONE:    # the default: no string work
        return unconnected_gradients
    if isinstance(unconnected_gradients, str):
        unconnected_gradients = unconnected_gradients.lower()
    if unconnected_gradients not in (UnconnectedGradients.NONE, UnconnectedGradients.ZERO):
        raise ValueError(f"Unknown value for unconnected_gradients: {unconnected_gradients!r}")
    return unconnected_gradients


def dense_targets(targets, target_grads, gather):
    """An IndexedSlices target stands for its dense form: d sum(dy * dense(y)) / d values is
    dy[indices]. Replaces such targets by their values (and a given dy by `gather(dy, indices)`)."""
    for i, y in enumerate(targets):
        if isinstance(y, IndexedSlices):
            dy = target_grads[i]
            if isinstance(dy, IndexedSlices):
                raise TypeError(f"the upstream gradient for the IndexedSlices target {i} must be dense")
            if dy is not None:
                target_grads[i] = gather(convert_to_tensor(dy, dtype=y.dtype), y.indices)
            targets[i] = y.values


def graph_ops_between(targets, stop_ids):
    """The graph ops the targets depend on through differentiable tensors (not through a stopped
    tensor), in creation order."""
    seen = {}
    stack = [t.op for t in targets]
    while stack:
        op = stack.pop()
        if id(op) in seen:
            continue
        seen[id(op)] = op
        for x in op.inputs:
            if id(x) not in stop_ids and is_backpropagatable(x):
                p = x.op
                if id(p) not in seen:
                    stack.append(p)
    return sorted(seen.values(), key=_creation_order)


def _creation_order(op):
    return op._id


_grad_fns = {}            # opdef -> the gradient function of its eager records
_grad_fns_for = [None]    # the gradient registry's version _grad_fns holds lookups of


def backward(ops_in_order, targets, target_grads, sources, reach=None, stop_ids=frozenset(),
             aggregation_method=None, build_scope=None, colocate_aggregation=None):
    """Gradients of the targets (seeded with `target_grads`) with respect to each source.

    Args:
      ops_in_order: every op that may lie between the sources and the targets, inputs before the
        ops that use them (graph: `graph_ops_between`; tape: its records).
      targets, target_grads: dense tensors and their upstream gradients (None: no seed).
      sources: tensors to differentiate with respect to.
      reach: ids of the tensors gradients may flow into at the start (default: the sources; a
        tape passes only the sources it watched).
      stop_ids: ids of tensors treated as constants (a source among them still gets its gradient).
      build_scope: graph mode: `build_scope(op)` gives the context each gradient function runs in
        (its name scope); None: gradient functions run as they are (eagerly).
      colocate_aggregation: None: gradients reaching one tensor are summed with `aggregate`;
        True/False: with `graph_aggregate` (gradients(): per device, and with True colocated with
        the tensor's op).
    Returns:
      One aggregated gradient (Tensor, IndexedSlices or None) per source.
    """
    source_ids = {id(s) for s in sources}
    reach = set(source_ids) if reach is None else set(reach)
    if build_scope is not None:   # viz (issue 15): the ops built from here on are backward ops
        graph = get_default_graph()
        first = len(graph._ops)
    # Forward: the ops a source's value flows into, each with the positions of its inputs that
    # need no gradient (TF's `op.skip_input_indices`: inputs off every path from a source, such as
    # the constant factor of a Mul, or of a dtype gradients do not flow through, integers and
    # float8). Gradient functions may skip work for them; their gradients are dropped anyway. An
    # op with every input skipped is not walked (nothing it gives could reach a source).
    useful = []
    add = reach.add
    for op in ops_in_order:
        skip = None
        inputs = op.inputs
        for i, x in enumerate(inputs):
            # (an eager float tensor is told by its array's dtype inline: this runs for every
            # input of every op)
            if id(x) not in reach or ((type(x) is not EagerTensor or x._value.dtype not in _BACKPROPAGATABLE_NP)
                                      and not is_backpropagatable(x)):
                skip = (i,) if skip is None else skip + (i,)
        if not inputs or skip is not None and len(skip) == len(inputs):
            continue
        useful.append((op, skip))
        for o in op.outputs:
            if not stop_ids or id(o) not in stop_ids or id(o) in source_ids:
                add(id(o))
    grads = {}
    seeded = {}   # id -> how many of its gradients are seeds (they come first)
    for t, g in zip(targets, target_grads):
        if g is not None and id(t) in reach:
            grads.setdefault(id(t), []).append(g)
            seeded[id(t)] = seeded.get(id(t), 0) + 1
    get = grads.get
    # opdef -> gradient function of eager records, kept from walk to walk until a gradient is
    # registered (a walk of a 10-op chain looked up four types, about 2 us)
    if _grad_fns_for[0] != _gradient_registry.version:
        _grad_fns.clear()
        _grad_fns_for[0] = _gradient_registry.version
    fn_of = _grad_fns
    if colocate_aggregation is None:
        def combine(lst, producer, key):
            return _aggregate_into(lst, aggregation_method)
    else:
        def combine(lst, producer, key):
            # Consumers were walked last-made first: sum in the order they were made (TF's order).
            k = seeded.get(key, 0)
            g = graph_aggregate(lst[:k] + lst[k:][::-1], aggregation_method, producer,
                                colocate_aggregation)
            lst[:] = (g,)
            return g
    for op, skip in reversed(useful):
        outputs = op.outputs
        if len(outputs) == 1:      # the common case, without the general loop below
            oid = id(outputs[0])
            lst = get(oid)
            if not lst or (stop_ids and oid in stop_ids):
                continue
            out_grads = None
            grad = lst[0] if len(lst) == 1 else combine(lst, op, oid)
        else:
            out_grads = []
            connected = False
            for o in outputs:
                lst = get(id(o))
                if not lst or id(o) in stop_ids:
                    out_grads.append(None)
                    continue
                out_grads.append(lst[0] if len(lst) == 1 else combine(lst, op, id(o)))
                connected = True
            if not connected:
                continue
        grad_fn = op.grad_fn
        if grad_fn is None:
            key = op._opdef if op._graph is None else None
            grad_fn = fn_of.get(key) if key is not None else None
            if grad_fn is None:
                grad_fn = lookup_grad_fn(op)       # LookupError when none is registered
                if grad_fn is None:
                    continue                        # NotDifferentiable
                if key is not None:
                    fn_of[key] = grad_fn
        inputs = op.inputs
        if skip is not None:
            op.skip_input_indices = skip
        try:
            if out_grads is not None or build_scope is not None:
                in_grads = _call(grad_fn, op, [grad] if out_grads is None else out_grads, build_scope)
            else:     # eager, one output (its gradient is never missing): call_grad_fn inlined
                in_grads = grad_fn(op, grad)
                if (type(in_grads) is not tuple and type(in_grads) is not list) or \
                        len(in_grads) != len(inputs):
                    in_grads = _per_input(in_grads, op)
        finally:
            if skip is not None:
                op.skip_input_indices = None
        for i, (x, g) in enumerate(zip(inputs, in_grads)):
            if g is None or (skip is not None and i in skip):     # off every path, or not a float
                continue
            if build_scope is not None:
                if isinstance(g, Tensor) and g.dtype != x.dtype and x.dtype.is_floating:
                    raise errors.InvalidArgumentError(
                        None, None, f"gradient of {op.type} '{op.name}' for input {x.name} has dtype "
                        f"{g.dtype.name}, expected {x.dtype.name}")
                if type(g) is IndexedSlices:
                    graph._backward_slices.append(g)   # viz (issue 15)
            lst = get(id(x))
            if lst is None:
                grads[id(x)] = [g]
            else:
                lst.append(g)
    if colocate_aggregation is None:
        result = [aggregate(grads.get(id(s), ()), aggregation_method) for s in sources]
        if build_scope is not None:
            _note_backward(graph, first, targets, target_grads, result)
        return result
    result = []
    for s in sources:
        lst = grads.get(id(s), [])
        k = seeded.get(id(s), 0) if len(lst) > 1 else 0
        result.append(graph_aggregate(lst[:k] + lst[k:][::-1], aggregation_method,
                                      getattr(s, "op", None), colocate_aggregation))
    if build_scope is not None:
        _note_backward(graph, first, targets, target_grads, result)
    return result


def _note_backward(graph, first, targets, seeds, result):
    """viz (issue 15): records on `graph` the ops this walk built (gradient functions, sums), the
    seeds made after the targets (gradients()' ones_like), and the IndexedSlices it returns, so that
    segflow.viz can draw the backward part in its own colour; nothing reads these while running."""
    ops = graph._backward_ops
    ops.update(op._id for op in graph._ops[first:])
    last = max((t.op._id for t in targets if getattr(t, "graph", None) is graph), default=None)
    for s in seeds:
        if isinstance(s, Tensor) and getattr(s, "graph", None) is graph and last is not None \
                and s.op._id > last:
            ops.add(s.op._id)
    graph._backward_slices.extend(g for g in result if type(g) is IndexedSlices)


def _call(grad_fn, op, out_grads, build_scope):
    if build_scope is None:
        return call_grad_fn(grad_fn, op, out_grads)
    with build_scope(op):
        return call_grad_fn(grad_fn, op, out_grads)


def _aggregate_into(lst, aggregation_method):
    """Sums the gradients in `lst` and leaves just the sum there (a source can also be an output)."""
    g = aggregate(lst, aggregation_method)
    lst[:] = (g,)
    return g

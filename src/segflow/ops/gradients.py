"""Symbolic gradients in graph mode: `gradients(ys, xs)` adds the gradient ops to the graph.

Semantics are TensorFlow's: the result is the gradient of `sum(ys)` (weighted by `grad_ys`) with
respect to each x; an x that ys do not depend on gets None (or zeros with
`unconnected_gradients="zero"`). Gradient functions come from the registry by op type and are the
same functions GradientTape calls eagerly.
"""
import collections

from segflow.eager import context
from segflow.framework import dtypes, errors, ops
from segflow.ops.gradients_util import (AggregationMethod, UnconnectedGradients, _check_aggregation_method,
                                        aggregate, call_grad_fn, is_backpropagatable, lookup_grad_fn)

__all__ = ["gradients", "hessians", "AggregationMethod", "UnconnectedGradients"]


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _as_source(x):
    """Variables are differentiated through their handle; anything else must be a graph tensor."""
    if isinstance(x, ops._Reference):
        x = x.deref()
    if hasattr(x, "_gradient_source"):
        return x._gradient_source()
    return x


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None,
              unconnected_gradients=UnconnectedGradients.NONE):
    """Builds the gradients of `sum(ys)` with respect to each of `xs` (graph mode).

    Args:
      ys: a tensor or list of tensors to differentiate.
      xs: a tensor, variable, or list of them.
      grad_ys: optional list of upstream gradients, one per y (default: ones).
      aggregation_method: `AggregationMethod.ADD_N` (default) or `EXPERIMENTAL_TREE`.
      stop_gradients: tensors treated as constants (no gradient flows through them).
      unconnected_gradients: "none" (default) gives None for an x that ys do not depend on; "zero"
        gives zeros.
      colocate_gradients_with_ops, gate_gradients: accepted for compatibility (placement and gating
        do not change results on one CPU).
    Returns:
      A list with one gradient (Tensor, IndexedSlices or None) per x.
    Raises:
      RuntimeError: called while executing eagerly (use GradientTape).
      LookupError: an op on the path has no registered gradient.
    """
    if context.executing_eagerly():
        raise RuntimeError("sf.gradients is not supported when eager execution is enabled. "
                           "Use sf.GradientTape instead.")
    _check_aggregation_method(aggregation_method)
    if isinstance(unconnected_gradients, str):
        unconnected_gradients = unconnected_gradients.lower()
    if unconnected_gradients not in (UnconnectedGradients.NONE, UnconnectedGradients.ZERO):
        raise ValueError(f"Unknown value for unconnected_gradients: {unconnected_gradients!r}")
    from segflow.ops import array_ops
    ys = [ops.convert_to_tensor_or_indexed_slices(y) for y in _as_list(ys)]
    given_xs = [x.deref() if isinstance(x, ops._Reference) else x for x in _as_list(xs)]
    xs = [_as_source(x) for x in given_xs]
    xs = [ops.convert_to_tensor(x) if not isinstance(x, ops.Tensor) else x for x in xs]
    grad_ys = [None] * len(ys) if grad_ys is None else _as_list(grad_ys)
    if len(grad_ys) != len(ys):
        raise ValueError(f"Passed {len(grad_ys)} grad_ys for {len(ys)} ys")
    stop = {t for t in _as_list(stop_gradients or [])}

    with ops.name_scope(name, "gradients"):
        # An IndexedSlices y stands for its dense form: d sum(gy * dense(y)) / d values = gy[indices].
        for i, y in enumerate(ys):
            if isinstance(y, ops.IndexedSlices):
                gy = grad_ys[i]
                if isinstance(gy, ops.IndexedSlices):
                    raise TypeError(f"grad_ys[{i}] for the IndexedSlices y {y.name} must be dense")
                if gy is not None:
                    from segflow.ops import gather_ops
                    grad_ys[i] = gather_ops.gather(ops.convert_to_tensor(gy, dtype=y.dtype), y.indices)
                ys[i] = y.values
        x_set = set(xs)
        # Ops reachable forward from xs through differentiable tensors.
        reached = set()
        queue = collections.deque(x.op for x in xs)
        while queue:
            op = queue.popleft()
            if op in reached:
                continue
            reached.add(op)
            for out in op.outputs:
                # A stopped tensor passes no gradient to its inputs, but an x among stop_gradients
                # still gets its own gradient (TF stops at the op, after aggregating into it).
                if is_backpropagatable(out) and (out not in stop or out in x_set):
                    queue.extend(c for c in out._consumers if c not in reached)
        # Of those, the ops that lead to ys.
        between = set()
        stack = [y.op for y in ys]
        while stack:
            op = stack.pop()
            if op in between or op not in reached:
                continue
            between.add(op)
            stack.extend(t.op for t in op.inputs if t.op not in between)
        # Pending gradient count per op: how many consumer edges inside `between` must report first.
        pending = collections.Counter()
        for op in between:
            for t in op.inputs:
                if t.op in between:
                    pending[t.op] += 1

        grads = collections.defaultdict(list)
        for y, gy in zip(ys, grad_ys):
            if gy is None:
                if y.dtype.is_integer or y.dtype.is_bool:
                    raise TypeError(f"Gradients of an integer or bool tensor are not defined: {y.name} "
                                    f"has dtype {y.dtype.name}")
                with ops.colocate_with(y) if colocate_gradients_with_ops else _null():
                    gy = array_ops.ones_like(y, name=f"grad_ys_{len(grads)}")
            else:
                gy = ops.convert_to_tensor_or_indexed_slices(gy, dtype=y.dtype)
            grads[y].append(gy)

        ready = collections.deque(op for op in {y.op for y in ys} if pending[op] == 0 and op in between)
        done = set()
        while ready:
            op = ready.popleft()
            if op in done:
                continue
            done.add(op)
            out_grads = []
            for t in op.outputs:
                g = aggregate(grads.get(t, ()), aggregation_method) if t not in stop or t in x_set else None
                if t in grads:
                    grads[t] = [g]
                out_grads.append(None if t in stop else g)
            if any(g is not None for g in out_grads) and any(
                    t.op in between for t in op.inputs):
                grad_fn = lookup_grad_fn(op)
                if grad_fn is not None:
                    with ops.name_scope(op.name + "_grad"), \
                            (ops.colocate_with(op) if colocate_gradients_with_ops else _null()):
                        in_grads = call_grad_fn(grad_fn, op, out_grads)
                    for t, g in zip(op.inputs, in_grads):
                        if g is not None and t.op in between and is_backpropagatable(t):
                            if isinstance(g, ops.Tensor) and g.dtype != t.dtype and t.dtype.is_floating:
                                raise errors.InvalidArgumentError(
                                    None, None, f"gradient of {op.type} '{op.name}' for input {t.name} has dtype "
                                    f"{g.dtype.name}, expected {t.dtype.name}")
                            grads[t].append(g)
            for t in op.inputs:
                if t.op in between:
                    pending[t.op] -= 1
                    if pending[t.op] == 0:
                        ready.append(t.op)

        result = []
        for x, given in zip(xs, given_xs):
            g = aggregate(grads.get(x, ()), aggregation_method)
            if g is None and unconnected_gradients == UnconnectedGradients.ZERO:
                # zeros like the variable's value, not like its resource handle
                g = array_ops.zeros_like(given if x.dtype == dtypes.resource else x)
            result.append(g)
    return result


class _null:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False, gate_gradients=False,
             aggregation_method=None):
    """The Hessian of `sum(ys)` with respect to each x: shape `x.shape + x.shape`."""
    from segflow.ops import array_ops
    xs = _as_list(xs)
    result = []
    with ops.name_scope(name, "hessians"):
        for x, g in zip(xs, gradients(ys, xs, aggregation_method=aggregation_method)):
            if g is None:
                result.append(None)
                continue
            g = ops.convert_to_tensor(g)
            n = x.shape.num_elements()
            if n is None:
                raise ValueError(f"hessians needs a fully known shape for {x.name}, got {x.shape}")
            flat = array_ops.reshape(g, [-1])
            rows = []
            for i in range(n):
                row = gradients(flat[i], x, aggregation_method=aggregation_method)[0]
                rows.append(array_ops.zeros_like(x) if row is None else ops.convert_to_tensor(row))
            result.append(array_ops.reshape(array_ops.stack(rows), x.shape.as_list() + x.shape.as_list()))
    return result

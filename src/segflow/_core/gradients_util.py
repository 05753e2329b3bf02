"""The machinery shared by symbolic `gradients()` and `GradientTape`: aggregating the gradients that
reach one tensor, and calling an op's gradient function.

Aggregation: dense gradients add with `add_n`; when every gradient is an IndexedSlices their values
and indices are concatenated (still sparse); when they are mixed the sparse ones are densified with
`unsorted_segment_sum` and everything is added.
"""
from segflow._core import dtypes
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.registry import get_gradient_function
from segflow._core.tensor import Tensor


class AggregationMethod:
    """How gradients that reach the same tensor are combined (TF's names)."""
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


class UnconnectedGradients:
    NONE = "none"
    ZERO = "zero"


def _check_aggregation_method(method):
    if method not in (None, AggregationMethod.ADD_N, AggregationMethod.EXPERIMENTAL_TREE,
                      AggregationMethod.EXPERIMENTAL_ACCUMULATE_N):
        raise ValueError(f"Invalid aggregation_method specified {method}.")


def aggregate(grads, aggregation_method=None):
    """One gradient from the list of gradients that reached a tensor (None if the list is empty)."""
    # Fast path (almost every tensor gets exactly one gradient): no list building, no imports.
    if len(grads) == 1 and grads[0] is not None:
        return grads[0]
    grads = [g for g in grads if g is not None]
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    from segflow.ops import array_ops, math_ops
    sparse = [g for g in grads if isinstance(g, IndexedSlices)]
    if len(sparse) == len(grads):
        return IndexedSlices(array_ops.concat([g.values for g in grads], 0),
                                 array_ops.concat([math_ops.cast(g.indices, grads[0].indices.dtype)
                                                   for g in grads], 0),
                                 grads[0].dense_shape)
    dense = [math_ops.densify_indexed_slices(g) if isinstance(g, IndexedSlices) else g for g in grads]
    if aggregation_method == AggregationMethod.EXPERIMENTAL_TREE:
        while len(dense) > 1:
            paired = [math_ops.add(dense[i], dense[i + 1]) for i in range(0, len(dense) - 1, 2)]
            if len(dense) % 2:
                paired.append(dense[-1])
            dense = paired
        return dense[0]
    return math_ops.add_n(dense)


def is_backpropagatable(t):
    dt = t.dtype
    return dt.is_floating or dt.is_complex or dt == dtypes.resource or dt == dtypes.variant


def call_grad_fn(grad_fn, op, out_grads):
    """Calls `grad_fn(op, *out_grads)`, filling missing output gradients with zeros, and checks that
    it returns one gradient per input."""
    filled = out_grads
    for g in out_grads:
        if g is None:  # only then are zeros needed (and array_ops imported)
            from segflow.ops import array_ops
            filled = []
            for dy, out in zip(out_grads, op.outputs):
                if dy is None and is_backpropagatable(out) and out.dtype != dtypes.resource:
                    dy = array_ops.zeros_like(out)
                filled.append(dy)
            break
    result = grad_fn(op, *filled)
    if type(result) is not list:
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

"""Symbolic gradients in graph mode: `gradients(ys, xs)` adds the gradient ops to the graph.

Semantics are TensorFlow's: the result is the gradient of `sum(ys)` (weighted by `grad_ys`) with
respect to each x; an x that ys do not depend on gets None (or zeros with
`unconnected_gradients="zero"`). Gradient functions come from the registry by op type and are the
same functions GradientTape calls eagerly.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union
import contextlib

from segflow._core import backward as backward_lib
from segflow._core import mode as context
from segflow._core import dtypes
from segflow._core.convert import convert_to_tensor, convert_to_tensor_or_indexed_slices
from segflow._core.graph import colocate_with, get_default_graph, name_scope
from segflow._core.tensor import Tensor, _Reference
from segflow._core.backward import AggregationMethod, UnconnectedGradients, _check_aggregation_method
from segflow._ops import shape as array_ops
from segflow._ops import gather as gather_ops
from segflow._ops import join as join_ops
from segflow._core.typing import GradientLike, Name, TensorLike

__all__ = ["gradients", "hessians", "AggregationMethod", "UnconnectedGradients"]


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _as_source(x):
    """Variables are differentiated through their handle; anything else must be a graph tensor."""
    if isinstance(x, _Reference):
        x = x.deref()
    if hasattr(x, "_gradient_source"):
        return x._gradient_source()
    return x


def gradients(ys: Union[TensorLike, Sequence[TensorLike]], xs: Any,
              grad_ys: Optional[Union[TensorLike, Sequence[Optional[TensorLike]]]] = None, name: Name = "gradients",
              colocate_gradients_with_ops: bool = False, gate_gradients: bool = False,
              aggregation_method: Optional[int] = None,
              stop_gradients: Optional[Union[TensorLike, Sequence[TensorLike]]] = None,
              unconnected_gradients: Union[str, UnconnectedGradients] = UnconnectedGradients.NONE) -> list[Optional[GradientLike]]:
    """Builds the gradients of `sum(ys)` with respect to each of `xs` (graph mode).

    Args:
      ys: a tensor or list of tensors to differentiate.
      xs: a tensor, variable, or list of them.
      grad_ys: optional list of upstream gradients, one per y (default: ones).
      aggregation_method: `AggregationMethod.ADD_N` (default) or `EXPERIMENTAL_TREE`.
      stop_gradients: tensors treated as constants (no gradient flows through them).
      unconnected_gradients: "none" (default) gives None for an x that ys do not depend on; "zero"
        gives zeros.
      colocate_gradients_with_ops: place each op's gradient ops (and the sum of the gradients that
        reach an op's output) with that op (recorded placement; results are the same).
      gate_gradients: accepted for compatibility (gating does not change results on one CPU).
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
    unconnected_gradients = backward_lib.check_unconnected(unconnected_gradients)
    ys = [convert_to_tensor_or_indexed_slices(y) for y in _as_list(ys)]
    given_xs = [x.deref() if isinstance(x, _Reference) else x for x in _as_list(xs)]
    xs = [_as_source(x) for x in given_xs]
    xs = [convert_to_tensor(x) if not isinstance(x, Tensor) else x for x in xs]
    grad_ys = [None] * len(ys) if grad_ys is None else _as_list(grad_ys)
    if len(grad_ys) != len(ys):
        raise ValueError(f"Passed {len(grad_ys)} grad_ys for {len(ys)} ys")
    stop_ids = {id(t) for t in _as_list(stop_gradients or [])}

    with name_scope(name, "gradients"):
        backward_lib.dense_targets(ys, grad_ys, gather_ops.gather)
        seeds = []
        for i, (y, gy) in enumerate(zip(ys, grad_ys)):
            if gy is None:
                if y.dtype.is_integer or y.dtype.is_bool:
                    raise TypeError(f"Gradients of an integer or bool tensor are not defined: {y.name} "
                                    f"has dtype {y.dtype.name}")
                with colocate_with(y) if colocate_gradients_with_ops else contextlib.nullcontext():
                    gy = array_ops.ones_like(y, name=f"grad_ys_{i}")
            else:
                gy = convert_to_tensor_or_indexed_slices(gy, dtype=y.dtype)
            seeds.append(gy)

        graph = get_default_graph()

        def scope(op):
            # Each op's gradient ops sit under `<op>_grad` and record `op` as their `_original_op`.
            if colocate_gradients_with_ops:
                return _all(name_scope(op.name + "_grad"), graph._original_op(op), colocate_with(op))
            return _all(name_scope(op.name + "_grad"), graph._original_op(op))

        between = backward_lib.graph_ops_between(ys, stop_ids - {id(x) for x in xs})
        result = backward_lib.backward(between, ys, seeds, xs, stop_ids=stop_ids,
                                       aggregation_method=aggregation_method, build_scope=scope,
                                       colocate_aggregation=bool(colocate_gradients_with_ops))
        for i, (g, x, given) in enumerate(zip(result, xs, given_xs)):
            if g is None and unconnected_gradients == UnconnectedGradients.ZERO:
                # zeros like the variable's value, not like its resource handle
                result[i] = array_ops.zeros_like(given if x.dtype == dtypes.resource else x)
    return result


@contextlib.contextmanager
def _all(*contexts):
    with contextlib.ExitStack() as stack:
        for c in contexts:
            stack.enter_context(c)
        yield


def hessians(ys: Union[TensorLike, Sequence[TensorLike]], xs: Any, name: Name = "hessians",
             colocate_gradients_with_ops: bool = False, gate_gradients: bool = False,
             aggregation_method: Optional[int] = None) -> list[Optional[Tensor]]:
    """The Hessian of `sum(ys)` with respect to each x: shape `x.shape + x.shape`."""
    xs = _as_list(xs)
    result = []
    with name_scope(name, "hessians"):
        for x, g in zip(xs, gradients(ys, xs, aggregation_method=aggregation_method)):
            if g is None:
                result.append(None)
                continue
            g = convert_to_tensor(g)
            n = x.shape.num_elements()
            if n is None:
                raise ValueError(f"hessians needs a fully known shape for {x.name}, got {x.shape}")
            flat = array_ops.reshape(g, [-1])
            rows = []
            for i in range(n):
                row = gradients(flat[i], x, aggregation_method=aggregation_method)[0]
                rows.append(array_ops.zeros_like(x) if row is None else convert_to_tensor(row))
            result.append(array_ops.reshape(join_ops.stack(rows), x.shape.as_list() + x.shape.as_list()))
    return result

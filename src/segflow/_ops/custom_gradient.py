"""`custom_gradient`: a function whose gradient the user supplies, in both modes.

    @sf.custom_gradient
    def log1pexp(x):
        e = sf.exp(x)
        def grad(dy):
            return dy * (1 - 1 / (1 + e))
        return sf.math.log(1 + e), grad

Eagerly, the call is recorded on active tapes as one op whose gradient function calls `grad`; in a
graph, the outputs pass through an IdentityN node whose gradient is overridden the same way. The
function `grad` is built from public ops, so it can be differentiated again.
"""
import functools
import itertools

from segflow._core import dtypes, mode as context, tape as tape_lib
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import get_default_graph
from segflow._core.registry import RegisterGradient, get_gradient_function
from segflow._core.tensor import EagerTensor, Tensor
from segflow.util import nest
from segflow._ops.shape import identity_n
from segflow._ops.variables import trainable_variables

__all__ = ["custom_gradient", "get_dependent_variables"]

_ids = itertools.count()


def _make_grad_fn(grad_fn, n_outputs, n_inputs, variables):
    def backward(op, *grads):
        dys = list(grads[:n_outputs])
        if variables:
            result = grad_fn(*dys, variables=variables)
            input_grads, var_grads = result
        else:
            input_grads = grad_fn(*dys) if n_outputs > 1 else grad_fn(dys[0])
            var_grads = []
        input_grads = list(input_grads) if isinstance(input_grads, (list, tuple)) else [input_grads]
        if len(input_grads) != n_inputs:
            raise ValueError(f"custom_gradient: grad_fn returned {len(input_grads)} gradients for {n_inputs} inputs")
        return [None] * n_outputs + input_grads + list(var_grads)
    return backward


def custom_gradient(f=None):
    """Decorator: `f(*x)` returns `(y, grad_fn)` where `grad_fn(*dy)` returns the gradients w.r.t. x."""
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        inputs = [convert_to_tensor(a) if not isinstance(a, Tensor) else a for a in args]
        if context.executing_eagerly():
            return _eager(f, inputs, kwargs)
        return _graph(f, inputs, kwargs)

    return decorated


def _eager(f, inputs, kwargs):
    with _paused_tapes():
        result, grad_fn = f(*inputs, **kwargs)
    flat = [convert_to_tensor(r) if not isinstance(r, Tensor) else r for r in nest.flatten(result)]
    # Fresh tensor objects, so that the tape sees outputs distinct from any input.
    outs = [EagerTensor(r.numpy()) for r in flat]
    backward = _make_grad_fn(grad_fn, len(outs), len(inputs), [])
    tape_lib.record(None, list(inputs), outs, {}, grad_fn=lambda op, *g: backward(op, *g)[len(outs):])
    return nest.pack_sequence_as(result, outs)


class _paused_tapes:
    def __enter__(self):
        self._saved = list(tape_lib._tapes)
        tape_lib._tapes.clear()

    def __exit__(self, *exc):
        tape_lib._tapes.extend(self._saved)
        return False


def _graph(f, inputs, kwargs):
    result, grad_fn = f(*inputs, **kwargs)
    flat = [convert_to_tensor(r) for r in nest.flatten(result)]
    name = f"CustomGradient-{next(_ids)}"
    RegisterGradient(name)(_make_grad_fn(grad_fn, len(flat), len(inputs), []))
    graph = get_default_graph()
    with graph.gradient_override_map({"IdentityN": name}):
        outs = identity_n(flat + inputs)
    return nest.pack_sequence_as(result, outs[:len(flat)])


def _differentiable(op):
    try:
        return get_gradient_function(op) is not None
    except LookupError:
        return False


def get_dependent_variables(input_ops, output_ops):
    """The trainable variables that `output_ops` (tensors) depend on through differentiable ops,
    not through `input_ops` (TF's custom_gradient.get_dependent_variables): what a custom gradient
    of the function between them must also give gradients for."""
    stop = {id(t) for t in nest.flatten(input_ops)}
    stack = [t.op for t in nest.flatten(output_ops) if isinstance(t, Tensor) and not isinstance(t, EagerTensor)]
    seen, handles = set(), set()
    while stack:
        op = stack.pop()
        if id(op) in seen or not _differentiable(op):
            continue
        seen.add(id(op))
        for x in op.inputs:
            if id(x) in stop:
                continue
            if x.dtype == dtypes.resource:
                handles.add(id(x))
            if not isinstance(x, EagerTensor):
                stack.append(x.op)
    return [v for v in trainable_variables() if id(v.handle) in handles]

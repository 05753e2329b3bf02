"""`custom_gradient`: a function whose gradient the user supplies, in both modes; and the two
decorators built on it, `recompute_grad` and `grad_pass_through`.

    @sf.custom_gradient
    def log1pexp(x):
        e = sf.exp(x)
        def grad(dy):
            return dy * (1 - 1 / (1 + e))
        return sf.math.log(1 + e), grad

Eagerly, the call is recorded on active tapes as one op whose gradient function calls `grad`; in a
graph, the outputs pass through an IdentityN node whose gradient is overridden the same way. The
function `grad` is built from public ops, so it can be differentiated again.

Variables the function reads (and, in a graph, the trainable variables its outputs depend on) that
are not among its arguments also get gradients: `grad(*dys, variables=...)` receives them and
returns `(input_grads, variable_grads)`. The decorator works on methods too (`self` is bound, not
differentiated).
"""
import functools
import inspect
import itertools

from segflow._core import dtypes, mode as context, tape as tape_lib
from segflow._core.backward import UnconnectedGradients
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import get_default_graph
from segflow._core.registry import RegisterGradient, get_gradient_function
from segflow._core.tensor import EagerTensor, Tensor
from segflow.util import nest
from segflow._ops.shape import identity, identity_n
from segflow._ops.variables import trainable_variables
from segflow._ops import variable_scope as vs
from segflow._ops.backprop import GradientTape

__all__ = ["custom_gradient", "get_dependent_variables", "recompute_grad", "grad_pass_through"]

_ids = itertools.count()


class _Decorated:
    """What `custom_gradient(f)` returns: calls `f` with a custom gradient; as a class attribute it
    binds like a method, so `self` is passed to `f` and is no input of the gradient."""

    def __init__(self, f, call):
        self._f = f
        self._call = call
        functools.update_wrapper(self, f)

    def __call__(self, *args, **kwargs):
        return self._call(self._f, args, kwargs)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return _Decorated(self._f.__get__(instance, owner), self._call)


def custom_gradient(f=None):
    """Decorator: `f(*x)` returns `(y, grad_fn)` where `grad_fn(*dy)` returns the gradients w.r.t. x
    (and, if f uses variables, `grad_fn(*dy, variables=vars)` returns `(input_grads, var_grads)`)."""
    if f is None:
        return custom_gradient
    return _Decorated(f, _call)


def _call(f, args, kwargs):
    if context.executing_eagerly():
        return _eager(f, args, kwargs)
    return _graph(f, args, kwargs)


class _VariableWatcher:
    """Collects the trainable variables read inside the block (by the calling thread)."""

    def __enter__(self):
        self._tape = tape_lib.Tape(persistent=False, watch_accessed_variables=True)
        tape_lib.push_tape(self._tape)
        return self

    def __exit__(self, *exc):
        tape_lib.pop_tape(self._tape)
        return False

    def watched_variables(self):
        return sorted(self._tape.watched_variables, key=lambda v: getattr(v, "_creation_order", 0))


def _accepts_variables(grad_fn):
    try:
        spec = inspect.getfullargspec(grad_fn)
    except TypeError:
        return True
    return "variables" in spec.args or "variables" in spec.kwonlyargs or spec.varkw is not None


def _check_signature(grad_fn, variables):
    if variables and not _accepts_variables(grad_fn):
        raise TypeError("@custom_gradient grad_fn must accept keyword argument 'variables', since function "
                        f"uses variables: {[v.name for v in variables]}")


def _make_grad_fn(grad_fn, n_inputs, variables):
    """The gradient of the recorded op from the user's `grad_fn`: one gradient per input, then one
    per variable."""

    def backward(*dys):
        dys = list(dys)
        if variables:
            input_grads, var_grads = grad_fn(*dys, variables=variables)
            var_grads = list(var_grads)
            if len(var_grads) != len(variables):
                raise ValueError("Must return gradient for each variable from @custom_gradient grad_fn.")
        else:
            input_grads = grad_fn(*dys)
            var_grads = []
        input_grads = list(input_grads) if isinstance(input_grads, (list, tuple)) else [input_grads]
        if len(input_grads) != n_inputs:
            raise ValueError(f"custom_gradient function expected to return {n_inputs} gradients, but returned "
                             f"{len(input_grads)} instead.")
        return input_grads + var_grads

    return backward


def _as_tensor(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def _eager(f, args, kwargs):
    # f runs with the tapes recording (as in TF); the watcher sees the variables it reads.
    with _VariableWatcher() as watcher:
        result, grad_fn = f(*args, **kwargs)
    flat_args = nest.flatten(args)
    variables = [v for v in watcher.watched_variables() if all(v is not a for a in flat_args)]
    _check_signature(grad_fn, variables)
    flat = [_as_tensor(r) for r in nest.flatten(result)]
    # Fresh tensor objects, so that the tape sees outputs distinct from any input.
    outs = [EagerTensor(r.numpy()) for r in flat]
    inputs = [_as_tensor(x) for x in flat_args + variables]
    backward = _make_grad_fn(grad_fn, len(flat_args), variables)
    tape_lib.record(None, inputs, outs, {}, grad_fn=lambda op, *g: backward(*g))
    return nest.pack_sequence_as(result, outs)


def _graph(f, args, kwargs):
    args = nest.map_structure(_as_tensor, args)
    with _VariableWatcher() as watcher:
        result, grad_fn = f(*args, **kwargs)
    flat_args = nest.flatten(args)
    flat = [_as_tensor(r) for r in nest.flatten(result)]
    graph = get_default_graph()
    inputs_here = [x for x in flat_args if getattr(x, "graph", None) is graph]
    found = {id(v): v for v in watcher.watched_variables()}
    for v in get_dependent_variables(inputs_here, flat):
        found.setdefault(id(v), v)
    variables = sorted(found.values(), key=lambda v: v.name)
    _check_signature(grad_fn, variables)
    backward = _make_grad_fn(grad_fn, len(flat_args), variables)
    n_out = len(flat)
    name = f"CustomGradient-{next(_ids)}"

    @RegisterGradient(name)
    def _identity_n_grad(op, *grads):
        return [None] * n_out + backward(*grads[:n_out])

    with graph.gradient_override_map({"IdentityN": name}):
        outs = identity_n(flat + flat_args + [_as_tensor(v) for v in variables])
    return nest.pack_sequence_as(result, outs[:n_out])


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


class _stopped_recording:
    """No tape records inside, but the variables read inside still count as accessed once the block
    ends (so an enclosing custom_gradient sees them, as TF's variable watchers do)."""

    def __enter__(self):
        self._suspended = tape_lib.suspended()
        self._suspended.__enter__()
        self._watcher = _VariableWatcher().__enter__()
        return self

    def __exit__(self, *exc):
        self._watcher.__exit__(*exc)
        self._suspended.__exit__(*exc)
        for v in self._watcher.watched_variables():
            tape_lib.variable_accessed(v)
        return False


def recompute_grad(f):
    """`f` with the same value and gradient, computed without keeping its intermediate tensors: the
    forward pass runs unrecorded, and the gradient runs `f` again (under a tape watching fresh
    copies of the arguments and the variables f reads) and differentiates that.

    The recomputation is built from public ops under the tapes active when the gradient is taken,
    so gradients of the gradient work. The variable scope of the call is entered again for the
    recomputation, so variables made with `get_variable` are reused.
    """

    def inner(*args, **kwargs):
        scope = vs.get_variable_scope()
        with _stopped_recording():
            result = f(*args, **kwargs)

        def grad(*dresult, variables=None):
            with GradientTape() as tape:
                fresh = nest.map_structure(identity, args)
                tape.watch(fresh)
                if variables is not None:
                    tape.watch(variables)
                with vs.variable_scope(scope):
                    recomputed = f(*fresh, **kwargs)
            sources = list(nest.flatten(fresh)) + list(variables or [])
            grads = tape.gradient(recomputed, sources, output_gradients=list(dresult),
                                  unconnected_gradients=UnconnectedGradients.ZERO)
            n = len(nest.flatten(fresh))
            input_grads, var_grads = grads[:n], grads[n:]
            return (input_grads, var_grads) if variables is not None else input_grads

        return result, grad

    decorated = custom_gradient(inner)
    functools.update_wrapper(decorated, f)
    return decorated


def grad_pass_through(f):
    """`f` whose gradient is the identity: the upstream gradient of each output passes to the
    corresponding input unchanged (e.g. through a non-differentiable assign); variables read by f
    get no gradient."""

    def inner(*args, **kwargs):
        def grad(*dys, variables=None):
            if variables is not None:
                return list(dys), [None] * len(variables)
            return list(dys)

        return f(*args, **kwargs), grad

    decorated = custom_gradient(inner)
    functools.update_wrapper(decorated, f)
    return decorated

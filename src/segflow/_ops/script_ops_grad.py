"""Gradients of the ops in script_ops.py: PyFunc and PyFuncStateless have none (TF registers them
NotDifferentiable; `gradient_override_map({"PyFunc": "MyGrad"})` gives one), EagerPyFunc
differentiates its function with a GradientTape.

Eagerly the tape the forward run recorded answers (no second run, as in TF). In a graph, and
eagerly when a tape watching the op's inputs records the gradient (to differentiate it again),
the gradient is a second EagerPyFunc whose function runs the forward function again under a tape,
on the forward inputs and the incoming gradients; so gradients of any order work (TF's are first
order). Only float and complex inputs get a gradient."""
from segflow._core import tape as tape_lib
from segflow._core.apply import ExecState, apply_op
from segflow._core.convert import convert_to_tensor
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.registry import NotDifferentiable, RegisterGradient
from segflow._ops import shape as shape_ops
from segflow._ops.backprop import GradientTape
from segflow._ops.script_ops import EagerFunc, _new_token, differentiable

__all__ = []

NotDifferentiable("PyFunc")
NotDifferentiable("PyFuncStateless")

# The forward call inside the backward op's kernel reports errors unprefixed (the Session names
# the backward op).
_IN_KERNEL = ExecState(None, "")


class _Backward:
    """The function of the backward EagerPyFunc: (forward inputs..., gradients of the `live`
    outputs...) -> gradients of the `wanted` inputs, by running `forward` again under a tape."""

    __slots__ = ("forward", "n_inputs", "wanted", "live", "token")

    def __init__(self, forward, n_inputs, wanted, live, token):
        self.forward, self.n_inputs, self.wanted, self.live, self.token = forward, n_inputs, wanted, live, token

    def __call__(self, *args):
        xs, dys = list(args[:self.n_inputs]), list(args[self.n_inputs:])
        with GradientTape() as tape:
            for i in self.wanted:
                tape.watch(xs[i])
            outs = self.forward.call(xs, self.token, _IN_KERNEL)
        grads = tape.gradient([outs[k] for k in self.live], [xs[i] for i in self.wanted], output_gradients=dys)
        return [shape_ops.zeros_like(xs[i]) if g is None else _dense(g) for i, g in zip(self.wanted, grads)]

    def __repr__(self):
        return f"<gradient of {self.forward!r}>"


def _watched(tensors):
    """Whether a tape recording now watches one of `tensors`: the gradient being computed may be
    differentiated again, so it must be built from ops on them (the backward op), not read off
    the forward run's private tape."""
    tapes = tape_lib._tape_state.tapes if tape_lib.could_record() else ()
    return any(tape.is_watched(t) for tape in tapes for t in tensors)


def _dense(g):
    return convert_to_tensor(g) if isinstance(g, IndexedSlices) else g


@RegisterGradient("EagerPyFunc")
def _eager_py_func_grad(op, *grads):
    func = op.get_attr("func")
    wanted = [i for i, t in enumerate(op.inputs) if differentiable(t.dtype)]
    live = [k for k, (g, t) in enumerate(zip(grads, op.outputs)) if g is not None and differentiable(t.dtype)]
    result = [None] * len(op.inputs)
    if not wanted or not live:
        return result
    dys = [_dense(grads[k]) for k in live]
    if op.graph is None and func.recorded is not None and not _watched(op.inputs):
        tape, args, outs = func.recorded
        got = tape.gradient([outs[k] for k in live], [args[i] for i in wanted], output_gradients=dys)
        for i, g in zip(wanted, got):
            result[i] = g
        return result
    backward = EagerFunc(_Backward(func, len(op.inputs), wanted, live, op.get_attr("token")),
                         [op.inputs[i].dtype for i in wanted], is_grad_func=True)
    inputs = list(op.inputs) + [convert_to_tensor(d) for d in dys]
    outs = apply_op("EagerPyFunc", inputs, token=_new_token(), Tin=tuple(t.dtype for t in inputs),
                    Tout=backward.Tout, func=backward)
    for i, g in zip(wanted, outs):
        if op.graph is not None:
            g.set_shape(op.inputs[i].shape)
        result[i] = g
    return result

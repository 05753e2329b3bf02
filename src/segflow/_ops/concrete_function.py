"""A traced function, callable (TF's ConcreteFunction), and its gradient.

Calling. Eagerly, a call feeds the arguments and captures to the graph's cached plan (the Session
machinery, without a Session) and returns eager tensors in the structure the function returned.
Stateful ops (variable updates, random ops) run every call in program order even if no output
depends on them. Inside a graph (or another trace) a call is one `PartitionedCall` op whose kernel
runs the same plan.

Gradients. A call is one op for the tapes around it (eagerly) or for `gradients()` (in a graph). Its
gradient is another function: the backward graph of the traced one, built once per set of inputs
that need gradients (the same walk `gradients()` uses) in the same graph, and itself called as a
function, so gradients of gradients work. Eagerly, while a tape records, the call also computes the
forward values the backward graph reads, and the backward function is fed them (nothing is
recomputed, so random ops and variables updated later give the right gradient); the tape keeps them
alive as long as it keeps the call. In a graph the backward function recomputes the forward values
it needs from the call's inputs.
"""
import threading

import numpy as np

from segflow._core import dtypes, errors
from segflow._core import mode as context, tape as tape_lib
from segflow._core.apply import _EAGER_RESOURCES, apply_op
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import get_default_graph
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.registry import RegisterGradient, TensorSpec as _OutSpec, hooks, register_op
from segflow._core.session import execute_plan, make_plan
from segflow._core.tensor import EagerTensor, Tensor
from segflow._ops import shape as shape_ops
from segflow._ops.func_graph import _variable_of
from segflow._ops.gradients import gradients as _gradients
from segflow.util import nest

__all__ = ["ConcreteFunction"]

_MISSING = object()
_UNSET = object()


class ConcreteFunction:
    """One trace: a graph with `inputs` (argument placeholders, then capture placeholders) and flat
    `outputs`, callable with tensors (TF's ConcreteFunction)."""

    def __init__(self, graph, arg_inputs, outputs, structured_outputs, signature=None, name=None):
        self.graph = graph
        self._arg_inputs = list(arg_inputs)
        self._outputs = list(outputs)          # graph tensors, in the order of structured_outputs' leaves
        self.structured_outputs = structured_outputs
        self.structured_input_signature = signature
        self._call_structure = None       # (args, kwargs) of the trace, placeholders for its tensors
        self.name = name or graph.name
        self._lock = threading.Lock()
        self._plans = {}
        self._backwards = {}     # wanted input positions (None: all) -> _Backward
        self._captured_cache = None
        self._saved_backward = _UNSET   # see _graph_backward
        self._custom_grad = None        # (op, *output grads) -> input grads: Defun's grad_func
        self._stateful = [op for op in graph.get_operations() if op.op_def is not None and op.op_def.stateful
                          and op.type not in ("Placeholder", "VarHandleOp")]

    # -- the graph's interface
    @property
    def inputs(self):
        return self._arg_inputs + [p for _, p in self.graph.captures]

    @property
    def captured_inputs(self):
        captures = self.graph.captures
        cached = self._captured_cache
        if cached is None or len(cached) != len(captures):
            cached = self._captured_cache = [v for v, _ in captures]
        return cached

    @property
    def outputs(self):
        return list(self._outputs)

    @property
    def variables(self):
        return list(self.graph.created_variables)

    @property
    def trainable_variables(self):
        return [v for v in self.graph.created_variables if v.trainable]

    @property
    def output_dtypes(self):
        return nest.map_structure(lambda t: t.dtype if isinstance(t, Tensor) else None, self.structured_outputs)

    @property
    def output_shapes(self):
        return nest.map_structure(lambda t: t.shape if isinstance(t, Tensor) else None, self.structured_outputs)

    def _plan(self, extra=()):
        key = tuple(id(t) for t in extra)
        plan = self._plans.get(key)
        if plan is None:
            with self._lock:
                plan = make_plan(self.outputs + list(extra), self._stateful, self.inputs)
                self._plans[key] = plan
        return plan

    def _repr_html_(self):
        # viz (issue 15): the traced graph's picture in a notebook; segflow.viz installs the hook.
        return hooks.graph_html(self)

    # -- calling
    def __call__(self, *args, **kwargs):
        flat = self._bind(args, kwargs)
        tensors = [_as_input(a, p) for a, p in zip(flat, self._arg_inputs)]
        for n, (t, p) in enumerate(zip(tensors, self._arg_inputs)):
            if t.dtype != p.dtype or not p.shape.is_compatible_with(t.shape):
                raise ValueError(f"ConcreteFunction {self.name}: argument {n} has dtype {t.dtype.name} and shape "
                                 f"{t.shape}, but the trace takes dtype {p.dtype.name} and shape {p.shape}")
        outs = self._call_flat(tensors + self.captured_inputs)
        return self._structured(outs)

    def _bind(self, args, kwargs):
        """The values for the argument placeholders, from a call shaped like the traced one (Python
        arguments of the trace may be left out; they are part of the trace)."""
        traced = self._call_structure
        if traced is None:
            if kwargs:
                raise TypeError(f"ConcreteFunction {self.name} takes its tensor arguments positionally")
            flat = nest.flatten(list(args))
        else:
            traced_args, traced_kwargs, names = traced
            args, kwargs = list(args), dict(kwargs)
            while len(args) < len(traced_args) and len(args) < len(names) and names[len(args)] in kwargs \
                    and names[len(args)] not in traced_kwargs:       # a positional argument named
                args.append(kwargs.pop(names[len(args)]))
            if len(args) > len(traced_args) or not set(kwargs) <= set(traced_kwargs):
                raise TypeError(f"ConcreteFunction {self.name} was traced with {len(traced_args)} positional "
                                f"arguments and keywords {sorted(traced_kwargs)}; got {len(args)} positional and "
                                f"{sorted(kwargs)}")
            found = {}
            for a, t in zip(args, traced_args):
                self._match(a, t, found)
            for k, a in kwargs.items():
                self._match(a, traced_kwargs[k], found)
            flat = [found.get(id(p), _MISSING) for p in self._arg_inputs]
        if len(flat) != len(self._arg_inputs) or any(a is _MISSING for a in flat):
            raise TypeError(f"ConcreteFunction {self.name} takes {len(self._arg_inputs)} tensor arguments, got "
                            f"{sum(a is not _MISSING for a in flat)}")
        return flat

    def _match(self, value, traced, found):
        if isinstance(traced, Tensor):
            found[id(traced)] = value
        elif isinstance(traced, dict):
            if not isinstance(value, dict) or set(value) != set(traced):
                raise TypeError(f"ConcreteFunction {self.name}: {value!r} does not have the traced structure {traced!r}")
            for k in traced:
                self._match(value[k], traced[k], found)
        elif isinstance(traced, (list, tuple)):
            if not isinstance(value, (list, tuple)) or len(value) != len(traced):
                raise TypeError(f"ConcreteFunction {self.name}: {value!r} does not have the traced structure {traced!r}")
            for v, t in zip(value, traced):
                self._match(v, t, found)

    def _structured(self, flat_outs):
        """The call's results in the structure the function returned: each traced tensor replaced
        by its value; None and Python values as they were."""
        if isinstance(self.structured_outputs, Tensor):
            return flat_outs[0]
        values = iter(flat_outs)
        leaves = [next(values) if isinstance(leaf, Tensor) else leaf
                  for leaf in nest.flatten(self.structured_outputs)]
        return nest.pack_sequence_as(self.structured_outputs, leaves)

    def _call_flat(self, inputs):
        """Runs the graph on `inputs` (tensors for `self.inputs`); returns the flat outputs."""
        if context.executing_eagerly():
            return self._call_eager(inputs)
        return self._call_in_graph(inputs)

    def _call_eager(self, inputs):
        arrays = []
        for t in inputs:
            if not isinstance(t, EagerTensor):
                raise ValueError(f"ConcreteFunction {self.name}: input {t!r} is not an eager tensor")
            arrays.append(t._value)
        could = tape_lib.could_record()
        if could:
            for v in self.graph.variables:       # as reading them eagerly would
                tape_lib.variable_accessed(v)
        wanted = ()
        if could:       # the inputs some tape watches: the only ones whose gradients can be asked for
            tapes = tape_lib._tape_state.tapes
            wanted = tuple(i for i, t in enumerate(inputs) if any(tape.is_watched(t) for tape in tapes))
        recording = bool(wanted)
        if not recording or self._custom_grad is not None:
            values = execute_plan(self._plan(), arrays, _EAGER_RESOURCES)
            outs = [EagerTensor(v) for v in values]
            if recording:
                custom = self._custom_grad
                tape_lib.record(None, list(inputs), outs, {},
                                grad_fn=lambda op, *grads: _padded(custom(op, *grads), len(op.inputs)))
            return outs
        backward = self._backward_function(wanted)
        saved = backward.saved
        values = execute_plan(self._plan(saved), arrays, _EAGER_RESOURCES)
        outs = [EagerTensor(v) for v in values]
        n = len(self.outputs)
        user, kept = outs[:n], outs[n:]

        def grad_fn(op, *out_grads):
            return backward.call(inputs, kept, out_grads)
        # `kept` are not outputs of the record: no tape needs their gradients (a gradient of the
        # backward call for an input already counts the paths through the forward values it reads,
        # which are tensors of the same graph), so the walk makes no zeros for them
        tape_lib.record(None, list(inputs), user, {}, grad_fn=grad_fn)
        return user

    def _call_in_graph(self, inputs):
        if getattr(get_default_graph(), "capture", None) is None:
            for t in inputs:
                if isinstance(t, EagerTensor) and t.dtype == dtypes.resource:
                    raise ValueError(f"sf.function '{self.name}' uses the eager variable "
                                     f"'{_variable_of(t)[2]}' but is called while building a graph: a graph "
                                     "cannot use eager variables; create the variable in the graph")
        backward = self._graph_backward()
        extra = backward.saved if backward is not None else []
        outs = apply_op("PartitionedCall", list(inputs), f=self, Tout=[t.dtype for t in self.outputs + extra],
                        with_saved=backward is not None, name=self.name)
        if isinstance(outs, Tensor):
            outs = [outs]
        elif not isinstance(outs, list):      # no outputs: the op itself
            return []
        return outs[:len(self.outputs)]

    def _graph_backward(self):
        """For a call in a graph: the backward whose forward values (`saved`) the call outputs too, so
        that its gradient reads them rather than recomputing them; None where recomputing gives the
        same values (no stateful op: no random draw, no variable read) or nothing is saved."""
        if not self._stateful or self._custom_grad is not None:
            return None
        with self._lock:
            found = self._saved_backward
        if found is _UNSET:
            try:
                backward = self._backward_function(None)
            except Exception:       # not differentiable: its gradient (if ever asked for) says why
                backward = None
            found = backward if backward is not None and backward.saved else None
            with self._lock:
                self._saved_backward = found
        return found

    def _backward_function(self, wanted=None):
        """The backward of this function for the gradients of the inputs at positions `wanted`
        (None: every differentiable input), built once per such set."""
        with self._lock:
            backward = self._backwards.get(wanted)
            if backward is None:
                backward = self._backwards[wanted] = _Backward(self, wanted)
            return backward

    def __repr__(self):
        return f"<ConcreteFunction {self.name} inputs={len(self.inputs)} outputs={len(self.outputs)}>"


def _as_input(a, placeholder):
    if isinstance(a, Tensor):
        return a
    if hasattr(a, "_dense_var_to_tensor"):
        return a.value()
    return convert_to_tensor(a, dtype=placeholder.dtype)


class _Backward:
    """The backward graph of a ConcreteFunction, built once in the function's own graph: its inputs
    are the forward inputs, the forward values it reads (`saved`) and one gradient per
    differentiable output; its outputs the gradient of each forward input (None when unconnected)."""

    def __init__(self, forward, wanted=None):
        self.forward = forward
        graph = forward.graph
        outputs = forward.outputs
        self.diff = [i for i, t in enumerate(outputs) if _differentiable(t.dtype)]
        inputs = forward.inputs
        first_new = None
        with graph.as_default(), tape_lib.suspended():
            boundary = len(graph.get_operations())
            with graph.name_scope("backward"):
                self.grad_ys = [shape_ops.placeholder(outputs[i].dtype, outputs[i].shape, name="grad_y")
                                for i in self.diff]
                wanted = [i for i, t in enumerate(inputs)
                          if _differentiable_source(t) and (wanted is None or i in wanted)]
                grads = _gradients([outputs[i] for i in self.diff], [inputs[i] for i in wanted],
                                   grad_ys=self.grad_ys) if self.diff and wanted else []
            new_ops = graph.get_operations()[boundary:]
            first_new = set(new_ops)
        self.input_grads = [None] * len(inputs)
        for i, g in zip(wanted, grads):
            self.input_grads[i] = g
        # forward values the backward ops read directly (fed, so never recomputed)
        forward_ids = set(id(t) for t in inputs)
        saved, seen = [], set()
        for op in new_ops:
            for t in op.inputs:
                if t.op not in first_new and id(t) not in forward_ids and id(t) not in seen \
                        and t.dtype != dtypes.resource:
                    seen.add(id(t))
                    saved.append(t)
        self.saved = saved
        self._plans = {}
        self._lock = threading.Lock()
        self._fetch = []        # flat fetched tensors: each gradient's parts
        self._layout = []       # per input: None, ("t", index) or ("slices", i, j, k)
        for g in self.input_grads:
            if g is None:
                self._layout.append(None)
            elif isinstance(g, IndexedSlices):
                parts = [g.values, g.indices] + ([g.dense_shape] if g.dense_shape is not None else [])
                self._layout.append(("slices", len(self._fetch), len(parts)))
                self._fetch.extend(parts)
            else:
                self._layout.append(("t", len(self._fetch)))
                self._fetch.append(g)
        self._as_function = None

    def call(self, inputs, kept, out_grads):
        """The gradients for `inputs` (eager) given the forward values `kept` and `out_grads`."""
        grads = []
        for i, t in zip(self.diff, self.grad_ys):
            g = out_grads[i]
            if g is None:
                g = _zeros_for(t, self.forward, i)
            elif isinstance(g, IndexedSlices):
                g = convert_to_tensor(g)
            grads.append(g)
        fn = self._function()
        return self.assemble(fn._call_flat(list(inputs) + list(kept) + grads))

    def assemble(self, outs):
        """The gradient of each forward input (a tensor, an IndexedSlices or None) from the flat
        outputs of a backward call."""
        result = []
        for layout in self._layout:
            if layout is None:
                result.append(None)
            elif layout[0] == "t":
                result.append(outs[layout[1]])
            else:
                _, start, n = layout
                parts = outs[start:start + n]
                result.append(IndexedSlices(parts[0], parts[1], parts[2] if n == 3 else None))
        return result

    def _function(self):
        with self._lock:
            if self._as_function is None:
                graph = self.forward.graph
                self._as_function = _SubFunction(graph, self.forward.inputs + self.saved + self.grad_ys,
                                                 self._fetch, self.forward.name + "_backward")
            return self._as_function


class _SubFunction(ConcreteFunction):
    """A slice of a FuncGraph as a function of chosen tensors (the backward of a trace): it shares
    the graph, its captures and stores, and is differentiable the same way."""

    def __init__(self, graph, inputs, outputs, name):
        self.graph = graph
        self._all_inputs = list(inputs)
        self._arg_inputs = list(inputs)
        self._outputs = list(outputs)
        self.structured_outputs = list(outputs)
        self.structured_input_signature = None
        self._call_structure = None
        self.name = name
        self._lock = threading.Lock()
        self._plans = {}
        self._backwards = {}     # wanted input positions (None: all) -> _Backward
        self._captured_cache = None
        self._saved_backward = _UNSET
        self._custom_grad = None
        self._stateful = []

    @property
    def inputs(self):
        return self._all_inputs

    @property
    def captured_inputs(self):
        return []


def _zeros_for(grad_y, forward, i):
    value = forward.outputs[i]
    shape = grad_y.shape
    if shape.is_fully_defined():
        return EagerTensor(np.zeros(shape.as_list(), grad_y.dtype.as_numpy_dtype))
    raise errors.InvalidArgumentError(None, None, f"{forward.name}: no gradient arrived for output {value.name} "
                                      "whose shape is not known")


def _differentiable(dtype):
    return dtype.is_floating or dtype.is_complex


def _differentiable_source(t):
    return _differentiable(t.dtype) or t.dtype == dtypes.resource


# ----------------------------------------------------------------------------------------------
# The call op: a ConcreteFunction as one node of an outer graph

def _call_outputs(f, with_saved):
    """The tensors of `f`'s graph a call outputs: the function's outputs, then (`with_saved`) the
    forward values its gradient reads."""
    return f.outputs + (f._graph_backward().saved if with_saved else [])


def _infer_call(op, args, f, Tout, with_saved):
    return [_OutSpec(t.dtype, t.shape) for t in _call_outputs(f, with_saved)]


def _call_kernel(state, args, f, Tout, with_saved):
    return execute_plan(f._plan(f._graph_backward().saved if with_saved else ()), list(args), state.resources)


register_op("PartitionedCall", inputs=("args*",), infer=_infer_call, kernel=_call_kernel, stateful=True,
            num_outputs=lambda attrs, counts: len(attrs["Tout"]), list_output=True,
            defaults={"f": None, "Tout": (), "with_saved": False})


@RegisterGradient("PartitionedCall")
def _partitioned_call_grad(op, *out_grads):
    f = op.get_attr("f")
    if f._custom_grad is not None:
        return _padded(f._custom_grad(op, *out_grads), len(op.inputs))
    with_saved = op.get_attr("with_saved")
    if with_saved:
        backward = f._graph_backward()
    else:
        skip = op.skip_input_indices
        backward = f._backward_function(None if not skip else
                                        tuple(i for i in range(len(op.inputs)) if i not in skip))
    grads = []
    for i, t in zip(backward.diff, backward.grad_ys):
        g = out_grads[i]
        grads.append(shape_ops.zeros_like(op.outputs[i]) if g is None else convert_to_tensor(g))
    if with_saved:      # the forward values the call output (gradients arriving for them are not
        kept = op.outputs[len(f.outputs):]      # needed: see _call_eager)
        return backward.assemble(backward._function()._call_flat(list(op.inputs) + kept + grads))
    # no stateful op: the backward function recomputes the forward values it reads from the inputs
    return backward.assemble(_recomputing(backward)._call_flat(list(op.inputs) + grads))


def _padded(grads, n):
    grads = list(grads) if isinstance(grads, (list, tuple)) else [grads]
    return grads + [None] * (n - len(grads))


def _recomputing(backward):
    with backward._lock:
        fn = getattr(backward, "_recompute_fn", None)
        if fn is None:
            fn = _SubFunction(backward.forward.graph, backward.forward.inputs + backward.grad_ys, backward._fetch,
                              backward.forward.name + "_backward")
            backward._recompute_fn = fn
        return fn

"""Control flow with gradients: `cond`, `case`, `switch_case` and `while_loop` (TF's
`control_flow_ops` / `cond` / `while_loop`).

Eagerly they are plain Python: the predicate is read, one branch runs, the loop loops, and a
GradientTape records the ops that ran. In a graph (or an sf.function trace) each branch, loop
condition and loop body is traced once into a graph of its own (a FuncGraph: outside tensors become
its captured inputs), and the construct is one op whose kernel runs the chosen branch, or loops,
through the Session machinery's plans:

- `If` (cond): inputs are the predicate and both branches' captures; only the chosen branch runs.
  Its gradient is an `IfGrad` op that runs the chosen branch's backward graph (which recomputes the
  branch's forward values from its inputs) and gives the other branch's inputs zero gradient.
- `While` (while_loop): inputs are the loop variables and the captures of cond and body. Its
  gradient is a `WhileGrad` op that runs the loop again, keeping the loop variables of every
  iteration (memory: iterations x the loop variables' size), then runs the body's backward graph
  once per iteration in reverse, accumulating the gradients of the captures. Gradients of these
  gradient ops (second order through graph control flow) are not provided.
"""

from __future__ import annotations

import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core import mode as context
from segflow._core.apply import apply_op
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import get_default_graph, name_scope
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.registry import NotDifferentiable, RegisterGradient, TensorSpec, register_op
from segflow._core.session import execute_plan
from segflow._core.tensor import EagerTensor, Tensor
from segflow._core import tape as tape_lib
from segflow._ops import elementwise as cw, shape as shape_ops
from segflow._ops.concrete_function import ConcreteFunction, _recomputing
from segflow._ops.func_graph import FuncGraph
from segflow.util import nest
from typing import Any, Callable, Optional
from segflow._core.typing import IntLike, Name, TensorLike

__all__ = ["cond", "case", "switch_case", "while_loop"]


# ----------------------------------------------------------------------------------------------
# Tracing a branch / loop part

def _trace(fn, name, arg_specs=(), args_structure=None):
    """fn traced into a FuncGraph: (ConcreteFunction, structured outputs)."""
    graph = FuncGraph(name, get_default_graph())
    graph.allow_variable_creation = True
    with tape_lib.suspended(), graph.as_default():
        placeholders = [shape_ops.placeholder(dt, shp, name=f"loop_var{i}") for i, (dt, shp) in enumerate(arg_specs)]
        if args_structure is not None:
            args = nest.pack_sequence_as(args_structure, placeholders)
            result = fn(*args)
        else:
            result = fn()
        flat = []
        structured = nest.map_structure(lambda x: _output(x, flat), result)
    return ConcreteFunction(graph, placeholders, flat, structured, name=name), structured, placeholders


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _output(x, flat):
    if x is None:
        raise ValueError("a cond branch or while_loop body returned None; return tensors")
    if isinstance(x, IndexedSlices):
        x = convert_to_tensor(x)
    if hasattr(x, "_dense_var_to_tensor"):
        x = x.value()
    if not isinstance(x, Tensor):
        x = convert_to_tensor(x)
    graph = get_default_graph()
    if isinstance(x, EagerTensor) or x.graph is not graph:
        x = shape_ops.identity(x)
    flat.append(x)
    return x


def _eager_pred(pred):
    if isinstance(pred, EagerTensor):
        return bool(pred.numpy())
    if isinstance(pred, (bool, np.bool_)):
        return bool(pred)
    if isinstance(pred, Tensor):
        return None
    return bool(pred)


# ----------------------------------------------------------------------------------------------
# cond

def cond(pred: TensorLike, true_fn: Optional[Callable[[], Any]] = None, false_fn: Optional[Callable[[], Any]] = None,
         strict: bool = False, name: Name = None, fn1: Optional[Callable[[], Any]] = None,
         fn2: Optional[Callable[[], Any]] = None) -> Any:
    """`true_fn()` if `pred` else `false_fn()`; both must return the same structure of tensors.

    Eagerly (or with a Python bool) only the chosen function runs. In a graph both are traced
    once and the chosen one runs each time the graph runs. Gradients flow to whatever the chosen
    branch used (the other branch's inputs get zero gradient).
    """
    true_fn = true_fn if true_fn is not None else fn1
    false_fn = false_fn if false_fn is not None else fn2
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("cond: true_fn and false_fn must be callable")
    known = _eager_pred(pred)
    if known is not None and (context.executing_eagerly() or not isinstance(pred, Tensor)):
        return true_fn() if known else false_fn()
    with name_scope(name, "cond"):
        pred = convert_to_tensor(pred)
        if pred.dtype != dtypes.bool or pred.shape.rank not in (None, 0):
            raise TypeError(f"cond: pred must be a boolean scalar, got {pred.dtype.name} of shape {pred.shape}")
        then_f, then_out, _ = _trace(true_fn, "cond_true")
        else_f, else_out, _ = _trace(false_fn, "cond_false")
        if len(then_f.outputs) != len(else_f.outputs):
            raise ValueError(f"cond: true_fn returned {len(then_f.outputs)} tensors and false_fn "
                             f"{len(else_f.outputs)}; they must return the same structure")
        for a, b in zip(then_f.outputs, else_f.outputs):
            if a.dtype != b.dtype:
                raise TypeError(f"cond: the branches return tensors of different dtypes ({a.dtype.name} and "
                                f"{b.dtype.name})")
        inputs = [pred] + then_f.captured_inputs + else_f.captured_inputs
        outs = apply_op("If", inputs, then_f=then_f, else_f=else_f, n_then=len(then_f.captured_inputs),
                        name="If")
        outs = outs if isinstance(outs, list) else [outs]
        return nest.pack_sequence_as(then_out, outs)


def _common_shape(a, b):
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return tensor_shape.unknown_shape()
    return tensor_shape.TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


def _infer_if(op, inputs, then_f, else_f, n_then):
    if inputs[0].dtype != dtypes.bool:
        raise errors.invalid_input(op, "cond", f"must be bool, not {inputs[0].dtype.name}")
    return [TensorSpec(a.dtype, _common_shape(a.shape, b.shape)) for a, b in zip(then_f.outputs, else_f.outputs)]


def _if_kernel(state, inputs, then_f, else_f, n_then):
    pred = inputs[0]
    if np.ndim(pred) != 0:
        raise errors.InvalidArgumentError(None, None, f"cond: the predicate must be a scalar, got shape "
                                          f"{list(np.shape(pred))}")
    caps = inputs[1:]
    if bool(pred):
        return execute_plan(then_f._plan(), list(caps[:n_then]), state.resources)
    return execute_plan(else_f._plan(), list(caps[n_then:]), state.resources)


register_op("If", inputs=("inputs*",), infer=_infer_if, kernel=_if_kernel, stateful=True,
            num_outputs=lambda attrs, counts: len(attrs["then_f"].outputs), list_output=True,
            defaults={"then_f": None, "else_f": None, "n_then": 0})


def _dense_backward(f):
    """(backward, recomputing function) of a branch/body: gradients for its inputs, dense."""
    backward = f._backward_function()
    return backward, _recomputing(backward)


def _run_backward(backward, fn, input_values, grad_values, resources):
    """The gradient (an array, or None) of each input of `backward.forward`, given its input values
    and the gradient of each differentiable output. A missing output gradient is zeros of the
    matching input's shape (a loop body's output i is loop variable i)."""
    outs = backward.forward.outputs
    feeds = list(input_values)
    for i in backward.diff:
        g = grad_values[i]
        if g is None:
            g = np.zeros(np.shape(input_values[i]), outs[i].dtype.as_numpy_dtype)
        feeds.append(g)
    values = execute_plan(fn._plan(), feeds, resources)
    result = []
    for layout, x in zip(backward._layout, input_values):
        if layout is None:
            result.append(None)
        elif layout[0] == "t":
            result.append(values[layout[1]])
        else:
            _, start, n = layout
            vals, idx = values[start], values[start + 1]
            dense = np.zeros(np.shape(x), vals.dtype)
            np.add.at(dense, np.asarray(idx, np.int64), vals)
            result.append(dense)
    return result


@RegisterGradient("If")
def _if_grad(op, *grads):
    then_f, else_f, n_then = op.get_attr("then_f"), op.get_attr("else_f"), op.get_attr("n_then")
    diff = [i for i, t in enumerate(op.outputs) if _floating(t.dtype)]
    grads_in = [grads[i] if grads[i] is not None else shape_ops.zeros_like(op.outputs[i]) for i in diff]
    grads_in = [convert_to_tensor(g) for g in grads_in]
    wanted = [i for i, t in enumerate(op.inputs[1:]) if _floating(t.dtype) or t.dtype == dtypes.resource]
    outs = apply_op("IfGrad", list(op.inputs) + grads_in, then_f=then_f, else_f=else_f, n_then=n_then,
                    diff=tuple(diff), wanted=tuple(wanted))
    outs = outs if isinstance(outs, list) else [outs]
    result = [None] * len(op.inputs)
    for i, g in zip(wanted, outs):
        result[1 + i] = g
    return result


def _floating(dtype):
    return dtype.is_floating or dtype.is_complex


def _grad_spec(t):
    if t.dtype == dtypes.resource:
        return TensorSpec(dtypes.float32, tensor_shape.unknown_shape())
    return TensorSpec(t.dtype, t.shape)


def _infer_if_grad(op, inputs, then_f, else_f, n_then, diff, wanted):
    caps = then_f.captured_inputs + else_f.captured_inputs
    specs = []
    for i in wanted:
        specs.append(_grad_spec(caps[i]) if caps[i].dtype != dtypes.resource else
                     TensorSpec(_resource_dtype(then_f if i < n_then else else_f, i if i < n_then else i - n_then),
                                tensor_shape.unknown_shape()))
    return specs


def _resource_dtype(f, i):
    inside = f.inputs[len(f._arg_inputs) + i]
    return inside.op.get_attr("dtype") if inside.op.type == "VarHandleOp" else dtypes.float32


def _if_grad_kernel(state, inputs, then_f, else_f, n_then, diff, wanted):
    n_caps = len(then_f.captured_inputs) + len(else_f.captured_inputs)
    pred, caps, grads = inputs[0], inputs[1:1 + n_caps], inputs[1 + n_caps:]
    out_grads = [None] * len(then_f.outputs)
    for i, g in zip(diff, grads):
        out_grads[i] = g
    chosen, offset = (then_f, 0) if bool(pred) else (else_f, n_then)
    n = len(chosen.captured_inputs)
    backward, fn = _dense_backward(chosen)
    branch = _run_backward(backward, fn, list(caps[offset:offset + n]), out_grads, state.resources)
    result = []
    for i in wanted:
        g = branch[i - offset] if offset <= i < offset + n else None
        if g is None:
            result.append(_zeros_like_value(caps[i]))
        else:
            result.append(g)
    return result


def _zeros_like_value(v):
    if isinstance(v, np.ndarray) and v.dtype != object:
        return np.zeros_like(v)
    res = _resource_value(v)
    if res is not None:
        return np.zeros_like(res)
    return np.zeros_like(np.asarray(v))


def _resource_value(v):
    from_obj = v.item() if isinstance(v, np.ndarray) and v.dtype == object else v
    value = getattr(from_obj, "value", None)
    return value


register_op("IfGrad", inputs=("inputs*",), infer=_infer_if_grad, kernel=_if_grad_kernel, stateful=True,
            num_outputs=lambda attrs, counts: len(attrs["wanted"]), list_output=True,
            defaults={"then_f": None, "else_f": None, "n_then": 0, "diff": (), "wanted": ()})
NotDifferentiable("IfGrad")


def case(pred_fn_pairs, default=None, exclusive=False, strict=False, name="case"):
    """The function of the first pair whose predicate holds (or `default`), as nested conds."""
    if isinstance(pred_fn_pairs, dict):
        pred_fn_pairs = list(pred_fn_pairs.items())
    pairs = list(pred_fn_pairs)
    if not pairs and default is None:
        raise ValueError("case: pred_fn_pairs is empty and there is no default")
    for p, f in pairs:
        if not callable(f):
            raise TypeError(f"case: fn for predicate {p!r} is not callable")
    if default is None:
        pairs, last = pairs[:-1], pairs[-1][1]
    else:
        last = default
    fn = last
    for p, f in reversed(pairs):
        fn = (lambda p, f, rest: lambda: cond(p, f, rest))(p, f, fn)
    with name_scope(name, "case"):
        return fn()


def switch_case(branch_index, branch_fns, default=None, name="switch_case"):
    """`branch_fns[branch_index]()`; an index out of range runs `default` (else the last branch)."""
    if isinstance(branch_fns, dict):
        keys = sorted(branch_fns)
        if keys != list(range(len(keys))):
            raise ValueError("switch_case: the keys of branch_fns must be 0..n-1")
        branch_fns = [branch_fns[k] for k in keys]
    branch_fns = [f[1] if isinstance(f, tuple) else f for f in branch_fns]
    if not branch_fns:
        raise ValueError("switch_case: branch_fns must not be empty")
    default = default if default is not None else branch_fns[-1]
    known = branch_index if isinstance(branch_index, (int, np.integer)) else \
        (int(branch_index.numpy()) if isinstance(branch_index, EagerTensor) else None)
    if known is not None:
        return branch_fns[known]() if 0 <= known < len(branch_fns) else default()
    with name_scope(name, "switch_case"):
        index = convert_to_tensor(branch_index)
        fn = default
        for i in reversed(range(len(branch_fns))):
            fn = (lambda i, f, rest: lambda: cond(cw.equal(index, convert_to_tensor(i, dtype=index.dtype)), f,
                                                  rest))(i, branch_fns[i], fn)
        return fn()


# ----------------------------------------------------------------------------------------------
# while_loop

def while_loop(cond: Callable[..., Any], body: Callable[..., Any], loop_vars: Any, shape_invariants: Any = None,
               parallel_iterations: int = 10, back_prop: bool = True, swap_memory: bool = False, name: Name = None,
               maximum_iterations: Optional[IntLike] = None, return_same_structure: bool = False) -> Any:
    """Repeats `loop_vars = body(*loop_vars)` while `cond(*loop_vars)` holds (at most
    `maximum_iterations` times); returns the final loop variables (same structure).

    A loop variable's shape must stay the same across iterations unless `shape_invariants` (same
    structure, TensorShapes with None dims) relaxes it. `parallel_iterations` and `swap_memory`
    are accepted (iterations run in order). The gradient re-runs the loop keeping every iteration's
    loop variables, then runs the body's backward once per iteration in reverse.
    """
    if not callable(cond) or not callable(body):
        raise TypeError("while_loop: cond and body must be callable")
    single = not isinstance(loop_vars, (list, tuple)) or _is_namedtuple(loop_vars)
    structure = [loop_vars] if single and not _is_namedtuple(loop_vars) else loop_vars
    if context.executing_eagerly():
        vars_ = nest.map_structure(lambda v: v if isinstance(v, Tensor) or hasattr(v, "_dense_var_to_tensor")
                                   else convert_to_tensor(v), structure)
        n = 0
        limit = None if maximum_iterations is None else int(np.asarray(
            maximum_iterations.numpy() if isinstance(maximum_iterations, EagerTensor) else maximum_iterations))
        while limit is None or n < limit:
            go = cond(*vars_)
            if not bool(go.numpy() if isinstance(go, EagerTensor) else go):
                break
            out = body(*vars_)
            vars_ = [out] if single and not _is_namedtuple(loop_vars) else out
            n += 1
        if single and not _is_namedtuple(loop_vars) and not return_same_structure:
            return vars_[0]
        return vars_
    with name_scope(name, "while"):
        flat = [convert_to_tensor(v) if not isinstance(v, Tensor) else v for v in nest.flatten(structure)]
        if shape_invariants is not None:
            inv = nest.flatten([shape_invariants] if single and not _is_namedtuple(loop_vars) else shape_invariants)
            shapes = [tensor_shape.as_shape(s) for s in inv]
        else:
            shapes = [v.shape for v in flat]
        specs = [(v.dtype, s) for v, s in zip(flat, shapes)]

        cond_f, _, _ = _trace(cond, "while_cond", specs, structure)
        body_f, _, _ = _trace(body, "while_body", specs, structure)
        if len(cond_f.outputs) != 1 or cond_f.outputs[0].dtype != dtypes.bool:
            raise TypeError("while_loop: cond must return a boolean scalar")
        outs_flat = body_f.outputs
        if len(outs_flat) != len(flat):
            raise ValueError(f"while_loop: body returned {len(outs_flat)} tensors for {len(flat)} loop variables")
        for v, o, s in zip(flat, outs_flat, shapes):
            if o.dtype != v.dtype:
                raise TypeError(f"while_loop: loop variable {v.name if hasattr(v, 'name') else v} has dtype "
                                f"{v.dtype.name} but the body returns {o.dtype.name}")
            if not s.is_compatible_with(o.shape) or (s.rank is not None and o.shape.rank is not None
                                                     and not _more_general(s, o.shape)):
                raise ValueError(f"while_loop: the loop variable {getattr(v, 'name', v)} enters the loop with shape "
                                 f"{s}, but has shape {o.shape} after one iteration. To allow the shape to vary "
                                 "across iterations, use the `shape_invariants` argument of sf.while_loop to "
                                 "specify a less-specific shape.")
        max_iter = -1 if maximum_iterations is None else maximum_iterations
        inputs = flat + cond_f.captured_inputs + body_f.captured_inputs
        outs = apply_op("While", inputs, max_iter if isinstance(max_iter, Tensor) else
                        convert_to_tensor(max_iter, dtype=dtypes.int64)
                        if not isinstance(max_iter, Tensor) else max_iter,
                        cond_f=cond_f, body_f=body_f, n_vars=len(flat), n_cond=len(cond_f.captured_inputs),
                        shapes=tuple(shapes), name="While")
        outs = outs if isinstance(outs, list) else [outs]
        result = nest.pack_sequence_as(structure, outs)
        if single and not _is_namedtuple(loop_vars) and not return_same_structure:
            return result[0]
        return result


def _more_general(invariant, shape):
    """Every known dim of the invariant equals the shape's."""
    return all(a is None or a == b for a, b in zip(invariant.as_list(), shape.as_list()))


def _infer_while(op, inputs, maximum_iterations, cond_f, body_f, n_vars, n_cond, shapes):
    return [TensorSpec(v.dtype, s) for v, s in zip(inputs[:n_vars], shapes)]


def _while_kernel(state, inputs, maximum_iterations, cond_f, body_f, n_vars, n_cond, shapes, history=None):
    values = list(inputs[:n_vars])
    cond_caps = list(inputs[n_vars:n_vars + n_cond])
    body_caps = list(inputs[n_vars + n_cond:])
    limit = int(maximum_iterations)
    cond_plan, body_plan = cond_f._plan(), body_f._plan()
    resources = state.resources
    n = 0
    while limit < 0 or n < limit:
        (go,) = execute_plan(cond_plan, values + cond_caps, resources)
        if not bool(go):
            break
        if history is not None:
            history.append(values)
        values = execute_plan(body_plan, values + body_caps, resources)
        for v, s in zip(values, shapes):
            if s.rank is not None and not s.is_compatible_with(np.shape(v)):
                raise errors.InvalidArgumentError(None, None, f"while_loop: a loop variable of shape "
                                                  f"{list(np.shape(v))} does not match its shape invariant {s}")
        n += 1
    return values


register_op("While", inputs=("inputs*", "maximum_iterations"), infer=_infer_while, kernel=_while_kernel,
            stateful=True, num_outputs=lambda attrs, counts: attrs["n_vars"], list_output=True,
            defaults={"cond_f": None, "body_f": None, "n_vars": 0, "n_cond": 0, "shapes": ()})


@RegisterGradient("While")
def _while_grad(op, *grads):
    n_vars, n_cond = op.get_attr("n_vars"), op.get_attr("n_cond")
    loop_inputs = op.inputs[:-1]
    diff = [i for i in range(n_vars) if _floating(op.outputs[i].dtype)]
    grads_in = [convert_to_tensor(grads[i]) if grads[i] is not None else shape_ops.zeros_like(op.outputs[i])
                for i in diff]
    body_caps = loop_inputs[n_vars + n_cond:]
    wanted_vars = [i for i in diff]
    wanted_caps = [j for j, t in enumerate(body_caps) if _floating(t.dtype) or t.dtype == dtypes.resource]
    outs = apply_op("WhileGrad", list(op.inputs[:-1]) + grads_in, op.inputs[-1],
                    cond_f=op.get_attr("cond_f"), body_f=op.get_attr("body_f"), n_vars=n_vars, n_cond=n_cond,
                    shapes=op.get_attr("shapes"), diff=tuple(diff), wanted_vars=tuple(wanted_vars),
                    wanted_caps=tuple(wanted_caps))
    outs = outs if isinstance(outs, list) else [outs]
    result = [None] * len(op.inputs)
    k = 0
    for i in wanted_vars:
        result[i] = outs[k]
        k += 1
    for j in wanted_caps:
        result[n_vars + n_cond + j] = outs[k]
        k += 1
    return result


def _infer_while_grad(op, inputs, maximum_iterations, cond_f, body_f, n_vars, n_cond, shapes, diff, wanted_vars,
                      wanted_caps):
    specs = [TensorSpec(inputs[i].dtype, shapes[i]) for i in wanted_vars]
    caps = inputs[n_vars + n_cond:n_vars + n_cond + len(body_f.captured_inputs)]
    for j in wanted_caps:
        t = caps[j]
        specs.append(TensorSpec(_resource_dtype(body_f, j), tensor_shape.unknown_shape())
                     if t.dtype == dtypes.resource else TensorSpec(t.dtype, t.shape))
    return specs


def _while_grad_kernel(state, inputs, maximum_iterations, cond_f, body_f, n_vars, n_cond, shapes, diff,
                       wanted_vars, wanted_caps):
    n_body = len(body_f.captured_inputs)
    fwd = list(inputs[:n_vars + n_cond + n_body])
    grads = list(inputs[n_vars + n_cond + n_body:])
    body_caps = fwd[n_vars + n_cond:]
    history = []
    _while_kernel(state, fwd, maximum_iterations, cond_f, body_f, n_vars, n_cond, shapes, history=history)
    backward, fn = _dense_backward(body_f)
    var_grads = [None] * n_vars
    for i, g in zip(diff, grads):
        var_grads[i] = g
    cap_grads = [None] * n_body
    for values in reversed(history):
        in_grads = _run_backward(backward, fn, list(values) + body_caps, var_grads, state.resources)
        var_grads = [in_grads[i] if i in diff else None for i in range(n_vars)]
        for j in range(n_body):
            g = in_grads[n_vars + j]
            if g is not None:
                cap_grads[j] = g if cap_grads[j] is None else cap_grads[j] + g
    out = []
    for i in wanted_vars:
        g = var_grads[i]
        out.append(np.zeros_like(fwd[i]) if g is None else np.asarray(g, dtype=np.asarray(fwd[i]).dtype))
    for j in wanted_caps:
        g = cap_grads[j]
        out.append(_zeros_like_value(body_caps[j]) if g is None else g)
    return out


register_op("WhileGrad", inputs=("inputs*", "maximum_iterations"), infer=_infer_while_grad,
            kernel=_while_grad_kernel, stateful=True,
            num_outputs=lambda attrs, counts: len(attrs["wanted_vars"]) + len(attrs["wanted_caps"]),
            list_output=True,
            defaults={"cond_f": None, "body_f": None, "n_vars": 0, "n_cond": 0, "shapes": (), "diff": (),
                      "wanted_vars": (), "wanted_caps": ()})
NotDifferentiable("WhileGrad")

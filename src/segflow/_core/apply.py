"""Running an op: `apply_op(op_type, *inputs, name=None, **attrs)` converts the inputs, checks their
dtypes against the OpDef, then runs the kernel at once (eager; the tape records it when one is
active) or adds an Operation to the default graph (graph building; the Session runs it later).

Kernel failures are translated here, once for eager execution and the Session alike: a kernel's
`BadInput` becomes InvalidArgumentError naming the op, its node and the input; a MemoryError becomes
ResourceExhaustedError (`memory.resource_exhausted`; `memory.check_alloc` refuses an output too large
to allocate before a kernel tries).
"""

from __future__ import annotations

from typing import Any
import numpy as np

from segflow._core import mode as context, tape as tape_lib
from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.convert import convert_to_tensor, flat_numbers, scalar_tensor
from segflow._core.graph import get_default_graph
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.memory import resource_exhausted
from segflow._core.registry import _OPS
from segflow._core.tensor import EagerTensor, Tensor
from segflow.kernels import BadInput
from segflow._core.typing import Name

__all__ = ["apply_op", "plain_op", "ExecState"]

_EagerTensor = EagerTensor
_Tensor = Tensor
_ndarray = np.ndarray
_generic = np.generic
# Per thread (threading.local): `_state.eager`, `_tape_state.tapes`. The process-wide flags read first
# (`_shared.all_eager`: every thread is eager; `_tapes_active.any`: some thread has a tape) are plain
# attributes, so an eager op with no tape anywhere never pays for a thread-local read.
_state = context._state
_shared = context._shared
_tape_state = tape_lib._tape_state
_tapes_active = tape_lib._active
_record_on = tape_lib.record_on
_record_one = tape_lib.record_one


class ExecState:
    """What a stateful kernel sees: the resources of its Session (or of eager execution) and a key
    naming the node (None eagerly)."""

    __slots__ = ("resources", "key")

    def __init__(self, resources, key):
        self.resources = resources
        self.key = key


_EAGER_RESOURCES = {}


# ----------------------------------------------------------------------------------------------
# apply_op


def apply_op(op_type: str, *inputs: Any, name: Name = None, **attrs: Any) -> Any:
    """Runs op `op_type` on `inputs` eagerly, or adds it to the default graph; returns its output
    tensor (or a list of them when the op has several outputs or a list output)."""
    try:
        opdef = _OPS[op_type]
    except KeyError:
        raise errors.NotFoundError(None, None, f"Op type not registered '{op_type}'") from None
    if _shared.all_eager or _state.eager:
        run = opdef._plain
        if run is not None and not attrs:
            result = (run if run is not True else _plain_runner(opdef))(inputs, name)
            if result is not None:
                return result
        if opdef._fast and len(inputs) == len(opdef.input_names):  # else _convert_inputs names the problem
            args = []
            for x in inputs:
                if type(x) is _EagerTensor or isinstance(x, _EagerTensor):    # or a variable's handle
                    args.append(x._value)
                else:
                    break
            else:
                if attrs and "_dtype_hints" in attrs:     # hints convert plain values: none here
                    del attrs["_dtype_hints"]
                return _run_eager(opdef, inputs, args, attrs, name)
        elif opdef._fast_lists and len(inputs) == len(opdef.list_inputs):
            fast = _eager_list_args(opdef, inputs)  # AddN of gradients, ConcatV2, Pack ...
            if fast is not None:
                return _run_eager(opdef, fast[0], fast[1], attrs, name)
        tensors = _convert_inputs(opdef, inputs, attrs.pop("_dtype_hints", None), borrow=not opdef.stateful)
        args = [[t._value for t in x] if isinstance(x, list) else x._value for x in tensors]
        borrowed = [t for t in _flat_inputs(opdef, tensors) if type(t) is _Borrowed]
        if borrowed:
            return _run_borrowing(opdef, tensors, args, attrs, name, borrowed)
        return _run_eager(opdef, tensors, args, attrs, name)
    return _build_node(opdef, inputs, attrs, name)


class _Borrowed(EagerTensor):
    """A caller's NumPy array as the input of one eager op, not copied (`_run_borrowing` makes
    sure nothing that outlives the call aliases it)."""

    __slots__ = ()


def _borrowable(x):
    """Whether an eager op may read the NumPy array `x` in place: a plain native numeric array,
    C-contiguous and aligned (what a copy would have produced)."""
    flags = x.flags
    return (flags.c_contiguous and flags.aligned and x.dtype.isnative and x.dtype.kind in "biufc"
            and x.dtype.names is None)


def _run_borrowing(opdef, tensors, args, attrs, name, borrowed):
    """An eager op over caller arrays it did not copy (TF copies every NumPy input). A later change
    to the caller's array must change nothing already returned or recorded: inputs a tape will keep
    are copied first (only when a tape of this thread records the op, which needs another input it
    watches: a borrowed array is a new tensor no tape can watch), and an output that shares memory
    with a borrowed array (a view such as reshape, or identity) is copied afterwards."""
    if _tapes_active.any and _tape_state.tapes and tape_lib.would_record(
            _tape_state.tapes, _flat_inputs(opdef, tensors)):
        for t in borrowed:
            t._value = t._value.copy()
        args = [[t._value for t in x] if isinstance(x, list) else x._value for x in tensors]
        return _run_eager(opdef, tensors, args, attrs, name)
    result = _run_eager(opdef, tensors, args, attrs, name)
    outs = [result] if isinstance(result, EagerTensor) else (result if isinstance(result, list) else [])
    for o in outs:
        v = o._value
        if isinstance(v, np.ndarray) and any(np.may_share_memory(v, t._value) for t in borrowed):
            o._value = v.copy()
    return result


def _run_eager(opdef, tensors, args, attrs, name):
    for p0, rest, allowed, attr, is_list in opdef._checks:
        if is_list:
            _check_list_dtypes(opdef, (p0,) + rest, args, name)
            continue
        dt = args[p0].dtype
        for p in rest:
            # NumPy's builtin dtypes are singletons: `is` settles the common case without `!=`.
            if args[p].dtype is not dt and args[p].dtype != dt:
                raise _dtype_mismatch(opdef, name, p0, p, dt, args[p].dtype)
        if allowed is not None and dt not in allowed and not (
                dtypes.learn_numpy_dtype(dt) and dt in allowed):
            raise _dtype_not_allowed(opdef, name, p0, attr, dt)
    if opdef.defaults:
        full = dict(opdef.defaults)
        full.update(attrs)
    else:
        full = attrs
    try:
        if opdef.stateful:
            out = opdef.kernel(ExecState(_EAGER_RESOURCES, None), *args, **full)
        elif full:
            out = opdef.kernel(*args, **full)
        else:
            out = opdef.kernel(*args)  # no `**{}`: cheaper for the many attr-less ops
    except Exception as e:
        err = _kernel_failure(opdef, tensors, full, name, e)
        if err is None:
            raise
        raise err from None
    if opdef._single:
        if type(out) is not _ndarray and not isinstance(out, _generic):
            out = np.asarray(out)
        result = _EagerTensor(out)
        if _tapes_active.any:
            tapes = _tape_state.tapes
            if tapes:
                _record_on(tapes, opdef, tensors, (result,), full)
        return result
    outs = [o if type(o) is _ndarray or isinstance(o, _generic) else np.asarray(o) for o in out]
    result = [_EagerTensor(o) for o in outs]
    if _tapes_active.any:
        tapes = _tape_state.tapes
        if tapes:
            _record_on(tapes, opdef, tensors, result, full)
    return result


def _kernel_failure(opdef, tensors, attrs, name, exc):
    """The error to raise for the exception `exc` of an eager kernel, or None to let it through
    as it is (an OpError already, or not a kind of failure translated here)."""
    if isinstance(exc, errors.OpError):
        return None
    if isinstance(exc, BadInput):
        return errors.invalid_input(errors.OpName(opdef.name, name), exc.input_name, exc.message)
    if isinstance(exc, MemoryError):
        return resource_exhausted(opdef.name, name, exc)
    if isinstance(exc, (ValueError, TypeError, IndexError, ZeroDivisionError, OverflowError)):
        return _explain_failure(opdef, tensors, attrs, name, exc)
    return None


def _plain_runner(opdef):
    """`_run_eager` made for one plain op (`OpDef._plain`: one or two inputs of one dtype attr, one
    output, no attrs, stateless), on its first eager call, and kept as `opdef._plain`.
    `run(inputs, name)` runs it on EagerTensors (exactly that type)
    of one allowed dtype and records it on the tapes, or returns None and leaves everything else
    (other inputs, a dtype mismatch or one not allowed, with the error it raises) to the general
    path. Unary and binary elementwise ops and the gradients' kernels (TanhGrad ...) take it:
    about 0.25 us less an op than the general loop over checks and options."""
    allowed = opdef._checks[0][2]
    arity = len(opdef.input_names)
    binary = arity == 2

    def run(inputs, name):
        if len(inputs) != arity:
            return None
        x = inputs[0]
        if type(x) is not _EagerTensor:
            return None
        u = x._value
        dt = u.dtype
        if binary:
            y = inputs[1]
            if type(y) is not _EagerTensor:
                return None
            v = y._value
            if v.dtype is not dt and v.dtype != dt:
                return None
        if allowed is not None and dt not in allowed:
            return None
        try:
            # (the kernel is read on each call: check_numerics swaps kernels)
            out = opdef.kernel(u, v) if binary else opdef.kernel(u)
        except Exception as e:
            err = _kernel_failure(opdef, inputs, {}, name, e)
            if err is None:
                raise
            raise err from None
        # _run_eager's last lines, written out: a shared helper cost 1.7% of a 10-op eager
        # chain's forward + gradient (callgrind), record_on in place of record_one another 1.5%
        if type(out) is not _ndarray and not isinstance(out, _generic):
            out = np.asarray(out)
        result = _EagerTensor(out)
        if _tapes_active.any:
            tapes = _tape_state.tapes
            if tapes:
                _record_one(tapes, opdef, inputs, result, {})
        return result
    opdef._plain = run
    return run


def plain_op(op_type):
    """`apply_op(op_type, ...)` as a function of the plain op's one or two inputs (and `name`), for
    the hottest callers (operators, unary math functions, gradient formulas): eagerly, on
    EagerTensors, it calls the op's runner directly (a call and the dispatch of apply_op less,
    about 0.15 us); everything else goes through apply_op."""
    opdef = _OPS[op_type]
    if opdef._plain is None:
        raise ValueError(f"{op_type} is not a plain op (see OpDef._plain)")

    if len(opdef.input_names) == 1:
        def unary(x, name=None):
            if type(x) is _EagerTensor and (_shared.all_eager or _state.eager):
                run = opdef._plain
                result = (run if run is not True else _plain_runner(opdef))((x,), name)
                if result is not None:
                    return result
            return apply_op(op_type, x, name=name)
        return unary

    def binary(x, y, name=None):
        if type(x) is _EagerTensor and type(y) is _EagerTensor and (_shared.all_eager or _state.eager):
            run = opdef._plain
            result = (run if run is not True else _plain_runner(opdef))((x, y), name)
            if result is not None:
                return result
        return apply_op(op_type, x, y, name=name)
    return binary


def _eager_list_args(opdef, inputs):
    """(tensors, arrays) for an op with list inputs when every input, and every item of a list input,
    is an EagerTensor already (nothing to convert); None otherwise."""
    tensors, args = [], []
    for is_list, x in zip(opdef.list_inputs, inputs):
        if is_list:
            if type(x) is not list and type(x) is not tuple:
                return None
            values = []
            for t in x:
                if type(t) is not _EagerTensor:
                    return None
                values.append(t._value)
            tensors.append(list(x))
            args.append(values)
        elif type(x) is _EagerTensor:
            tensors.append(x)
            args.append(x._value)
        else:
            return None
    return tensors, args


def _flat_inputs(opdef, tensors):
    flat = []
    for is_list, x in zip(opdef.list_inputs, tensors):
        if is_list:
            flat.extend(x)
        else:
            flat.append(x)
    return flat


def _check_list_dtypes(opdef, positions, values, name):
    if len(positions) == 1 and opdef.list_inputs[positions[0]]:   # one list (AddN, Pack, ...)
        p0 = positions[0]
        arrays = values[p0]
        if arrays:
            dt = arrays[0].dtype
            for a in arrays:
                if a.dtype is not dt and a.dtype != dt:
                    raise _dtype_mismatch(opdef, name, p0, p0, dt, a.dtype)
        return
    dts = []
    for p in positions:
        v = values[p]
        dts.extend((p, a.dtype) for a in (v if opdef.list_inputs[p] else [v]))
    if dts:
        p0, dt = dts[0]
        for p, d in dts[1:]:
            if d != dt:
                raise _dtype_mismatch(opdef, name, p0, p, dt, d)


def _dtype_name(dt):
    return dt.name if isinstance(dt, dtypes.DType) else dtypes.as_dtype(dt).name


def _dtype_mismatch(opdef, name, p0, p, dt0, dt):
    stub = errors.OpName(opdef.name, name)
    return errors.invalid_input(
        stub, opdef.input_names[p],
        f"has dtype {_dtype_name(dt)} that does not match dtype {_dtype_name(dt0)} of input "
        f"'{opdef.input_names[p0]}'", cls=errors.DTypeError)


def _dtype_not_allowed(opdef, name, p, attr, dt):
    stub = errors.OpName(opdef.name, name)
    allowed = ", ".join(sorted(t.name for t in opdef.allowed[attr]))
    name = _dtype_name(dt)
    return errors.invalid_input(stub, opdef.input_names[p],
                                f"dtype {name} is not supported: value for attr '{attr}' of {name} is not in the "
                                f"list of allowed values: {allowed}", cls=errors.DTypeError)


def _explain_failure(opdef, tensors, attrs, name, exc):
    """A kernel raised a NumPy-level error: let inference explain it, else wrap the message."""
    stub = errors.OpName(opdef.name, name)
    try:
        opdef.infer(stub, *tensors, **attrs)
    except errors.OpError as e:
        return e
    except Exception:  # inference itself could not cope: fall through to the kernel's message
        pass
    return errors.invalid_op(stub, f"{type(exc).__name__}: {exc}")


_PLAIN = frozenset((int, float, bool, complex, str, bytes, list, tuple, type(None)))


def _convert_inputs(opdef, inputs, hints=None, borrow=False):
    """Converts inputs to tensors of the current mode, using the dtype of tensor inputs that share an
    attr as the dtype of plain Python values (1 + t takes t's dtype)."""
    if len(inputs) != len(opdef.input_names):
        raise errors.invalid_op(errors.OpName(opdef.name, None),
                                f"takes {len(opdef.input_names)} inputs {opdef.input_names}, got {len(inputs)}")
    hint_at = [None] * len(inputs)
    from_tensor = [False] * len(inputs)     # the hint is a tensor's dtype (NumPy values then take it)
    if hints:
        for p, dt in hints.items():
            hint_at[p] = dt
    for positions in opdef.attr_positions.values():
        found = None
        tensor_found = False
        for p in positions:
            x = inputs[p]
            for item in (x if opdef.list_inputs[p] and isinstance(x, (list, tuple)) else [x]):
                kind = type(item)
                if kind in _PLAIN:              # no dtype to lend (and no costly hasattr misses)
                    continue
                if kind is _ndarray:
                    found = found or dtypes.from_numpy(item.dtype)
                    continue
                if isinstance(item, (Tensor, IndexedSlices)) or hasattr(item, "_as_graph_element") \
                        or hasattr(item, "_dense_var_to_tensor"):
                    found = item.dtype
                    tensor_found = True
                    break
                if isinstance(item, (np.ndarray, np.generic)):
                    found = found or dtypes.from_numpy(item.dtype)
            if tensor_found and isinstance(found, dtypes.DType) and found.base_dtype is found:
                break
        if found is not None:
            found = dtypes.as_dtype(found).base_dtype
            for p in positions:
                if hint_at[p] is None:
                    hint_at[p] = found
                    from_tensor[p] = tensor_found
    out = []
    for p, x in enumerate(inputs):
        if opdef.list_inputs[p]:
            if isinstance(x, (Tensor, IndexedSlices)):
                raise errors.invalid_input(errors.OpName(opdef.name, None), opdef.input_names[p],
                                           "expects a list of tensors, got a single tensor")
            out.append([_to_tensor(opdef, p, item, hint_at[p], from_tensor[p], borrow) for item in x])
        else:
            out.append(_to_tensor(opdef, p, x, hint_at[p], from_tensor[p], borrow))
    return out


def _numpy_takes(arr, hint):
    """Whether a NumPy value beside a tensor of dtype `hint` converts to it, as TF converts
    `x + np.array(...)` and `np.float64(2) * x`: floats and integers into any float or complex
    dtype, complex into complex, integers into integers they fit (never a float into an integer)."""
    kind, target = np.asarray(arr).dtype.kind, hint.as_numpy_dtype
    tk = np.dtype(target).kind
    if tk == "f":
        return kind in "fiu"
    if tk == "c":
        return kind in "fiuc"
    if tk in "iu" and kind in "iu":
        a = np.asarray(arr)
        info = np.iinfo(target)
        return a.size == 0 or (int(a.min()) >= info.min and int(a.max()) <= info.max)
    return False


def _to_tensor(opdef, p, x, hint, hint_from_tensor=False, borrow=False):
    if borrow and type(x) is _ndarray and (hint is None or not hint_from_tensor or x.dtype == hint.as_numpy_dtype) \
            and _borrowable(x):
        view = x.view()                 # eager, and the op keeps nothing: read the caller's array in
        view.flags.writeable = False    # place (read-only: a kernel can never write into it)
        return _Borrowed(view)
    if isinstance(x, Tensor):
        eager = _shared.all_eager or _state.eager
        if eager and not isinstance(x, _EagerTensor):
            raise errors.invalid_input(errors.OpName(opdef.name, None), opdef.input_names[p],
                                       f"symbolic tensor {x.name} cannot be used while executing eagerly")
        return x if eager or type(x) is not _EagerTensor else convert_to_tensor(x)
    if type(x) is int or type(x) is float:
        fast = scalar_tensor(x, hint)
        if fast is not None:
            return fast
    elif type(x) is list and hint is None and (_shared.all_eager or _state.eager):
        arr = flat_numbers(x)             # [1, 2, 3] as indices or a shape: one conversion
        if arr is not None:
            return _EagerTensor(arr)
    try:
        if hint is not None and not isinstance(x, (np.ndarray, np.generic, IndexedSlices)):
            return convert_to_tensor(x, preferred_dtype=hint)
        if hint is not None and hint_from_tensor and isinstance(x, (np.ndarray, np.generic)) \
                and x.dtype != hint.as_numpy_dtype and x.dtype != object and _numpy_takes(x, hint):
            return convert_to_tensor(np.asarray(x).astype(hint.as_numpy_dtype))
        return convert_to_tensor(x)
    except (TypeError, ValueError) as e:
        if isinstance(e, errors.OpError):
            raise
        raise errors.invalid_input(errors.OpName(opdef.name, None), opdef.input_names[p],
                                   f"cannot convert {type(x).__name__} to a tensor: {e}") from None


# ----------------------------------------------------------------------------------------------
# Graph building


def _captured(opdef, tensors, capture):
    """`tensors` (per input) and their flat list with every tensor from outside the graph being
    built replaced by `capture(t)`: its stand-in inside a traced function's graph."""
    graph = get_default_graph()

    def inside(t):
        return capture(t) if isinstance(t, _EagerTensor) or t.graph is not graph else t
    out = [[inside(t) for t in x] if is_list else inside(x) for x, is_list in zip(tensors, opdef.list_inputs)]
    return out, _flat_inputs(opdef, out)


def _build_node(opdef, inputs, attrs, name):
    graph = get_default_graph()
    hints = attrs.pop("_dtype_hints", None)
    if (not opdef.has_list_input and hints is None and len(inputs) == len(opdef.input_names)
            and all(type(x) is _Tensor for x in inputs)):
        # Graph tensors already: nothing to convert (the usual case inside gradients()).
        tensors = flat = list(inputs)
    else:
        tensors = _convert_inputs(opdef, inputs, hints)
        flat = _flat_inputs(opdef, tensors)
    for i, t in enumerate(flat):
        if isinstance(t, _EagerTensor) or t.graph is not graph:
            capture = getattr(graph, "capture", None)   # a function's graph captures outside values
            if capture is None:
                raise ValueError(f"{opdef.name}: input {t!r} is from a different graph than the op being built")
            tensors, flat = _captured(opdef, tensors, capture)
            break
    node_name = graph.unique_name(name if name else opdef.name)
    stub = errors.OpName(opdef.name, node_name)
    full_attrs = dict(opdef.defaults)
    full_attrs.update(attrs)
    for attr, positions in opdef.attr_positions.items():
        dts = []
        for p in positions:
            dts.extend(t.dtype for t in (tensors[p] if opdef.list_inputs[p] else [tensors[p]]))
        if not dts:
            continue
        first = dts[0]
        for d in dts[1:]:
            if d != first:
                bad = next(p for p in positions
                           if any(t.dtype != first for t in (tensors[p] if opdef.list_inputs[p] else [tensors[p]])))
                raise _dtype_mismatch(opdef, node_name, positions[0], bad, first, d)
        if attr in opdef.allowed and first not in opdef.allowed[attr]:
            raise _dtype_not_allowed(opdef, node_name, positions[0], attr, first)
    try:
        specs = opdef.infer(stub, *tensors, **full_attrs)
    except errors.InvalidArgumentError as e:
        if isinstance(e, (ValueError, TypeError)):
            raise
        # Building a graph, TF reports a failed static check as ValueError; this error is both.
        raise errors.GraphBuildError(e.node_def, e.op, e.message) from None
    output_specs = [(dtypes.as_dtype(s[0]), tensor_shape.as_shape(s[1])) for s in specs]
    input_counts = tuple(len(x) for x, is_list in zip(tensors, opdef.list_inputs) if is_list) or None
    all_attrs = dict(full_attrs)
    for attr, positions in opdef.attr_positions.items():
        p = positions[0]
        x = tensors[p]
        if opdef.list_inputs[p]:
            if x:
                all_attrs[attr] = x[0].dtype
            all_attrs.setdefault("N", len(x))
        else:
            all_attrs[attr] = x.dtype
    op = graph._create_op(opdef.name, node_name, flat, all_attrs, output_specs, opdef, input_counts, full_attrs)
    if _tapes_active.any and _tape_state.tapes:
        tape_lib.record_graph_op(op)
    if opdef._single:
        return op.outputs[0]
    if opdef.num_outputs == 0:
        return op       # an op without outputs (NoOp, AssignVariableOp): the node itself
    return list(op.outputs)

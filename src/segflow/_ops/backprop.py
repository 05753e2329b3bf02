"""GradientTape: records eagerly executed ops and differentiates through them.

The tape calls the same registered gradient functions as graph `gradients()` and aggregates with the
same routine. Gradient functions run eagerly, so an outer tape records them: nested tapes give
higher-order gradients.
"""

from __future__ import annotations

from typing import Any, Optional, Union
import functools

import numpy as np

from segflow._core import mode as context, tape as tape_lib
from segflow._core import dtypes
from segflow._core.convert import convert_to_tensor, convert_to_tensor_or_indexed_slices
from segflow._core.registry import lookup_op
from segflow._core import shapes as tensor_shape
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.tensor import EagerTensor, Tensor, _Reference
from segflow._core import backward as backward_lib
from segflow._core.backward import UnconnectedGradients
from segflow.util import nest
from segflow._ops import shape as array_ops
from segflow._ops import gather as gather_ops
from segflow._core.graph import name_scope
from segflow._ops import cast as cast_ops
from segflow._ops import join as join_ops
from segflow._ops import transpose as transpose_ops
from segflow._ops.variable_ops import handle_attr, handle_shape
from segflow._core.typing import TensorLike

__all__ = ["GradientTape", "gradients_function", "value_and_gradients_function", "implicit_grad",
           "imperative_grad", "make_vjp", "val_and_grad_function", "implicit_val_and_grad",
           "aggregate_indexed_slices_gradients", "op_attr_type", "make_attr",
           "TF_ATTR_STRING", "TF_ATTR_INT", "TF_ATTR_FLOAT", "TF_ATTR_BOOL", "TF_ATTR_TYPE",
           "TF_ATTR_SHAPE", "TF_ATTR_TENSOR", "TF_ATTR_PLACEHOLDER", "TF_ATTR_FUNC"]

# The kinds of op attributes, numbered as TF's C API numbers them (`TF_AttrType`, exported by
# `pywrap_tfe`). A list attribute's kind is written `[kind]`.
TF_ATTR_STRING = 0
TF_ATTR_INT = 1
TF_ATTR_FLOAT = 2
TF_ATTR_BOOL = 3
TF_ATTR_TYPE = 4
TF_ATTR_SHAPE = 5
TF_ATTR_TENSOR = 6
TF_ATTR_PLACEHOLDER = 7
TF_ATTR_FUNC = 8

_DECLARED_KINDS = {"string": TF_ATTR_STRING, "int": TF_ATTR_INT, "float": TF_ATTR_FLOAT, "bool": TF_ATTR_BOOL,
                   "type": TF_ATTR_TYPE, "shape": TF_ATTR_SHAPE, "tensor": TF_ATTR_TENSOR,
                   "func": TF_ATTR_FUNC}


def _declared_kind(text):
    """"int" -> TF_ATTR_INT, "list(int)" -> [TF_ATTR_INT] (TF's OpDef spelling)."""
    if text.startswith("list(") and text.endswith(")"):
        return [_DECLARED_KINDS[text[5:-1]]]
    return _DECLARED_KINDS[text]


def _value_kind(value):
    """The attribute kind of a default value, or None when the value does not tell."""
    if isinstance(value, bool):
        return TF_ATTR_BOOL
    if isinstance(value, int):
        return TF_ATTR_INT
    if isinstance(value, float):
        return TF_ATTR_FLOAT
    if isinstance(value, (str, bytes)):
        return TF_ATTR_STRING
    if isinstance(value, dtypes.DType):
        return TF_ATTR_TYPE
    if isinstance(value, tensor_shape.TensorShape):
        return TF_ATTR_SHAPE
    if isinstance(value, (list, tuple)) and value:
        inner = _value_kind(value[0])
        return None if inner is None or isinstance(inner, list) else [inner]
    return None


def op_attr_type(op_type, attr_name):
    """The kind of attribute `attr_name` of op `op_type`: one of the `TF_ATTR_*` numbers, or a
    one-element list of one for a list attribute (TF's `backprop.op_attr_type`).

    Dtype attributes (those an op takes from its inputs' dtypes) are TF_ATTR_TYPE and the length of
    a list input ("N") TF_ATTR_INT; other attributes have the kind the op declares
    (`opdef.attr_types`, TF's spelling: "int", "list(int)", ...) or, failing that, the kind of
    their default value.

    Raises:
      NotFoundError: no op `op_type` is registered.
      ValueError: the op has no such attribute (or nothing tells its kind).
    """
    opdef = lookup_op(op_type)
    if attr_name in opdef.attr_positions:
        return TF_ATTR_TYPE
    declared = getattr(opdef, "attr_types", None) or {}
    if attr_name in declared:
        return _declared_kind(declared[attr_name])
    if attr_name == "N" and opdef.has_list_input:
        return TF_ATTR_INT
    kind = _value_kind(opdef.defaults.get(attr_name))
    if kind is None:
        raise ValueError(f"Op '{op_type}' has no attribute '{attr_name}' of a known kind")
    return kind


def make_attr(attr_type, value):
    """`value` as op attribute of kind `attr_type` (a `TF_ATTR_*` number, or `[number]` for a list
    of them), as TF's `backprop.make_attr` makes it: a type becomes a DType (from its enum number,
    name or NumPy type), a shape a TensorShapeProto, a string bytes; other values stay as they are."""
    if isinstance(attr_type, list):
        kind = attr_type[0]
        return [make_attr(kind, v) for v in value]
    if attr_type == TF_ATTR_TYPE:
        return dtypes.as_dtype(value)
    if attr_type == TF_ATTR_SHAPE:
        return tensor_shape.as_shape(value).as_proto()
    if attr_type == TF_ATTR_STRING and isinstance(value, str):
        return value.encode()
    return value


def _creation_order(variable):
    return getattr(variable, "_creation_order", 0)


def _watchable(structure):
    """The tensors and variables in `structure`, composites (SparseTensor, RaggedTensor,
    IndexedSlices) expanded into their component tensors; ValueError for anything else."""
    out = []
    for t in nest.flatten(structure):
        if isinstance(t, _Reference):
            t = t.deref()
        if type(t) is EagerTensor or isinstance(t, Tensor) or hasattr(t, "_gradient_source"):
            out.append(t)
        elif isinstance(t, IndexedSlices):
            out.extend(c for c in (t.values, t.indices, t.dense_shape) if c is not None)
        elif hasattr(t, "_fetch_parts"):
            out.extend(_watchable(t._fetch_parts()[0]))
        else:
            raise ValueError(f"Passed in object {t!r} of type {type(t).__name__!r}, not a tensor, a "
                             f"variable or a composite tensor")
    return out


def _target(t):
    """A gradient target as the walk sees it: a variable stands for its handle (so that a variable
    given as both target and source gets its seed), anything else converted to a tensor."""
    if isinstance(t, (Tensor, IndexedSlices)):
        return t
    if isinstance(t, _Reference):
        t = t.deref()
    if hasattr(t, "_gradient_source"):
        return t._gradient_source()
    return convert_to_tensor(t)


def _seed(t):
    """The default upstream gradient of target `t`: ones of its shape (of a variable's value shape
    and dtype for a variable handle)."""
    eager = type(t) is EagerTensor
    # (t.dtype makes a DType: an eager tensor of numbers is told by its array, a handle's holds objects)
    if not (eager and t._value.dtype.kind != "O") and t.dtype == dtypes.resource:
        if isinstance(t, EagerTensor):
            v = t._value.item().read()
            return EagerTensor(np.ones(v.shape, v.dtype))
        return array_ops.ones(handle_shape(t), handle_attr(t, "dtype"))
    if eager:
        # The seed directly (OnesLike is not differentiable, so no tape needs to see it); empty +
        # fill costs half of np.ones, a Python function over the same two steps.
        v = t._value
        seed = np.empty(v.shape, v.dtype)
        seed.fill(1)
        return EagerTensor(seed)
    return array_ops.ones_like(t)


def _source(x):
    if type(x) is EagerTensor:  # the common case, without probing for attributes
        return x
    if isinstance(x, _Reference):
        x = x.deref()
    if hasattr(x, "_gradient_source"):
        return x._gradient_source()
    return x


def imperative_grad(tape, targets, sources, output_gradients=None,
                    unconnected_gradients=UnconnectedGradients.NONE):
    """Gradients of `targets` (weighted by `output_gradients`) w.r.t. `sources` over `tape`'s records:
    the one backward walk (`_core.backward`) over the records, gradient functions running eagerly."""
    # Only what the tape watched can be a source (a watched tensor or variable, or an output of a
    # recorded op); an unwatched constant that met a watched value in some op still gets None, as in TF.
    # Gradients flow only through float, complex, resource and variant tensors: a string or integer
    # source gets None, and such a target seeds nothing.
    watched = tape.watched
    reach = [id(s) for s in sources if id(s) in watched and backward_lib.is_backpropagatable(s)]
    seeds = []
    for i, t in enumerate(targets):
        g = None if output_gradients is None else output_gradients[i]
        if not backward_lib.is_backpropagatable(t):
            g = None
        elif g is None:
            g = _seed(t)
        else:
            dtype = handle_attr(t, "dtype") if t.dtype == dtypes.resource else t.dtype
            g = convert_to_tensor_or_indexed_slices(g, dtype=dtype)
        seeds.append(g)
    if context.executing_eagerly():
        result = backward_lib.backward(tape.records, targets, seeds, sources, reach=reach)
    else:
        # A tape inside a graph recorded graph ops: the walk builds the backward graph, each
        # gradient function under `<op name>_grad`, as gradients() does.
        with name_scope("gradient_tape"):
            result = backward_lib.backward(tape.records, targets, seeds, sources, reach=reach,
                                           build_scope=lambda op: name_scope(op.name + "_grad"))
    if unconnected_gradients == UnconnectedGradients.ZERO:
        for i, (g, s) in enumerate(zip(result, sources)):
            if g is None:
                result[i] = array_ops.zeros_like(s) if s.dtype != dtypes.resource else _zeros_for_handle(s)
    return result


def _zeros_for_handle(handle):
    if isinstance(handle, EagerTensor):
        return array_ops.zeros_like(handle._value.item().read())
    return array_ops.zeros(handle_shape(handle), handle_attr(handle, "dtype"))


class GradientTape:
    """Records operations for automatic differentiation (TF's `tf.GradientTape`).

        with sf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        tape.gradient(y, x)   # 2x

    Trainable variables read inside the block are watched automatically
    (`watch_accessed_variables=False` turns that off). A non-persistent tape gives one `gradient()`
    call; `persistent=True` allows many. Tapes nest for higher-order gradients.
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        self._tape = None
        self._tapes = None             # the tape stack (of the entering thread) it records on
        self._recording = False
        self._used = False
        self._watched_variables = []   # kept when a non-persistent tape drops its records

    def __enter__(self) -> GradientTape:
        if self._recording:
            raise ValueError("Tape is still recording: a GradientTape cannot be entered while it is active")
        if self._tape is None:  # else resume recording on the same tape (TF's re-entrant tapes)
            self._tape = tape_lib.Tape(self._persistent, self._watch_accessed_variables)
        self._push()
        return self

    def __exit__(self, *exc):
        if self._recording:
            self._pop()
        if self._used and not self._persistent and self._tape is not None:
            # gradient() was called inside the block: the records are of no further use
            self._watched_variables = self._tape.watched_variables
            self._tape = None
        return False

    def _push(self, tapes=None):
        # On the entering thread's tape stack (or back on `tapes`, the one it left).
        self._tapes = tape_lib.push_tape(self._tape, tapes)
        self._recording = True

    def _pop(self):
        """Stops recording; returns the tape stack it left (the thread that entered the tape)."""
        tapes = self._tapes
        tape_lib.pop_tape(self._tape, tapes)
        self._recording = False
        return tapes

    def watch(self, tensor: Any) -> None:
        """Ensures gradients can be taken w.r.t. `tensor` (a tensor, variable, or nest of them; a
        composite tensor such as a SparseTensor stands for its component tensors)."""
        flat = _watchable(tensor)
        if self._tape is None:
            raise ValueError("GradientTape.watch called outside the tape's `with` block")
        for t in flat:
            if type(t) is EagerTensor:  # the common case
                self._tape.watch(t)
                continue
            src = _source(t)
            if hasattr(t, "_gradient_source") and not self._tape.is_watched(src):
                self._tape.watched_variables.append(t)
            self._tape.watch(src)

    def stop_recording(self):
        """Context manager: ops run inside are not recorded."""
        tape = self

        class _Stop:
            def __enter__(self_inner):
                if not tape._recording:
                    raise ValueError("Tape must be recording when stop_recording is entered")
                self_inner.tapes = tape._pop()

            def __exit__(self_inner, *exc):
                tape._push(self_inner.tapes)
                return False

        return _Stop()

    def reset(self) -> None:
        """Forgets everything recorded so far (the tape keeps recording)."""
        was = self._recording
        if was:
            tapes = self._pop()
        self._tape = tape_lib.Tape(self._persistent, self._watch_accessed_variables)
        if was:
            self._push(tapes)

    def watched_variables(self) -> tuple[Any, ...]:
        """The variables the tape watches, in the order they were created (a tuple, as TF)."""
        variables = self._tape.watched_variables if self._tape else self._watched_variables
        return tuple(sorted(variables, key=_creation_order))

    def gradient(self, target: Any, sources: Any, output_gradients: Any = None,
                 unconnected_gradients: Union[str, UnconnectedGradients] = UnconnectedGradients.NONE) -> Any:
        """The gradient of `target` (summed, or weighted by `output_gradients`) w.r.t. `sources`.

        `target` and `sources` may be nested structures; the result has the structure of `sources`.
        A source that `target` does not depend on gets None (or zeros with
        `unconnected_gradients="zero"`). Sparse gradients (gather, embedding lookup) come back as
        IndexedSlices.
        """
        if self._tape is None:
            raise RuntimeError("GradientTape.gradient can only be called once on non-persistent tapes.")
        if self._used and not self._persistent:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one set of "
                               "gradients (or jacobians)")
        unconnected_gradients = backward_lib.check_unconnected(unconnected_gradients)
        self._used = True
        # one eager tensor target and source (the common call) skip the nest walks
        flat_targets = [target] if type(target) is EagerTensor else [_target(t) for t in nest.flatten(target)]
        single = type(sources) is EagerTensor
        flat_sources = [sources] if single else [_source(s) for s in nest.flatten(sources)]
        for s in flat_sources:
            if not isinstance(s, Tensor):
                raise ValueError(f"GradientTape.gradient sources must be tensors or variables, got {type(s).__name__}")
        flat_out = None if output_gradients is None else nest.flatten(output_gradients)
        if flat_out is not None and len(flat_out) != len(flat_targets):
            raise ValueError(f"output_gradients has {len(flat_out)} entries for {len(flat_targets)} targets; "
                             "pass one gradient (a tensor, or None) per target")
        if type(target) is not EagerTensor and any(isinstance(t, IndexedSlices) for t in flat_targets):
            if flat_out is None:
                flat_out = [None] * len(flat_targets)
            backward_lib.dense_targets(flat_targets, flat_out, gather_ops.gather)
        # A persistent tape keeps recording while it differentiates (TF): the gradient ops land on it, so
        # it can differentiate its own gradients. A non-persistent tape pauses.
        was = self._recording and not self._persistent
        if was:
            tapes = self._pop()
        try:
            result = imperative_grad(self._tape, flat_targets, flat_sources, flat_out, unconnected_gradients)
        finally:
            if was:
                self._push(tapes)
        if not self._persistent and not self._recording:
            self._watched_variables = self._tape.watched_variables
            self._tape = None
        return result[0] if single else nest.pack_sequence_as(sources, result)

    def batch_jacobian(self, target: Any, source: TensorLike,
                       unconnected_gradients: Union[str, UnconnectedGradients] = UnconnectedGradients.NONE,
                       parallel_iterations: Optional[int] = None,
                       experimental_use_pfor: bool = True) -> Optional[Tensor]:
        """d target[b, i...] / d source[b, j...] for each batch row b: shape
        `[batch] + target.shape[1:] + source.shape[1:]` (rows of one example depend on that
        example's source row only, as TF assumes)."""
        target = convert_to_tensor(target)
        tshape, sshape = target.shape, getattr(source, "shape", None)
        if sshape is None:
            sshape = convert_to_tensor(source).shape
        # Both must be at least [batch, one more dimension], with the same batch size.
        tshape.with_rank_at_least(2)
        sshape.with_rank_at_least(2)
        if tshape.rank is not None and sshape.rank is not None and \
                not tshape[0:1].is_compatible_with(sshape[0:1]):
            raise ValueError(f"Need first dimension of target shape ({tshape}) and source shape ({sshape}) "
                             f"to match.")
        if not self._persistent and not experimental_use_pfor and context.executing_eagerly():
            raise RuntimeError("GradientTape must be created with persistent=True to compute the "
                               "batch_jacobian with experimental_use_pfor=False.")
        full = self.jacobian(target, source, unconnected_gradients=unconnected_gradients)
        if full is None:
            return None
        batch = tshape.as_list()[0]
        t_rest, s_rest = tshape.as_list()[1:], sshape.as_list()[1:]
        tn, sn = int(np.prod(t_rest)), int(np.prod(s_rest))
        flat = array_ops.reshape(full, [batch, tn, batch, sn])
        diag = gather_ops.gather_nd(transpose_ops.transpose(flat, [0, 2, 1, 3]),
                                    [[b, b] for b in range(batch)])
        return array_ops.reshape(diag, [batch] + t_rest + s_rest)

    def jacobian(self, target: Any, sources: Any,
                 unconnected_gradients: Union[str, UnconnectedGradients] = UnconnectedGradients.NONE,
                 parallel_iterations: Optional[int] = None, experimental_use_pfor: bool = True) -> Any:
        """d target[i...] / d source[j...]: shape `target.shape + source.shape` per source."""
        if self._tape is None or (self._used and not self._persistent):
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one set of "
                               "gradients (or jacobians)")
        unconnected_gradients = backward_lib.check_unconnected(unconnected_gradients)
        self._used = True
        flat_sources = [_source(s) for s in nest.flatten(sources)]
        target = convert_to_tensor(target)
        n = int(np.prod(target.shape.as_list()))
        was = self._recording
        if was:
            tapes = self._pop()
        try:
            rows = [[] for _ in flat_sources]
            for i in range(n):
                seed = np.zeros(n, dtype=target.dtype.as_numpy_dtype)
                seed[i] = 1
                seed = EagerTensor(seed.reshape(target.shape.as_list()))
                grads = imperative_grad(self._tape, [target], flat_sources, [seed], unconnected_gradients)
                for k, g in enumerate(grads):
                    rows[k].append(None if g is None else convert_to_tensor(g))
        finally:
            if was:
                self._push(tapes)
        result = []
        # Shapes and dtypes from the sources as given: a variable's gradient source is its handle.
        for s, r in zip(nest.flatten(sources), rows):
            shape = target.shape.as_list() + s.shape.as_list()
            if n and all(g is None for g in r):
                result.append(None)  # unconnected, as TF's jacobian with unconnected_gradients="none"
            elif n == 0:
                result.append(array_ops.zeros(shape, dtype=s.dtype))
            else:
                r = [array_ops.zeros(s.shape.as_list(), dtype=s.dtype) if g is None else g for g in r]
                result.append(array_ops.reshape(join_ops.stack(r), shape))
        return nest.pack_sequence_as(sources, result)


def _check_value(value, f):
    if value is None:
        raise ValueError(f"Cannot differentiate a function that returns None; did you forget to return a "
                         f"value from {getattr(f, '__name__', 'the function')}?")


def aggregate_indexed_slices_gradients(grads):
    """One IndexedSlices summing `grads` (IndexedSlices or dense tensors; None entries dropped):
    their values and indices concatenated, dense ones taken as all their rows. None if none."""
    grads = [g for g in grads if g is not None]
    if not grads:
        return None
    if len(grads) == 1:
        return grads[0]
    slices = [gather_ops.as_indexed_slices(g) for g in grads]
    indices = [cast_ops.cast(s.indices, slices[0].indices.dtype) for s in slices]
    return IndexedSlices(join_ops.concat([s.values for s in slices], 0), join_ops.concat(indices, 0),
                         slices[0].dense_shape)


def _distinct_arguments(args, chosen):
    """`args` where each argument differentiated against is a distinct object: one passed again at
    another chosen position is replaced there by an identity of it, so that f(x, x) gives each
    position its own gradient (TF's gradients_function does the same)."""
    seen = set()
    args = list(args)
    for i in chosen:
        if id(args[i]) in seen:
            args[i] = array_ops.identity(args[i])
        seen.add(id(args[i]))
    return args


def gradients_function(f, params=None):
    """`g = gradients_function(f, [0])`; `g(x, y)` -> the gradients of f's (summed) output w.r.t. the
    arguments at `params` (all by default). `g(x, y, dy=...)` weights the output by dy."""

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        return value_and_gradients_function(f, params)(*args, **kwargs)[1]

    return decorated


def value_and_gradients_function(f, params=None):
    """Like gradients_function, but returns `(f(*args), gradients)`."""

    @functools.wraps(f)
    def decorated(*args, **kwargs):
        dy = kwargs.pop("dy", None)
        args = _distinct_arguments([convert_to_tensor(a) if not isinstance(a, Tensor) and not
                                    hasattr(a, "_gradient_source") else a for a in args],
                                   range(len(args)) if params is None else params)
        chosen = range(len(args)) if params is None else params
        with GradientTape() as tape:
            for i in chosen:
                tape.watch(args[i])
            value = f(*args, **kwargs)
        _check_value(value, f)
        grads = tape.gradient(value, [args[i] for i in chosen], output_gradients=dy)
        return value, grads

    return decorated


val_and_grad_function = value_and_gradients_function


def implicit_val_and_grad(f):
    """`implicit_val_and_grad(f)(*args)` -> (f(*args), [(gradient, variable)]) for the trainable
    variables f reads."""

    def decorated(*args, **kwargs):
        with GradientTape() as tape:
            value = f(*args, **kwargs)
        _check_value(value, f)
        variables = list(tape.watched_variables())
        if not variables:
            raise ValueError("No trainable variables were accessed while the function was being computed.")
        return value, list(zip(tape.gradient(value, variables), variables))

    return decorated


def implicit_grad(f):
    """`implicit_grad(f)(*args)` -> [(gradient, variable)] for the trainable variables f reads."""

    def decorated(*args, **kwargs):
        return implicit_val_and_grad(f)(*args, **kwargs)[1]

    return decorated


def make_vjp(f, params=None, persistent=True):
    """`make_vjp(f)(*args)` -> (result, vjp) where vjp(dy) gives the gradients w.r.t. args (those at
    `params`, all by default). A non-persistent vjp can be called once."""

    def decorated(*args, **kwargs):
        args = [convert_to_tensor(a) if not isinstance(a, Tensor) and not hasattr(a, "_gradient_source")
                else a for a in args]
        chosen = list(range(len(args)) if params is None else params)
        args = _distinct_arguments(args, chosen)
        tape = GradientTape(persistent=persistent)
        with tape:
            for i in chosen:
                tape.watch(args[i])
            result = f(*args, **kwargs)
        _check_value(result, f)

        def vjp(dy=None):
            if dy is not None:
                dy = nest.map_structure(convert_to_tensor, dy)
            return tape.gradient(result, [args[i] for i in chosen], output_gradients=dy)

        return result, vjp

    return decorated

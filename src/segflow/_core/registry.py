"""The registries: ops by name (`register_op`, `lookup_op`), gradient functions by op type
(`RegisterGradient`, `NotDifferentiable`, `get_gradient_function`), and the hooks through which op
modules give the core the few ops it needs (`hooks`).

Ops are defined once: `register_op` names an op's inputs, attrs, inference and kernel; `apply_op`
(_core/apply) runs it eagerly or adds it to the default graph.

    register_op("UnsortedSegmentSum",
                inputs=("data", "segment_ids", "num_segments"),
                attrs={"T": "data", "Tindices": "segment_ids", "Tnumsegments": "num_segments"},
                infer=_infer_unsorted_segment, kernel=segment.unsorted_sum)

- inputs: names in order; a name ending in "*" takes a list of tensors (AddN, ConcatV2, Pack).
- attrs: dtype attrs, each taken from the inputs it names (a name or a tuple of names that must
  share one dtype); `allowed` limits them to some dtypes.
- defaults: static attrs (transpose_a=False, ...) passed to the kernel as keyword arguments.
- infer(op, *inputs, **static_attrs): inputs are Tensors (graph) with .dtype, .shape and
  `tensor_util.constant_value`; returns [TensorSpec(dtype, shape), ...] or raises with
  `errors.invalid_input(op, name, message)`. Graph building always calls it; eager execution calls it
  only to explain a kernel failure.
- kernel(*arrays, **static_attrs) -> array or tuple of arrays (lists for "*" inputs). A kernel with
  `stateful=True` gets an `ExecState` first (resources of the Session or of eager execution).

The gradient of an op is registered separately by op name (`RegisterGradient`).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, TypeVar
import sys
from collections import namedtuple

from segflow._core import dtypes, errors

# What RegisterGradient returns: the function it registers. Defined here, not taken from _core/typing.py,
# which imports indexed_slices -> fold -> this module.
F = TypeVar("F", bound=Callable[..., Any])

__all__ = ['NoGradient', 'NotDifferentiable', 'RegisterGradient', 'Registry', 'get_gradient_function', 'no_gradient',
           'OpDef', 'TensorSpec', 'register_op', 'lookup_op', 'list_ops', 'regroup_inputs', 'hooks']


# ----------------------------------------------------------------------------------------------
# Registries


class Registry:
    """Maps names to objects; registering a name twice is an error that names the first place."""

    def __init__(self, name):
        self._name = name
        self._registry = {}
        self.version = 0       # counts registrations (caches of lookups compare it)

    def register(self, candidate, name=None):
        name = name or candidate.__name__
        if name in self._registry:
            where = self._registry[name][1]
            raise KeyError(f"Registering two {self._name} with name '{name}'! "
                           f"(Previous registration was in {where})")
        frame = sys._getframe(2)   # who called the decorator (no source read: imports stay fast)
        code = frame.f_code
        self._registry[name] = (candidate, f"{code.co_name} {code.co_filename}:{frame.f_lineno}")
        self.version += 1

    def lookup(self, name):
        try:
            return self._registry[name][0]
        except KeyError:
            raise LookupError(f"{self._name} registry has no entry for: {name}") from None

    def __contains__(self, name):
        return name in self._registry

    def list(self):
        return list(self._registry)


_gradient_registry = Registry("gradient")


class RegisterGradient:
    """Decorator registering the gradient function of an op type: `@RegisterGradient("MatMul")`.

    The function takes `(op, grad)` (or `(op, *grads)` for several outputs) and returns one gradient
    per input of `op`, `None` where the input has none.
    """

    def __init__(self, op_type: str) -> None:
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, f: F) -> F:
        _gradient_registry.register(f, self._op_type)
        return f


def NotDifferentiable(op_type: str) -> None:
    """Declares that ops of type `op_type` have no gradient (their inputs get None)."""
    if not isinstance(op_type, str):
        raise TypeError("op_type must be a string")
    _gradient_registry.register(None, op_type)


NoGradient = NotDifferentiable
no_gradient = NotDifferentiable


def get_gradient_function(op):
    """The gradient function of `op` (honouring the graph's gradient_override_map), or None if the
    op type is NotDifferentiable. Raises LookupError when no gradient is registered."""
    op_type = op.type
    graph = getattr(op, "_graph", None)
    if graph is not None and op._gradient_type is not None:
        op_type = op._gradient_type
    try:
        return _gradient_registry.lookup(op_type)
    except LookupError:
        raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op_type}). "
                          f"Register one with @ops.RegisterGradient(\"{op_type}\")") from None


# ----------------------------------------------------------------------------------------------
# Ops by name

TensorSpec = namedtuple("TensorSpec", ["dtype", "shape"])

_OPS = {}


_DTYPE_SETS = {}
_NP_SETS = {}


def _dtype_set(types):
    """frozenset of the DTypes named by `types`; many ops share one list, so sets are reused."""
    key = tuple(types)
    found = _DTYPE_SETS.get(key)
    if found is None:
        found = _DTYPE_SETS[key] = frozenset(dtypes.as_dtype(t) for t in key)
    return found


def _np_set(dtype_set):
    """The set of the NumPy dtypes of a `_dtype_set`, shared as those are. Built without the
    ml_dtypes types while ml_dtypes is not loaded; `_add_ml_dtypes` adds them when it is."""
    found = _NP_SETS.get(dtype_set)
    if found is None:
        found = _NP_SETS[dtype_set] = {t.np for t in dtype_set if dtypes.has_numpy_dtype(t)}
        if all(dtypes.has_numpy_dtype(t) for t in dtype_set):   # loaded while the set was built
            found.update(t.np for t in dtype_set)
    return found


def _add_ml_dtypes():
    for dtype_set, np_set in list(_NP_SETS.items()):
        np_set.update(t.np for t in dtype_set)


dtypes.when_ml_dtypes_loads(_add_ml_dtypes)


class OpDef:
    """One op's definition. Built by `register_op`; read by apply_op, Session and gradients."""

    def __init__(self, name, inputs, attrs, allowed, defaults, infer, kernel, num_outputs,
                 stateful, constant_value, list_output):
        self.name = name
        self.input_names = tuple(n.rstrip("*") for n in inputs)
        self.list_inputs = tuple(n.endswith("*") for n in inputs)
        self.has_list_input = any(self.list_inputs)
        self.defaults = dict(defaults or {})
        self.infer = infer
        self.kernel = kernel
        self.num_outputs = num_outputs
        self.stateful = stateful
        self.constant_value = constant_value
        self.list_output = list_output
        # attr name -> input positions sharing its dtype
        self.attr_positions = {}
        for attr, names in (attrs or {}).items():
            names = (names,) if isinstance(names, str) else tuple(names)
            try:
                self.attr_positions[attr] = tuple(self.input_names.index(n) for n in names)
            except ValueError:
                raise ValueError(f"register_op('{name}'): attr '{attr}' names unknown inputs {names}; "
                                 f"inputs are {self.input_names}") from None
        self.allowed = {}
        for attr, types in (allowed or {}).items():
            if attr not in self.attr_positions:
                raise ValueError(f"register_op('{name}'): 'allowed' names attr '{attr}' that no input sets")
            self.allowed[attr] = _dtype_set(types)
        # Precomputed for the eager fast path: (first position, other positions, allowed numpy
        # dtypes or None, attr name, whether the first position is a list input).
        self._checks = tuple(
            (pos[0], pos[1:], _np_set(self.allowed[a]) if a in self.allowed else None, a,
             self.list_inputs[pos[0]])
            for a, pos in self.attr_positions.items())
        # Eager ops whose inputs are all EagerTensors (a stateful op's resource handles included)
        # skip _convert_inputs.
        self._fast = not self.has_list_input
        self._fast_lists = self.has_list_input and not stateful
        self._single = num_outputs == 1 and not list_output
        # True: a plain op (one or two inputs sharing one dtype attr, one output, no attrs or
        # defaults, no state), whose eager calls on EagerTensors take a runner made for it on the
        # first call (`apply._plain_runner`); None: the general path.
        self._plain = True if (
            self._single and not stateful and not self.has_list_input and not self.defaults
            and len(self.input_names) in (1, 2) and len(self._checks) == 1
            and len(self._checks[0][1]) == len(self.input_names) - 1) else None

    def output_count(self, attrs, input_counts):
        n = self.num_outputs
        return n(attrs, input_counts) if callable(n) else n

    def __repr__(self):
        return f"OpDef({self.name!r}, inputs={self.input_names})"


def register_op(name: str, inputs: Sequence[str], kernel: Callable[..., Any],
                infer: Optional[Callable[..., Any]] = None, attrs: Optional[dict[str, Any]] = None,
                allowed: Optional[dict[str, Any]] = None, defaults: Optional[dict[str, Any]] = None,
                num_outputs: int = 1, stateful: bool = False, constant_value: Optional[Callable[..., Any]] = None,
                list_output: bool = False) -> OpDef:
    """Defines op `name` once for eager execution, graph building and the Session.

    Registering a name twice raises KeyError. Returns the OpDef.
    """
    if name in _OPS:
        raise KeyError(f"op '{name}' is already registered ({_OPS[name]!r})")
    if infer is None:
        raise ValueError(f"register_op('{name}'): an infer function is required")
    opdef = OpDef(name, inputs, attrs, allowed, defaults, infer, kernel, num_outputs, stateful,
                  constant_value, list_output)
    _OPS[name] = opdef
    return opdef


def lookup_op(name: str) -> OpDef:
    try:
        return _OPS[name]
    except KeyError:
        raise errors.NotFoundError(None, None, f"Op type not registered '{name}'") from None


def list_ops() -> list[str]:
    return sorted(_OPS)


def regroup_inputs(opdef, flat, input_counts):
    """Flat input values -> the kernel's argument list (lists for "*" inputs)."""
    if not opdef.has_list_input:
        return list(flat)
    args, i, counts = [], 0, iter(input_counts or ())
    for is_list in opdef.list_inputs:
        if is_list:
            n = next(counts)
            args.append(list(flat[i:i + n]))
            i += n
        else:
            args.append(flat[i])
            i += 1
    return args


# ----------------------------------------------------------------------------------------------
# Hooks: the ops the core needs but cannot import (it knows no op). Each op module installs its
# function when it is imported; `import segflow` imports them all.


class _Hooks:
    """`hooks.constant` (_ops/constant), `hooks.cast` (_ops/cast), `hooks.zeros_like` (_ops/shape),
    `hooks.add` (_ops/elementwise), `hooks.add_n` (_ops/reduce), `hooks.concat` (_ops/join),
    `hooks.densify` (IndexedSlices -> Tensor, _ops/segment), `hooks.graph_html` (a graph's HTML
    picture for `_repr_html_`, segflow/viz)."""

    __slots__ = ("constant", "cast", "zeros_like", "add", "add_n", "concat", "densify",
                 "graph_html")  # graph_html: viz (issue 15)

    def __getattr__(self, name):
        raise RuntimeError(f"segflow's core needs op '{name}', which no op module installed: "
                           "import segflow (not only segflow._core)")


hooks = _Hooks()

"""`sf.function`: a Python function traced once per input signature into a graph, then run as that
graph (TF's `tf.function` / `def_function.function`), and TF1's `Defun`.

On a call whose signature (dtype and shape of each tensor argument, identity of each variable
argument, value of each other Python argument, and the graph the call is made in) has no trace yet,
the Python function runs once inside a `FuncGraph` (func_graph.py), with placeholders for the tensor
arguments; the trace is a `ConcreteFunction` (concrete_function.py), which runs the calls. A later
trace that creates variables raises, as TF does.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence
import functools
import inspect
import threading
import warnings
import weakref

import numpy as np

from segflow._core import dtypes, shapes as tensor_shape
from segflow._core import mode as context, tape as tape_lib
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import get_default_graph
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.tensor import EagerTensor, Tensor
from segflow._core.tensor_spec import TensorSpec
from segflow._ops import shape as shape_ops
from segflow._ops.concrete_function import ConcreteFunction, _as_input
from segflow._ops.func_graph import FuncGraph
from segflow.util import nest
from segflow._core.typing import Name

__all__ = ["function", "Function", "ConcreteFunction", "FuncGraph", "defun", "Defun"]

_RETRACE_WARN = 5      # traces of one Function after which retracing warns (TF warns too)


class Function:
    """What `sf.function(fn)` returns: call it like `fn`; each new input signature traces once."""

    def __init__(self, python_function, name=None, input_signature=None, autograph=True,
                 jit_compile=None, reduce_retracing=False, experimental_relax_shapes=None, **unused):
        if not callable(python_function):
            raise TypeError(f"sf.function needs a callable, got {python_function!r}")
        self._python_function = python_function
        self._name = name or getattr(python_function, "__name__", "function")
        self._input_signature = None if input_signature is None else list(input_signature)
        if self._input_signature is not None:
            for s in nest.flatten(self._input_signature):
                if not isinstance(s, TensorSpec):
                    raise TypeError(f"input_signature must hold TensorSpecs, got {s!r}")
        self._reduce_retracing = bool(reduce_retracing or experimental_relax_shapes)
        self._traces = {}
        self._fast = {}           # eager calls on tensors only: (dtype, shape) per argument -> trace
        self._trace_count = 0
        self._lock = threading.RLock()
        self._created_variables = False
        self._instances = {}
        if jit_compile:
            _note_once("jit_compile", "sf.function: jit_compile is accepted and ignored (segflow runs the traced "
                       "graph with its own kernels)")
        for key in unused:
            if key not in ("experimental_implements", "experimental_autograph_options", "experimental_follow_type_hints",
                           "experimental_attributes", "experimental_compile"):
                raise TypeError(f"function() got an unexpected keyword argument '{key}'")
        self.__doc__ = getattr(python_function, "__doc__", None)
        self.__name__ = self._name
        self.__wrapped__ = python_function

    @property
    def python_function(self):
        return self._python_function

    @property
    def input_signature(self):
        return self._input_signature

    def __get__(self, instance, owner):
        """A Function used as a method: one bound Function (with its own traces) per instance."""
        if instance is None:
            return self
        key = id(instance)
        bound = self._instances.get(key)
        if bound is None:
            with self._lock:
                bound = self._instances.get(key)
                if bound is None:
                    try:        # the instance is held weakly: its traces go when it goes
                        method = _WeakMethod(self._python_function, instance)
                        weakref.finalize(instance, self._instances.pop, key, None)
                    except TypeError:           # no weak references to it: kept alive
                        method = functools.partial(self._python_function, instance)
                    bound = Function(method, self._name, self._input_signature,
                                     reduce_retracing=self._reduce_retracing)
                    self._instances[key] = bound
        return bound

    def experimental_get_tracing_count(self):
        return self._trace_count

    def get_concrete_function(self, *args, **kwargs):
        if not args and not kwargs and self._input_signature is not None:
            args = tuple(self._input_signature)
        concrete, _ = self._concrete(args, kwargs, feed=False)
        return concrete

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fast = None
        if not kwargs and self._input_signature is None and context.executing_eagerly():
            fast = _eager_key(args)     # eager tensors only: their dtypes and shapes are the key
            if fast is not None:
                concrete = self._fast.get(fast)
                if concrete is not None:
                    return concrete._structured(concrete._call_flat(list(args) + concrete.captured_inputs))
        concrete, flat_tensors = self._concrete(args, kwargs)
        if fast is not None:
            self._fast[fast] = concrete
        outs = concrete._call_flat(flat_tensors + concrete.captured_inputs)
        return concrete._structured(outs)

    # -- signatures
    def _concrete(self, args, kwargs, feed=True):
        """The trace for these arguments (made now if new) and, with `feed`, the tensors to feed it."""
        if self._input_signature is not None:
            args, kwargs = self._bind_signature(args, kwargs, specs_allowed=not feed)
        key, leaves, specs = self._signature(args, kwargs)
        with self._lock:
            concrete = self._traces.get(key)
            if concrete is None:
                concrete = self._trace(args, kwargs, leaves, specs, key)
                self._traces[key] = concrete
        if not feed:
            return concrete, None
        flat = [_as_input(leaves[i], p) for i, p in zip(specs["tensor_positions"], concrete._arg_inputs)]
        return concrete, flat

    def _bind_signature(self, args, kwargs, specs_allowed=False):
        """The arguments as the input_signature fixes them: each tensor wrapped with its spec (so the
        trace is the signature's); keyword arguments bound to their positions by name."""
        sig = self._input_signature
        if kwargs:
            try:
                bound = inspect.signature(self._python_function).bind(*args, **kwargs)
            except (TypeError, ValueError) as e:
                raise TypeError(f"{self._name}: {e}") from None
            args = tuple(bound.args) + tuple(bound.kwargs.values())
        if len(args) != len(sig):
            raise TypeError(f"{self._name} takes {len(sig)} arguments (its input_signature), got {len(args)}")
        return tuple(self._bind(a, spec, specs_allowed) for a, spec in zip(args, sig)), {}

    def _bind(self, a, spec, specs_allowed):
        """One argument against its part of the input_signature (a TensorSpec or a nest of them)."""
        if isinstance(spec, TensorSpec):
            if isinstance(a, TensorSpec) and specs_allowed:
                if not spec.is_compatible_with(a):
                    raise ValueError(f"{self._name}: {a!r} does not match its input_signature {spec}")
                return spec
            t = a if isinstance(a, Tensor) else _as_input(a, spec)
            if t.dtype != spec.dtype or not spec.shape.is_compatible_with(t.shape):
                raise ValueError(f"{self._name}: argument {a!r} does not match its input_signature {spec}")
            return _WithSpec(t, spec)
        if isinstance(spec, dict) and isinstance(a, dict) and set(a) == set(spec):
            return type(a)((k, self._bind(a[k], spec[k], specs_allowed)) for k in a)
        if isinstance(spec, (list, tuple)) and isinstance(a, (list, tuple)) and len(a) == len(spec):
            items = [self._bind(x, s, specs_allowed) for x, s in zip(a, spec)]
            return type(a)(*items) if hasattr(a, "_fields") else type(a)(items)
        raise ValueError(f"{self._name}: the argument {a!r} does not have the structure of its input_signature "
                         f"{spec!r}")

    def _signature(self, args, kwargs):
        leaves = nest.flatten([list(args), kwargs])
        key, tensor_positions, shapes, pinned = [], [], [], []
        for i, x in enumerate(leaves):
            if isinstance(x, _WithSpec):
                leaves[i] = x.tensor
                key.append(("S", x.spec.dtype, _dims(x.spec.shape)))
                tensor_positions.append(i)
                shapes.append((x.spec.dtype, x.spec.shape))
            elif isinstance(x, TensorSpec):         # get_concrete_function(TensorSpec(...))
                key.append(("S", x.dtype, _dims(x.shape)))
                tensor_positions.append(i)
                shapes.append((x.dtype, x.shape))
            elif isinstance(x, Tensor) or isinstance(x, np.ndarray):
                t = x if isinstance(x, Tensor) else convert_to_tensor(x)
                leaves[i] = t
                shape = t.shape
                if self._reduce_retracing:
                    shape = tensor_shape.unknown_shape(rank=shape.rank) if shape.rank is not None else shape
                key.append(("T", t.dtype, _dims(shape)))
                tensor_positions.append(i)
                shapes.append((t.dtype, shape))
            elif hasattr(x, "_dense_var_to_tensor") and hasattr(x, "handle"):
                key.append(("V", id(x)))
                pinned.append(x)            # the trace keeps it, so its id is not reused
            else:
                try:
                    hash(x)
                    key.append(("P", type(x), x))
                except TypeError:
                    key.append(("O", id(x)))
                    pinned.append(x)
        structure = _structure_key([list(args), kwargs])
        # the graph the call builds in (None: eagerly): a trace captures that graph's tensors
        where = None if context.executing_eagerly() else id(get_default_graph())
        return (where, structure, tuple(key)), leaves, {"tensor_positions": tensor_positions, "shapes": shapes,
                                                        "pinned": pinned}

    # -- tracing
    def _trace(self, args, kwargs, leaves, specs, key):
        self._trace_count += 1
        if self._trace_count > _RETRACE_WARN:
            warnings.warn(f"sf.function '{self._name}' has been traced {self._trace_count} times: each new input "
                          "signature (tensor shape or dtype, or Python value) traces again. Pass tensors instead of "
                          "Python numbers, use input_signature, or reduce_retracing=True.", stacklevel=4)
        outer = None if context.executing_eagerly() else get_default_graph()
        graph = FuncGraph(self._name, outer)     # keeps `outer` alive: its id in `key` stays unique
        graph.allow_variable_creation = not self._created_variables
        graph._keep.extend(specs["pinned"])
        placeholders = []
        with tape_lib.suspended(), graph.as_default():
            inner = list(leaves)
            for n, (i, (dtype, shape)) in enumerate(zip(specs["tensor_positions"], specs["shapes"])):
                p = shape_ops.placeholder(dtype, shape, name=f"arg{n}")
                placeholders.append(p)
                inner[i] = p
            args_in, kwargs_in = nest.pack_sequence_as([list(args), kwargs], inner)
            result = self._python_function(*args_in, **kwargs_in)
            flat_out = []
            structured = nest.map_structure(lambda x: _output(x, flat_out), result)
        if graph.created_variables:
            self._created_variables = True
        graph.inputs = placeholders
        graph.outputs = flat_out
        graph.structured_outputs = structured
        concrete = ConcreteFunction(graph, placeholders, flat_out, structured, signature=key, name=self._name)
        concrete._call_structure = (args_in, kwargs_in, self._positional_names())
        return concrete

    def _positional_names(self):
        try:
            params = inspect.signature(self._python_function).parameters.values()
        except (TypeError, ValueError):
            return []
        return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]

    def __repr__(self):
        return f"<sf.function {self._name} (traced {self._trace_count} times)>"


class _WeakMethod:
    """`fn` bound to `instance` without keeping the instance alive."""

    def __init__(self, fn, instance):
        self._fn = fn
        self._ref = weakref.ref(instance)
        self.__name__ = getattr(fn, "__name__", "method")
        self.__doc__ = getattr(fn, "__doc__", None)
        try:
            self.__signature__ = inspect.signature(functools.partial(fn, instance))
        except (TypeError, ValueError):
            pass

    def __call__(self, *args, **kwargs):
        instance = self._ref()
        if instance is None:
            raise ReferenceError(f"the object whose method {self.__name__} this is no longer exists")
        return self._fn(instance, *args, **kwargs)


def _eager_key(args):
    key = []
    for a in args:
        if type(a) is not EagerTensor:
            return None
        key.append((a.dtype, a._value.shape))
    return tuple(key)


class _WithSpec:
    __slots__ = ("tensor", "spec")

    def __init__(self, tensor, spec):
        self.tensor = tensor
        self.spec = spec


def _dims(shape):
    return None if shape.rank is None else tuple(shape.as_list())


def _structure_key(structure):
    """The nesting of the arguments (which leaves sit where), without their values."""
    if isinstance(structure, dict):
        return ("d", tuple((k, _structure_key(structure[k])) for k in sorted(structure, key=repr)))
    if isinstance(structure, (list, tuple)):
        return (type(structure).__name__, tuple(_structure_key(x) for x in structure))
    return "."


def _output(x, flat):
    """One leaf of what the traced function returned: tensors become outputs; IndexedSlices are
    returned as tensors (TF densifies them too); other values are returned as they are."""
    if x is None:
        return None
    if isinstance(x, IndexedSlices):
        x = convert_to_tensor(x)
    if hasattr(x, "_dense_var_to_tensor"):
        x = x.value()
    if isinstance(x, Tensor):
        graph = get_default_graph()
        if isinstance(x, EagerTensor) or x.graph is not graph:
            x = shape_ops.identity(x)      # captured: the output is its value
        flat.append(x)
        return x
    if hasattr(x, "type") and hasattr(x, "outputs") and hasattr(x, "control_inputs"):   # an Operation
        return None
    return x


_NOTED = set()


def _note_once(key, text):
    if key not in _NOTED:
        _NOTED.add(key)
        warnings.warn(text, stacklevel=3)


def function(func: Optional[Callable[..., Any]] = None, input_signature: Optional[Sequence[Any]] = None,
             autograph: bool = True, jit_compile: Optional[bool] = None, reduce_retracing: bool = False,
             experimental_relax_shapes: Optional[bool] = None, name: Name = None, **kwargs: Any) -> Any:
    """Traces `func` into a graph per input signature and runs that graph (TF's `tf.function`).

    Usable as `@sf.function`, `@sf.function(input_signature=[...])` or `sf.function(fn)`.
    `input_signature`: TensorSpecs fixing the arguments' dtypes and (partial) shapes: one trace
    for all calls. `reduce_retracing`: tensor arguments trace with unknown dimensions (one trace per
    rank). `jit_compile` and `autograph` are accepted and ignored (Python control flow on tensors
    inside a trace needs sf.cond / sf.while_loop).
    """
    def decorate(f):
        return Function(f, name=name, input_signature=input_signature, autograph=autograph,
                        jit_compile=jit_compile, reduce_retracing=reduce_retracing,
                        experimental_relax_shapes=experimental_relax_shapes, **kwargs)
    if func is not None:
        return decorate(func)
    return decorate


class Defun:
    """TF1's `function.Defun(*input_types, func_name=None, grad_func=None, python_grad_func=None)`:
    a decorator making a function that is traced once, with arguments of `input_types` (of any
    shape), and called as one op. `grad_func` (a Defun taking the inputs then the output gradients)
    or `python_grad_func` (`(op, *grads) -> grads`, as a registered gradient) replace its gradient."""

    def __init__(self, *input_types, **kwargs):
        self._input_types = [dtypes.as_dtype(t) for t in input_types]
        self._name = kwargs.pop("func_name", None)
        self._grad_func = kwargs.pop("grad_func", None)
        self._python_grad_func = kwargs.pop("python_grad_func", None)
        kwargs.pop("out_names", None)
        kwargs.pop("shape_func", None)
        kwargs.pop("noinline", None)
        kwargs.pop("compiled", None)
        kwargs.pop("separate_compiled_gradients", None)
        if self._grad_func is not None and self._python_grad_func is not None:
            raise ValueError("Gradient defined twice: pass grad_func or python_grad_func, not both")
        if kwargs:
            raise TypeError(f"Defun got unexpected keyword arguments {sorted(kwargs)}")

    def __call__(self, func):
        return _DefinedFunction(func, self._input_types, self._name, self._grad_func, self._python_grad_func)


class _DefinedFunction:
    """What Defun makes: call it with tensors; one output comes back as a tensor, several as a tuple."""

    def __init__(self, func, input_types, name, grad_func, python_grad_func):
        self._func = func
        self.name = name or getattr(func, "__name__", "function")
        signature = [TensorSpec(None, t) for t in input_types] if input_types else None
        self._function = Function(func, name=self.name, input_signature=signature)
        self._grad_func = grad_func
        self._python_grad_func = python_grad_func

    @property
    def declared_input_types(self):
        return tuple(s.dtype for s in self._function.input_signature or ())

    def add_to_graph(self, g):
        """TF adds the function's definition to `g`; segflow keeps it with the call."""

    def __call__(self, *args, **kwargs):
        concrete, flat = self._function._concrete(args, kwargs)
        if concrete._custom_grad is None:
            if self._python_grad_func is not None:
                concrete._custom_grad = self._python_grad_func
            elif self._grad_func is not None:
                grad_func = self._grad_func
                n = len(flat)
                concrete._custom_grad = lambda op, *grads: _as_list(grad_func(*(list(op.inputs[:n]) + list(grads))))
        outs = concrete._call_flat(flat + concrete.captured_inputs)
        result = concrete._structured(outs)
        return result


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def defun(func=None, input_signature=None, autograph=True, experimental_relax_shapes=False, **kwargs):
    """TF's older `function.defun` spelling of `function`."""
    return function(func, input_signature=input_signature, autograph=autograph,
                    experimental_relax_shapes=experimental_relax_shapes)

"""Graph, Operation, Tensor, EagerTensor, IndexedSlices and the gradient registry.

Mirrors `tensorflow.python.framework.ops`. A `Tensor` is a symbolic output of an `Operation` in a
`Graph`; an `EagerTensor` is a `Tensor` that holds its value (a NumPy array). Both carry the same
operators, installed by the op families when they are imported (`Tensor._override_operator`).
"""
import contextlib
import itertools
import re
import threading
import traceback
import warnings

import numpy as np

from segflow._core import mode as context
from segflow._core import dtypes, shapes as tensor_shape

_ctx_state = context._state     # the calling thread's mode and graph stack (a threading.local)
_ctx_shared = context._shared   # process-wide: the global default graph, `all_eager`

__all__ = [
    "Graph", "Operation", "Tensor", "EagerTensor", "IndexedSlices", "IndexedSlicesValue",
    "RegisterGradient", "NotDifferentiable", "NoGradient", "no_gradient", "get_gradient_function",
    "get_default_graph", "reset_default_graph", "name_scope", "device", "colocate_with",
    "control_dependencies", "convert_to_tensor", "convert_n_to_tensor",
    "convert_to_tensor_or_indexed_slices", "get_default_session", "executing_eagerly_outside_functions",
    "add_to_collection", "get_collection", "get_collection_ref", "GraphKeys", "is_dense_tensor_like",
    "Registry", "op_scope", "inside_function", "enable_eager_execution", "disable_eager_execution",
]


# ----------------------------------------------------------------------------------------------
# Registries


class Registry:
    """Maps names to objects; registering a name twice is an error that names the first place."""

    def __init__(self, name):
        self._name = name
        self._registry = {}

    def register(self, candidate, name=None):
        name = name or candidate.__name__
        if name in self._registry:
            where = self._registry[name][1]
            raise KeyError(f"Registering two {self._name} with name '{name}'! "
                           f"(Previous registration was in {where})")
        frame = traceback.extract_stack(limit=3)[0]
        self._registry[name] = (candidate, f"{frame.name} {frame.filename}:{frame.lineno}")

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

    def __init__(self, op_type):
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, f):
        _gradient_registry.register(f, self._op_type)
        return f


def NotDifferentiable(op_type):
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
# Tensors


class Tensor:
    """A symbolic value: output `value_index` of Operation `op`.

    `==` is identity (as in TF1 graphs) so tensors can key dicts; use `sf.equal` for elementwise.
    """

    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "_consumers", "__weakref__")

    # Let NumPy defer to our operators (`np_array + tensor` -> Tensor.__radd__).
    __array_priority__ = 100

    def __init__(self, op, value_index, dtype, shape):
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = shape
        self._consumers = []

    # -- identity
    @property
    def op(self):
        return self._op

    @property
    def value_index(self):
        return self._value_index

    @property
    def dtype(self):
        return self._dtype

    @property
    def graph(self):
        return self._op._graph

    @property
    def name(self):
        return f"{self._op.name}:{self._value_index}"

    @property
    def device(self):
        return self._op.device

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self.shape

    def set_shape(self, shape):
        """Refines the static shape; raises ValueError when `shape` contradicts what is known."""
        self._shape = self._shape.merge_with(tensor_shape.as_shape(shape))

    @property
    def ndim(self):
        return self.shape.rank

    def consumers(self):
        return list(self._consumers)

    def ref(self):
        return _Reference(self)

    def experimental_ref(self):
        return self.ref()

    def eval(self, feed_dict=None, session=None):
        """Runs this tensor in `session` or the default session."""
        session = session or get_default_session()
        if session is None:
            raise ValueError("Cannot evaluate tensor using `eval()`: no default session is registered. "
                             "Use `with sess.as_default()` or pass an explicit session to `eval(session=sess)`")
        return session.run(self, feed_dict)

    def numpy(self):
        raise NotImplementedError(f"numpy() is only available for eager tensors; {self.name} is symbolic. "
                                  "Run it in a Session or use eval().")

    def __repr__(self):
        return f"<sf.Tensor '{self.name}' shape={self.shape} dtype={self.dtype.name}>"

    __str__ = __repr__

    # Identity hash, computed in C (object.__hash__) rather than by a Python-level `id(self)`: tensors
    # key the sets and dicts of gradients() and the Session's planner.
    __hash__ = object.__hash__

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    def __bool__(self):
        raise TypeError("Using a symbolic `sf.Tensor` as a Python `bool` is not allowed. Use `if t is not None:` "
                        "to test for presence, or control-flow ops to branch on the value.")

    def __iter__(self):
        shape = self.shape
        if shape.rank is None:
            raise TypeError("Cannot iterate over a tensor with unknown rank.")
        if shape.rank == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        n = shape.as_list()[0]
        if n is None:
            raise TypeError(f"Cannot iterate over a tensor whose first dimension is unknown: {shape}")
        return (self[i] for i in range(n))

    def __len__(self):
        shape = self.shape
        if shape.rank is None or shape.rank == 0 or shape.as_list()[0] is None:
            raise TypeError(f"len is not well defined for a tensor of shape {shape}")
        return shape.as_list()[0]

    @classmethod
    def _override_operator(cls, operator, func):
        """Installs `func` as `Tensor.<operator>` (used by the op families at import)."""
        setattr(cls, operator, func)


class _Reference:
    """A hashable reference to a tensor or variable (TF's `tensor.ref()`)."""

    __slots__ = ("_obj",)

    def __init__(self, obj):
        self._obj = obj

    def deref(self):
        return self._obj

    def __hash__(self):
        return id(self._obj)

    def __eq__(self, other):
        return isinstance(other, _Reference) and other._obj is self._obj


class EagerTensor(Tensor):
    """A tensor holding its value (`numpy()`). Created by ops running eagerly."""

    __slots__ = ("_value",)

    def __init__(self, value):
        # Fast path: callers pass an ndarray (or NumPy scalar) already of the right dtype.
        self._value = value
        self._op = None

    @property
    def dtype(self):
        return dtypes.from_numpy(self._value.dtype)

    @property
    def shape(self):
        return tensor_shape.TensorShape(self._value.shape)

    @property
    def ndim(self):
        return self._value.ndim

    @property
    def op(self):
        raise AttributeError("Tensor.op is undefined when eager execution is enabled.")

    @property
    def graph(self):
        raise AttributeError("Tensor.graph is undefined when eager execution is enabled.")

    @property
    def name(self):
        raise AttributeError("Tensor.name is undefined when eager execution is enabled.")

    @property
    def device(self):
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    @property
    def value_index(self):
        return 0

    def set_shape(self, shape):
        if not tensor_shape.as_shape(shape).is_compatible_with(self.shape):
            raise ValueError(f"Tensor's shape {self.shape} is not compatible with supplied shape {shape}")

    def consumers(self):
        raise AttributeError("consumers() is undefined for eager tensors")

    def eval(self, feed_dict=None, session=None):
        return self.numpy()

    def numpy(self):
        """The value as a NumPy array (a copy is not made; do not write to it)."""
        value = self._value
        return value if type(value) is np.ndarray else np.asarray(value)

    def __array__(self, dtype=None, copy=None):
        value = np.asarray(self._value)
        return value if dtype is None else value.astype(dtype, copy=False)

    def __repr__(self):
        return f"<sf.Tensor: shape={tuple(self._value.shape)}, dtype={self.dtype.name}, numpy={self.numpy()!r}>"

    def __str__(self):
        return f"sf.Tensor({self.numpy()}, shape={tuple(self._value.shape)}, dtype={self.dtype.name})"

    def __bool__(self):
        return bool(self._value)

    def __float__(self):
        return float(self._value)

    def __int__(self):
        return int(self._value)

    def __complex__(self):
        return complex(self._value)

    def __index__(self):
        if self._value.dtype.kind not in "iu" or self._value.ndim != 0:
            raise TypeError(f"only integer scalar tensors can be used as an index, not {self.dtype.name} "
                            f"of shape {tuple(self._value.shape)}")
        return int(self._value)

    def __len__(self):
        if self._value.ndim == 0:
            raise TypeError("Scalar tensor has no `len()`")
        return self._value.shape[0]

    def __iter__(self):
        if self._value.ndim == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        return (self[i] for i in range(self._value.shape[0]))

    def __format__(self, spec):
        return format(self.numpy(), spec) if self._value.ndim == 0 else str(self)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def is_dense_tensor_like(t):
    return isinstance(t, Tensor)


# ----------------------------------------------------------------------------------------------
# IndexedSlices


class IndexedSlices:
    """A sparse slice of a dense tensor: rows `indices` of a tensor of shape `dense_shape` hold
    `values` (repeated indices add up). The gradient of gather and embedding lookups.

    Turning one into a dense tensor is explicit (`convert_to_tensor`, or any op taking a dense input)
    and warns, naming the op that made it, when the dense result is large or of unknown shape.
    """

    __array_priority__ = 100

    def __init__(self, values, indices, dense_shape=None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self):
        return self._values

    @property
    def indices(self):
        return self._indices

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def name(self):
        return self._values.name

    @property
    def device(self):
        return self._values.device

    @property
    def op(self):
        return self._values.op

    @property
    def graph(self):
        return self._values.graph

    @property
    def shape(self):
        from segflow.framework import tensor_util
        if self._dense_shape is None:
            return tensor_shape.unknown_shape()
        known = tensor_util.constant_value(self._dense_shape)
        if known is not None:
            return tensor_shape.TensorShape([int(d) for d in known])
        return tensor_shape.unknown_shape(rank=self._values.shape.rank)

    def get_shape(self):
        return self.shape

    def __neg__(self):
        from segflow.ops import math_ops
        return IndexedSlices(math_ops.negative(self._values), self._indices, self._dense_shape)

    def __repr__(self):
        return (f"IndexedSlices(indices={self._indices!r}, values={self._values!r}"
                f"{'' if self._dense_shape is None else f', dense_shape={self._dense_shape!r}'})")


class IndexedSlicesValue:
    """The value of an IndexedSlices fetched from a Session: NumPy values, indices, dense_shape."""

    def __init__(self, values, indices, dense_shape):
        self.values = values
        self.indices = indices
        self.dense_shape = dense_shape

    def __iter__(self):
        return iter((self.values, self.indices, self.dense_shape))

    def __repr__(self):
        return f"IndexedSlicesValue(values={self.values!r}, indices={self.indices!r}, dense_shape={self.dense_shape!r})"


_LARGE_DENSE_ELEMENTS = 100_000_000


def _indexed_slices_to_tensor(value, dtype=None, name=None):
    """Densifies an IndexedSlices with unsorted_segment_sum; warns when large or shape unknown."""
    from segflow.framework import tensor_util
    from segflow.ops import math_ops
    if value.dense_shape is None:
        raise ValueError(f"Tensor conversion requested for IndexedSlices without dense_shape: {value!r}")
    made_by = _producer_text(value.values)
    shape = tensor_util.constant_value(value.dense_shape)
    if shape is None:
        warnings.warn(f"Converting sparse IndexedSlices{made_by} to a dense Tensor of unknown shape. "
                      "This may consume a large amount of memory.", stacklevel=3)
    elif int(np.prod(shape)) >= _LARGE_DENSE_ELEMENTS:
        warnings.warn(f"Converting sparse IndexedSlices{made_by} to a dense Tensor with {int(np.prod(shape))} "
                      "elements. This may consume a large amount of memory.", stacklevel=3)
    return math_ops.densify_indexed_slices(value, name=name)


def _producer_text(t):
    op = getattr(t, "_op", None)
    return f" (made by op '{op.name}' of type {op.type})" if op is not None else ""


# ----------------------------------------------------------------------------------------------
# Operations


_CPU = "/job:localhost/replica:0/task:0/device:CPU:0"


class Operation:
    """The one op record: a node of a Graph, or (with `graph` None) an eagerly executed op as a
    GradientTape recorded it. Gradient functions see the same interface in every mode: `type`,
    `name`, `inputs`, `outputs`, `get_attr(name)`, `graph`, `skip_input_indices`.

    A graph op's `_id` orders it by creation (inputs exist before the ops that use them), the order
    the backward walk relies on; a tape keeps its records in that order. `grad_fn` is set for
    records of `custom_gradient` calls.
    """

    __slots__ = ("_graph", "_type", "_name", "inputs", "_attrs", "_opdef", "_input_counts", "_control_inputs",
                 "_device", "_colocation", "_gradient_type", "outputs", "_id", "_kernel_attrs", "grad_fn",
                 "skip_input_indices", "_const_cache", "__weakref__")

    def __init__(self, graph, op_type, name, inputs, attrs, output_specs, opdef, input_counts=None,
                 control_inputs=(), device="", colocation=None, kernel_attrs=None):
        self._graph = graph
        self._type = op_type
        self._name = name
        self.inputs = list(inputs)
        self._attrs = attrs
        self._opdef = opdef
        self._input_counts = input_counts   # lengths of list inputs, in opdef order
        self._control_inputs = list(control_inputs)
        self._device = device
        self._colocation = colocation
        self._gradient_type = None
        self._kernel_attrs = attrs if kernel_attrs is None else kernel_attrs
        self.grad_fn = None
        self.skip_input_indices = None      # inputs the current backward pass needs no gradient for
        self._const_cache = None
        self.outputs = [Tensor(self, i, dt, shp) for i, (dt, shp) in enumerate(output_specs)]
        self._id = next(graph._op_ids)
        for t in self.inputs:
            t._consumers.append(self)

    @classmethod
    def _record(cls, opdef, inputs, outputs, attrs, input_counts=None, grad_fn=None):
        """An eager record: `inputs` and `outputs` are EagerTensors, `attrs` the static attrs the
        kernel ran with (dtype attrs are derived from the inputs by `get_attr`)."""
        # Only what an eager record uses is set (this runs for every recorded op): the graph-only
        # slots (_control_inputs, _device, _colocation, _gradient_type, _kernel_attrs, _const_cache)
        # stay empty and the properties that read them answer for records themselves.
        op = cls.__new__(cls)
        op._graph = None
        op._type = op._name = opdef.name if opdef is not None else "CustomGradient"
        op.inputs = inputs
        op._attrs = attrs
        op._opdef = opdef
        op._input_counts = input_counts
        op.grad_fn = grad_fn
        op.skip_input_indices = None
        op.outputs = outputs     # (no _id: a tape's record list is its creation order)
        return op

    @property
    def type(self):
        return self._type

    @property
    def name(self):
        return self._name

    @property
    def graph(self):
        return self._graph

    @property
    def control_inputs(self):
        return self._control_inputs if self._graph is not None else []

    @property
    def device(self):
        return self._device if self._graph is not None else _CPU

    @property
    def node_def(self):
        return {"name": self._name, "op": self._type, "input": [t.name for t in self.inputs]
                + ["^" + c.name for c in self._control_inputs], "device": self._device,
                "attr": dict(self._attrs)}

    @property
    def op_def(self):
        return self._opdef

    def colocation_groups(self):
        return [f"loc:@{self._colocation or self._name}".encode()]

    def get_attr(self, name):
        attrs = self._attrs
        if name in attrs:
            return attrs[name]
        # dtype attrs (T, Tindices, ...) are the dtype of the first input they name; N is the length
        # of the first list input
        opdef = self._opdef
        if opdef is not None and name in opdef.attr_positions:
            p = opdef.attr_positions[name][0]
            flat_index = p
            if opdef.has_list_input:
                flat_index, counts = 0, iter(self._input_counts or ())
                for q, is_list in enumerate(opdef.list_inputs):
                    if q == p:
                        break
                    flat_index += next(counts) if is_list else 1
            if flat_index < len(self.inputs):
                return self.inputs[flat_index].dtype
        if name == "N" and self._input_counts:
            return self._input_counts[0]
        raise ValueError(f"Operation '{self._name}' ({self._type}) has no attr named '{name}'. "
                         f"It has: {sorted(attrs)}")

    def _set_attr(self, name, value):
        self._attrs[name] = value

    def _add_control_input(self, op):
        if op not in self._control_inputs:
            self._control_inputs.append(op)

    def run(self, feed_dict=None, session=None):
        session = session or get_default_session()
        if session is None:
            raise ValueError("Cannot execute operation using `run()`: no default session is registered.")
        session.run(self, feed_dict)

    def values(self):
        return tuple(self.outputs)

    def __repr__(self):
        if self._graph is None:
            return f"<sf.Operation (eager record) type={self._type}>"
        return f"<sf.Operation '{self._name}' type={self._type}>"


# ----------------------------------------------------------------------------------------------
# Graph


class GraphKeys:
    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    MODEL_VARIABLES = "model_variables"
    UPDATE_OPS = "update_ops"
    GLOBAL_STEP = "global_step"
    LOSSES = "losses"
    SUMMARIES = "summaries"
    TRAIN_OP = "train_op"
    VARIABLES = GLOBAL_VARIABLES


class _Stacks:
    """A graph's scope stacks in one thread (TF keeps them per thread too): a thread that builds
    into a graph starts with no name scope, device, colocation or control dependencies, whatever
    other threads have entered on the same graph."""

    __slots__ = ("name_stack", "device_stack", "colocation_stack", "control_stack")

    def __init__(self):
        self.name_stack = ""
        self.device_stack = []
        self.colocation_stack = []
        self.control_stack = []       # list of lists of ops (None entry clears outer deps)


class _GraphStacks(threading.local):
    """`.s`: the calling thread's `_Stacks` of one graph (one thread-local read, then plain ones)."""

    def __init__(self):
        self.s = _Stacks()


def _stack_property(attr):
    def fget(self):
        return getattr(self._stacks.s, attr)

    def fset(self, value):
        setattr(self._stacks.s, attr, value)
    return property(fget, fset, doc=f"The calling thread's {attr} of this graph.")


class Graph:
    """A dataflow graph: Operations whose outputs feed other Operations."""

    _name_stack = _stack_property("name_stack")
    _device_stack = _stack_property("device_stack")
    _colocation_stack = _stack_property("colocation_stack")
    _control_stack = _stack_property("control_stack")

    def __init__(self):
        self._ops_by_name = {}
        self._ops = []
        self._op_ids = itertools.count()
        self._names_in_use = {}
        self._names_lock = threading.Lock()  # unique_name's check-and-claim, across threads
        self._stacks = _GraphStacks()        # name scope, device, colocation, control deps: per thread
        self._gradient_override_map = {}
        self._override_used = set()
        self._collections = {}
        self._finalized = False
        self.seed = None
        self._seed_offset = 0
        self._version = 0

    # -- default graph
    @contextlib.contextmanager
    def as_default(self):
        context.push_graph(self)
        try:
            yield self
        finally:
            context.pop_graph(self)

    # -- lookup
    def get_operations(self):
        return list(self._ops)

    def get_operation_by_name(self, name):
        try:
            return self._ops_by_name[name]
        except KeyError:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.") from None

    def get_tensor_by_name(self, name):
        if ":" not in name:
            raise ValueError(f"The name '{name}' looks like an (invalid) Operation name, not a Tensor. "
                             "Tensor names must be of the form \"<op_name>:<output_index>\".")
        op_name, index = name.rsplit(":", 1)
        op = self.get_operation_by_name(op_name)
        index = int(index)
        if index >= len(op.outputs):
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist: "
                           f"operation '{op_name}' has {len(op.outputs)} outputs.")
        return op.outputs[index]

    def as_graph_element(self, obj, allow_tensor=True, allow_operation=True):
        if isinstance(obj, str):
            if ":" in obj:
                if allow_tensor:
                    return self.get_tensor_by_name(obj)
                raise ValueError(f"The name '{obj}' appears to refer to a Tensor, not an Operation.")
            if allow_operation:
                return self.get_operation_by_name(obj)
            what = "refers to an Operation, not a Tensor" if obj in self._ops_by_name else "is not a Tensor name"
            raise ValueError(f"The name '{obj}' {what}. Tensor names have the form \"<op_name>:<output_index>\".")
        if hasattr(obj, "_as_graph_element"):
            obj = obj._as_graph_element()
        if isinstance(obj, Tensor) and allow_tensor and not isinstance(obj, EagerTensor):
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj.name} is not an element of this graph.")
            return obj
        if isinstance(obj, Operation) and allow_operation:
            if obj.graph is not self:
                raise ValueError(f"Operation {obj.name} is not an element of this graph.")
            return obj
        raise TypeError(f"Can not convert a {type(obj).__name__} into a "
                        f"{'Tensor or Operation' if allow_tensor and allow_operation else 'Tensor' if allow_tensor else 'Operation'}.")

    @property
    def version(self):
        return self._version

    def finalize(self):
        self._finalized = True

    @property
    def finalized(self):
        return self._finalized

    # -- names
    def get_name_scope(self):
        return self._stacks.s.name_stack.rstrip("/")

    def unique_name(self, name, mark_as_used=True):
        prefix = self._stacks.s.name_stack
        if prefix:
            name = prefix + name
        key = name.lower()
        lock = self._names_lock
        lock.acquire()   # check and claim at once: threads building into one graph get distinct names
        try:
            count = self._names_in_use.get(key, 0)
            if mark_as_used:
                self._names_in_use[key] = count + 1
            if count > 0:
                base = name
                while (name.lower()) in self._names_in_use:
                    name = f"{base}_{count}"
                    count += 1
                if mark_as_used:
                    self._names_in_use[name.lower()] = 1
        finally:
            lock.release()
        return name

    @contextlib.contextmanager
    def name_scope(self, name):
        stacks = self._stacks.s   # the calling thread's
        old = stacks.name_stack
        if name is None or name == "":
            new = ""
        elif name.endswith("/"):
            new = name          # re-entering a captured scope
        else:
            new = self.unique_name(name) + "/"
        stacks.name_stack = new
        try:
            yield new
        finally:
            stacks.name_stack = old

    # -- devices, colocation, control deps
    @contextlib.contextmanager
    def device(self, device_name):
        if callable(device_name):
            raise NotImplementedError("device functions are not supported; pass a device string")
        stack = self._stacks.s.device_stack
        stack.append(device_name or "")
        try:
            yield
        finally:
            stack.pop()

    @contextlib.contextmanager
    def colocate_with(self, op, ignore_existing=False):
        stack = self._stacks.s.colocation_stack
        if op is None:
            stack.append(None)
        else:
            if isinstance(op, (Tensor, IndexedSlices)):
                op = op.op
            elif hasattr(op, "_as_graph_element"):
                op = op._as_graph_element().op
            stack.append(op)
        try:
            yield
        finally:
            stack.pop()

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        stacks = self._stacks.s   # the calling thread's
        if control_inputs is None:
            saved, stacks.control_stack = stacks.control_stack, []
            try:
                yield
            finally:
                stacks.control_stack = saved
            return
        ops_ = []
        for c in control_inputs:
            if hasattr(c, "_as_graph_element"):
                c = c._as_graph_element()
            if isinstance(c, (Tensor, IndexedSlices)):
                c = c.op
            if not isinstance(c, Operation):
                raise TypeError(f"Control input must be an Operation or Tensor: {c!r}")
            ops_.append(c)
        stack = stacks.control_stack
        stack.append(ops_)
        try:
            yield
        finally:
            stack.pop()

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map):
        """Within the block, ops of type K take the gradient registered under op_type_map[K].

        Warns (on exit) about a map entry that names an unregistered gradient, or that no op used.
        """
        from segflow.framework import op_def
        for key, value in op_type_map.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise TypeError("gradient_override_map keys and values must be op type strings")
            if key not in op_def._OPS:
                warnings.warn(f"gradient_override_map: '{key}' is not a registered op type", stacklevel=3)
            if value not in _gradient_registry:
                warnings.warn(f"gradient_override_map: no gradient is registered under '{value}' "
                              f"(the override for op type '{key}')", stacklevel=3)
        saved = dict(self._gradient_override_map)
        self._gradient_override_map.update(op_type_map)
        used_before = set(self._override_used)
        try:
            yield
        finally:
            for key in op_type_map:
                if key not in self._override_used - used_before and key not in used_before:
                    warnings.warn(f"gradient_override_map entry '{key}' -> '{op_type_map[key]}' was never used: "
                                  f"no op of type '{key}' was created in the block", stacklevel=3)
            self._gradient_override_map = saved

    # -- collections
    def add_to_collection(self, name, value):
        self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names, value):
        for name in ([names] if isinstance(names, str) else names):
            self.add_to_collection(name, value)

    def get_collection(self, name, scope=None):
        items = list(self._collections.get(name, []))
        if scope is None:
            return items
        pattern = re.compile(scope)
        return [i for i in items if pattern.match(getattr(i, "name", "") or "")]

    def get_collection_ref(self, name):
        return self._collections.setdefault(name, [])

    def get_all_collection_keys(self):
        return list(self._collections)

    def clear_collection(self, name):
        self._collections.pop(name, None)

    # -- node creation (called by op_def.apply_op)
    def _create_op(self, op_type, name, inputs, attrs, output_specs, opdef, input_counts=None, kernel_attrs=None):
        if self._finalized:
            raise RuntimeError("Graph is finalized and cannot be modified.")
        stacks = self._stacks.s
        control = []
        for level in stacks.control_stack:
            for c in level:
                if c not in control:
                    control.append(c)
        colocation = None
        device_stack, colocation_stack = stacks.device_stack, stacks.colocation_stack
        device = device_stack[-1] if device_stack else ""
        if colocation_stack and colocation_stack[-1] is not None:
            target = colocation_stack[-1]
            colocation = target._colocation or target.name
            device = target.device
        op = Operation(self, op_type, name, inputs, attrs, output_specs, opdef, input_counts,
                       control, device, colocation, kernel_attrs)
        if op_type in self._gradient_override_map:
            op._gradient_type = self._gradient_override_map[op_type]
            self._override_used.add(op_type)
        self._ops_by_name[name] = op
        self._ops.append(op)
        self._version += 1
        return op


def get_default_graph():
    """The innermost graph the calling thread made default with `as_default()`, else the calling
    thread's global default graph (as in TF, each thread has its own)."""
    state = _ctx_state
    stack = state.graph_stack
    if stack:
        return stack[-1]
    graph = state.global_graph
    return graph if graph is not None else context.global_default_graph(Graph)


def reset_default_graph():
    """Replaces the calling thread's global default graph; the thread must not be inside an
    `as_default()` block."""
    if context._state.graph_stack:
        raise AssertionError("Do not use reset_default_graph() inside a `with graph.as_default()` block.")
    context._state.global_graph = Graph()



def enable_eager_execution():
    context.enable_eager_execution()


def disable_eager_execution():
    context.disable_eager_execution()


def executing_eagerly_outside_functions():
    return context.executing_eagerly()


def inside_function():
    return False


# ----------------------------------------------------------------------------------------------
# Scopes usable in both modes


class name_scope:
    """`with ops.name_scope("layer"):` prefixes the names of ops built inside (graph mode).

    Takes TF1's `(name, default_name=None, values=None)`; yields the scope string ("layer/").
    In eager mode it only tracks the name.
    """

    def __init__(self, name, default_name=None, values=None, skip_on_eager=True):
        self._name = default_name if name is None else name
        self._values = values
        self._ctx = None

    def __enter__(self):
        if _ctx_shared.all_eager or _ctx_state.eager:
            # Eagerly there are no nodes to name; the scope string still nests as in TF.
            stack = self._eager_stack = _scope_state.eager_names
            outer = stack[-1]
            scope = self._name if self._name and self._name.endswith("/") else \
                (outer + self._name + "/" if self._name else "")
            stack.append(scope)
            self._eager = True
            return scope
        self._eager = False
        graph = get_default_graph()
        if self._values:
            for v in self._values:
                g = getattr(v, "graph", None) if isinstance(v, (Tensor, IndexedSlices, Operation)) \
                    and not isinstance(v, EagerTensor) else None
                if g is not None and g is not graph:
                    raise ValueError(f"{v!r} must be from the same graph as the name scope's graph")
        self._ctx = graph.name_scope(self._name)
        return self._ctx.__enter__()

    def __exit__(self, *exc):
        if self._eager:
            self._eager_stack.pop()
            return False
        if self._ctx is not None:
            return self._ctx.__exit__(*exc)
        return False


class _ThreadScopes(threading.local):
    """Per-thread stacks that belong to no graph: eager name scopes and default sessions."""

    def __init__(self):
        self.eager_names = [""]   # eager name_scope strings, innermost last
        self.sessions = []        # sessions made default with `as_default()`, innermost last


_scope_state = _ThreadScopes()


def __getattr__(name):
    # The calling thread's stacks under their former module-level names.
    if name == "_eager_name_stack":
        return _scope_state.eager_names
    if name == "_default_session_stack":
        return _scope_state.sessions
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


op_scope = name_scope


@contextlib.contextmanager
def _noop_scope():
    yield


def device(device_name):
    """`with ops.device("/cpu:0"):` records the device on ops built inside (execution is on the CPU)."""
    if _ctx_shared.all_eager or _ctx_state.eager:
        return _noop_scope()
    return get_default_graph().device(device_name)


def colocate_with(op, ignore_existing=False):
    """`with ops.colocate_with(t):` places ops built inside with `t`'s op (recorded, graph mode)."""
    if _ctx_shared.all_eager or _ctx_state.eager:
        return _noop_scope()
    return get_default_graph().colocate_with(op, ignore_existing)


def control_dependencies(control_inputs):
    """`with ops.control_dependencies([a, b]):` ops built inside run after a and b (graph mode).

    Eagerly, ops already ran in program order, so this is a no-op.
    """
    if _ctx_shared.all_eager or _ctx_state.eager:
        return _noop_scope()
    return get_default_graph().control_dependencies(control_inputs)


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names, value):
    get_default_graph().add_to_collections(names, value)


def get_collection(name, scope=None):
    return get_default_graph().get_collection(name, scope)


def get_collection_ref(name):
    return get_default_graph().get_collection_ref(name)


# ----------------------------------------------------------------------------------------------
# Default session stack (the Session class lives in segflow.client.session)

def get_default_session():
    """The innermost session the calling thread made default (`with sess.as_default():`), or None."""
    stack = _scope_state.sessions
    return stack[-1] if stack else None


# ----------------------------------------------------------------------------------------------
# Conversion

_conversion_functions = []   # (type, fn(value, dtype, name, as_ref)) registered by other modules


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    """Lets objects of `base_type` (e.g. Variable) convert to tensors: fn(value, dtype, name, as_ref)."""
    _conversion_functions.append((priority, base_type, conversion_func))
    _conversion_functions.sort(key=lambda e: e[0])


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, dtype_hint=None, as_ref=False):
    """A Tensor for `value`: a Tensor (checked against `dtype`), an IndexedSlices (densified, with a
    warning when large), a NumPy array, a Python scalar or nested list, or a registered type.

    In graph mode the result is a node of the default graph (a Const for plain values).
    """
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype != dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtype.name} for Tensor with dtype "
                             f"{value.dtype.name}: {value!r}")
        if isinstance(value, EagerTensor) and not (_ctx_shared.all_eager or _ctx_state.eager):
            from segflow.framework import constant_op
            return constant_op.constant(value.numpy(), name=name)
        return value
    if isinstance(value, IndexedSlices):
        t = _indexed_slices_to_tensor(value, dtype, name)
        if dtype is not None and t.dtype != dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtype.name} for IndexedSlices with dtype "
                             f"{t.dtype.name}")
        return t
    for _, base_type, fn in _conversion_functions:
        if isinstance(value, base_type):
            result = fn(value, dtype=dtype, name=name, as_ref=as_ref)
            if result is not NotImplemented:
                return result
    from segflow.framework import constant_op
    hint = preferred_dtype or dtype_hint
    if dtype is None and hint is not None:
        try:
            return constant_op.constant(value, dtype=hint, name=name, _strict=True)
        except (TypeError, ValueError):
            pass
    return constant_op.constant(value, dtype=dtype, name=name, _strict=True)


def convert_n_to_tensor(values, dtype=None, name=None, preferred_dtype=None):
    return [convert_to_tensor(v, dtype=dtype, preferred_dtype=preferred_dtype,
                              name=None if name is None else f"{name}_{i}") for i, v in enumerate(values)]


def convert_to_tensor_or_indexed_slices(value, dtype=None, name=None):
    if isinstance(value, IndexedSlices):
        if dtype is not None and value.dtype != dtypes.as_dtype(dtype):
            raise ValueError(f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for "
                             f"IndexedSlices with dtype {value.dtype.name}")
        return value
    return convert_to_tensor(value, dtype=dtype, name=name)


internal_convert_to_tensor = convert_to_tensor
internal_convert_n_to_tensor = convert_n_to_tensor

"""`ResourceVariable` (`sf.Variable`): a variable's handle, its reads and updates as methods, its
initializer, and its conversion to a tensor. The ops it runs are in variable_ops.py."""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence
import contextlib
import itertools

import numpy as np

from segflow._core import mode as context, tape as tape_lib
from segflow._core import dtypes, html, shapes as tensor_shape
from segflow._core.convert import convert_to_tensor, register_tensor_conversion_function
from segflow._core.graph import GraphKeys, control_dependencies, get_default_graph
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.mode import get_default_session
from segflow._core.operation import eager_record
from segflow._core.registry import lookup_op, NotDifferentiable
from segflow._core.tensor import Tensor, TensorOperators, _Reference
from segflow._core.apply import apply_op
from segflow._core.registry import TensorSpec, register_op
from segflow._ops.variable_ops import (
    EagerHandle, Resource, SCATTER_OPS, apply_no_output, assign_variable_op, check_handle,
    read_variable_op, resource_gather, resource_of, var_is_initialized_op
)
from segflow._ops import constant as constant_op
from segflow._ops import gather as gather_ops
from segflow._core.typing import DTypeLike, Name, ShapeLike, TensorLike

__all__ = ["ResourceVariable", "is_resource_variable"]

_created = itertools.count()   # creation order of variables (GradientTape.watched_variables sorts by it)


# ----------------------------------------------------------------------------------------------
# ResourceVariable




def _initial_tensor(value, dtype, name=None):
    """The initial value as a tensor; plain values (lists, NumPy arrays) are cast to `dtype`."""
    if dtype is None or isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        return convert_to_tensor(value, dtype=dtype, name=name)
    return constant_op.constant(value, dtype=dtype, name=name or "Const")


class ResourceVariable(TensorOperators):
    """A mutable tensor living across steps (TF's `tf.Variable`, resource flavour).

        v = sf.Variable([1.0, 2.0], name="v")
        v.assign_add([1.0, 1.0])
        v.sparse_read([1])                # rows only; gradient is an IndexedSlices

    Args:
      initial_value: a value, a tensor, or a callable returning one.
      trainable: whether tapes watch it automatically and it joins TRAINABLE_VARIABLES.
      name: the handle's name ("v" -> `v.name == "v:0"`); made unique in a graph.
      dtype: converts the initial value to this dtype.
      shape: the variable's static shape (default: the initial value's).
      collections: graph collections to join (default [GLOBAL_VARIABLES]).
      validate_shape: if False the static shape is unknown and assign may change the shape.
    Graph mode: the value lives in each Session and must be initialized (`v.initializer` or
    `global_variables_initializer()`) before it is read. Eagerly it is initialized at once.
    """

    __array_priority__ = 100

    def __init__(self, initial_value: Any = None, trainable: Optional[bool] = None, name: Name = None,
                 dtype: Optional[DTypeLike] = None, shape: Optional[ShapeLike] = None,
                 collections: Optional[Sequence[str]] = None, validate_shape: bool = True,
                 use_resource: Optional[bool] = None, initializer: Any = None, caching_device: Any = None,
                 constraint: Optional[Callable[..., Any]] = None, synchronization: Any = None, aggregation: Any = None,
                 expected_shape: Optional[ShapeLike] = None, import_scope: Optional[str] = None,
                 variable_def: Any = None, distribute_strategy: Any = None) -> None:
        if variable_def is not None:
            raise NotImplementedError("creating a variable from a variable_def is not supported")
        if initial_value is None:
            initial_value = initializer
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if constraint is not None and not callable(constraint):
            raise ValueError(f"The `constraint` argument must be a callable, got {constraint!r}")
        self._trainable = True if trainable is None else bool(trainable)
        self._constraint = constraint
        self._validate_shape = validate_shape
        self._parent_op = None
        self._creation_order = next(_created)
        dtype = None if dtype is None else dtypes.as_dtype(dtype)
        if context.executing_eagerly():
            self._init_eager(initial_value, name, dtype, shape, validate_shape)
        elif getattr(get_default_graph(), "lift_variable_initial_value", None) is not None:
            # created while an sf.function traces: the variable is made once, eagerly or in the
            # outermost graph (TF's init_scope), and the function captures it
            graph = get_default_graph()
            value = graph.lift_variable_initial_value(initial_value)
            outer = graph.variable_graph()
            if outer is None:
                with context.eager_mode():
                    self._init_eager(value, name, dtype, shape, validate_shape)
            else:                    # TF1 graph mode: a variable of the outermost graph
                with outer.as_default():
                    self._init_graph(value, name, dtype, shape, validate_shape, collections)
            graph.created_variables.append(self)
        else:
            self._init_graph(initial_value, name, dtype, shape, validate_shape, collections)

    # -- construction
    def _init_eager(self, initial_value, name, dtype, shape, validate_shape):
        self._in_graph = False
        self._graph = None
        base = name if name else "Variable"
        if base.endswith(":0"):
            base = base[:-2]
        # As in TF eagerly: the name takes the current name scope's prefix ("a/v:0" inside
        # `name_scope("a")`) and is not made unique (two variables may both be "v:0").
        base = context._scope_state.eager_names[-1] + base
        raw = initial_value() if callable(initial_value) else initial_value
        value = _initial_tensor(raw, dtype)
        self._dtype = value.dtype.base_dtype
        arr = value.numpy()
        # The variable owns its array: a tensor made here from a plain value is private (no second
        # copy of a large table); a tensor or array the caller still holds is copied.
        if isinstance(raw, Tensor) or hasattr(raw, "_as_graph_element") or not arr.flags.writeable \
                or not arr.flags.c_contiguous or (isinstance(raw, np.ndarray) and np.shares_memory(arr, raw)):
            arr = np.array(arr, copy=True, order="C")
        self._shape = self._static_shape(arr.shape, shape, validate_shape)
        self._resource = Resource(base, self._dtype.as_numpy_dtype)
        self._resource.set(arr, owned=True)
        self._handle = EagerHandle(self._resource)
        self._shared_name = base
        self._initial_value = None      # not kept eagerly (as TF): it could alias the value
        self._initializer_op = None
        self._graph_element = None

    def _static_shape(self, value_shape, shape, validate_shape):
        if shape is not None:
            s = tensor_shape.as_shape(shape)
            if validate_shape and not s.is_compatible_with(value_shape):
                raise ValueError(f"The initial value's shape ({tensor_shape.TensorShape(value_shape)}) is not "
                                 f"compatible with the explicitly supplied `shape` argument ({s}).")
            return s
        if not validate_shape:
            return tensor_shape.unknown_shape()
        return tensor_shape.as_shape(value_shape)

    def _init_graph(self, initial_value, name, dtype, shape, validate_shape, collections):
        graph = get_default_graph()
        self._in_graph = True
        self._graph = graph
        base = name if name else "Variable"
        if base.endswith(":0"):
            base = base[:-2]
        handle_name = graph.unique_name(base, mark_as_used=False)
        self._resource = None
        with graph.control_dependencies(None), graph.name_scope(handle_name + "/"):
            with graph.name_scope("Initializer"):
                value = initial_value() if callable(initial_value) else initial_value
                if hasattr(value, "_graph_element") and hasattr(value, "initialized_value"):
                    value = value.initialized_value()
                value = _initial_tensor(value, dtype, name="initial_value")
            self._dtype = value.dtype.base_dtype
            self._shape = self._static_shape(value.shape, shape, validate_shape)
            with graph.name_scope(""):
                self._handle = apply_op("VarHandleOp", name=handle_name, shared_name=handle_name,
                                        dtype=self._dtype, shape=self._shape)
            self._shared_name = self._handle.op.name
            self._initial_value = value
            self._initializer_op = assign_variable_op(self._handle, value, name="Assign",
                                                      validate_shape=validate_shape, copy=True)
            with graph.name_scope("Read"):
                self._graph_element = read_variable_op(self._handle, self._dtype)
        if collections is None:
            collections = [GraphKeys.GLOBAL_VARIABLES]
        collections = list(collections)
        if self._trainable and GraphKeys.TRAINABLE_VARIABLES not in collections:
            collections.append(GraphKeys.TRAINABLE_VARIABLES)
        graph.add_to_collections(collections, self)

    # -- identity
    @property
    def handle(self):
        return self._handle

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        if not self._in_graph and not self._shape.is_fully_defined() and self._resource.value is not None:
            return tensor_shape.TensorShape(self._resource.value.shape)
        return self._shape

    def get_shape(self):
        return self.shape

    @property
    def name(self):
        return self._shared_name + ":0"

    @property
    def _unique_id(self):
        return self._shared_name

    @property
    def op(self):
        if self._in_graph:
            return self._parent_op if self._parent_op is not None else self._handle.op
        return eager_record(lookup_op("VarHandleOp"), [], [self._handle],
                            {"shared_name": self._shared_name, "dtype": self.dtype, "shape": self.shape},
                            name=self._shared_name)

    @property
    def graph(self):
        return self._graph

    @property
    def device(self):
        return self._handle.device

    @property
    def initializer(self):
        return self._initializer_op

    @property
    def initial_value(self):
        if not self._in_graph:
            raise RuntimeError("This property is not supported when eager execution is enabled.")
        return self._initial_value

    @property
    def trainable(self):
        return self._trainable

    @property
    def constraint(self):
        return self._constraint

    @property
    def create(self):
        return self._initializer_op

    def ref(self):
        return _Reference(self)

    experimental_ref = ref

    def _gradient_source(self):
        if not self._in_graph and not context.executing_eagerly():
            capture = getattr(get_default_graph(), "capture", None)
            if capture is not None:     # an eager variable used inside a traced function
                return capture(self._handle)
        return self._handle

    def _as_graph_element(self):
        return self._graph_element if self._in_graph else None

    def __repr__(self):
        if self._in_graph:
            return f"<sf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"
        with self._resource.lock:       # the text is made now: no need to mark the array shared
            text = repr(self._resource.peek())
        return f"<sf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}, numpy={text}>"

    def _repr_html_(self):
        fields = [("name", self.name), ("shape", self.shape), ("dtype", self.dtype.name)]
        if self._in_graph or self._resource.value is None:
            return html.card("sf.Variable", fields)
        with self._resource.lock:
            return html.card("sf.Variable", fields, html.values_table(self._resource.peek()))

    # -- reads
    def _ctrl(self):
        """Ops built on this variable run after the update that produced it (a lazy read)."""
        if self._parent_op is not None:     # a graph variable's update, or an update being traced
            return control_dependencies([self._parent_op])
        return contextlib.nullcontext()

    def _note_traced(self):
        """Read or updated while an sf.function traces: the function remembers the variable."""
        note = getattr(get_default_graph(), "note_variable", None)
        if note is not None:
            note(self)

    def value(self) -> Tensor:
        """The current value as a tensor (a new read, watched by recording tapes if trainable)."""
        if not self._in_graph:
            if not context.executing_eagerly():
                self._note_traced()
            if tape_lib._active.any:     # some thread has a tape (variable_accessed finds this one's)
                tape_lib.variable_accessed(self)
            with self._ctrl():
                return apply_op("ReadVariableOp", self._handle, dtype=self._dtype)
        if tape_lib._active.any:         # a tape inside a graph watches the variables it reads
            tape_lib.variable_accessed(self)
        with self._ctrl():
            return read_variable_op(self._handle, self._dtype)

    def read_value(self) -> Tensor:
        return self.value()

    def _read_variable_op(self):
        return self.value()

    def sparse_read(self, indices: TensorLike, name: Name = None) -> Tensor:
        """Rows `indices` of the variable without reading the rest; its gradient for the variable is
        an IndexedSlices(grad, indices, variable shape)."""
        if not self._in_graph:
            if not context.executing_eagerly():
                self._note_traced()
            if tape_lib._active.any:     # some thread has a tape (variable_accessed finds this one's)
                tape_lib.variable_accessed(self)
            with self._ctrl():
                return apply_op("ResourceGather", self._handle, indices, dtype=self._dtype, name=name)
        if tape_lib._active.any:
            tape_lib.variable_accessed(self)
        with self._ctrl():
            return resource_gather(self._handle, indices, self._dtype, name=name)

    def gather_nd(self, indices: TensorLike, name: Name = None) -> Tensor:
        return gather_ops.gather_nd(self.value(), indices, name=name)

    def numpy(self) -> Any:
        if self._in_graph:
            raise NotImplementedError("numpy() is only available for eager variables; use eval() or sess.run()")
        with self._resource.lock:
            return self._resource.read()

    def eval(self, session=None):
        if not self._in_graph:
            return self.numpy()
        session = session or get_default_session()
        if session is None:
            raise ValueError("Cannot evaluate variable using `eval()`: no default session is registered. "
                             "Use `with sess.as_default()` or pass an explicit session to `eval(session=sess)`")
        return session.run(self._as_graph_element())

    def initialized_value(self):
        return self.value() if not self._in_graph else _with_init(self)

    def is_initialized(self, name=None):
        if not self._in_graph:
            return convert_to_tensor(True)
        return var_is_initialized_op(self._handle, name=name)

    def load(self, value, session=None):
        if not self._in_graph:
            self.assign(value)
            return
        session = session or get_default_session()
        session.run(self._initializer_op, {self._initial_value: value})

    def __array__(self, dtype=None, copy=None):
        value = np.asarray(self.numpy())
        return value if dtype is None else value.astype(dtype, copy=False)

    def __len__(self):
        return len(self.value())

    def __iter__(self):
        return iter(self.value())

    def __bool__(self):
        return bool(self.value())

    def __float__(self):
        return float(self.value())

    def __int__(self):
        return int(self.value())

    def __index__(self):
        return self.value().__index__()

    def __format__(self, spec):
        return format(self.value(), spec)

    def __getitem__(self, slice_spec):
        return self.value()[slice_spec]

    # -- updates
    def _lazy_read(self, op):
        """Eagerly the variable itself; in a graph (or an sf.function being traced), a variable whose
        reads run after `op`."""
        if not self._in_graph:
            return self if op is None else _TracedUnreadVariable(self, op)
        return _UnreadVariable(self, op)

    def _updated(self, op, read_value):
        if read_value:
            return self._lazy_read(op)
        return op

    def assign(self, value: TensorLike, use_locking: bool = False, name: Name = None, read_value: bool = True) -> Any:
        with self._ctrl():
            value = _as_value_dtype(value, self._dtype)
            op = apply_no_output("AssignVariableOp", self._handle, value, name=name, dtype_position=1,
                                  dtype=self._dtype, validate_shape=self._validate_shape)
        return self._updated(op, read_value)

    def assign_add(self, delta: TensorLike, use_locking: bool = False, name: Name = None,
                   read_value: bool = True) -> Any:
        with self._ctrl():
            delta = _as_value_dtype(delta, self._dtype)
            op = apply_no_output("AssignAddVariableOp", self._handle, delta, name=name, dtype_position=1,
                                  dtype=self._dtype)
        return self._updated(op, read_value)

    def assign_sub(self, delta: TensorLike, use_locking: bool = False, name: Name = None,
                   read_value: bool = True) -> Any:
        with self._ctrl():
            delta = _as_value_dtype(delta, self._dtype)
            op = apply_no_output("AssignSubVariableOp", self._handle, delta, name=name, dtype_position=1,
                                  dtype=self._dtype)
        return self._updated(op, read_value)

    def _scatter(self, key, sparse_delta, use_locking=False, name=None):
        if not isinstance(sparse_delta, IndexedSlices):
            raise TypeError(f"sparse_delta is not IndexedSlices: {sparse_delta!r}")
        return self._scatter_op(key, sparse_delta.indices, sparse_delta.values, name)

    def _scatter_op(self, key, indices, updates, name):
        updates = _as_value_dtype(updates, self._dtype)
        with self._ctrl():
            op = apply_no_output(SCATTER_OPS[key], self._handle, indices, updates, name=name, dtype_position=2,
                                  dtype=self._dtype)
        return self._lazy_read(op)

    def scatter_update(self, sparse_delta: IndexedSlices, use_locking: bool = False, name: Name = None) -> Any:
        return self._scatter("update", sparse_delta, use_locking, name)

    def scatter_add(self, sparse_delta: IndexedSlices, use_locking: bool = False, name: Name = None) -> Any:
        return self._scatter("add", sparse_delta, use_locking, name)

    def scatter_sub(self, sparse_delta: IndexedSlices, use_locking: bool = False, name: Name = None) -> Any:
        return self._scatter("sub", sparse_delta, use_locking, name)

    def scatter_mul(self, sparse_delta: IndexedSlices, use_locking: bool = False, name: Name = None) -> Any:
        return self._scatter("mul", sparse_delta, use_locking, name)

    def scatter_div(self, sparse_delta: IndexedSlices, use_locking: bool = False, name: Name = None) -> Any:
        return self._scatter("div", sparse_delta, use_locking, name)

    def scatter_min(self, sparse_delta: IndexedSlices, use_locking: bool = False, name: Name = None) -> Any:
        return self._scatter("min", sparse_delta, use_locking, name)

    def scatter_max(self, sparse_delta: IndexedSlices, use_locking: bool = False, name: Name = None) -> Any:
        return self._scatter("max", sparse_delta, use_locking, name)

    def batch_scatter_update(self, sparse_delta: IndexedSlices, use_locking: bool = False, name: Name = None) -> Any:
        return self._scatter("update", sparse_delta, use_locking, name)

    def scatter_nd_update(self, indices: TensorLike, updates: TensorLike, name: Name = None) -> Any:
        return self._scatter_op("nd_update", indices, updates, name)

    def scatter_nd_add(self, indices: TensorLike, updates: TensorLike, name: Name = None) -> Any:
        return self._scatter_op("nd_add", indices, updates, name)

    def scatter_nd_sub(self, indices: TensorLike, updates: TensorLike, name: Name = None) -> Any:
        return self._scatter_op("nd_sub", indices, updates, name)

    def count_up_to(self, limit):
        raise NotImplementedError("count_up_to is not supported")


def _as_value_dtype(updates, dtype):
    """NumPy values in the variable's dtype, as TF converts assigned and scattered values with the
    variable's dtype: an int64 array into an int32 variable, a float64 one into float32 (integers must fit).
    Tensors are left as they are (a wrong dtype is the op's error)."""
    if not isinstance(updates, (np.ndarray, np.generic)) or updates.dtype == dtype.np:
        return updates
    kind, want = updates.dtype.kind, dtype.np.kind
    if kind in "iu" and want in "iu":
        info = np.iinfo(dtype.np)
        if updates.size and (updates.min() < info.min or updates.max() > info.max):
            return updates                      # out of range: left for the op to refuse
        return updates.astype(dtype.np)
    if kind == "f" and (want == "f" or dtype.name == "bfloat16"):
        return updates.astype(dtype.np)
    return updates


def _infer_read_or_initial(op, resource, initial_value, dtype=None):
    check_handle(op, resource)
    return [TensorSpec(initial_value.dtype, initial_value.shape)]


def _read_or_initial_kernel(state, resource, initial_value, dtype=None):
    res = resource_of(resource)
    with res.lock:
        return initial_value if res.value is None else res.read()


register_op("ReadVariableOrInitialValue", inputs=("resource", "initial_value"), attrs={"dtype": "initial_value"},
            infer=_infer_read_or_initial, kernel=_read_or_initial_kernel, stateful=True)
NotDifferentiable("ReadVariableOrInitialValue")


def _with_init(var):
    """The variable's value if it is initialized, else its initial value, without initializing it
    (TF's initialized_value: cond(is_initialized, read, initial_value))."""
    with control_dependencies(None):
        return apply_op("ReadVariableOrInitialValue", var.handle, var.initial_value)


class _UnreadVariable(ResourceVariable):
    """The result of an update in graph mode: the same variable, whose reads (and further updates)
    run after the update op. `op` is the update, so `group(result)` or `sess.run(result.op)` runs it
    and `sess.run(result)` runs it and returns the value."""

    def __init__(self, parent, op):  # noqa: super().__init__ is deliberately not called
        self.__dict__.update(parent.__dict__)
        self._parent_op = op
        self._graph_element = None

    def _as_graph_element(self):
        if self._graph_element is None:
            # Built in the variable's graph whatever is current now: `Session(graph=g).run(result)`
            # outside `with g.as_default():` would otherwise build the read eagerly (and fail).
            with self._graph.as_default():
                self._graph_element = self.value()
        return self._graph_element

    def __repr__(self):
        return f"<sf.Variable '{self.name}' (after {self._parent_op.name}) shape={self.shape} dtype={self.dtype.name}>"


class _TracedUnreadVariable(ResourceVariable):
    """The result of updating an eager variable while an sf.function traces: the same variable,
    whose reads (and further updates) run after the update; `control_dependencies([result])` and
    `group(result)` wait for it."""

    def __init__(self, parent, op):  # noqa: super().__init__ is deliberately not called
        self.__dict__.update(parent.__dict__)
        self._parent_op = op
        self._traced_parent = getattr(parent, "_traced_parent", parent)

    @property
    def op(self):
        return self._parent_op

    def _as_graph_element(self):
        return self.value()

    def _note_traced(self):
        self._traced_parent._note_traced()


def _dense_var_to_tensor(var, dtype=None, name=None, as_ref=False):
    if dtype is not None and dtypes.as_dtype(dtype).base_dtype != var.dtype:
        raise ValueError(f"Incompatible type conversion requested to type '{dtypes.as_dtype(dtype).name}' for "
                         f"variable of type '{var.dtype.name}' ({var.name})")
    return var.value()


register_tensor_conversion_function(ResourceVariable, _dense_var_to_tensor)


def _delegate(name):
    def method(self, *args):
        return getattr(Tensor, name)(self.value(), *args)
    method.__name__ = name
    return method


for _op_name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
                 "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__", "__rpow__",
                 "__matmul__", "__rmatmul__", "__neg__", "__abs__", "__invert__", "__lt__", "__le__", "__gt__",
                 "__ge__", "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__"):
    setattr(ResourceVariable, _op_name, _delegate(_op_name))


def is_resource_variable(var):
    return isinstance(var, ResourceVariable)



"""Resource variables: the ops on a variable's handle and the `ResourceVariable` class.

A variable is a handle (dtype `resource`) to a `_Resource` that holds its value. In graph mode the
handle is the output of a stateful `VarHandleOp` whose kernel finds (or creates) the `_Resource` of
the variable's shared name in the Session's resources, so each Session holds its own values; eagerly
the handle is an `_EagerHandle` (an EagerTensor of dtype resource) owning its `_Resource`.

Reads (`ReadVariableOp`) hand out the resource's array without copying it and mark it shared;
in-place updates (assign_add, scatter ops) copy it first only when it is shared (copy-on-write), so
a value read earlier never changes. `ResourceGather` (sparse_read) and the scatter ops touch only
the rows named, never the whole table. Indices are validated before anything is written, so a bad
index leaves the variable unchanged.

Every kernel that reads or writes a variable's array holds the resource's lock (`_locked`), so
updates from several threads (or several Sessions' threads) never interleave and a read never sees
a half-written row: TF documents its scatter updates as atomic, and so are these. Kernels touching
several variables (the fused optimizer steps) take their locks in one global order (by id).
"""
import contextlib
import math
import threading

import numpy as np

from segflow._core import mode as context, tape as tape_lib
from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.convert import convert_to_tensor, register_tensor_conversion_function
from segflow._core.graph import GraphKeys, control_dependencies, get_default_graph
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.mode import get_default_session
from segflow._core.registry import NotDifferentiable, RegisterGradient
from segflow._core.tensor import EagerTensor, Tensor, _Reference
from segflow._core.apply import apply_op
from segflow._core.registry import TensorSpec, register_op
from segflow.kernels import BadInput, gather, ids, scatter
from segflow._ops import join as join_ops
from segflow._ops import shape as so
from segflow._ops import constant as constant_op
from segflow._ops import gather as gather_ops

__all__ = ["ResourceVariable", "read_variable_op", "assign_variable_op", "assign_add_variable_op",
           "assign_sub_variable_op", "resource_gather", "variable_shape", "var_is_initialized_op",
           "resource_scatter_update", "resource_scatter_add", "resource_scatter_sub", "resource_scatter_mul",
           "resource_scatter_div", "resource_scatter_min", "resource_scatter_max",
           "resource_scatter_nd_update", "resource_scatter_nd_add", "resource_scatter_nd_sub",
           "is_resource_variable"]



# ----------------------------------------------------------------------------------------------
# The resource


class _Resource:
    """The state of one variable: its array, and whether that array was handed out (shared)."""

    __slots__ = ("name", "dtype", "value", "shared", "lock", "__weakref__")

    def __init__(self, name, dtype):
        self.name = name
        self.dtype = np.dtype(dtype) if dtype is not None else None
        self.value = None
        self.shared = False
        self.lock = threading.Lock()    # held by every kernel that reads or writes `value`

    def read(self):
        """The current array, marked shared (an in-place update will copy it first)."""
        value = self.value
        if value is None:
            raise errors.FailedPreconditionError(
                None, None, f"Attempting to use uninitialized value {self.name} (variable '{self.name}' is "
                            "uninitialized; run its initializer or global_variables_initializer() first)")
        self.shared = True
        return value

    def peek(self):
        """The current array without marking it (for kernels that only look at some rows)."""
        if self.value is None:
            self.read()
        return self.value

    def writable(self):
        """The current array, safe to update in place."""
        value = self.peek()
        if self.shared:
            value = self.value = value.copy()
            self.shared = False
        return value

    def set(self, value, owned):
        self.value = value
        self.shared = not owned

    def __repr__(self):
        state = "uninitialized" if self.value is None else f"shape={self.value.shape}"
        return f"<_Resource '{self.name}' {state}>"


@contextlib.contextmanager
def _locked(*resources):
    """Holds the locks of `resources` (each once, in a fixed global order: no deadlock)."""
    unique = sorted({id(r): r for r in resources}.values(), key=id)
    for r in unique:
        r.lock.acquire()
    try:
        yield
    finally:
        for r in reversed(unique):
            r.lock.release()


def _res(handle):
    """The _Resource behind a handle value (graph: the object; eager: a 0-d object array)."""
    if isinstance(handle, np.ndarray):
        handle = handle.item()
    if not isinstance(handle, _Resource):
        raise BadInput("resource", f"is not a variable handle: {type(handle).__name__}")
    return handle


class _EagerHandle(EagerTensor):
    """The handle of an eager variable: an EagerTensor of dtype resource holding its _Resource."""

    __slots__ = ()

    def __init__(self, resource):
        value = np.empty((), dtype=object)
        value[()] = resource
        self._value = value
        self._op = None

    @property
    def dtype(self):
        return dtypes.resource

    @property
    def shape(self):
        return tensor_shape.TensorShape([])

    def numpy(self):
        return self._value

    def __repr__(self):
        return f"<sf.Tensor: shape=(), dtype=resource, value=<handle to {self._value.item().name}>>"

    __str__ = __repr__


# ----------------------------------------------------------------------------------------------
# Inference helpers: a graph handle made by VarHandleOp carries the variable's dtype and shape.


def _handle_attr(resource, name):
    op = getattr(resource, "_op", None)
    if op is not None and op.type == "VarHandleOp":
        return op.get_attr(name)
    return None


def _check_handle(op, resource):
    if resource.dtype != dtypes.resource:
        raise errors.invalid_input(op, "resource", f"must be a variable handle (dtype resource), not "
                                   f"{resource.dtype.name}; pass a Variable")


def _check_value_dtype(op, resource, value, input_name="value"):
    want = _handle_attr(resource, "dtype")
    if want is not None and value.dtype != want:
        raise errors.invalid_input(op, input_name, f"has dtype {value.dtype.name} but the variable has dtype "
                                   f"{dtypes.as_dtype(want).name}")


def _handle_shape(resource):
    shape = _handle_attr(resource, "shape")
    return tensor_shape.unknown_shape() if shape is None else tensor_shape.as_shape(shape)


def _check_kernel_dtype(res, value, input_name="value"):
    if res.dtype is not None and value.dtype != res.dtype:
        raise BadInput(input_name, f"has dtype {dtypes.from_numpy(value.dtype).name} but the variable "
                                   f"'{res.name}' has dtype {dtypes.from_numpy(res.dtype).name}")


# ----------------------------------------------------------------------------------------------
# VarHandleOp, ReadVariableOp, VariableShape, VarIsInitializedOp


def _infer_var_handle(op, shared_name, dtype, shape, container=""):
    return [TensorSpec(dtypes.resource, ())]


def _var_handle_kernel(state, shared_name, dtype, shape, container=""):
    res = state.resources.get(shared_name)
    if res is None:     # setdefault: two threads creating it at once get the same resource
        res = state.resources.setdefault(shared_name, _Resource(shared_name, dtypes.as_dtype(dtype).as_numpy_dtype))
    return res


register_op("VarHandleOp", inputs=(), infer=_infer_var_handle, kernel=_var_handle_kernel, stateful=True,
            defaults={"shared_name": None, "dtype": None, "shape": None, "container": ""})


def _infer_read(op, resource, dtype):
    _check_handle(op, resource)
    return [TensorSpec(dtype, _handle_shape(resource))]


def _read_kernel(state, resource, dtype):
    res = _res(resource)
    with res.lock:
        return res.read()


register_op("ReadVariableOp", inputs=("resource",), infer=_infer_read, kernel=_read_kernel, stateful=True,
            defaults={"dtype": None})


def read_variable_op(resource, dtype, name=None):
    """The value of the variable behind `resource` (no copy; later updates do not change it)."""
    return apply_op("ReadVariableOp", resource, dtype=dtypes.as_dtype(dtype), name=name)


def _infer_variable_shape(op, input, out_type=dtypes.int32):
    _check_handle(op, input)
    rank = _handle_shape(input).rank
    return [TensorSpec(out_type, (rank,))]


register_op("VariableShape", inputs=("input",), infer=_infer_variable_shape, stateful=True,
            kernel=lambda state, input, out_type=dtypes.int32: np.array(
                _res(input).peek().shape, dtype=dtypes.as_dtype(out_type).as_numpy_dtype),
            defaults={"out_type": dtypes.int32})


def variable_shape(input, out_type=dtypes.int32, name=None):
    """The shape of the variable behind handle `input`, without reading its value."""
    return apply_op("VariableShape", input, out_type=dtypes.as_dtype(out_type), name=name)


register_op("VarIsInitializedOp", inputs=("resource",),
            infer=lambda op, resource: [TensorSpec(dtypes.bool, ())], stateful=True,
            kernel=lambda state, resource: np.array(_res(resource).value is not None))


def var_is_initialized_op(resource, name=None):
    return apply_op("VarIsInitializedOp", resource, name=name)


# ----------------------------------------------------------------------------------------------
# Assignments (no outputs: the public functions return the variable or a lazy read of it)


def _infer_assign(op, resource, value, **attrs):
    _check_handle(op, resource)
    _check_value_dtype(op, resource, value)
    shape = _handle_shape(resource)
    if op.type != "AssignVariableOp":   # add/sub: the value may broadcast to the variable's shape
        try:
            ok = tensor_shape.broadcast_shape(shape, value.shape).is_compatible_with(shape)
        except ValueError:
            ok = False
    else:
        ok = not attrs.get("validate_shape", True) or shape.is_compatible_with(value.shape)
    if not ok:
        raise errors.invalid_input(op, "value", f"shape {value.shape} does not match the variable's shape {shape}")
    return []


def _assign_kernel(state, resource, value, validate_shape=True, copy=False):
    res = _res(resource)
    _check_kernel_dtype(res, value)
    if copy:    # initializers: pay for the copy now (outside the lock), not in the first training step
        value = np.array(value, copy=True)
    with res.lock:
        if validate_shape and res.value is not None and res.value.shape != value.shape:
            raise BadInput("value", f"shape {value.shape} does not match the shape {res.value.shape} of variable "
                                    f"'{res.name}'")
        # without copy, the value may be a graph constant or a tensor the caller holds: copy on first write
        res.set(value, owned=copy)
    return ()


def _update_kernel(ufunc):
    def kernel(state, resource, value):
        res = _res(resource)
        _check_kernel_dtype(res, value)
        with res.lock:
            current = res.peek()
            try:
                ok = np.broadcast_shapes(current.shape, value.shape) == current.shape
            except ValueError:
                ok = False
            if not ok:
                raise BadInput("value", f"shape {value.shape} does not match the shape {current.shape} of "
                                        f"variable '{res.name}'")
            if res.shared:   # someone holds the current array: write a new one instead of copying it
                res.set(ufunc(current, value), owned=True)
            else:
                ufunc(current, value, out=current)
        return ()
    return kernel


for _name, _kernel in (("AssignVariableOp", _assign_kernel),
                       ("AssignAddVariableOp", _update_kernel(np.add)),
                       ("AssignSubVariableOp", _update_kernel(np.subtract))):
    register_op(_name, inputs=("resource", "value"), attrs={"dtype": "value"}, infer=_infer_assign,
                kernel=_kernel, stateful=True, num_outputs=0,
                defaults={"validate_shape": True, "copy": False} if _name == "AssignVariableOp" else None)


def _last_op():
    graph = get_default_graph()
    return graph._ops[-1]


def _apply_no_output(op_type, *inputs, name=None, dtype_position=None, dtype=None, **attrs):
    """Runs an op without outputs; returns its Operation in graph mode, None eagerly."""
    hints = {dtype_position: dtypes.as_dtype(dtype)} if dtype is not None and dtype_position is not None else None
    if hints:
        attrs["_dtype_hints"] = hints
    apply_op(op_type, *inputs, name=name, **attrs)
    return None if context._state.eager else _last_op()


def assign_variable_op(resource, value, name=None, validate_shape=True, copy=False):
    return _apply_no_output("AssignVariableOp", resource, value, name=name, validate_shape=validate_shape,
                            copy=copy)


def assign_add_variable_op(resource, value, name=None):
    return _apply_no_output("AssignAddVariableOp", resource, value, name=name)


def assign_sub_variable_op(resource, value, name=None):
    return _apply_no_output("AssignSubVariableOp", resource, value, name=name)


# ----------------------------------------------------------------------------------------------
# ResourceGather: rows of the table, without reading (or copying) all of it


def _infer_resource_gather(op, resource, indices, dtype, batch_dims=0, validate_indices=True):
    _check_handle(op, resource)
    if indices.dtype not in dtypes.INDEX:
        raise errors.invalid_input(op, "indices", f"must be int32 or int64, not {indices.dtype.name}")
    shape = _handle_shape(resource)
    if shape.rank is None or indices.shape.rank is None:
        return [TensorSpec(dtype, tensor_shape.unknown_shape())]
    if shape.rank == 0:
        raise errors.invalid_input(op, "resource", "cannot gather from a scalar variable")
    return [TensorSpec(dtype, indices.shape.as_list() + shape.as_list()[1:])]


def _resource_gather_kernel(state, resource, indices, dtype, batch_dims=0, validate_indices=True):
    res = _res(resource)
    ids.check_index_dtype(indices)
    with res.lock:
        table = res.peek()
        if table.ndim == 0:
            raise BadInput("resource", f"cannot gather from scalar variable '{res.name}'")
        rows = ids.checked_rows(indices, table.shape[0])
        # a new array of the gathered rows only (whole rows copied by parallel threads when large)
        return gather.take_rows(table, rows).reshape(indices.shape + table.shape[1:])


register_op("ResourceGather", inputs=("resource", "indices"), attrs={"Tindices": "indices"}, allowed={"Tindices": dtypes.INDEX},
            infer=_infer_resource_gather, kernel=_resource_gather_kernel, stateful=True,
            defaults={"dtype": None, "batch_dims": 0, "validate_indices": True})


def resource_gather(resource, indices, dtype, batch_dims=0, validate_indices=True, name=None):
    return apply_op("ResourceGather", resource, indices, dtype=dtypes.as_dtype(dtype), batch_dims=batch_dims,
                    validate_indices=validate_indices, name=name)


# ----------------------------------------------------------------------------------------------
# Scatter updates: validate everything, then write in place (copy-on-write)


def _infer_scatter(op, resource, indices, updates):
    _check_handle(op, resource)
    if indices.dtype not in dtypes.INDEX:
        raise errors.invalid_input(op, "indices", f"must be int32 or int64, not {indices.dtype.name}")
    _check_value_dtype(op, resource, updates, "updates")
    shape = _handle_shape(resource)
    if shape.rank == 0:
        raise errors.invalid_input(op, "resource", "cannot scatter into a scalar variable")
    if shape.rank is not None and indices.shape.rank is not None and updates.shape.rank not in (None, 0):
        want = tensor_shape.TensorShape(indices.shape.as_list() + shape.as_list()[1:])
        if not want.is_compatible_with(updates.shape):
            raise errors.invalid_input(op, "updates", f"shape {updates.shape} must be indices.shape + "
                                       f"variable.shape[1:] = {want}")
    return []


def _rows_and_updates(res, table, indices, updates):
    """Validated (flat int64 row ids, updates as one row per id)."""
    _check_kernel_dtype(res, updates, "updates")
    if table.ndim == 0:
        raise BadInput("resource", f"cannot scatter into scalar variable '{res.name}'")
    rows = ids.checked_rows(indices, table.shape[0])
    want = indices.shape + table.shape[1:]
    if updates.shape != want:
        if updates.ndim != 0:
            raise BadInput("updates", f"shape {updates.shape} must be indices.shape + variable.shape[1:] = {want}")
        updates = np.broadcast_to(updates, want)
    return rows, updates.reshape((indices.size,) + table.shape[1:])


def _scatter_into(table, rows, updates, how):
    """table[rows[i]] (how)= updates[i] in place, in index order (validated rows)."""
    if rows.size == 0:
        return
    if how == "div" and table.dtype.kind in "iu" and np.any(updates == 0):
        raise BadInput("updates", "integer division by zero")
    d = math.prod(table.shape[1:])
    scatter.scatter_rows(table.reshape(table.shape[0], d), rows, updates.reshape(rows.size, d), how)


def _scatter_kernel(how):
    def kernel(state, resource, indices, updates):
        res = _res(resource)
        with res.lock:
            rows, upd = _rows_and_updates(res, res.peek(), indices, updates)   # validate before writing
            _scatter_into(res.writable(), rows, upd, how)
        return ()
    return kernel


def _infer_scatter_nd(op, resource, indices, updates):
    _check_handle(op, resource)
    if indices.dtype not in dtypes.INDEX:
        raise errors.invalid_input(op, "indices", f"must be int32 or int64, not {indices.dtype.name}")
    _check_value_dtype(op, resource, updates, "updates")
    shape = _handle_shape(resource)
    if shape.rank is not None and indices.shape.rank is not None:
        depth = indices.shape.as_list()[-1] if indices.shape.rank else None
        if depth is not None and depth > shape.rank:
            raise errors.invalid_input(op, "indices", f"index depth {depth} exceeds the rank of the variable "
                                       f"{shape}")
        if depth is not None and updates.shape.rank is not None:
            want = tensor_shape.TensorShape(indices.shape.as_list()[:-1] + shape.as_list()[depth:])
            if not want.is_compatible_with(updates.shape):
                raise errors.invalid_input(op, "updates", f"shape {updates.shape} must be indices.shape[:-1] + "
                                           f"variable.shape[indices.shape[-1]:] = {want}")
    return []


def _scatter_nd_kernel(how):
    def kernel(state, resource, indices, updates):
        res = _res(resource)
        _check_kernel_dtype(res, updates, "updates")
        with res.lock:
            table = res.peek()
            rows, depth = ids.checked_nd_rows(table.shape, indices, what="variable of shape")
            want = indices.shape[:-1] + table.shape[depth:]
            if updates.shape != want:
                if updates.ndim != 0:
                    raise BadInput("updates", f"shape {updates.shape} must be indices.shape[:-1] + "
                                              f"variable.shape[indices.shape[-1]:] = {want}")
                updates = np.broadcast_to(updates, want)
            tail = table.shape[depth:]
            upd = updates.reshape((rows.size,) + tail)
            target = res.writable()
            # a view (the table is contiguous); the row count spelled out, as (-1,) + tail is
            # ambiguous for NumPy when tail holds a 0
            _scatter_into(target.reshape((math.prod(table.shape[:depth]),) + tail), rows, upd, how)
        return ()
    return kernel


_SCATTER_OPS = {}
for _how in ("update", "add", "sub", "mul", "div", "min", "max"):
    _name = "ResourceScatter" + _how.capitalize()
    register_op(_name, inputs=("resource", "indices", "updates"), attrs={"dtype": "updates", "Tindices": "indices"},
                allowed={"Tindices": dtypes.INDEX}, infer=_infer_scatter, kernel=_scatter_kernel(_how), stateful=True, num_outputs=0)
    _SCATTER_OPS[_how] = _name
for _how in ("update", "add", "sub"):
    _name = "ResourceScatterNd" + _how.capitalize()
    register_op(_name, inputs=("ref", "indices", "updates"), attrs={"T": "updates", "Tindices": "indices"},
                allowed={"Tindices": dtypes.INDEX}, infer=_infer_scatter_nd, kernel=_scatter_nd_kernel(_how), stateful=True, num_outputs=0)
    _SCATTER_OPS["nd_" + _how] = _name


def _scatter_fn(key):
    op_type = _SCATTER_OPS[key]

    def fn(resource, indices, updates, name=None, dtype=None):
        return _apply_no_output(op_type, resource, indices, updates, name=name, dtype_position=2, dtype=dtype)
    fn.__name__ = "resource_scatter_" + key
    fn.__doc__ = f"Runs {op_type} on a variable handle (no output; graph mode returns the Operation)."
    return fn


resource_scatter_update = _scatter_fn("update")
resource_scatter_add = _scatter_fn("add")
resource_scatter_sub = _scatter_fn("sub")
resource_scatter_mul = _scatter_fn("mul")
resource_scatter_div = _scatter_fn("div")
resource_scatter_min = _scatter_fn("min")
resource_scatter_max = _scatter_fn("max")
resource_scatter_nd_update = _scatter_fn("nd_update")
resource_scatter_nd_add = _scatter_fn("nd_add")
resource_scatter_nd_sub = _scatter_fn("nd_sub")


# ----------------------------------------------------------------------------------------------
# Gradients of reads (the handle is the variable's gradient source)


@RegisterGradient("ReadVariableOp")
def _read_grad(op, grad):
    return grad


@RegisterGradient("ResourceGather")
def _resource_gather_grad(op, grad):
    # Only the gathered rows get gradient: an IndexedSlices over the table's shape.
    handle, indices = op.inputs
    if isinstance(grad, IndexedSlices):
        grad = convert_to_tensor(grad)
    params_shape = variable_shape(handle, out_type=dtypes.int64)
    size = so.reshape(so.size(indices, out_type=dtypes.int64), [1])
    values = so.reshape(grad, join_ops.concat([size, params_shape[1:]], 0))
    return [IndexedSlices(values, so.reshape(indices, [-1]), params_shape), None]


for _name in ("VarHandleOp", "VariableShape", "VarIsInitializedOp", "AssignVariableOp", "AssignAddVariableOp",
              "AssignSubVariableOp", *_SCATTER_OPS.values()):
    NotDifferentiable(_name)


# ----------------------------------------------------------------------------------------------
# ResourceVariable


class _EagerOpStub:
    """What `variable.op` gives eagerly: its name and type (TF code uses `var.op.name` in scopes)."""

    __slots__ = ("name", "type")

    def __init__(self, name):
        self.name = name
        self.type = "VarHandleOp"

    def __repr__(self):
        return f"<eager variable op '{self.name}'>"


_null_ctx = contextlib.nullcontext


def _initial_tensor(value, dtype, name=None):
    """The initial value as a tensor; plain values (lists, NumPy arrays) are cast to `dtype`."""
    if dtype is None or isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        return convert_to_tensor(value, dtype=dtype, name=name)
    return constant_op.constant(value, dtype=dtype, name=name or "Const")


class ResourceVariable:
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

    def __init__(self, initial_value=None, trainable=None, name=None, dtype=None, shape=None, collections=None,
                 validate_shape=True, use_resource=None, initializer=None, caching_device=None, constraint=None,
                 synchronization=None, aggregation=None, expected_shape=None, import_scope=None,
                 variable_def=None, distribute_strategy=None):
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
        dtype = None if dtype is None else dtypes.as_dtype(dtype)
        if context._state.eager:
            self._init_eager(initial_value, name, dtype, shape, validate_shape)
        else:
            self._init_graph(initial_value, name, dtype, shape, validate_shape, collections)

    # -- construction
    def _init_eager(self, initial_value, name, dtype, shape, validate_shape):
        self._in_graph = False
        self._graph = None
        base = name if name else "Variable"
        if base.endswith(":0"):
            base = base[:-2]
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
        self._resource = _Resource(base, self._dtype.as_numpy_dtype)
        self._resource.set(arr, owned=True)
        self._handle = _EagerHandle(self._resource)
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
        return _EagerOpStub(self._shared_name)

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
        return self._handle

    def _as_graph_element(self):
        return self._graph_element if self._in_graph else None

    def __repr__(self):
        if self._in_graph:
            return f"<sf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"
        with self._resource.lock:       # the text is made now: no need to mark the array shared
            text = repr(self._resource.peek())
        return f"<sf.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}, numpy={text}>"

    # -- reads
    def _ctrl(self):
        """Ops built on this variable run after the update that produced it (a lazy read)."""
        if self._parent_op is not None and self._in_graph:
            return control_dependencies([self._parent_op])
        return _null_ctx()

    def value(self):
        """The current value as a tensor (a new read; eagerly, watched by tapes if trainable)."""
        if not self._in_graph:
            if tape_lib._active.any:     # some thread has a tape (variable_accessed finds this one's)
                tape_lib.variable_accessed(self)
            return apply_op("ReadVariableOp", self._handle, dtype=self._dtype)
        with self._ctrl():
            return read_variable_op(self._handle, self._dtype)

    def read_value(self):
        return self.value()

    def _read_variable_op(self):
        return self.value()

    def sparse_read(self, indices, name=None):
        """Rows `indices` of the variable without reading the rest; its gradient for the variable is
        an IndexedSlices(grad, indices, variable shape)."""
        if not self._in_graph:
            if tape_lib._active.any:     # some thread has a tape (variable_accessed finds this one's)
                tape_lib.variable_accessed(self)
            return apply_op("ResourceGather", self._handle, indices, dtype=self._dtype, name=name)
        with self._ctrl():
            return resource_gather(self._handle, indices, self._dtype, name=name)

    def gather_nd(self, indices, name=None):
        return gather_ops.gather_nd(self.value(), indices, name=name)

    def numpy(self):
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
        """Eagerly the variable itself; in a graph, a variable whose reads run after `op`."""
        if not self._in_graph:
            return self
        return _UnreadVariable(self, op)

    def _updated(self, op, read_value):
        if read_value:
            return self._lazy_read(op)
        return op

    def assign(self, value, use_locking=False, name=None, read_value=True):
        with self._ctrl():
            op = _apply_no_output("AssignVariableOp", self._handle, value, name=name, dtype_position=1,
                                  dtype=self._dtype, validate_shape=self._validate_shape)
        return self._updated(op, read_value)

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        with self._ctrl():
            op = _apply_no_output("AssignAddVariableOp", self._handle, delta, name=name, dtype_position=1,
                                  dtype=self._dtype)
        return self._updated(op, read_value)

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        with self._ctrl():
            op = _apply_no_output("AssignSubVariableOp", self._handle, delta, name=name, dtype_position=1,
                                  dtype=self._dtype)
        return self._updated(op, read_value)

    def _scatter(self, key, sparse_delta, use_locking=False, name=None):
        if not isinstance(sparse_delta, IndexedSlices):
            raise TypeError(f"sparse_delta is not IndexedSlices: {sparse_delta!r}")
        return self._scatter_op(key, sparse_delta.indices, sparse_delta.values, name)

    def _scatter_op(self, key, indices, updates, name):
        with self._ctrl():
            op = _apply_no_output(_SCATTER_OPS[key], self._handle, indices, updates, name=name, dtype_position=2,
                                  dtype=self._dtype)
        return self._lazy_read(op)

    def scatter_update(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("update", sparse_delta, use_locking, name)

    def scatter_add(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("add", sparse_delta, use_locking, name)

    def scatter_sub(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("sub", sparse_delta, use_locking, name)

    def scatter_mul(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("mul", sparse_delta, use_locking, name)

    def scatter_div(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("div", sparse_delta, use_locking, name)

    def scatter_min(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("min", sparse_delta, use_locking, name)

    def scatter_max(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("max", sparse_delta, use_locking, name)

    def batch_scatter_update(self, sparse_delta, use_locking=False, name=None):
        return self._scatter("update", sparse_delta, use_locking, name)

    def scatter_nd_update(self, indices, updates, name=None):
        return self._scatter_op("nd_update", indices, updates, name)

    def scatter_nd_add(self, indices, updates, name=None):
        return self._scatter_op("nd_add", indices, updates, name)

    def scatter_nd_sub(self, indices, updates, name=None):
        return self._scatter_op("nd_sub", indices, updates, name)

    def count_up_to(self, limit):
        raise NotImplementedError("count_up_to is not supported")


def _infer_read_or_initial(op, resource, initial_value, dtype=None):
    _check_handle(op, resource)
    return [TensorSpec(initial_value.dtype, initial_value.shape)]


def _read_or_initial_kernel(state, resource, initial_value, dtype=None):
    res = _res(resource)
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


# ----------------------------------------------------------------------------------------------
# Grouping initializers; reporting uninitialized variables


def _report_kernel(state, resources, names=()):
    return np.array([n for n, r in zip(names, resources) if _res(r).value is None], dtype=object)


register_op("ReportUninitializedVariables", inputs=("resources*",),
            infer=lambda op, resources, names=(): [TensorSpec(dtypes.string, (None,))],
            kernel=_report_kernel, stateful=True, defaults={"names": ()})


def report_uninitialized(var_list, name):
    """A string tensor naming the variables of `var_list` that hold no value yet."""
    if context._state.eager:
        return convert_to_tensor(np.array([], dtype=object))
    if not var_list:
        return constant_op.constant(np.array([], dtype=object), name=name)
    return apply_op("ReportUninitializedVariables", [v.handle for v in var_list],
                    names=tuple(v._shared_name for v in var_list), name=name)

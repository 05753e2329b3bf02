"""The ops on a resource variable's handle, and the store that holds its value (`ResourceVariable`,
in variable.py, is built on them).

A variable is a handle (dtype `resource`) to a `Resource` that holds its value. In graph mode the
handle is the output of a stateful `VarHandleOp` whose kernel finds (or creates) the `Resource` of
the variable's shared name in the Session's resources, so each Session holds its own values; eagerly
the handle is an `EagerHandle` (an EagerTensor of dtype resource) owning its `Resource`.

Reads (`ReadVariableOp`) hand out the resource's array without copying it and mark it shared;
in-place updates (assign_add, scatter ops) copy it first only when it is shared (copy-on-write), so
a value read earlier never changes. `ResourceGather` (sparse_read) and the scatter ops touch only
the rows named, never the whole table. Indices are validated before anything is written, so a bad
index leaves the variable unchanged.

Every kernel that reads or writes a variable's array holds the resource's lock (`locked`), so
updates from several threads (or several Sessions' threads) never interleave and a read never sees
a half-written row: TF documents its scatter updates as atomic, and so are these. Kernels touching
several variables (the fused optimizer steps) take their locks in one global order (by id).
"""
import contextlib
import math
import threading
import numpy as np
from segflow._core import mode as context
from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.convert import convert_to_tensor
from segflow._core.tensor import EagerTensor
from segflow._core.apply import apply_op
from segflow._core.registry import TensorSpec, register_op
from segflow.kernels import BadInput, gather, ids, scatter
from segflow._ops import constant as constant_op

__all__ = [
    "read_variable_op",
    "assign_variable_op",
    "assign_add_variable_op",
    "assign_sub_variable_op",
    "resource_gather",
    "variable_shape",
    "var_is_initialized_op",
    "resource_scatter_update",
    "resource_scatter_add",
    "resource_scatter_sub",
    "resource_scatter_mul",
    "resource_scatter_div",
    "resource_scatter_min",
    "resource_scatter_max",
    "resource_scatter_nd_update",
    "resource_scatter_nd_add",
    "resource_scatter_nd_sub",
    "report_uninitialized",
]


# ----------------------------------------------------------------------------------------------
# The resource


class Resource:
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
        return f"<Resource '{self.name}' {state}>"


@contextlib.contextmanager
def locked(*resources):
    """Holds the locks of `resources` (each once, in a fixed global order: no deadlock)."""
    unique = sorted({id(r): r for r in resources}.values(), key=id)
    for r in unique:
        r.lock.acquire()
    try:
        yield
    finally:
        for r in reversed(unique):
            r.lock.release()


def resource_of(handle):
    """The Resource behind a handle value (graph: the object; eager: a 0-d object array)."""
    if isinstance(handle, np.ndarray):
        handle = handle.item()
    if not isinstance(handle, Resource):
        raise BadInput("resource", f"is not a variable handle: {type(handle).__name__}")
    return handle


class EagerHandle(EagerTensor):
    """The handle of an eager variable: an EagerTensor of dtype resource holding its Resource."""

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


def handle_attr(resource, name):
    op = getattr(resource, "_op", None)
    if op is not None and op.type == "VarHandleOp":
        return op.get_attr(name)
    return None


def check_handle(op, resource):
    if resource.dtype != dtypes.resource:
        raise errors.invalid_input(op, "resource", f"must be a variable handle (dtype resource), not "
                                   f"{resource.dtype.name}; pass a Variable")


def _check_value_dtype(op, resource, value, input_name="value"):
    want = handle_attr(resource, "dtype")
    if want is not None and value.dtype != want:
        raise errors.invalid_input(op, input_name, f"has dtype {value.dtype.name} but the variable has dtype "
                                   f"{dtypes.as_dtype(want).name}")


def handle_shape(resource):
    shape = handle_attr(resource, "shape")
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
        res = state.resources.setdefault(shared_name, Resource(shared_name, dtypes.as_dtype(dtype).as_numpy_dtype))
    return res


register_op("VarHandleOp", inputs=(), infer=_infer_var_handle, kernel=_var_handle_kernel, stateful=True,
            defaults={"shared_name": None, "dtype": None, "shape": None, "container": ""})


def _infer_read(op, resource, dtype):
    check_handle(op, resource)
    return [TensorSpec(dtype, handle_shape(resource))]


def _read_kernel(state, resource, dtype):
    res = resource_of(resource)
    with res.lock:
        return res.read()


register_op("ReadVariableOp", inputs=("resource",), infer=_infer_read, kernel=_read_kernel, stateful=True,
            defaults={"dtype": None})


def read_variable_op(resource, dtype, name=None):
    """The value of the variable behind `resource` (no copy; later updates do not change it)."""
    return apply_op("ReadVariableOp", resource, dtype=dtypes.as_dtype(dtype), name=name)


def _infer_variable_shape(op, input, out_type=dtypes.int32):
    check_handle(op, input)
    rank = handle_shape(input).rank
    return [TensorSpec(out_type, (rank,))]


register_op("VariableShape", inputs=("input",), infer=_infer_variable_shape, stateful=True,
            kernel=lambda state, input, out_type=dtypes.int32: np.array(
                resource_of(input).peek().shape, dtype=dtypes.as_dtype(out_type).as_numpy_dtype),
            defaults={"out_type": dtypes.int32})


def variable_shape(input, out_type=dtypes.int32, name=None):
    """The shape of the variable behind handle `input`, without reading its value."""
    return apply_op("VariableShape", input, out_type=dtypes.as_dtype(out_type), name=name)


register_op("VarIsInitializedOp", inputs=("resource",),
            infer=lambda op, resource: [TensorSpec(dtypes.bool, ())], stateful=True,
            kernel=lambda state, resource: np.array(resource_of(resource).value is not None))


def var_is_initialized_op(resource, name=None):
    return apply_op("VarIsInitializedOp", resource, name=name)


# ----------------------------------------------------------------------------------------------
# Assignments (no outputs: the public functions return the variable or a lazy read of it)


def _infer_assign(op, resource, value, **attrs):
    check_handle(op, resource)
    _check_value_dtype(op, resource, value)
    shape = handle_shape(resource)
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
    res = resource_of(resource)
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
        res = resource_of(resource)
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
                res.set(np.asarray(ufunc(current, value)), owned=True)   # (a 0-d result is a scalar)
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


def apply_no_output(op_type, *inputs, name=None, dtype_position=None, dtype=None, **attrs):
    """Runs an op without outputs; returns its Operation in graph mode, None eagerly."""
    hints = {dtype_position: dtypes.as_dtype(dtype)} if dtype is not None and dtype_position is not None else None
    if hints:
        attrs["_dtype_hints"] = hints
    op = apply_op(op_type, *inputs, name=name, **attrs)
    return None if context.executing_eagerly() else op


def assign_variable_op(resource, value, name=None, validate_shape=True, copy=False):
    return apply_no_output("AssignVariableOp", resource, value, name=name, validate_shape=validate_shape,
                            copy=copy)


def assign_add_variable_op(resource, value, name=None):
    return apply_no_output("AssignAddVariableOp", resource, value, name=name)


def assign_sub_variable_op(resource, value, name=None):
    return apply_no_output("AssignSubVariableOp", resource, value, name=name)


# ----------------------------------------------------------------------------------------------
# ResourceGather: rows of the table, without reading (or copying) all of it


def _infer_resource_gather(op, resource, indices, dtype, batch_dims=0, validate_indices=True):
    check_handle(op, resource)
    if indices.dtype not in dtypes.INDEX:
        raise errors.invalid_input(op, "indices", f"must be int32 or int64, not {indices.dtype.name}")
    shape = handle_shape(resource)
    if shape.rank is None or indices.shape.rank is None:
        return [TensorSpec(dtype, tensor_shape.unknown_shape())]
    if shape.rank == 0:
        raise errors.invalid_input(op, "resource", "cannot gather from a scalar variable")
    return [TensorSpec(dtype, indices.shape.as_list() + shape.as_list()[1:])]


def _resource_gather_kernel(state, resource, indices, dtype, batch_dims=0, validate_indices=True):
    res = resource_of(resource)
    ids.check_index_dtype(indices)
    with res.lock:
        table = res.peek()
        if table.ndim == 0:
            raise BadInput("resource", f"cannot gather from scalar variable '{res.name}'")
        ids.check_in_range(indices, 0, table.shape[0], phrase=ids.NOT_IN)
        # a new array of the gathered rows only (whole rows copied by parallel threads when large;
        # take_rows reads int32 ids as they are, where checked_rows would widen them to int64)
        return gather.take_rows(table, indices.reshape(-1)).reshape(indices.shape + table.shape[1:])


register_op("ResourceGather", inputs=("resource", "indices"), attrs={"Tindices": "indices"}, allowed={"Tindices": dtypes.INDEX},
            infer=_infer_resource_gather, kernel=_resource_gather_kernel, stateful=True,
            defaults={"dtype": None, "batch_dims": 0, "validate_indices": True})


def resource_gather(resource, indices, dtype, batch_dims=0, validate_indices=True, name=None):
    return apply_op("ResourceGather", resource, indices, dtype=dtypes.as_dtype(dtype), batch_dims=batch_dims,
                    validate_indices=validate_indices, name=name)


# ----------------------------------------------------------------------------------------------
# Scatter updates: validate everything, then write in place (copy-on-write)


def _infer_scatter(op, resource, indices, updates):
    check_handle(op, resource)
    if indices.dtype not in dtypes.INDEX:
        raise errors.invalid_input(op, "indices", f"must be int32 or int64, not {indices.dtype.name}")
    _check_value_dtype(op, resource, updates, "updates")
    shape = handle_shape(resource)
    if shape.rank == 0:
        raise errors.invalid_input(op, "resource", "cannot scatter into a scalar variable")
    if shape.rank is not None and indices.shape.rank is not None and updates.shape.rank not in (None, 0):
        want = tensor_shape.TensorShape(indices.shape.as_list() + shape.as_list()[1:])
        if not want.is_compatible_with(updates.shape):
            raise errors.invalid_input(op, "updates", f"shape {updates.shape} must be indices.shape + "
                                       f"variable.shape[1:] = {want}")
    return []


def rows_and_updates(res, table, indices, updates):
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
        res = resource_of(resource)
        with res.lock:
            rows, upd = rows_and_updates(res, res.peek(), indices, updates)   # validate before writing
            _scatter_into(res.writable(), rows, upd, how)
        return ()
    return kernel


def _infer_scatter_nd(op, resource, indices, updates):
    check_handle(op, resource)
    if indices.dtype not in dtypes.INDEX:
        raise errors.invalid_input(op, "indices", f"must be int32 or int64, not {indices.dtype.name}")
    _check_value_dtype(op, resource, updates, "updates")
    shape = handle_shape(resource)
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
        res = resource_of(resource)
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


SCATTER_OPS = {}
for _how in ("update", "add", "sub", "mul", "div", "min", "max"):
    _name = "ResourceScatter" + _how.capitalize()
    register_op(_name, inputs=("resource", "indices", "updates"), attrs={"dtype": "updates", "Tindices": "indices"},
                allowed={"Tindices": dtypes.INDEX}, infer=_infer_scatter, kernel=_scatter_kernel(_how), stateful=True, num_outputs=0)
    SCATTER_OPS[_how] = _name
for _how in ("update", "add", "sub"):
    _name = "ResourceScatterNd" + _how.capitalize()
    register_op(_name, inputs=("ref", "indices", "updates"), attrs={"T": "updates", "Tindices": "indices"},
                allowed={"Tindices": dtypes.INDEX}, infer=_infer_scatter_nd, kernel=_scatter_nd_kernel(_how), stateful=True, num_outputs=0)
    SCATTER_OPS["nd_" + _how] = _name


def _scatter_fn(key):
    op_type = SCATTER_OPS[key]

    def fn(resource, indices, updates, name=None, dtype=None):
        return apply_no_output(op_type, resource, indices, updates, name=name, dtype_position=2, dtype=dtype)
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
# Grouping initializers; reporting uninitialized variables


def _report_kernel(state, resources, names=()):
    return np.array([n for n, r in zip(names, resources) if resource_of(r).value is None], dtype=object)


register_op("ReportUninitializedVariables", inputs=("resources*",),
            infer=lambda op, resources, names=(): [TensorSpec(dtypes.string, (None,))],
            kernel=_report_kernel, stateful=True, defaults={"names": ()})


def report_uninitialized(var_list, name):
    """A string tensor naming the variables of `var_list` that hold no value yet."""
    if context.executing_eagerly():
        return convert_to_tensor(np.array([], dtype=object))
    if not var_list:
        return constant_op.constant(np.array([], dtype=object), name=name)
    return apply_op("ReportUninitializedVariables", [v.handle for v in var_list],
                    names=tuple(v._shared_name for v in var_list), name=name)

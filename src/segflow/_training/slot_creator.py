"""Slot variables: per-variable optimizer state (momentum, Adam's moments) named after the primary.

A slot has the primary's shape and dtype (taken when it runs, for a primary whose static shape is
not fully known), is not trainable, and is created outside any control
dependencies and colocated with its primary, as TF1's `slot_creator` does. In graph mode it is a
global variable, so `global_variables_initializer()` created after the optimizer's
`minimize`/`apply_gradients` initializes it.
"""
import contextlib
import numpy as np

from segflow._core import mode as context
from segflow._core import dtypes
from segflow._core.graph import colocate_with, control_dependencies, name_scope
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.tensor import Tensor
from segflow._ops import variable_scope, variables
from segflow._ops import shape as array_ops
from segflow._core import shapes as tensor_shape

__all__ = ["create_slot", "create_slot_with_initializer", "create_zeros_slot"]


def _primary_name(primary):
    """The name slots are named after: the variable's op name ("dense/kernel"), eagerly its name
    without the output index."""
    if not context.executing_eagerly():
        op = getattr(primary, "op", None)
        if op is not None:
            return op.name
    name = getattr(primary, "name", None) or "Variable"
    return name.rsplit(":", 1)[0] if ":" in name else name


class _SlotScope:
    """Outside control dependencies, colocated with the primary (graph mode); nothing eagerly."""

    def __init__(self, primary, colocate):
        self._primary = primary
        self._colocate = colocate
        self._ctxs = []

    def __enter__(self):
        if context.executing_eagerly():
            return self
        self._ctxs = [control_dependencies(None)]
        if self._colocate:
            self._ctxs.append(colocate_with_variable(self._primary))
        for c in self._ctxs:
            c.__enter__()
        return self

    def __exit__(self, *exc):
        for c in reversed(self._ctxs):
            c.__exit__(*exc)
        return False


def colocate_with_variable(var):
    """`colocate_with` for a variable (its op in graph mode); a no-op eagerly or when the
    variable has no op."""
    if context.executing_eagerly():
        return colocate_with(None)
    target = None
    try:
        target = var.op
    except (AttributeError, ValueError):
        pass
    if target is None and isinstance(var, (Tensor, IndexedSlices)):
        target = var
    if target is None:
        return contextlib.nullcontext()
    return colocate_with(target)


def _make_variable(initial_value, name, dtype, validate_shape=True):
    # Named after the primary alone, outside any name scope the caller opened ("w/Adam", not
    # "train/w/Adam"), in both modes, as TF's slots (made through a variable scope) are.
    # Eagerly names are not made unique by a graph: the scope store's counters make them so, as
    # TF's slots get theirs ("w/Adam", then "w/Adam_1"; a Saver needs distinct names).
    if context.executing_eagerly():
        name = _unique_eager_name(name)
    with name_scope(None, skip_on_eager=False):
        return variables.Variable(initial_value, trainable=False, name=name, dtype=dtype,
                                  validate_shape=validate_shape)


def _unique_eager_name(name):
    store = variable_scope.get_variable_scope_store()
    unique = store.first_unused(name)
    store.open_variable_scope(unique)
    return unique


def _value_of(primary):
    """The primary's current value (a variable's read; a tensor itself)."""
    read = getattr(primary, "read_value", None)
    return read() if callable(read) else primary


def create_slot(primary, val, name, colocate_with_primary=True):
    """A slot of `primary` named `<primary>/<name>`, initialized to `val` (array or tensor)."""
    with _SlotScope(primary, colocate_with_primary):
        return _make_variable(val, f"{_primary_name(primary)}/{name}", None)


def create_slot_with_initializer(primary, initializer, shape, dtype, name, colocate_with_primary=True):
    """A slot of `primary` initialized by `initializer`: a callable `(shape, dtype=...)` (TF's
    initializer objects) or a constant value broadcast to `shape`."""
    dtype = dtypes.as_dtype(dtype).base_dtype
    if not tensor_shape.as_shape(shape).is_fully_defined():
        # The primary's shape is known only when it runs (validate_shape=False): so is the slot's.
        with _SlotScope(primary, colocate_with_primary):
            dynamic = array_ops.shape(_value_of(primary))
            if callable(initializer):
                value = initializer(dynamic, dtype=dtype)
            elif isinstance(initializer, Tensor):
                value = initializer
            else:
                value = array_ops.fill(dynamic, np.array(initializer, dtype=dtype.as_numpy_dtype))
            return _make_variable(value, f"{_primary_name(primary)}/{name}", dtype, validate_shape=False)
    shape = _shape_list(shape)
    with _SlotScope(primary, colocate_with_primary):
        if callable(initializer):
            value = initializer(shape, dtype=dtype)
        elif isinstance(initializer, Tensor):
            value = initializer
        elif context.executing_eagerly():
            value = np.full(shape, initializer, dtype=dtype.as_numpy_dtype)
        else:   # a Fill node, not a table-sized constant in the graph
            value = array_ops.fill(shape, np.array(initializer, dtype=dtype.as_numpy_dtype))
        return _make_variable(value, f"{_primary_name(primary)}/{name}", dtype)


def create_zeros_slot(primary, name, dtype=None, colocate_with_primary=True):
    """A slot of `primary` holding zeros of its shape (and dtype, unless `dtype` is given)."""
    dtype = dtypes.as_dtype(dtype or primary.dtype).base_dtype
    shape = primary.shape
    if shape.is_fully_defined():
        return create_slot_with_initializer(primary, 0, shape, dtype, name, colocate_with_primary)
    with _SlotScope(primary, colocate_with_primary):
        value = array_ops.zeros(array_ops.shape(_value_of(primary)), dtype=dtype)
        return _make_variable(value, f"{_primary_name(primary)}/{name}", dtype, validate_shape=False)


def _shape_list(shape):
    return [int(d) for d in tensor_shape.as_shape(shape).as_list()]

"""TensorFlow's `state_ops`: assignments and scatter updates of variables.

Each function takes a Variable (`use_locking=` is accepted; updates are always atomic here) and
returns the updated variable: eagerly the update happens at once and the variable is returned; in
graph mode the result is a lazily read variable whose evaluation (`sess.run(result)`) performs the
update and gives the new value, and whose `.op` is the update (for `group` and control deps).

Scatter indices are validated before anything is written: an index out of range raises
InvalidArgumentError naming the op and the position and leaves the variable unchanged. Duplicate
indices: add/sub/mul/div/min/max apply every duplicate; update keeps the last one (index order).
"""

from __future__ import annotations

from typing import Any, Callable, Optional
from segflow._ops.variable import ResourceVariable
from segflow._ops.variables import is_variable_initialized, variables_initializer
from segflow._core.typing import Name, TensorLike

__all__ = ["assign", "assign_add", "assign_sub", "scatter_update", "scatter_add", "scatter_sub", "scatter_mul",
           "scatter_div", "scatter_min", "scatter_max", "scatter_nd_update", "scatter_nd_add", "scatter_nd_sub",
           "batch_scatter_update", "is_variable_initialized", "variables_initializer"]


def _var(ref, fn):
    if not isinstance(ref, ResourceVariable):
        raise TypeError(f"{fn} needs a Variable, got {type(ref).__name__} ({ref!r}); segflow variables are "
                        "resource variables: create them with sf.Variable")
    return ref


def assign(ref: Any, value: TensorLike, validate_shape: Optional[bool] = None, use_locking: Optional[bool] = None,
           name: Name = None) -> Any:
    """Sets `ref` to `value` (same dtype; same shape unless the variable was made with
    validate_shape=False). Returns the updated variable."""
    return _var(ref, "assign").assign(value, name=name)


def assign_add(ref: Any, value: TensorLike, use_locking: Optional[bool] = None, name: Name = None) -> Any:
    """Adds `value` to `ref` in place. Returns the updated variable."""
    return _var(ref, "assign_add").assign_add(value, name=name)


def assign_sub(ref: Any, value: TensorLike, use_locking: Optional[bool] = None, name: Name = None) -> Any:
    """Subtracts `value` from `ref` in place. Returns the updated variable."""
    return _var(ref, "assign_sub").assign_sub(value, name=name)


def _scatter(key: str, doc: str) -> Callable[..., Any]:
    def fn(ref: Any, indices: TensorLike, updates: TensorLike, use_locking: bool = True, name: Name = None) -> Any:
        return _var(ref, "scatter_" + key)._scatter_op(key, indices, updates, name)
    fn.__name__ = "scatter_" + key
    fn.__doc__ = doc + """

    Args:
      ref: a Variable of rank >= 1.
      indices: int32 or int64 row ids of any shape, each in [0, ref.shape[0]).
      updates: `indices.shape + ref.shape[1:]` values of ref's dtype (or a scalar).
    Returns:
      The updated variable.
    Raises:
      InvalidArgumentError: an index out of range (the variable is left unchanged), or bad shapes.
    """
    return fn


scatter_update = _scatter("update", "Sets rows `ref[indices[i]] = updates[i]`; for duplicate indices the last wins.")
scatter_add = _scatter("add", "Adds `updates[i]` to rows `ref[indices[i]]`; duplicates all add.")
scatter_sub = _scatter("sub", "Subtracts `updates[i]` from rows `ref[indices[i]]`; duplicates all subtract.")
scatter_mul = _scatter("mul", "Multiplies rows `ref[indices[i]]` by `updates[i]`; duplicates all multiply.")
scatter_div = _scatter("div", "Divides rows `ref[indices[i]]` by `updates[i]`; duplicates all divide.")
scatter_min = _scatter("min", "Rows `ref[indices[i]] = min(ref[indices[i]], updates[i])`, over every duplicate.")
scatter_max = _scatter("max", "Rows `ref[indices[i]] = max(ref[indices[i]], updates[i])`, over every duplicate.")


def _scatter_nd(key, doc):
    def fn(ref, indices, updates, use_locking=True, name=None):
        return _var(ref, "scatter_nd_" + key)._scatter_op("nd_" + key, indices, updates, name)
    fn.__name__ = "scatter_nd_" + key
    fn.__doc__ = doc + """

    Args:
      ref: a Variable.
      indices: int32/int64 of shape [..., depth]: each last-dim vector indexes ref's first `depth` dims.
      updates: `indices.shape[:-1] + ref.shape[depth:]` values of ref's dtype.
    Returns:
      The updated variable.
    Raises:
      InvalidArgumentError: an index out of range (the variable is left unchanged), or bad shapes.
    """
    return fn


scatter_nd_update = _scatter_nd("update", "Sets the slices of `ref` addressed by `indices`; the last duplicate wins.")
scatter_nd_add = _scatter_nd("add", "Adds `updates` into the slices of `ref` addressed by `indices`.")
scatter_nd_sub = _scatter_nd("sub", "Subtracts `updates` from the slices of `ref` addressed by `indices`.")


def batch_scatter_update(ref: Any, indices: TensorLike, updates: TensorLike, use_locking: bool = True,
                         name: Name = None) -> Any:
    """scatter_update for 1-D indices (segflow does not batch further)."""
    return scatter_update(ref, indices, updates, use_locking=use_locking, name=name)


def is_variable(x):
    return isinstance(x, ResourceVariable)


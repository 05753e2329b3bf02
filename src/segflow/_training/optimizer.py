"""The TF1 optimizer base: gradients, slots, and the dense / sparse update dispatch.

    opt = sf.train.AdamOptimizer(0.01)
    train_op = opt.minimize(loss, global_step=sf.train.get_or_create_global_step())   # graph
    opt.minimize(lambda: loss_fn(x), var_list=[w])                                      # eager

A subclass writes the update of one variable, as in TensorFlow 1:

- `_create_slots(var_list)`: make per-variable state with `_zeros_slot(var, "m", self._name)`;
  non-slot state (Adam's beta powers) with `_create_non_slot_variable`.
- `_prepare()` (or `_prepare(self, grads_and_vars)`, which is passed the gradients): turn
  hyper-parameters into tensors once per `apply_gradients`.
- `_apply_dense(grad, var)`: a dense gradient.
- `_apply_sparse(grad, var)`: an `IndexedSlices` gradient with unique indices (the base class sums
  duplicates with `unique` + `unsorted_segment_sum` in `_apply_sparse_duplicate_indices`). Update
  only the gathered rows with `state_ops.scatter_*`, never a dense tensor of the table's size.
- `_resource_apply_dense(grad, var)` / `_resource_apply_sparse(values, var, indices)`: optional;
  when a subclass defines them they are used instead of the two above.
- `_finish(update_ops, name_scope)`: after all variables (Adam advances its beta powers here).

`apply_gradients` first checks every gradient against its variable (integer indices in range,
values of shape `indices.shape + var.shape[1:]`, a dense gradient of the variable's shape), and
only then updates anything: a bad gradient raises InvalidArgumentError and leaves every variable
and slot unchanged, also when several variables are updated in one call (TF may have updated the
earlier variables by then).

In graph mode each update is built under `name_scope("update_" + var.op.name)` and colocated with
the variable; `apply_gradients` returns one train op. Eagerly the updates happen at once.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence
import inspect

from segflow._core import mode as context
from segflow._ops import backprop
from segflow._core import dtypes
from segflow._core.convert import convert_to_tensor, convert_to_tensor_or_indexed_slices
from segflow._core import graph as graph_lib
from segflow._core.graph import GraphKeys, control_dependencies, get_collection_ref, get_default_graph
from segflow._core.operation import Operation
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.tensor import Tensor
from segflow._ops import shape as array_ops
from segflow._training import slot_creator, training_ops
from segflow.util import nest
from segflow._ops import control as control_flow_ops
from segflow._ops.unique import unique
from segflow._ops import gradients, variables
from segflow._ops import state as state_ops
from segflow._ops import segment as segment_ops
from segflow._core.typing import GradientLike, Name, TensorLike

__all__ = ["Optimizer"]


def _as_op(x):
    """The Operation behind an update's result: a Tensor's op, an updated variable's update op."""
    if x is None or isinstance(x, Operation):
        return x
    if isinstance(x, IndexedSlices):
        return x.values.op
    return x.op


def _deduplicate_indexed_slices(values, indices):
    """Sums the rows of `values` that share an index.

    Returns:
      (summed_values, unique_indices): `summed_values[i]` is the sum of the rows of `values` whose
      index is `unique_indices[i]`; indices keep their order of first appearance.
    """
    unique_indices, positions = unique(indices)
    summed = segment_ops.unsorted_segment_sum(values, positions, array_ops.size(unique_indices))
    return summed, unique_indices


def _var_scope_name(var):
    """The name an update's name scope is built from: `var.op.name` (graph) or the variable's name."""
    if not context.executing_eagerly():
        try:
            return var.op.name
        except (AttributeError, ValueError):
            pass
    name = getattr(var, "_shared_name", None) or getattr(var, "name", None) or "Variable"
    return name.rsplit(":", 1)[0] if ":" in name else name


def _overrides(obj, method):
    """True when `type(obj)` defines `method` itself rather than inheriting Optimizer's."""
    return getattr(type(obj), method) is not getattr(Optimizer, method)


def _is_variable(v):
    return hasattr(v, "_gradient_source") or hasattr(v, "handle")


# _prepare function -> whether it takes the (gradient, variable) pairs (read once per function)
_PREPARE_TAKES_PAIRS = {}


class Optimizer:
    """Base class of the TF1 optimizers (`tf.compat.v1.train.Optimizer`).

    Args:
      use_locking: passed to the state ops (updates of one variable do not interleave).
      name: the name scope of the ops the optimizer builds; also names its slots.
    Raises:
      ValueError: `name` is empty.
    """

    GATE_NONE = 0
    GATE_OP = 1
    GATE_GRAPH = 2

    def __init__(self, use_locking: bool, name: str) -> None:
        if not name:
            raise ValueError("Must specify the optimizer name")
        self._use_locking = use_locking
        self._name = name
        self._slots = {}               # slot name -> {id(var): slot variable}
        self._slot_primaries = {}      # id(var) -> var (keeps ids unique while the slots live)
        self._non_slot_dict = {}       # (name, graph or None) -> variable

    def get_name(self) -> str:
        return self._name

    # ------------------------------------------------------------------------------------------
    # minimize = compute_gradients + apply_gradients

    def minimize(self, loss: Any, global_step: Any = None, var_list: Optional[Sequence[Any]] = None,
                 gate_gradients: int = GATE_OP, aggregation_method: Optional[int] = None,
                 colocate_gradients_with_ops: bool = False, name: Name = None,
                 grad_loss: Optional[TensorLike] = None) -> Any:
        """Adds the ops that minimize `loss` by updating `var_list` (graph), or takes one step (eager).

        Args:
          loss: a scalar Tensor (graph), or a callable returning it (required eagerly).
          global_step: optional integer variable, incremented by one after the update.
          var_list: variables to update; default: the trainable variables (graph) or those the
            loss reads (eager).
          gate_gradients, aggregation_method, colocate_gradients_with_ops: as in TensorFlow.
          name: name of the returned op.
          grad_loss: optional gradient to back-propagate instead of ones.
        Returns:
          The train op (graph); eagerly None, or the incremented global step variable.
        Raises:
          ValueError: no variable receives a gradient.
        """
        grads_and_vars = self.compute_gradients(
            loss, var_list=var_list, gate_gradients=gate_gradients, aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, grad_loss=grad_loss)
        vars_with_grad = [v for g, v in grads_and_vars if g is not None]
        if not vars_with_grad:
            raise ValueError("No gradients provided for any variable, check your graph for ops that do "
                             f"not support gradients, between variables {[str(v) for _, v in grads_and_vars]} "
                             f"and loss {loss}.")
        return self.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def compute_gradients(self, loss: Any, var_list: Optional[Sequence[Any]] = None, gate_gradients: int = GATE_OP,
                          aggregation_method: Optional[int] = None, colocate_gradients_with_ops: bool = False,
                          grad_loss: Optional[TensorLike] = None) -> list[tuple[Optional[GradientLike], Any]]:
        """The gradients of `loss` for the variables in `var_list`.

        Returns:
          A list of (gradient, variable) pairs; a gradient is a Tensor, an IndexedSlices (gather,
          embedding lookup) or None (the loss does not depend on the variable).
        Raises:
          ValueError: invalid `gate_gradients`, or no variables to optimize.
          RuntimeError: eagerly, `loss` is not callable.
          ValueError: a variable's dtype is not a float or complex type.
        """
        if gate_gradients not in (Optimizer.GATE_NONE, Optimizer.GATE_OP, Optimizer.GATE_GRAPH):
            raise ValueError(f"gate_gradients must be one of: Optimizer.GATE_NONE, Optimizer.GATE_OP, "
                             f"Optimizer.GATE_GRAPH. Not {gate_gradients}")
        if context.executing_eagerly():
            return self._compute_gradients_eager(loss, var_list, grad_loss)
        if callable(loss) and not isinstance(loss, Tensor):
            loss = loss()
        self._assert_valid_dtypes([loss])
        if grad_loss is not None:
            self._assert_valid_dtypes([grad_loss])
        if var_list is None:
            var_list = variables.trainable_variables()
        else:
            var_list = nest.flatten(var_list)
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = gradients.gradients(loss, var_list, grad_ys=None if grad_loss is None else [grad_loss],
                                    gate_gradients=(gate_gradients == Optimizer.GATE_OP),
                                    aggregation_method=aggregation_method,
                                    colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gate_gradients == Optimizer.GATE_GRAPH:
            grads = _tuple(grads)
        grads_and_vars = list(zip(grads, var_list))
        self._assert_valid_dtypes([v for g, v in grads_and_vars if g is not None and v.dtype != dtypes.resource])
        return grads_and_vars

    def _compute_gradients_eager(self, loss, var_list, grad_loss):
        if not callable(loss):
            raise RuntimeError("`loss` passed to Optimizer.compute_gradients should be a function when "
                               "eager execution is enabled.")
        if var_list is not None:
            var_list = nest.flatten(var_list)
        with backprop.GradientTape() as tape:
            if var_list is not None:
                tape.watch(var_list)
            loss_value = loss()
        if var_list is None:
            var_list = tape.watched_variables()
        if not var_list:
            raise ValueError("No variables to optimize.")
        grads = tape.gradient(loss_value, var_list,
                              output_gradients=None if grad_loss is None else [grad_loss])
        grads_and_vars = list(zip(grads, var_list))
        self._assert_valid_dtypes([v for g, v in grads_and_vars if g is not None])
        return grads_and_vars

    def apply_gradients(self, grads_and_vars: Iterable[tuple[Any, Any]], global_step: Any = None,
                        name: Name = None) -> Any:
        """Applies gradients to variables: the second half of `minimize`.

        Args:
          grads_and_vars: (gradient, variable) pairs, as from `compute_gradients`; a None gradient
            is skipped.
          global_step: optional integer variable incremented by one after the updates.
          name: name of the returned op (default: the optimizer's name).
        Returns:
          Graph: an Operation that applies the gradients (and increments `global_step`), also added
          to the TRAIN_OP collection. Eager: the updates are done; returns None, or the incremented
          global step variable.
        Raises:
          TypeError: a gradient is not convertible to a Tensor or IndexedSlices.
          ValueError: no pairs, or every gradient is None.
        """
        grads_and_vars = tuple(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("No variables provided.")
        converted = []
        for g, v in grads_and_vars:
            if g is not None:
                try:
                    g = convert_to_tensor_or_indexed_slices(g)
                except TypeError:
                    raise TypeError(f"Gradient must be convertible to a Tensor or IndexedSlices, or None: {g}") \
                        from None
                if not isinstance(g, (Tensor, IndexedSlices)):
                    raise TypeError(f"Gradient must be a Tensor, IndexedSlices, or None: {g}")
            if not _is_variable(v):
                raise TypeError(f"apply_gradients expects variables; got {v!r}")
            converted.append((g, v))
        var_list = [v for g, v in converted if g is not None]
        if not var_list:
            raise ValueError(f"No gradients provided for any variable: {[str(v) for _, v in converted]}.")
        with _init_scope():
            self._create_slots(var_list)
        update_ops = []
        with graph_lib.name_scope(name, self._name) as scope:
            # Every gradient is checked against its variable (index dtype and range, shapes) before
            # any state changes, so a bad gradient leaves every variable and slot unchanged.
            converted = [(g if g is None else training_ops.check_gradient(g, v), v) for g, v in converted]
            checks = [] if context.executing_eagerly() else [_as_op(g) for g, _ in converted if g is not None]
            with control_dependencies(checks):
                self._call_prepare(converted)
                for grad, var in converted:
                    if grad is None:
                        continue
                    with graph_lib.name_scope("update_" + _var_scope_name(var)), \
                            slot_creator.colocate_with_variable(var):
                        update_ops.append(self._apply_one(grad, var))
            if global_step is None:
                apply_updates = self._finish(update_ops, scope)
            else:
                with control_dependencies([self._finish(update_ops, "update")]):
                    with slot_creator.colocate_with_variable(global_step):
                        apply_updates = _assign_add(global_step, 1, name=name)
        if not context.executing_eagerly():
            apply_updates = _as_op(apply_updates)
            train_ops = get_collection_ref(GraphKeys.TRAIN_OP)
            if apply_updates is not None and apply_updates not in train_ops:
                train_ops.append(apply_updates)
        return apply_updates

    def _call_prepare(self, grads_and_vars):
        """Calls `_prepare()` (TF1), or `_prepare(grads_and_vars)` when a subclass takes them."""
        prepare = self._prepare
        fn = getattr(prepare, "__func__", None)        # a method: its answer is kept per function
        takes = _PREPARE_TAKES_PAIRS.get(fn) if fn is not None else None
        if takes is None:
            try:
                takes = any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
                            for p in inspect.signature(prepare).parameters.values())
            except (TypeError, ValueError):
                takes = False
            if fn is not None:
                _PREPARE_TAKES_PAIRS[fn] = takes
        if takes:
            return prepare(list(grads_and_vars))
        return prepare()

    def _apply_one(self, grad, var):
        if isinstance(grad, IndexedSlices):
            if _overrides(self, "_resource_apply_sparse_duplicate_indices") or \
                    _overrides(self, "_resource_apply_sparse"):
                return self._resource_apply_sparse_duplicate_indices(grad.values, var, grad.indices)
            return self._apply_sparse_duplicate_indices(grad, var)
        if _overrides(self, "_resource_apply_dense"):
            return self._resource_apply_dense(grad, var)
        return self._apply_dense(grad, var)

    # ------------------------------------------------------------------------------------------
    # Slots

    def get_slot(self, var: Any, name: str) -> Any:
        """The slot `name` of `var` (e.g. "m" for Adam), or None."""
        named = self._slots.get(name)
        if not named:
            return None
        return named.get(id(var))

    def get_slot_names(self) -> list[str]:
        """The names of the slots this optimizer creates, sorted."""
        return sorted(self._slots)

    def variables(self) -> list[Any]:
        """The optimizer's variables: slots and non-slot variables (of the current graph)."""
        graph = None if context.executing_eagerly() else get_default_graph()
        result = [v for (n, g), v in self._non_slot_dict.items() if g is graph]
        for name in sorted(self._slots):
            result.extend(v for v in self._slots[name].values() if getattr(v, "graph", None) is graph)
        return result

    def _slot_dict(self, slot_name):
        return self._slots.setdefault(slot_name, {})

    def _remember(self, var, slot_name, slot):
        self._slot_dict(slot_name)[id(var)] = slot
        self._slot_primaries[id(var)] = var
        return slot

    def _zeros_slot(self, var, slot_name, op_name):
        """Finds or creates the slot `slot_name` of `var`, holding zeros of its shape and dtype."""
        slot = self.get_slot(var, slot_name)
        if slot is None:
            slot = self._remember(var, slot_name, slot_creator.create_zeros_slot(var, op_name))
        return slot

    def _get_or_make_slot(self, var, val, slot_name, op_name):
        """Finds or creates the slot `slot_name` of `var`, initialized to `val`."""
        slot = self.get_slot(var, slot_name)
        if slot is None:
            slot = self._remember(var, slot_name, slot_creator.create_slot(var, val, op_name))
        return slot

    def _get_or_make_slot_with_initializer(self, var, initializer, shape, dtype, slot_name, op_name):
        """Finds or creates the slot `slot_name` of `var`, initialized by `initializer`."""
        slot = self.get_slot(var, slot_name)
        if slot is None:
            slot = self._remember(var, slot_name, slot_creator.create_slot_with_initializer(
                var, initializer, shape, dtype, op_name))
        return slot

    def _create_non_slot_variable(self, initial_value, name, colocate_with):
        """Finds or creates the optimizer-wide variable `name` (one per graph; one eagerly)."""
        graph = None if context.executing_eagerly() else get_default_graph()
        key = (name, graph)
        v = self._non_slot_dict.get(key)
        if v is None:
            with _init_scope(), slot_creator.colocate_with_variable(colocate_with):
                v = variables.Variable(initial_value, name=name, trainable=False)
            self._non_slot_dict[key] = v
        return v

    def _get_non_slot_variable(self, name, graph=None):
        if graph is None and not context.executing_eagerly():
            graph = get_default_graph()
        return self._non_slot_dict.get((name, graph))

    def _non_slot_variables(self):
        return list(self._non_slot_dict.values())

    # ------------------------------------------------------------------------------------------
    # What subclasses write

    def _create_slots(self, var_list):
        """Creates the slots of every variable in `var_list` (default: none)."""

    def _prepare(self):
        """Converts hyper-parameters to tensors before the updates (default: nothing)."""

    def _apply_dense(self, grad, var):
        raise NotImplementedError(f"{type(self).__name__} does not implement _apply_dense")

    def _resource_apply_dense(self, grad, handle):
        return self._apply_dense(grad, handle)

    def _apply_sparse(self, grad, var):
        raise NotImplementedError(f"{type(self).__name__} does not implement _apply_sparse")

    def _apply_sparse_duplicate_indices(self, grad, var):
        """Sums the rows of `grad` that share an index, then calls `_apply_sparse`."""
        summed, unique_indices = _deduplicate_indexed_slices(grad.values, grad.indices)
        return self._apply_sparse(IndexedSlices(summed, unique_indices, grad.dense_shape), var)

    def _resource_apply_sparse(self, grad, handle, indices):
        raise NotImplementedError(f"{type(self).__name__} does not implement _resource_apply_sparse")

    def _resource_apply_sparse_duplicate_indices(self, grad, handle, indices):
        summed, unique_indices = _deduplicate_indexed_slices(grad, indices)
        return self._resource_apply_sparse(summed, handle, unique_indices)

    def _finish(self, update_ops, name_scope):
        """One op running all `update_ops` (graph); None eagerly."""
        return control_flow_ops.group(*update_ops, name=_op_name(name_scope))

    # ------------------------------------------------------------------------------------------
    # Helpers

    def _call_if_callable(self, param):
        return param() if callable(param) else param

    def _valid_dtypes(self):
        return {dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64,
                dtypes.complex64, dtypes.complex128}

    def _assert_valid_dtypes(self, tensors):
        valid = self._valid_dtypes()
        for t in tensors:
            dtype = t.dtype.base_dtype
            if dtype not in valid:
                raise ValueError(f"Invalid type {dtype.name} for {getattr(t, 'name', t)}, expected: "
                                 f"{[v.name for v in sorted(valid, key=lambda d: d.name)]}.")


def _op_name(scope):
    """A node name from a name-scope string ("Adam/" -> "Adam")."""
    if scope is None:
        return None
    return scope.rstrip("/") or None


def _assign_add(var, value, name=None):
    return state_ops.assign_add(var, convert_to_tensor(value, dtype=var.dtype.base_dtype), name=name)


def _tuple(grads):
    """GATE_GRAPH: every gradient is available only once all of them are computed."""
    deps = []
    for g in grads:
        if isinstance(g, IndexedSlices):
            deps.extend([g.values, g.indices])
        elif g is not None:
            deps.append(g)
    if not deps:
        return grads
    out = []
    with control_dependencies(deps):
        for g in grads:
            if isinstance(g, IndexedSlices):
                out.append(IndexedSlices(array_ops.identity(g.values), array_ops.identity(g.indices),
                                             g.dense_shape))
            elif g is not None:
                out.append(array_ops.identity(g))
            else:
                out.append(None)
    return out


class _init_scope:
    """Variables created inside escape the caller's control dependencies (graph mode)."""

    def __enter__(self):
        self._ctx = None if context.executing_eagerly() else control_dependencies(None)
        if self._ctx is not None:
            self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        if self._ctx is not None:
            self._ctx.__exit__(*exc)
        return False

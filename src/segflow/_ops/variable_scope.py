"""Variable scopes and `get_variable` (TF1's `variable_scope`): named variables kept in a store
and shared under reuse rules.

    with variable_scope("layer", initializer=glorot_uniform_initializer()):
        w = get_variable("w", [4, 3])                  # "layer/w:0"
    with variable_scope("layer", reuse=True):
        assert get_variable("w", [4, 3]) is w          # shared (AUTO_REUSE: made if absent)

TensorFlow 2's `tf.compat.v1` rules:
- Graph mode: each graph holds one store (collection ("__variable_store",)) and, per thread, the
  current scope and default-name counters. Making an existing name without reuse, or reusing a
  missing one, raises ValueError with TF's message.
- Eagerly, variables are not stored (so they can be freed): each `get_variable` makes a new one
  and scopes report reuse=AUTO_REUSE; inside `EagerVariableStore().as_default()` they are stored,
  reused and added to the collections.
- `variable_scope` also opens a name scope ("layer_1/" the second time) for the ops inside, while
  the variables take the variable scope's name ("layer/w").
- Default initializer: glorot_uniform (floats), zeros (integers, bool). A tensor or array value as
  initializer gives the variable its shape. With a partitioner the result is a PartitionedVariable.
"""
import contextlib
import copy
import functools
import threading

from segflow._core import dtypes, mode as context
from segflow._core.convert import to_numpy
from segflow._core.graph import (GraphKeys, get_collection, get_collection_ref, get_default_graph,
                                 name_scope)
from segflow._core.mode import _scope_state
from segflow._core.tensor import EagerTensor, Tensor
from segflow._ops.partitioned_variables import PartitionInfo
from segflow._ops.variable import ResourceVariable
from segflow._ops.variables import VariableAggregation, VariableSynchronization
from segflow._ops.variable_store import (AUTO_REUSE, VariableStore, disable_resource_variables,  # noqa: F401
                                         enable_resource_variables, no_regularizer, resource_variables_enabled)

__all__ = ["AUTO_REUSE", "VariableScope", "get_variable_scope", "get_variable", "get_local_variable",
           "variable_scope", "variable_op_scope", "no_regularizer", "EagerVariableStore", "with_variable_store",
           "get_variable_scope_store", "create_partitioned_variables", "enable_resource_variables",
           "disable_resource_variables", "resource_variables_enabled", "VariableSynchronization",
           "VariableAggregation"]

_PartitionInfo = PartitionInfo      # TF's name
_VARSTORE_KEY = ("__variable_store",)
_VARSCOPESTORE_KEY = ("__varscope",)


# ----------------------------------------------------------------------------------------------
# VariableScope: the defaults get_variable applies


class VariableScope:
    """A scope's name and the defaults it gives `get_variable` (initializer, regularizer, reuse,
    partitioner, dtype, custom getter, constraint). Eagerly reuse is always AUTO_REUSE."""

    def __init__(self, reuse, name="", initializer=None, regularizer=None, caching_device=None, partitioner=None,
                 custom_getter=None, name_scope="", dtype=dtypes.float32, use_resource=None, constraint=None):
        self._name = name
        self._initializer = initializer
        self._regularizer = regularizer
        self._reuse = reuse
        self._caching_device = caching_device
        self._partitioner = partitioner
        self._custom_getter = custom_getter
        self._name_scope = name_scope
        self._dtype = dtype
        self._use_resource = use_resource
        self._constraint = constraint
        if context.executing_eagerly():
            self._reuse = AUTO_REUSE
            self._use_resource = True

    name = property(lambda self: self._name)
    original_name_scope = property(lambda self: self._name_scope)

    def __repr__(self):
        return f"<VariableScope '{self._name}' reuse={self._reuse}>"

    def reuse_variables(self):
        """From now on, get_variable in this scope returns existing variables."""
        self._reuse = True

    def set_use_resource(self, use_resource):
        if context.executing_eagerly() and not use_resource:
            raise ValueError("When eager execution is enabled, use_resource cannot be set to false.")
        self._use_resource = use_resource

    def get_collection(self, name):
        """This scope's members of collection `name`."""
        return get_collection(name, self._name + "/" if self._name else "")

    def trainable_variables(self):
        return self.get_collection(GraphKeys.TRAINABLE_VARIABLES)

    def global_variables(self):
        return self.get_collection(GraphKeys.GLOBAL_VARIABLES)

    def local_variables(self):
        return self.get_collection(GraphKeys.LOCAL_VARIABLES)

    def _defaults(self, dtype, initializer, regularizer, partitioner, constraint):
        return (self._dtype if dtype is None else dtype, self._initializer if initializer is None else initializer,
                self._regularizer if regularizer is None else regularizer,
                self._partitioner if partitioner is None else partitioner,
                self._constraint if constraint is None else constraint)

    def get_variable(self, var_store, name, shape=None, dtype=None, initializer=None, regularizer=None, reuse=None,
                     trainable=None, collections=None, caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None,
                     synchronization=VariableSynchronization.AUTO, aggregation=VariableAggregation.NONE):
        """`var_store`'s variable `scope_name/name`, with this scope's defaults."""
        if custom_getter is None:
            custom_getter = self._custom_getter
        if context.executing_eagerly():
            reuse, use_resource = False, True
        else:
            reuse = self._reuse if reuse is None else reuse
            use_resource = self._use_resource if use_resource is None else use_resource
        full_name = self.name + "/" + name if self.name else name
        # Variable names depend on the variable scope only: no name scope while creating them.
        with name_scope(None, skip_on_eager=False):
            if dtype is not None and initializer is not None and not callable(initializer):
                init_dtype = _value_dtype(initializer)
                if init_dtype != dtypes.as_dtype(dtype):
                    raise ValueError(f"Initializer type '{init_dtype}' and explicit dtype '{dtypes.as_dtype(dtype)}' "
                                     "don't match.")
            dtype, initializer, regularizer, partitioner, constraint = self._defaults(
                dtype, initializer, regularizer, partitioner, constraint)
            return var_store.get_variable(
                full_name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer, reuse=reuse,
                trainable=trainable, collections=collections, caching_device=caching_device,
                partitioner=partitioner, validate_shape=validate_shape, use_resource=use_resource,
                custom_getter=custom_getter, constraint=constraint, synchronization=synchronization,
                aggregation=aggregation)

    def _get_partitioned_variable(self, var_store, name, dtype=None, initializer=None, regularizer=None,
                                  partitioner=None, constraint=None, trainable=None, **kwargs):
        dtype, initializer, regularizer, partitioner, constraint = self._defaults(
            dtype, initializer, regularizer, partitioner, constraint)
        if self._custom_getter is not None:
            raise ValueError("Private access to _get_partitioned_variable is not allowed when a custom getter is set.  "
                             f"Current custom getter: {self._custom_getter}.  It is likely that you're using "
                             "create_partitioned_variables.  If so, consider instead using get_variable with a "
                             "non-empty partitioner parameter instead.")
        if partitioner is None:
            raise ValueError("No partitioner was specified")
        full_name = "/".join(n for n in (self.name, name) if n)
        if trainable is None:
            trainable = kwargs.get("synchronization") != VariableSynchronization.ON_READ
        with name_scope(None, skip_on_eager=False):
            return var_store._get_partitioned_variable(
                full_name, partitioner, dtype=dtypes.as_dtype(dtype), initializer=initializer, regularizer=regularizer,
                reuse=self.reuse, trainable=trainable, constraint=constraint, **kwargs)


def _getter(attr):
    return property(lambda self: getattr(self, "_" + attr), doc=f"The scope's {attr}.")


def _setter(attr):
    def set_(self, value):
        setattr(self, "_" + attr, value)
    set_.__name__ = set_.__qualname__ = "set_" + attr
    set_.__doc__ = f"Sets the scope's default {attr}."
    return set_


for _attr in ("reuse", "initializer", "dtype", "use_resource", "regularizer", "caching_device", "partitioner",
              "custom_getter", "constraint"):
    setattr(VariableScope, _attr, _getter(_attr))
for _attr in ("initializer", "dtype", "regularizer", "caching_device", "partitioner", "custom_getter"):
    setattr(VariableScope, "set_" + _attr, _setter(_attr))     # set_use_resource checks its value
del _attr


def _value_dtype(value):
    if isinstance(value, Tensor) or hasattr(value, "dtype") and isinstance(getattr(value, "dtype"), dtypes.DType):
        return value.dtype.base_dtype
    return dtypes.from_numpy(to_numpy(value).dtype)


# ----------------------------------------------------------------------------------------------
# Where the current scope and the store live


class _VariableScopeStore(threading.local):
    """The calling thread's current scope and default-name counters (one per graph)."""

    def __init__(self):
        super().__init__()
        self.current_scope = VariableScope(False)
        self.variable_scopes_count = {}

    def open_variable_scope(self, scope_name):
        self.variable_scopes_count[scope_name] = self.variable_scopes_count.get(scope_name, 0) + 1

    def close_variable_subscopes(self, scope_name):
        for k in list(self.variable_scopes_count):
            if scope_name is None or k.startswith(scope_name + "/"):
                self.variable_scopes_count[k] = 0

    def variable_scope_count(self, scope_name):
        return self.variable_scopes_count.get(scope_name, 0)

    def first_unused(self, scope_name):
        """`scope_name`, or `scope_name_N` with the smallest N, whichever no scope has opened."""
        if self.variable_scope_count(scope_name) == 0:
            return scope_name
        idx = 1
        while self.variable_scope_count(f"{scope_name}_{idx}") > 0:
            idx += 1
        return f"{scope_name}_{idx}"


def _singleton(key, make):
    items = get_collection_ref(key)
    if not items:
        items.append(make())
    return items[0]


def get_variable_scope_store():
    """The default graph's scope store (eagerly: the thread's global graph's)."""
    return _singleton(_VARSCOPESTORE_KEY, _VariableScopeStore)


def get_variable_scope():
    """The current VariableScope."""
    return get_variable_scope_store().current_scope


def _get_default_variable_store():
    return _singleton(_VARSTORE_KEY, VariableStore)


@contextlib.contextmanager
def with_variable_store(store):
    """Within the block, `store` is the default graph's variable store."""
    items = get_collection_ref(_VARSTORE_KEY)
    old = list(items)
    items[:] = [store]
    try:
        yield
    finally:
        items[:] = old


class EagerVariableStore:
    """Keeps the variables `get_variable` makes eagerly, so that they are reused:

        store = EagerVariableStore()
        with store.as_default():
            v = get_variable("v", [2])        # made
        with store.as_default():
            w = get_variable("v", [2])        # the same variable
        store.variables()                     # [v]
    """

    def __init__(self, store=None):
        if store is not None:
            if not store._store_eager_variables:
                raise ValueError("Cannot construct EagerVariableStore from a VariableStore object that does not hold "
                                 "eager variables.")
            self._store = store
        else:
            self._store = VariableStore()
        self._store._store_eager_variables = True

    def as_default(self):
        return with_variable_store(self._store)

    def variables(self):
        return sorted(self._store._vars.values(), key=lambda x: x.name)

    def trainable_variables(self):
        return [v for v in self.variables() if v.trainable]

    def non_trainable_variables(self):
        return [v for v in self.variables() if not v.trainable]

    def copy(self):
        """A new store holding copies of these variables (same names, values and trainability)."""
        new = EagerVariableStore()
        for key, var in self._store._vars.items():
            new._store._vars[key] = ResourceVariable(var.read_value(), name=var.name.split(":")[0],
                                                     trainable=var.trainable)
        return new


# ----------------------------------------------------------------------------------------------
# get_variable


def get_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=None, collections=None,
                 caching_device=None, partitioner=None, validate_shape=True, use_resource=None, custom_getter=None,
                 constraint=None, synchronization=VariableSynchronization.AUTO, aggregation=VariableAggregation.NONE):
    """The variable `scope/name` of the current variable scope: made, or (when the scope reuses)
    found.

    Args:
      name: the name within the current variable scope.
      shape: the shape of a new variable; omit it when `initializer` is a value.
      dtype: default the scope's (float32).
      initializer: an initializer (called with shape, dtype[, partition_info]), a class of one, a
        callable without arguments (then no shape), or a tensor / array value. Default: the
        scope's, else glorot_uniform (floats) or zeros (ints, bool).
      regularizer: fn(variable) -> loss tensor or None; losses join "regularization_losses".
      trainable: default True; collections: default [GLOBAL_VARIABLES] (+ TRAINABLE_VARIABLES).
      partitioner: fn(shape=, dtype=) -> shard counts; the result is then a PartitionedVariable.
      custom_getter: fn(getter, name, *args, **kwargs) wrapping the creation.
    Returns:
      A ResourceVariable named "scope/name" (or a PartitionedVariable).
    Raises:
      ValueError: a new variable without a shape, an existing one without reuse ("Variable x
        already exists, disallowed. ..."), a missing one with reuse=True ("Variable x does not
        exist, or was not created with tf.get_variable(). ..."), a shape or dtype that differs
        from the shared variable's, or a value initializer of another dtype than `dtype`.
    """
    return get_variable_scope().get_variable(
        _get_default_variable_store(), name, shape=shape, dtype=dtype, initializer=initializer,
        regularizer=regularizer, trainable=trainable, collections=collections, caching_device=caching_device,
        partitioner=partitioner, validate_shape=validate_shape, use_resource=use_resource,
        custom_getter=custom_getter, constraint=constraint, synchronization=synchronization, aggregation=aggregation)


def get_local_variable(name, shape=None, dtype=None, initializer=None, regularizer=None, trainable=False,
                       collections=None, caching_device=None, partitioner=None, validate_shape=True,
                       use_resource=None, custom_getter=None, constraint=None,
                       synchronization=VariableSynchronization.AUTO, aggregation=VariableAggregation.NONE):
    """`get_variable` for a local variable: in LOCAL_VARIABLES, never trainable."""
    collections = list(collections or []) + [GraphKeys.LOCAL_VARIABLES]
    return get_variable(name, shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer,
                        trainable=False, collections=collections, caching_device=caching_device,
                        partitioner=partitioner, validate_shape=validate_shape, use_resource=use_resource,
                        custom_getter=custom_getter, constraint=constraint, synchronization=synchronization,
                        aggregation=aggregation)


def _get_partitioned_variable(name, trainable=True, **kwargs):
    """The PartitionedVariable `name` of the current scope (shape, dtype, initializer,
    partitioner, ... as for get_variable): the store's, found or made."""
    return get_variable_scope()._get_partitioned_variable(_get_default_variable_store(), name, trainable=trainable,
                                                          **kwargs)


def create_partitioned_variables(shape, slicing, initializer, dtype=dtypes.float32, trainable=True, collections=None,
                                 name=None, reuse=None):
    """The list of shard variables of a variable of `shape` cut as `slicing` says (one count per
    dimension, one above 1): TF's legacy partitioned_variables.create_partitioned_variables."""
    if len(shape) != len(slicing):
        raise ValueError(f"The 'shape' and 'slicing' of a partitioned Variable must have the length: shape: {shape}, "
                         f"slicing: {slicing}")
    if len(shape) < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1: shape: {shape}")
    partitioner = lambda **unused_kwargs: slicing  # noqa: E731 - the slicing is given
    with variable_scope(name, "PartitionedVariable", reuse=reuse):
        return list(_get_partitioned_variable(None, shape=shape, dtype=dtype, initializer=initializer,
                                              trainable=trainable, partitioner=partitioner,
                                              collections=collections))


# ----------------------------------------------------------------------------------------------
# variable_scope


class _pure_variable_scope:  # noqa: N801 - TF's name
    """Sets the current VariableScope (no name scope)."""

    def __init__(self, name_or_scope, reuse=None, initializer=None, regularizer=None, caching_device=None,
                 partitioner=None, custom_getter=None, old_name_scope=None, dtype=dtypes.float32, use_resource=None,
                 constraint=None):
        self._name_or_scope = name_or_scope
        self._reuse = reuse
        self._overrides = dict(initializer=initializer, regularizer=regularizer, caching_device=caching_device,
                               partitioner=partitioner, dtype=dtype, use_resource=use_resource)
        self._custom_getter = custom_getter
        self._old_name_scope = old_name_scope
        self._constraint = constraint
        self._var_scope_store = get_variable_scope_store()
        self._last_variable_scope_object = None
        if isinstance(name_or_scope, VariableScope):
            self._new_name = name_or_scope.name
            self._cached_variable_scope_object = self._scope_like(
                name_or_scope, name_or_scope.reuse if not reuse else reuse, self._new_name,
                name_or_scope._name_scope)

    def _scope_like(self, base, reuse, name, name_scope_):
        scope = VariableScope(reuse, name=name, initializer=base.initializer, regularizer=base.regularizer,
                              caching_device=base.caching_device, partitioner=base.partitioner, dtype=base.dtype,
                              custom_getter=base.custom_getter, name_scope=name_scope_,
                              use_resource=base.use_resource, constraint=self._constraint)
        for attr, value in self._overrides.items():
            if value is not None:
                getattr(scope, "set_" + attr)(value)
        if self._custom_getter is not None:
            scope.set_custom_getter(_maybe_wrap_custom_getter(self._custom_getter, base.custom_getter))
        return scope

    def __enter__(self):
        store = self._var_scope_store
        self._old = store.current_scope
        if isinstance(self._name_or_scope, VariableScope):
            store.open_variable_scope(self._new_name)
            self._old_subscopes = copy.copy(store.variable_scopes_count)
            scope = self._cached_variable_scope_object
        else:
            old = self._old
            self._new_name = old.name + "/" + self._name_or_scope if old.name else self._name_or_scope
            self._reuse = self._reuse or old.reuse       # reuse is inherited by sub-scopes
            name_scope_ = self._name_or_scope if self._old_name_scope is None else self._old_name_scope
            scope = self._scope_like(old, self._reuse, self._new_name, name_scope_)
            store.open_variable_scope(self._new_name)
        store.current_scope = scope
        self._last_variable_scope_object = scope
        return scope

    def __exit__(self, *exc):
        store = self._var_scope_store
        if store.current_scope is not self._last_variable_scope_object:
            raise RuntimeError("Improper nesting of variable_scope.")
        if isinstance(self._name_or_scope, VariableScope):
            store.variable_scopes_count = self._old_subscopes
        else:
            store.close_variable_subscopes(self._new_name)
        store.current_scope = self._old


def _maybe_wrap_custom_getter(custom_getter, old_getter):
    """A getter calling `custom_getter` with the outer scope's getter inside."""
    if old_getter is None:
        return custom_getter

    def wrapped_custom_getter(getter, *args, **kwargs):
        return custom_getter(functools.partial(old_getter, getter), *args, **kwargs)

    return wrapped_custom_getter


def _get_unique_variable_scope(prefix):
    """`prefix`, or `prefix_N`, unused in the current variable scope."""
    current = get_variable_scope()
    name = current.name + "/" + prefix if current.name else prefix
    return prefix + get_variable_scope_store().first_unused(name)[len(name):]


def _current_name_scope():
    if context.executing_eagerly():
        return _scope_state.eager_names[-1].rstrip("/")
    return get_default_graph().get_name_scope()


def _graph_of(values):
    for v in values:
        graph = None if isinstance(v, EagerTensor) else getattr(v, "graph", None)
        if graph is not None:
            return graph
    return get_default_graph()


class variable_scope:  # noqa: N801 - TF's name
    """A context manager opening a variable scope (and a name scope) for `get_variable`:
    `with variable_scope("foo"): with variable_scope("bar"): get_variable("v", [1])` is "foo/bar/v:0".

    Args:
      name_or_scope: a name, or a VariableScope to re-enter (its name and defaults).
      default_name: used, made unique ("bar", "bar_1", ...), when name_or_scope is None.
      values: tensors the ops in the scope take (their graph becomes the default).
      initializer, regularizer, partitioner, custom_getter, dtype, constraint: defaults for the
        variables made inside (inherited by sub-scopes unless they set their own).
      reuse: True (get existing variables only), AUTO_REUSE (get or make), or None/False
        (inherit: the scope reuses if its parent does).
      auxiliary_name_scope: if False, no new name scope is opened (re-entering a captured scope).
    Yields the VariableScope.
    """

    def __init__(self, name_or_scope, default_name=None, values=None, initializer=None, regularizer=None,
                 caching_device=None, partitioner=None, custom_getter=None, reuse=None, dtype=None, use_resource=None,
                 constraint=None, auxiliary_name_scope=True):
        if default_name is None and name_or_scope is None:
            raise TypeError("If default_name is None then name_or_scope is required")
        if reuse is False:
            reuse = None          # False means None: scopes always inherit
        if not (reuse is True or reuse is None or reuse is AUTO_REUSE):
            raise ValueError("The reuse parameter must be True or False or None.")
        if not isinstance(auxiliary_name_scope, bool):
            raise TypeError(f"The auxiliary_name_scope must be `True` or `False`, while get {auxiliary_name_scope}")
        self._name_or_scope = name_or_scope
        self._default_name = default_name
        self._values = list(values) if values is not None else []
        self._scope_args = dict(initializer=initializer, regularizer=regularizer, caching_device=caching_device,
                                partitioner=partitioner, custom_getter=custom_getter, dtype=dtype,
                                use_resource=use_resource, constraint=constraint)
        self._reuse = reuse
        self._auxiliary_name_scope = auxiliary_name_scope
        self._in_graph_mode = not context.executing_eagerly()
        self._graph = _graph_of(self._values) if self._in_graph_mode else None
        self._graph_context_manager = None
        self._cached_pure_variable_scope = None
        self._current_name_scope = None

    def __enter__(self):
        if self._in_graph_mode:
            self._graph_context_manager = self._graph.as_default()
            self._graph_context_manager.__enter__()
        try:
            if self._cached_pure_variable_scope is not None:      # re-entering this object
                if self._current_name_scope is not None:
                    self._current_name_scope.__enter__()
                return self._cached_pure_variable_scope.__enter__()
            return self._enter_scope_uncached()
        except BaseException:
            if self._graph_context_manager is not None:
                self._graph_context_manager.__exit__(None, None, None)
            raise

    def _enter(self, name_or_scope, current_name_scope, old_name_scope=None, reuse=None):
        if current_name_scope is not None:
            entered = current_name_scope.__enter__()
            self._current_name_scope = current_name_scope
            if old_name_scope is None:
                old_name_scope = entered
        pure = _pure_variable_scope(name_or_scope, reuse=reuse, old_name_scope=old_name_scope, **self._scope_args)
        try:
            scope = pure.__enter__()
        except BaseException:
            if self._current_name_scope is not None:
                self._current_name_scope.__exit__(None, None, None)
            raise
        self._cached_pure_variable_scope = pure
        return scope

    def _enter_scope_uncached(self):
        if self._auxiliary_name_scope:
            current_name_scope = None
        else:                                                     # re-enter the current name scope
            current = _current_name_scope()
            current_name_scope = name_scope(current + "/" if current else current, skip_on_eager=False)
        scope = self._name_or_scope
        if scope is not None:
            if not isinstance(scope, (VariableScope, str)):
                raise TypeError("VariableScope: name_or_scope must be a string or VariableScope.")
            ns = scope if isinstance(scope, str) else scope.name.split("/")[-1]
            if not (ns or current_name_scope):                    # entering the root scope
                return self._enter(scope, None, reuse=self._reuse)
            current_name_scope = current_name_scope or name_scope(ns, skip_on_eager=False)
            old = None if isinstance(scope, str) else scope.original_name_scope
            return self._enter(scope, current_name_scope, old_name_scope=old, reuse=self._reuse)
        if self._reuse:
            raise ValueError("reuse=True cannot be used without a name_or_scope")
        current_name_scope = current_name_scope or name_scope(self._default_name, skip_on_eager=False)
        return self._enter(_get_unique_variable_scope(self._default_name), current_name_scope)

    def __exit__(self, *exc):
        try:
            self._cached_pure_variable_scope.__exit__(*exc)
        finally:
            try:
                if self._current_name_scope is not None:
                    self._current_name_scope.__exit__(*exc)
            finally:
                if self._graph_context_manager is not None:
                    self._graph_context_manager.__exit__(*exc)
        return False


@contextlib.contextmanager
def variable_op_scope(values, name_or_scope, default_name=None, **kwargs):
    """Deprecated: `variable_scope(name_or_scope, default_name, values, **kwargs)`."""
    with variable_scope(name_or_scope, default_name=default_name, values=values, **kwargs) as scope:
        yield scope

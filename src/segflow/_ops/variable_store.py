"""The variable store behind `get_variable`: variables by full name, made once and shared under the reuse rules (`VariableStore`); partitioned variables made shard by shard. Scopes are in variable_scope.py."""
import enum
import functools
import inspect
from collections.abc import Sequence
from segflow._core import dtypes, mode as context, shapes as tensor_shape
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import (GraphKeys, add_to_collection, add_to_collections, name_scope)
from segflow._core.tensor import Tensor
from segflow._ops import init_ops
from segflow._ops.partitioned_variables import (PartitionedVariable, call_partitioner, check_compatible,
                                                check_reuse, check_shards, make_shards, slice_dim_and_num_slices)
from segflow._ops.variable import ResourceVariable
from segflow._ops.variables import VariableAggregation, VariableSynchronization

__all__ = ["AUTO_REUSE", "REGULARIZATION_LOSSES", "VariableStore", "no_regularizer",
           "enable_resource_variables", "disable_resource_variables", "resource_variables_enabled"]

REGULARIZATION_LOSSES = "regularization_losses"


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE   # get_variable makes the variable if absent, returns it if present


def enable_resource_variables():
    """segflow's variables are always resource variables."""


def resource_variables_enabled():
    return True


def disable_resource_variables():
    """Accepted for compatibility; segflow has only resource variables."""


def no_regularizer(_):
    """A regularizer that regularizes nothing (stops a scope's default)."""
    return None


def _params(fn):
    try:
        return list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None


def _accepts(fn, arg):
    return any(p.name == arg or p.kind is p.VAR_KEYWORD for p in _params(fn) or ())


def _takes_no_arguments(fn):
    params = _params(fn)
    return params is not None and all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                                      for p in params)


# ----------------------------------------------------------------------------------------------
# The variable store


class VariableStore:
    """Named variables (and partitioned variables) of one graph, or of an EagerVariableStore."""

    def __init__(self):
        self._vars = {}
        self._partitioned_vars = {}
        self._store_eager_variables = False

    def get_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None, reuse=None,
                     trainable=None, collections=None, caching_device=None, partitioner=None, validate_shape=True,
                     use_resource=None, custom_getter=None, constraint=None,
                     synchronization=VariableSynchronization.AUTO, aggregation=VariableAggregation.NONE):
        """The variable `name` from the store, or a new one (see `get_variable`)."""
        if custom_getter is not None and not callable(custom_getter):
            raise ValueError(f"Passed a custom_getter which is not callable: {custom_getter}")
        if context.executing_eagerly():
            if not self._store_eager_variables and reuse:
                raise RuntimeError("When eager execution is enabled variable reuse is only supported when an "
                                   "EagerVariableStore is active. See the documentation on EagerVariableStore for "
                                   "example usage.")
            if self._store_eager_variables:
                reuse = AUTO_REUSE
        dtype = dtypes.as_dtype(dtype) if dtype is not None else dtypes.float32
        if trainable is None:
            trainable = synchronization != VariableSynchronization.ON_READ

        def _true_getter(name, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None, reuse=None,
                         trainable=None, collections=None, caching_device=None, partitioner=None, **kwargs):
            kwargs.update(shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer, reuse=reuse,
                          trainable=trainable, collections=collections, caching_device=caching_device)
            is_scalar = shape is not None and isinstance(shape, Sequence) and not shape
            if partitioner is not None and not is_scalar:
                if not callable(partitioner):
                    raise ValueError(f"Partitioner must be callable, but received: {partitioner}")
                with name_scope(None):
                    return self._get_partitioned_variable(name, partitioner, **kwargs)
            if reuse is True and partitioner is None and name in self._partitioned_vars:
                return self._get_partitioned_variable(name, None, **kwargs)
            if f"{name}/part_0" in self._vars:
                raise ValueError(f"No partitioner was provided, but a partitioned version of the variable was found: "
                                 f"{name}/part_0. Perhaps a variable of the same name was already created with "
                                 "partitioning?")
            return self._get_single_variable(name, **kwargs)

        kwargs = dict(shape=shape, dtype=dtype, initializer=initializer, regularizer=regularizer, reuse=reuse,
                      trainable=trainable, collections=collections, caching_device=caching_device,
                      partitioner=partitioner, validate_shape=validate_shape, use_resource=use_resource,
                      synchronization=synchronization, aggregation=aggregation)
        if custom_getter is not None:
            if _accepts(custom_getter, "constraint"):
                kwargs["constraint"] = constraint
            return custom_getter(getter=_true_getter, name=name, **kwargs)
        return _true_getter(name, constraint=constraint, **kwargs)

    def _get_partitioned_variable(self, name, partitioner, shape=None, dtype=dtypes.float32, initializer=None,
                                  reuse=None, **kwargs):
        """The PartitionedVariable `name` (shards `name/part_i`), found or made."""
        if name in self._vars:
            raise ValueError(f"A partitioner was provided, but an unpartitioned version of the variable was found: "
                             f"{name}.  Perhaps a variable of the same name was already created without "
                             "partitioning?")
        from_value = initializer is not None and not callable(initializer)
        shape = tensor_shape.as_shape(shape)
        if from_value:
            initializer = initializer if isinstance(initializer, Tensor) else convert_to_tensor(initializer, dtype)
            shape = shape.merge_with(initializer.shape)
            dtype = initializer.dtype.base_dtype
        partitions = call_partitioner(partitioner, shape, dtype) if not reuse or partitioner else None
        if name in self._partitioned_vars:
            if reuse is False:
                raise ValueError(f"Partitioned variable with name {name} already exists. Did you mean to set "
                                 "reuse=True or reuse=tf.AUTO_REUSE in VarScope?")
            check_reuse(self._partitioned_vars[name], name, shape, dtype, partitions)
            return self._partitioned_vars[name]
        if reuse is True:
            raise ValueError(f"PartitionedVariable {name} does not exist, or was not created with tf.get_variable(). "
                             "Did you mean to set reuse=False or reuse=tf.AUTO_REUSE in VarScope?")
        check_shards(name, slice_dim_and_num_slices(partitions)[1], self._vars)
        if initializer is None:
            initializer = self._get_default_initializer(name, shape, dtype)

        def make_shard(shard_name, shard_shape, init, info):
            return self._get_single_variable(shard_name, shape=shard_shape, dtype=dtype, initializer=init,
                                             partition_info=info, reuse=reuse, **kwargs)

        shards = make_shards(name, shape.as_list(), partitions, initializer, from_value, make_shard)
        result = PartitionedVariable(name=name, shape=shape, dtype=dtype, variable_list=shards, partitions=partitions)
        if not context.executing_eagerly() or self._store_eager_variables:
            self._partitioned_vars[name] = result
        return result

    def _get_single_variable(self, name, shape=None, dtype=dtypes.float32, initializer=None, regularizer=None,
                             partition_info=None, reuse=None, trainable=None, collections=None, caching_device=None,
                             validate_shape=True, use_resource=None, constraint=None,
                             synchronization=VariableSynchronization.AUTO, aggregation=VariableAggregation.NONE):
        """One variable (a whole variable or a shard), found or made."""
        from_value = initializer is not None and not callable(initializer)
        if shape is not None and from_value:
            raise ValueError("If initializer is a constant, do not specify shape.")
        dtype = dtypes.as_dtype(dtype)
        shape = tensor_shape.as_shape(shape)
        if name in self._vars:
            if reuse is False:
                raise ValueError(f"Variable {name} already exists, disallowed. Did you mean to set reuse=True or "
                                 "reuse=tf.AUTO_REUSE in VarScope?")
            check_compatible("share variable", name, shape, dtype, self._vars[name])
            return self._vars[name]
        if reuse is True:
            raise ValueError(f"Variable {name} does not exist, or was not created with tf.get_variable(). Did you mean "
                             "to set reuse=tf.AUTO_REUSE in VarScope?")
        if initializer is None:
            initializer = self._get_default_initializer(name, shape, dtype)
        if from_value:
            init_val, variable_dtype = initializer, None
        else:
            if inspect.isclass(initializer):
                initializer = initializer()
            if shape.is_fully_defined():
                dims = shape.as_list()
                if _accepts(initializer, "partition_info"):
                    init_val = functools.partial(initializer, dims, dtype=dtype, partition_info=partition_info)
                else:
                    init_val = functools.partial(initializer, dims, dtype=dtype)
                variable_dtype = dtype.base_dtype
            elif _takes_no_arguments(initializer):
                init_val, variable_dtype = initializer, None
            else:
                raise ValueError("The initializer passed is not valid. It should be a callable with no arguments and "
                                 "the shape should not be provided or an instance of `tf.keras.initializers.*' and "
                                 "`shape` should be fully defined.")
        v = ResourceVariable(initial_value=init_val, name=name, trainable=trainable, collections=collections,
                             caching_device=caching_device, dtype=variable_dtype, validate_shape=validate_shape,
                             constraint=constraint, synchronization=synchronization, aggregation=aggregation)
        eager = context.executing_eagerly()
        if eager and self._store_eager_variables:
            add_to_collections(collections or [GraphKeys.GLOBAL_VARIABLES], v)
            if trainable:
                add_to_collection(GraphKeys.TRAINABLE_VARIABLES, v)
        if not eager or self._store_eager_variables:
            self._vars[name] = v
        if regularizer:
            self._regularize(name, v, regularizer)
        return v

    @staticmethod
    def _regularize(name, v, regularizer):
        with name_scope(name + "/Regularizer/"):
            loss = regularizer(v)
        if loss is not None:
            add_to_collection(REGULARIZATION_LOSSES, loss)

    @staticmethod
    def _get_default_initializer(name, shape=None, dtype=dtypes.float32):
        """glorot_uniform for floating dtypes, zeros for integers, bool and string."""
        if dtype.is_floating:
            return init_ops.glorot_uniform_initializer()
        if dtype.is_integer or dtype.is_unsigned or dtype.is_bool or dtype == dtypes.string:
            return init_ops.zeros_initializer()
        raise ValueError(f"An initializer for variable {name} of {dtype.base_dtype} is required")

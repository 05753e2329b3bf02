"""Partitioned variables (TF's `partitioned_variables` and `variables.PartitionedVariable`): a
variable split along one axis into shard variables, and the partitioners that decide the split.

    p = fixed_size_partitioner(3)                      # p(shape=TensorShape([10, 4]), dtype=...) -> [3, 1]
    v = get_variable("emb", [10, 4], partitioner=p)    # (variable_scope.py) shards emb/part_0..2: 4, 3, 3 rows
    list(v)                                            # the shard variables
    sf.convert_to_tensor(v)                            # the whole [10, 4] value (concat of the shards)

Shard sizes are TensorFlow's: with `n` shards of a dimension `d`, the first `d % n` shards hold
`d // n + 1` slices and the others `d // n`. `create_partitioned_variables` (the legacy
interface) is in variable_scope.py, beside the store it drives.
"""
import math
from collections.abc import Sequence

from segflow._core import dtypes, shapes as tensor_shape
from segflow._core.convert import register_tensor_conversion_function
from segflow._core.graph import control_dependencies, name_scope
from segflow._ops import join as join_ops
from segflow._ops import shape as shape_ops
from segflow._ops import slicing as slicing_ops

__all__ = ["PartitionedVariable", "SaveSliceInfo", "fixed_size_partitioner", "min_max_variable_partitioner",
           "variable_axis_size_partitioner"]


# ----------------------------------------------------------------------------------------------
# Where a shard sits in the whole


class PartitionInfo:
    """What an initializer is told about the shard it initializes: the whole variable's shape and
    the shard's offset in it (TF's `variable_scope._PartitionInfo`)."""

    def __init__(self, full_shape, var_offset):
        for arg, value in (("full_shape", full_shape), ("var_offset", var_offset)):
            if not isinstance(value, Sequence) or isinstance(value, str):
                raise TypeError(f"`{arg}` must be a sequence (like tuple or list) instead of {type(value).__name__}")
        if len(var_offset) != len(full_shape):
            raise ValueError(f"Expected equal length, but `var_offset` is of length {len(var_offset)} while "
                             f"full_shape is of length {len(full_shape)}.")
        for offset, dim in zip(var_offset, full_shape):
            if offset < 0 or offset >= dim:
                raise ValueError(f"Expected 0 <= offset < shape but found offset={offset}, shape={dim} for "
                                 f"var_offset={var_offset}, full_shape={full_shape}")
        self._full_shape = full_shape
        self._var_offset = var_offset

    @property
    def full_shape(self):
        return self._full_shape

    @property
    def var_offset(self):
        return self._var_offset

    def single_offset(self, shape):
        """The offset along the partitioned dimension (0 if the variable is not partitioned)."""
        dim = self.single_slice_dim(shape)
        return 0 if dim is None else self.var_offset[dim]

    def single_slice_dim(self, shape):
        """The dimension a shard of `shape` is cut along, or None if it is the whole variable."""
        if not isinstance(shape, Sequence) or isinstance(shape, str):
            raise TypeError(f"`shape` must be a sequence (like tuple or list) instead of {type(shape).__name__}")
        if len(shape) != len(self.full_shape):
            raise ValueError(f"Expected equal length, but received shape={shape} of length {len(shape)} while "
                             f"self.full_shape={self.full_shape} is of length {len(self.full_shape)}.")
        for i, dim in enumerate(shape):
            if self.var_offset[i] + dim > self.full_shape[i]:
                raise ValueError(f"With self.var_offset={self.var_offset}, a partition of shape={shape} would exceed "
                                 f"self.full_shape={self.full_shape} in dimension {i}.")
        slice_dim = None
        for i, dim in enumerate(shape):
            if dim == self.full_shape[i]:
                continue
            if slice_dim is not None:
                raise ValueError(f"Cannot use single_slice_dim() with shape={shape} and self.full_shape="
                                 f"{self.full_shape} since slice dim could be either dimension {i} or {slice_dim}.")
            slice_dim = i
        return slice_dim


class SaveSliceInfo:
    """A shard's place in the whole variable (TF's `Variable.SaveSliceInfo`), kept on each shard
    variable as `_save_slice_info`."""

    def __init__(self, full_name=None, full_shape=None, var_offset=None, var_shape=None):
        self.full_name = full_name
        self.full_shape = full_shape
        self.var_offset = var_offset
        self.var_shape = var_shape

    @property
    def spec(self):
        """TF's slice spec string: "10 4 3,3:0,4" (full shape, then offset,size per dimension)."""
        full = " ".join(str(int(d)) for d in self.full_shape) + " "
        return full + ":".join(f"{int(o)},{int(s)}" for o, s in zip(self.var_offset, self.var_shape))

    def __repr__(self):
        return (f"SaveSliceInfo(full_name={self.full_name!r}, full_shape={self.full_shape}, "
                f"var_offset={self.var_offset}, var_shape={self.var_shape})")


def _save_slice_info(var):
    return getattr(var, "_save_slice_info", None)


def call_partitioner(partitioner, shape, dtype):
    """`partitioner(shape=, dtype=)`, checked: one entry >= 1 per dimension, at most one above 1."""
    if not shape.is_fully_defined():
        raise ValueError(f"Shape of a new partitioned variable must be fully defined, but instead was {shape}.")
    if shape.ndims < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1, shape: {shape}")
    slicing = partitioner(shape=shape, dtype=dtype)
    if not isinstance(slicing, Sequence):
        raise ValueError(f"Partitioner must return a sequence, but saw: {slicing}")
    if len(slicing) != shape.ndims:
        raise ValueError(f"Partitioner returned a partition list that does not match the Variable's rank: "
                         f"{slicing} vs. {shape}")
    if any(p < 1 for p in slicing):
        raise ValueError(f"Partitioner returned zero partitions for some axes: {slicing}")
    if sum(p > 1 for p in slicing) > 1:
        raise ValueError(f"Can only slice a variable along one dimension: shape: {shape}, partitioning: {slicing}")
    return slicing


def slice_dim_and_num_slices(slicing):
    """(the partitioned dimension, how many shards); (0, 1) when nothing is split."""
    for dim, num in enumerate(slicing):
        if num > 1:
            return dim, num
    return 0, 1


def iter_slices(full_shape, num_slices, slice_dim):
    """(offset, shape) of each shard: the first `full_shape[slice_dim] % num_slices` one larger."""
    excess = full_shape[slice_dim] % num_slices
    offset = [0] * len(full_shape)
    min_len = full_shape[slice_dim] // num_slices
    for i in range(num_slices):
        shape = list(full_shape)
        shape[slice_dim] = min_len + (1 if i < excess else 0)
        yield list(offset), shape
        offset[slice_dim] += shape[slice_dim]


def check_shards(name, num_slices, existing):
    """Raises if the shards `existing` (names) already hold a different partitioning of `name`."""
    if f"{name}/part_0" not in existing:
        return
    if f"{name}/part_{num_slices - 1}" not in existing:
        raise ValueError(f"Partitioner returned a different partitioning than what was already found.  Partitioner "
                         f"returned {num_slices} shards, and shard {name}/part_0 was found, but "
                         f"{name}/part_{num_slices - 1} was not.")
    if f"{name}/part_{num_slices}" in existing:
        raise ValueError(f"Partitioner returned a different partitioning than what was already found.  Partitioner "
                         f"returned {num_slices} shards, and shard {name}/part_0 was found, but so was the extra "
                         f"shard {name}/part_{num_slices}.")


def check_compatible(action, name, shape, dtype, found):
    """Raises unless the existing variable `found` has a shape and dtype compatible with the
    requested ones (`action`: "share variable", "reuse partitioned variable")."""
    if not shape.is_compatible_with(found.get_shape()):
        raise ValueError(f"Trying to {action} {name}, but specified shape {shape} and found shape "
                         f"{found.get_shape()}.")
    if not dtype.is_compatible_with(found.dtype):
        raise ValueError(f"Trying to {action} {name}, but specified dtype {dtype.name} and found dtype "
                         f"{found.dtype.name}.")


def check_reuse(existing, name, shape, dtype, partitions):
    """Raises unless the PartitionedVariable `existing` matches the requested shape, dtype and
    partitions (None: any)."""
    check_compatible("reuse partitioned variable", name, shape, dtype, existing)
    if partitions is not None and existing._get_partitions() != list(partitions):
        raise ValueError(f"Trying to reuse partitioned variable {name}, but specified partitions {partitions} and "
                         f"found partitions {existing._get_partitions()}.")


def make_shards(name, full_shape, partitions, initializer, from_value, make_shard):
    """The shard variables `name/part_i` of a variable of `full_shape`.

    `make_shard(shard_name, shape, initializer, partition_info)` makes one (the store's). A value
    `initializer` (a tensor of the whole shape, `from_value`) is sliced for each shard, with shape
    None; a callable one is passed on with the shard's shape.
    """
    slice_dim, num_slices = slice_dim_and_num_slices(partitions)
    shards = []
    for i, (offset, var_shape) in enumerate(iter_slices(full_shape, num_slices, slice_dim)):
        shard_name = f"{name}/part_{i}"
        with name_scope(shard_name + "/PartitionedInitializer", skip_on_eager=False):
            init = slicing_ops.slice(initializer, offset, var_shape) if from_value else initializer
        with name_scope(None):
            var = make_shard(shard_name, None if from_value else var_shape, init,
                             PartitionInfo(full_shape=full_shape, var_offset=offset))
        var._save_slice_info = SaveSliceInfo(name, full_shape, offset, var_shape)
        shards.append(var)
    return shards


# ----------------------------------------------------------------------------------------------
# PartitionedVariable


class PartitionedVariable:
    """A variable made of shard variables split along one axis (what `get_variable` returns with a
    partitioner). Iterating gives the shards in offset order; converting to a tensor concatenates
    them (`as_tensor()`).

    Args:
      name: the whole variable's name (the shards are `name/part_i`).
      shape: the whole shape (list or TensorShape); dtype: the shards' dtype.
      variable_list: the shard variables, each with a `_save_slice_info` (SaveSliceInfo).
      partitions: the partitioner's answer, one count per dimension.
    """

    def __init__(self, name, shape, dtype, variable_list, partitions):
        if not isinstance(variable_list, (list, tuple)):
            raise TypeError(f"variable_list is not a list or tuple: {variable_list}")
        if not isinstance(partitions, (list, tuple)):
            raise TypeError(f"partitions is not a list or tuple: {partitions}")
        if not all(p >= 1 for p in partitions):
            raise ValueError(f"partition values must be positive: {partitions}")
        if not variable_list:
            raise ValueError("variable_list may not be empty")
        if not all(_save_slice_info(v) is not None for v in variable_list):
            raise ValueError(f"All variables must have a save_slice_info available: {[v.name for v in variable_list]}")
        if len(shape) != len(partitions):
            raise ValueError(f"len(shape) != len(partitions): {shape} vs. {partitions}")
        full = list(tensor_shape.as_shape(shape).as_list())
        for v in variable_list:
            if list(_save_slice_info(v).full_shape) != full:
                raise ValueError(f"All variables' full shapes must match shape: {shape}; but full shapes were: "
                                 f"{[_save_slice_info(v).full_shape]}")
        self._variable_list = sorted(variable_list, key=lambda v: _save_slice_info(v).var_offset)
        self._name = name
        self._shape = tensor_shape.as_shape(shape)
        self._dtype = dtypes.as_dtype(dtype)
        self._partitions = list(partitions)
        self._as_tensor = None

    def __iter__(self):
        return iter(self._variable_list)

    def __len__(self):
        axes = self._partition_axes()
        if len(axes) > 1:
            raise ValueError(f"Cannot get a length for {len(axes)} > 1 partition axes")
        return len(self._variable_list)

    def __repr__(self):
        return (f"<sf.PartitionedVariable '{self._name}' shape={self._shape} dtype={self._dtype.name} "
                f"partitions={self._partitions}>")

    def _partition_axes(self):
        if all(p == 1 for p in self._partitions):
            return [0]
        return [i for i, p in enumerate(self._partitions) if p > 1]

    def _concat(self):
        if len(self._variable_list) == 1:
            with name_scope(None):
                return shape_ops.identity(self._variable_list[0].value(), name=self._name)
        axes = self._partition_axes()
        if len(axes) > 1:
            raise NotImplementedError(f"Cannot concatenate along more than one dimension: {axes}.  Multi-axis "
                                      "partition concat is not supported")
        with name_scope(self._name + "/ConcatPartitions/"):
            concatenated = join_ops.concat([v.value() for v in self._variable_list], axes[0])
        with name_scope(None):
            return shape_ops.identity(concatenated, name=self._name)

    def as_tensor(self):
        """The whole value: the shards concatenated along the partition axis (a new read)."""
        with control_dependencies(None):
            return self._concat()

    def value(self):
        return self.as_tensor()

    read_value = value

    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        return self._dtype

    @property
    def shape(self):
        return self._shape

    def get_shape(self):
        return self._shape

    @property
    def _distribute_strategy(self):
        return None

    def _get_variable_list(self):
        return self._variable_list

    def _get_partitions(self):
        return self._partitions

    def get_partitions(self):
        return self._partitions

    def _apply_assign_fn(self, assign_fn, value):
        axes = self._partition_axes()
        if len(axes) > 1:
            raise NotImplementedError(f"Cannot do assign action along more than one dimension: {axes}.  "
                                      "Multi-axis partition assign action is not supported ")
        if isinstance(value, list):
            if len(value) != len(self._variable_list):
                raise ValueError(f"Expected {len(self._variable_list)} values, one per shard, got {len(value)}")
            values = value
        elif isinstance(value, PartitionedVariable):
            values = list(value)
        else:
            sizes = [tensor_shape.dimension_value(v.shape[axes[0]]) for v in self._variable_list]
            values = join_ops.split(value, sizes, axis=axes[0])
        return [assign_fn(v, values[i]) for i, v in enumerate(self._variable_list)]

    def assign(self, value, use_locking=False, name=None, read_value=True):
        """Assigns `value` (the whole value, a list with one value per shard, or another
        PartitionedVariable); returns one update per shard."""
        return self._apply_assign_fn(
            lambda var, v: var.assign(v, use_locking=use_locking, name=name, read_value=read_value), value)

    def assign_add(self, value, use_locking=False, name=None, read_value=True):
        return self._apply_assign_fn(
            lambda var, v: var.assign_add(v, use_locking=use_locking, name=name, read_value=read_value), value)

    def assign_sub(self, value, use_locking=False, name=None, read_value=True):
        return self._apply_assign_fn(
            lambda var, v: var.assign_sub(v, use_locking=use_locking, name=name, read_value=read_value), value)


def _partitioned_to_tensor(var, dtype=None, name=None, as_ref=False):
    if dtype is not None and not dtypes.as_dtype(dtype).is_compatible_with(var.dtype):
        raise ValueError(f"Incompatible type conversion requested to type '{dtypes.as_dtype(dtype).name}' for "
                         f"variable of type '{var.dtype.name}'")
    if as_ref:
        raise NotImplementedError("PartitionedVariable doesn't support being used as a reference.")
    return var.as_tensor()


register_tensor_conversion_function(PartitionedVariable, _partitioned_to_tensor)


# ----------------------------------------------------------------------------------------------
# Partitioners: (shape: TensorShape, dtype) -> a list of shard counts, one per dimension


def _element_bytes(dtype, bytes_per_string_element):
    dtype = dtypes.as_dtype(dtype)
    return bytes_per_string_element if dtype.base_dtype == dtypes.string else dtype.size


def variable_axis_size_partitioner(max_shard_bytes, axis=0, bytes_per_string_element=16, max_shards=None):
    """A partitioner that keeps each shard under `max_shard_bytes` (at least one slice per shard,
    at most `max_shards` shards) by splitting along `axis`."""
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError(f"Both max_shard_bytes and bytes_per_string_element must be positive. Currently, "
                         f"max_shard_bytes is {max_shard_bytes} andbytes_per_string_element is "
                         f"{bytes_per_string_element}")
    if max_shards and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape, dtype):
        if not isinstance(shape, tensor_shape.TensorShape):
            raise ValueError(f"shape is not a TensorShape: {shape}")
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        element_size = _element_bytes(dtype, bytes_per_string_element)
        partitions = [1] * shape.ndims
        dim = shape.as_list()[axis]
        bytes_per_slice = 1.0 * (shape.num_elements() / dim) * element_size if dim else float(element_size)
        slices_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_slice)) if bytes_per_slice else 1
        axis_shards = int(math.ceil(1.0 * dim / slices_per_shard))
        if max_shards:
            axis_shards = min(max_shards, axis_shards)
        partitions[axis] = axis_shards
        return partitions

    return _partitioner


def min_max_variable_partitioner(max_partitions=1, axis=0, min_slice_size=256 << 10, bytes_per_string_element=16):
    """A partitioner giving each shard at least `min_slice_size` bytes, with at most
    `max_partitions` shards (and no more than the dimension's size) along `axis`."""

    def _partitioner(shape, dtype):
        if axis >= len(shape):
            raise ValueError(f"Cannot partition variable along axis {axis} when shape is only {shape}")
        total_bytes = shape.num_elements() * _element_bytes(dtype, bytes_per_string_element)
        partitions = total_bytes / min_slice_size
        out = [1] * len(shape)
        out[axis] = max(1, min(shape.as_list()[axis], max_partitions, int(math.ceil(partitions))))
        return out

    return _partitioner


def fixed_size_partitioner(num_shards, axis=0):
    """A partitioner splitting `axis` into `num_shards` shards (fewer if the dimension is smaller)."""

    def _partitioner(shape, **unused_args):
        out = [1] * len(shape)
        out[axis] = min(num_shards, shape.as_list()[axis])
        return out

    return _partitioner

"""What a checkpoint entry is made of, and how its value is read from and written to variables,
eagerly or in a Session (shared by `Saver` and `Checkpoint`).

A `Saveable` is one checkpoint tensor: a variable, or the shards of a partitioned variable saved
as one tensor of the whole shape under the whole variable's name (TF saves the slices of one
tensor; restoring into any other partitioning, or into an unpartitioned variable, works in both).

Restoring is two steps, so that a failed restore changes nothing: `prepare_restore` reads every
tensor and checks every name, dtype and shape, then `assign_values` writes them all (eagerly one
assign each; in a Session one run feeding every value to the variables' restore ops).
"""
import math

import numpy as np

from segflow._core import dtypes, errors, mode as context, shapes as tensor_shape
from segflow._core.graph import control_dependencies
from segflow._core.mode import get_default_session
from segflow._ops import shape as array_ops
from segflow._ops.partitioned_variables import PartitionedVariable

__all__ = ["Saveable", "RestoreShapeError", "saveables_from_var_list", "read_values", "prepare_restore",
           "assign_values", "is_variable", "variable_key"]


class RestoreShapeError(errors.InvalidArgumentError, ValueError):
    """A checkpoint tensor whose shape does not fit its variable: an InvalidArgumentError (TF in a
    graph) that `except ValueError` (TF eagerly) also catches."""


def is_variable(x):
    return not isinstance(x, type) and hasattr(x, "handle") and hasattr(x, "assign") and hasattr(x, "_shared_name")


def variable_key(var):
    """The name a Saver saves `var` under: its op name ("dense/kernel" for "dense/kernel:0")."""
    return var._shared_name


def _in_graph(var):
    return bool(getattr(var, "_in_graph", False))


class Saveable:
    """One checkpoint tensor: `parts` is [(variable, offset or None, shape or None)] (one part with
    None for a plain variable; the shards' places in the whole for a partitioned one)."""

    def __init__(self, key, parts, shape, dtype):
        self.key = key
        self.parts = parts
        self.shape = tensor_shape.as_shape(shape)
        self.dtype = dtypes.as_dtype(dtype)

    @classmethod
    def of_variable(cls, key, var):
        return cls(key, [(var, None, None)], var.shape, var.dtype)

    @classmethod
    def of_shards(cls, key, shards):
        shards = list(shards)
        infos = [getattr(v, "_save_slice_info", None) for v in shards]
        if any(i is None for i in infos):
            raise TypeError(f"Saving '{key}': every shard needs a save_slice_info (made by a partitioner)")
        full = [int(d) for d in infos[0].full_shape]
        if any([int(d) for d in i.full_shape] != full for i in infos):
            raise ValueError(f"Saving '{key}': the shards disagree on the whole shape")
        covered = sum(math.prod(int(d) for d in i.var_shape) for i in infos)
        if covered != math.prod(full):
            raise ValueError(f"Saving '{key}': the shards given cover {covered} of its {math.prod(full)} elements; "
                             "pass every shard (or the PartitionedVariable)")
        parts = [(v, [int(o) for o in i.var_offset], [int(s) for s in i.var_shape]) for v, i in zip(shards, infos)]
        return cls(key, parts, full, shards[0].dtype)

    @property
    def variables(self):
        return [p[0] for p in self.parts]

    def __repr__(self):
        return f"<Saveable '{self.key}' shape={self.shape} dtype={self.dtype.name} parts={len(self.parts)}>"


def _region(offset, shape):
    return tuple(slice(o, o + s) for o, s in zip(offset, shape))


def saveables_from_var_list(var_list):
    """Saveables of a Saver's `var_list`: a list (names from the variables; shards with the same
    whole variable grouped) or a dict {name: variable, PartitionedVariable or list of shards}.

    Raises:
      TypeError: an entry that is not a variable.
      ValueError: two entries with the same name.
    """
    out = {}

    def add(key, saveable):
        if key in out:
            raise ValueError(f"At least two variables have the same name: {key}")
        out[key] = saveable

    if isinstance(var_list, dict):
        for key, value in var_list.items():
            if not isinstance(key, str):
                raise TypeError(f"var_list keys must be strings (checkpoint names), got {key!r}")
            if isinstance(value, PartitionedVariable):
                add(key, Saveable.of_shards(key, list(value)))
            elif isinstance(value, (list, tuple)):
                for v in value:
                    _check_variable(v)
                add(key, Saveable.of_shards(key, value) if len(value) != 1 or
                    getattr(value[0], "_save_slice_info", None) else Saveable.of_variable(key, value[0]))
            else:
                _check_variable(value)
                add(key, Saveable.of_variable(key, value))
        return list(out.values())
    groups = {}
    for var in var_list:
        if isinstance(var, PartitionedVariable):
            add(var.name, Saveable.of_shards(var.name, list(var)))
            continue
        _check_variable(var)
        info = getattr(var, "_save_slice_info", None)
        if info is not None:
            groups.setdefault(info.full_name, []).append(var)
        else:
            add(variable_key(var), Saveable.of_variable(variable_key(var), var))
    for key, shards in groups.items():
        ids = {id(v) for v in shards}
        if len(ids) != len(shards):
            raise ValueError(f"At least two variables have the same name: {key}")
        add(key, Saveable.of_shards(key, shards))
    return list(out.values())


def _check_variable(v):
    if not is_variable(v):
        raise TypeError(f"Variable to save is not a Variable: {v!r}")


# ----------------------------------------------------------------------------------------------
# Reading values


def _session_for(saveables, session):
    if not any(_in_graph(v) for s in saveables for v in s.variables):
        return None
    session = session or get_default_session()
    if session is None:
        raise ValueError("Saving or restoring graph variables needs a Session: pass `sess`/`session`, or run "
                         "inside `with sess.as_default():`")
    return session


def read_values(saveables, session=None):
    """{key: array} of the saveables' current values (graph variables are read in `session`)."""
    session = _session_for(saveables, session)
    variables = [v for s in saveables for v in s.variables]
    if session is not None:
        graph_vars = [v for v in variables if _in_graph(v)]
        fetched = dict(zip(map(id, graph_vars), session.run(graph_vars))) if graph_vars else {}
    else:
        fetched = {}
    out = {}
    for s in saveables:
        values = [fetched[id(v)] if id(v) in fetched else v.numpy() for v in s.variables]
        if s.parts[0][1] is None:
            out[s.key] = values[0]
            continue
        whole = np.empty([int(d) for d in s.shape.as_list()], dtype=s.dtype.np)
        for (_, offset, shape), value in zip(s.parts, values):
            whole[_region(offset, shape)] = value
        out[s.key] = whole
    return out


# ----------------------------------------------------------------------------------------------
# Restoring values


def _fits(var_shape, saved_shape):
    return tensor_shape.as_shape(var_shape).is_compatible_with(saved_shape)


def prepare_restore(saveables, reader, reshape=False):
    """[(variable, array)] to assign, after checking every saveable against the checkpoint.

    Raises:
      NotFoundError: names missing from the checkpoint (all of them are named).
      InvalidArgumentError: a dtype differs; RestoreShapeError: a shape differs.
      DataLossError: the checkpoint's data is damaged.
    """
    missing = [s.key for s in saveables if not reader.has_tensor(s.key)]
    if missing:
        raise errors.NotFoundError(
            None, None, f"Restoring from checkpoint failed: key{'s' if len(missing) > 1 else ''} "
            f"{', '.join(repr(k) for k in missing)} not found in checkpoint {reader.prefix} (the variable names "
            "differ from those saved; build the same model, or pass var_list={saved name: variable})")
    saved_dtypes = reader.get_variable_to_dtype_map()
    saved_shapes = reader.get_variable_to_shape_map()
    for s in saveables:
        if saved_dtypes[s.key] != s.dtype:
            raise errors.InvalidArgumentError(
                None, None, f"Restoring '{s.key}' from checkpoint {reader.prefix}: the variable has dtype "
                f"{s.dtype.name} but the checkpoint holds {saved_dtypes[s.key].name}")
        saved = saved_shapes[s.key]
        mine = tuple(s.shape.as_list()) if s.shape.rank is not None else "unknown"
        if not _fits(s.shape, saved) and not (reshape and s.shape.is_fully_defined() and
                                              s.shape.num_elements() == math.prod(saved)):
            raise RestoreShapeError(
                None, None, f"Restoring '{s.key}' from checkpoint {reader.prefix}: the checkpoint's tensor has shape "
                f"{tuple(saved)} but the variable has shape {mine}")
    values = reader.get_tensors([s.key for s in saveables])
    pairs = []
    for s in saveables:
        value = values[s.key]
        if s.parts[0][1] is None:
            var = s.parts[0][0]
            if not _fits(var.shape, value.shape):      # reshape=True let it through
                value = value.reshape(var.shape.as_list())
            pairs.append((var, value))
            continue
        value = value.reshape([int(d) for d in s.shape.as_list()])
        for var, offset, shape in s.parts:
            pairs.append((var, np.ascontiguousarray(value[_region(offset, shape)])))
    return pairs


def _restore_op(var, cache):
    """(placeholder, assign op) restoring `var` from a fed value, built once per variable."""
    entry = cache.get(id(var))
    if entry is None or entry[0] is not var:
        with var.graph.as_default(), control_dependencies(None):
            with var.graph.name_scope("save/"):
                ph = array_ops.placeholder(var.dtype, shape=var.shape if _fits_static(var) else None,
                                           name="restore_value")
                op = var.assign(ph, read_value=False)
        entry = cache[id(var)] = (var, ph, op)
    return entry[1], entry[2]


def _fits_static(var):
    return getattr(var, "_validate_shape", True)


def build_restore_ops(variables, cache):
    """Builds (in each graph variable's graph) the ops restoring `variables` (for Saver's build)."""
    for v in variables:
        if _in_graph(v):
            _restore_op(v, cache)


def assign_values(pairs, session=None, cache=None):
    """Assigns every (variable, array): eagerly at once; graph variables in one `session.run`."""
    cache = {} if cache is None else cache
    graph_pairs = [(v, a) for v, a in pairs if _in_graph(v)]
    if graph_pairs:
        session = session or get_default_session()
        if session is None:
            raise ValueError("Restoring graph variables needs a Session: pass `sess`/`session`, or run inside "
                             "`with sess.as_default():`")
        feeds, ops = {}, []
        for var, value in graph_pairs:
            ph, op = _restore_op(var, cache)
            feeds[ph] = value
            ops.append(op)
        session.run(ops, feed_dict=feeds)
    for var, value in pairs:
        if not _in_graph(var):
            if context.executing_eagerly():
                var.assign(value, read_value=False)
            else:
                with context.eager_mode():
                    var.assign(value, read_value=False)

"""Session: runs graphs.

`run(fetches, feed_dict)` prunes the graph to what the fetches need, orders it once, caches that plan
per (fetches, feeds) signature, then runs kernels over a flat list of values. Variables and random
generators keep their state in the Session (`ExecState.resources`).
"""

from __future__ import annotations

from typing import Any, Optional
import numpy as np

from segflow._core import dtypes, errors, mode
from segflow._core import fold as tensor_util
from segflow._core.graph import get_default_graph
from segflow._core.operation import Operation
from segflow._core.indexed_slices import IndexedSlices, IndexedSlicesValue
from segflow._core.tensor import EagerTensor, Tensor
from segflow._core.apply import ExecState
from segflow._core.memory import resource_exhausted
from segflow._core.registry import regroup_inputs
from segflow._core import run_config
from segflow._core.convert import utf8_array
from segflow.kernels import BadInput
from segflow.util import nest
from segflow._core.typing import Fetchable
from segflow._core.graph import Graph

__all__ = ["Session", "InteractiveSession", "BaseSession"]


class _Plan:
    """An ordered program for one (fetches, feeds) signature."""

    __slots__ = ("steps", "n_slots", "feed_slots", "fetch_slots", "fetch_builders", "target_count", "preset")

    def __init__(self):
        self.steps = []          # (op, kernel, in_slots, out_slots, attrs, stateful, regroup)
        self.n_slots = 0
        self.preset = ()         # (slot, value) computed once when the plan was made (folded)


class BaseSession:
    pass


_MAX_PLANS = 512   # cached plans per Session: a loop fetching ever new tensors must not grow memory


class Session(BaseSession):
    """Runs operations of a graph (TF1's `tf.Session`).

        with sf.Session() as sess:
            sess.run(c, feed_dict={x: [[1.0, 2.0]]})
    """

    def __init__(self, target: str = "", graph: Optional[Graph] = None, config: Any = None) -> None:
        self._graph = graph if graph is not None else get_default_graph()
        self._resources = {}
        self._plans = {}
        self._closed = False
        self._default_ctx = None

    @property
    def graph(self):
        return self._graph

    @property
    def graph_def(self):
        return [op.node_def for op in self._graph.get_operations()]

    @property
    def sess_str(self):
        return ""

    def close(self) -> None:
        self._closed = True
        self._resources.clear()
        self._plans.clear()

    def __enter__(self):
        self._default_ctx = self.as_default()
        self._default_ctx.__enter__()
        self._graph_ctx = None
        if get_default_graph() is not self._graph:
            self._graph_ctx = self._graph.as_default()
            self._graph_ctx.__enter__()
        return self

    def __exit__(self, *exc):
        if self._graph_ctx is not None:
            self._graph_ctx.__exit__(*exc)
        self._default_ctx.__exit__(*exc)
        self.close()
        return False

    def as_default(self):
        session = self

        class _Default:
            def __enter__(self_inner):
                self_inner.stack = mode._scope_state.sessions   # the calling thread's default sessions
                self_inner.stack.append(session)
                return session

            def __exit__(self_inner, *exc):
                self_inner.stack.remove(session)
                return False

        return _Default()

    # ------------------------------------------------------------------------------------------
    def run(self, fetches: Fetchable, feed_dict: Optional[dict[Any, Any]] = None, options: Any = None,
            run_metadata: Any = None) -> Any:
        """Runs the ops needed for `fetches` and returns their values in the same structure.

        fetches: a Tensor, Operation, IndexedSlices, SparseTensor, RaggedTensor, variable, tensor or
          op name, or nested
        lists/tuples/dicts/namedtuples of them. Operations fetch as None.
        feed_dict: {tensor or name: value}; values are checked against the tensor's dtype and shape.
        options: a RunOptions; with a trace_level other than NO_TRACE each kernel is timed into
          `run_metadata.step_stats`. run_metadata: a RunMetadata, or None.
        """
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        trace = _trace_level(options, run_metadata)
        flat = nest.flatten(fetches)
        elements = []     # per flat fetch: ("t", tensor) / ("op", op) / ("slices", (v, i, s))
        targets = []
        for f in flat:
            elements.append(self._fetch_element(f))
        feeds = {}
        if feed_dict:
            for key, value in feed_dict.items():
                t = self._feed_key(key)
                feeds[t] = self._feed_value(t, value)
        tensors = []
        for kind, e in elements:
            if kind == "t":
                tensors.append(e)
            elif kind == "slices":
                tensors.extend(x for x in e if x is not None)
            elif kind == "composite":
                tensors.extend(e[0])
            else:
                targets.append(e)
        key = (tuple(tensors), tuple(targets), tuple(feeds))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._make_plan(tensors, targets, list(feeds))
            if len(self._plans) >= _MAX_PLANS:     # bounded: drop the oldest plan
                try:
                    self._plans.pop(next(iter(self._plans)))
                except (KeyError, RuntimeError, StopIteration):     # another thread got there first
                    pass
            self._plans[key] = plan
        if trace:
            values = run_config.run_traced(execute_plan, plan, [feeds[t] for t in feeds], self._resources,
                                           run_metadata)
        else:
            values = self._execute(plan, [feeds[t] for t in feeds])
        out = []
        i = 0
        for kind, e in elements:
            if kind == "t":
                v = values[i]
                # A scalar comes back as a NumPy scalar (bytes for a string), as from TF's Session.
                out.append(v[()] if type(v) is np.ndarray and v.ndim == 0 else v)
                i += 1
            elif kind == "slices":
                parts = []
                for x in e:
                    if x is None:
                        parts.append(None)
                    else:
                        parts.append(values[i])
                        i += 1
                out.append(IndexedSlicesValue(*parts))
            elif kind == "composite":
                parts, build = e
                out.append(build(values[i:i + len(parts)]))
                i += len(parts)
            else:
                out.append(None)
        return nest.pack_sequence_as(fetches, out)

    def _fetch_element(self, f):
        if f is None:
            raise TypeError("Fetch argument None has invalid type <class 'NoneType'>")
        if hasattr(f, "_as_graph_element"):
            f = f._as_graph_element()
        if isinstance(f, IndexedSlices):
            return "slices", (self._check_graph(f.values), self._check_graph(f.indices),
                              None if f.dense_shape is None else self._check_graph(f.dense_shape))
        if hasattr(f, "_fetch_parts"):    # a composite (SparseTensor, RaggedTensor): its parts
            parts, build = f._fetch_parts()
            return "composite", ([self._check_graph(p) for p in parts], build)
        if isinstance(f, str):
            f = self._graph.as_graph_element(f)
        if isinstance(f, EagerTensor):
            raise TypeError(f"Fetch argument {f!r} is an eager tensor; a Session runs graph elements only")
        if isinstance(f, Tensor):
            return "t", self._check_graph(f)
        if isinstance(f, Operation):
            if f.graph is not self._graph:
                raise ValueError(f"Fetch argument {f.name} is not an element of this graph.")
            return "op", f
        raise TypeError(f"Fetch argument {f!r} has invalid type {type(f).__name__}, must be a string or "
                        f"Tensor/Operation. (Can not convert a {type(f).__name__} into a Tensor or Operation.)")

    def _check_graph(self, t):
        if t.graph is not self._graph:
            raise ValueError(f"Tensor {t.name} is not an element of this graph.")
        return t

    def _feed_key(self, key):
        if hasattr(key, "_as_graph_element"):
            key = key._as_graph_element()
        if isinstance(key, str):
            try:
                key = self._graph.as_graph_element(key, allow_operation=False)
            except (KeyError, ValueError) as e:
                raise TypeError(f"Cannot interpret feed_dict key as Tensor: {e}") from None
        if isinstance(key, EagerTensor) or not isinstance(key, Tensor):
            raise TypeError(f"Cannot interpret feed_dict key as Tensor: {key!r} is not a graph tensor "
                            "(feed placeholders or other tensors of the session's graph)")
        if key.graph is not self._graph:
            raise ValueError(f"Cannot feed {key.name}: it is not an element of this session's graph")
        if key.dtype == dtypes.resource:
            raise errors.InvalidArgumentError(None, None, f"{key.op.type} '{key.op.name}': a resource handle "
                                              f"({key.name}) cannot be fed")
        return key

    def _feed_value(self, t, value):
        if isinstance(value, Tensor) and not isinstance(value, EagerTensor):
            raise TypeError(f"The value of a feed cannot be a symbolic Tensor ({value.name}); "
                            "feed NumPy arrays or Python values")
        np_dtype = t.dtype.as_numpy_dtype
        arr = np.asarray(value)
        if t.dtype == dtypes.string:
            return _string_feed(t, value, arr)
        if arr.dtype != np_dtype:
            kind_from, kind_to = arr.dtype.kind, np.dtype(np_dtype).kind
            if arr.dtype == object or kind_from in "USV":
                raise TypeError(f"Cannot feed value of type {type(value).__name__} (dtype {arr.dtype}) to tensor "
                                f"{t.name} of dtype {t.dtype.name}")
            if kind_to in "iu" and kind_from in "iufc" and arr.size:
                info = np.iinfo(np_dtype)
                real = arr.real
                if kind_from in "fc":
                    # Compared as floats against exact bounds: info.min and info.max + 1 are powers
                    # of two (exact in float64), while float(info.max) of int64 rounds up to 2**63,
                    # so `max > info.max` would let 2.0**63 through to wrap to INT64_MIN.
                    real = real.astype(np.float64)
                    lo, hi = float(real.min()), float(real.max())
                    out = lo < float(info.min) or hi >= float(info.max + 1)
                else:
                    lo, hi = int(real.min()), int(real.max())
                    out = lo < info.min or hi > info.max
                if out:   # would wrap around silently
                    raise errors.InvalidArgumentError(
                        None, None, f"{t.op.type} '{t.op.name}': fed value is out of range for tensor {t.name} "
                        f"of dtype {t.dtype.name} (min {lo!r}, max {hi!r})")
            if kind_from == "f" and kind_to in "iu" and arr.size and not np.all(np.isfinite(arr)):
                raise errors.InvalidArgumentError(
                    None, None, f"{t.op.type} '{t.op.name}': cannot feed NaN or infinity to tensor {t.name} of "
                    f"dtype {t.dtype.name}")
            # floats fed to an integer tensor are truncated toward zero, as TF does (np.asarray with
            # the placeholder's dtype); complex values never lose their imaginary part silently
            lossy = (kind_from == "c" and kind_to in "iufb") or (kind_to == "b" and kind_from != "b")
            if lossy:
                raise errors.InvalidArgumentError(
                    None, None, f"{t.op.type} '{t.op.name}': cannot feed a value of dtype {arr.dtype} to "
                    f"tensor {t.name} of dtype {t.dtype.name}")
            arr = arr.astype(np_dtype)
        if not t.shape.is_compatible_with(arr.shape):
            raise ValueError(f"Cannot feed value of shape {arr.shape} for Tensor {t.name}, which has shape "
                             f"{t.shape}")
        return arr

    # ------------------------------------------------------------------------------------------
    def _make_plan(self, tensors, targets, fed):
        # Inputs always exist before the ops that consume them, so creation order is a topological
        # order: collect what the fetches need (stopping at feeds) and sort it by creation id.
        fed_set = set(fed)
        seen = set()
        stack = [t.op for t in tensors if t not in fed_set] + list(targets)
        while stack:
            op = stack.pop()
            if op in seen:
                continue
            seen.add(op)
            # A control input whose every output is fed has run already, as far as TF is concerned
            # (a fed placeholder is not evaluated), so it is not run.
            stack.extend(c for c in op.control_inputs if not (c.outputs and all(t in fed_set for t in c.outputs)))
            stack.extend(t.op for t in op.inputs if t not in fed_set)
        needed = sorted(seen, key=lambda op: op._id)
        slots = {}
        for t in fed:
            slots[t] = len(slots)
        n_slots = len(slots)
        plan = _Plan()
        for op in needed:
            in_slots = []
            for t in op.inputs:
                if t not in slots:
                    raise errors.InternalError(None, None, f"input {t.name} of {op.name} was not computed")
                in_slots.append(slots[t])
            out_slots = []
            for t in op.outputs:
                if t in fed_set:
                    # The op runs for another output (or as a target): its value for a fed output goes
                    # to a scratch slot, so the feed is what consumers see.
                    out_slots.append(n_slots)
                    n_slots += 1
                    continue
                if t not in slots:
                    slots[t] = n_slots
                    n_slots += 1
                out_slots.append(slots[t])
            opdef = op.op_def
            regroup = opdef.has_list_input
            single = opdef.num_outputs == 1 and not opdef.list_output
            plan.steps.append((op, opdef.kernel, in_slots, out_slots, op._kernel_attrs, opdef.stateful,
                               regroup, single))
        plan.n_slots = n_slots
        plan.feed_slots = [slots[t] for t in fed]
        plan.fetch_slots = [slots[t] for t in tensors]
        _fold(plan)
        return plan

    def _execute(self, plan, feed_values):
        return execute_plan(plan, feed_values, self._resources)


def _trace_level(options, run_metadata):
    """The trace level `Session.run`'s options ask for (0 without options or run_metadata)."""
    if options is not None and not isinstance(options, run_config.RunOptions):
        raise TypeError(f"options must be a RunOptions, not {type(options).__name__}")
    if run_metadata is not None and not isinstance(run_metadata, run_config.RunMetadata):
        raise TypeError(f"run_metadata must be a RunMetadata, not {type(run_metadata).__name__}")
    if options is None or run_metadata is None:
        return 0
    return options.trace_level


def make_plan(fetches, targets, fed):
    """The ordered program computing `fetches` (graph tensors) and running `targets` (ops) from the
    values of the tensors `fed` (a Session's plan; sf.function runs its graphs with these too)."""
    return Session._make_plan(None, fetches, targets, fed)


_FOLD_MAX_ELEMENTS = 4096     # larger constants are computed at each run (a plan keeps what it folds)


def _fold(plan):
    """Runs once, when the plan is made, the steps whose inputs are all constants: stateless ops
    on Const nodes and on what such steps computed, with small outputs (shapes, counts, the
    reduction indices of a gradient graph). Their outputs become the plan's `preset` values
    (read-only; a fetched one is copied), so each run skips them. A step that fails is left to
    run, so errors surface as before."""
    known = {}
    kept = []
    for step in plan.steps:
        op, kernel, in_slots, out_slots, attrs, stateful, regroup, single = step
        if stateful:
            kept.append(step)
            continue
        if any(i not in known for i in in_slots):
            # Shape / Size / Rank of a statically shaped tensor: known without its value
            static = None if op.op_def.constant_value is None or len(out_slots) != 1 else \
                tensor_util.constant_value(op.outputs[0])
            if static is None or np.asarray(static).size > _FOLD_MAX_ELEMENTS:
                kept.append(step)
                continue
            static = np.array(static)
            static.flags.writeable = False
            known[out_slots[0]] = static
            continue
        args = [known[i] for i in in_slots]
        if regroup:
            args = regroup_inputs(op.op_def, args, op._input_counts)
        try:
            out = kernel(*args, **attrs)
            outs = [out] if single else list(out)
            outs = [np.asarray(o) for o in outs]
        except Exception:       # noqa: BLE001 - left for the run, which reports it
            kept.append(step)
            continue
        if len(outs) != len(out_slots) or any(o.dtype == object or o.size > _FOLD_MAX_ELEMENTS for o in outs):
            kept.append(step)
            continue
        for slot, o in zip(out_slots, outs):
            if o.flags.writeable:
                o = o.copy() if o.base is not None else o
                o.flags.writeable = False
            known[slot] = o
    if len(kept) == len(plan.steps):
        return
    needed = set(plan.fetch_slots)
    for step in kept:
        needed.update(step[2])
    plan.preset = tuple((slot, v) for slot, v in known.items() if slot in needed)
    plan.steps = kept


def _string_feed(t, value, arr):
    """A value fed to a string tensor as TF holds it: an object array of bytes (str as UTF-8)."""
    if arr.dtype.kind in "US" or (arr.dtype == object and all(isinstance(v, (bytes, str))
                                                              for v in arr.reshape(-1).tolist())):
        return utf8_array(arr)
    raise TypeError(f"Cannot feed value of type {type(value).__name__} (dtype {arr.dtype}) to tensor {t.name} of "
                    "dtype string: feed bytes or str")


def execute_plan(plan, feed_values, resources):
    """Runs `plan` with `feed_values` (arrays, in the order of its fed tensors) against `resources`
    (the variables' store: a Session's, or a function's); returns the fetched arrays."""
    values = [None] * plan.n_slots
    for slot, v in plan.preset:
        values[slot] = v
    for slot, v in zip(plan.feed_slots, feed_values):
        values[slot] = v
    for op, kernel, in_slots, out_slots, attrs, stateful, regroup, single in plan.steps:
        args = [values[i] for i in in_slots]
        if regroup:
            args = regroup_inputs(op.op_def, args, op._input_counts)
        try:
            if stateful:
                out = kernel(ExecState(resources, op.name), *args, **attrs)
            else:
                out = kernel(*args, **attrs)
        except errors.OpError as e:
            if e.op is None and not e.message.startswith(op.type):
                raise type(e)(None, op, f"{errors.op_prefix(op.type, op.name)}: {e.message}") from None
            raise
        except BadInput as e:
            raise errors.invalid_input(op, e.input_name, e.message) from None
        except MemoryError as e:
            raise resource_exhausted(op.type, op.name, e, op) from None
        except (ValueError, TypeError, IndexError, ZeroDivisionError, OverflowError) as e:
            raise errors.InvalidArgumentError(None, op, f"{op.type} '{op.name}': {type(e).__name__}: {e}") \
                from None
        if single:
            values[out_slots[0]] = out
        else:
            for slot, o in zip(out_slots, out):
                values[slot] = o
    out = [_as_array(values[i]) for i in plan.fetch_slots]
    if plan.preset:     # a folded value is shared by every run: hand out copies
        for k, v in enumerate(out):
            if isinstance(v, np.ndarray) and not v.flags.writeable:
                out[k] = v.copy()
    return out


def _as_array(v):
    if type(v) is np.ndarray:
        return v
    if isinstance(v, np.generic):
        return v
    return np.asarray(v)


class InteractiveSession(Session):
    """A Session that makes itself the default on construction (for shells and notebooks)."""

    def __init__(self, target: str = "", graph: Optional[Graph] = None, config: Any = None) -> None:
        super().__init__(target, graph, config)
        self._ctx = self.as_default()
        self._ctx.__enter__()

    def close(self) -> None:
        if getattr(self, "_ctx", None) is not None:
            self._ctx.__exit__(None, None, None)
            self._ctx = None
        super().close()

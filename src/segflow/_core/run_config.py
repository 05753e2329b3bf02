"""TF1's run and session options as small Python messages: `RunOptions` / `RunMetadata` (for
`Session.run(options=, run_metadata=)`), `ConfigProto`, `GPUOptions`, `GraphOptions`,
`OptimizerOptions` (for `Session(config=)`), and the step statistics a traced run fills in.

TF's are protocol buffers (config_pb2); these hold the same field names and defaults, refuse unknown
fields as protobuf does (ValueError in the constructor, AttributeError on assignment) and nest
(`config.gpu_options.allow_growth = True`). A Session accepts a config and ignores it: there are no
devices or thread pools to configure. `RunOptions.trace_level` other than NO_TRACE makes the run time
each kernel (`run_traced`) into `run_metadata.step_stats`.
"""
import copy
import numbers
import threading
import time

__all__ = ["RunOptions", "RunMetadata", "ConfigProto", "GPUOptions", "GraphOptions", "OptimizerOptions",
           "StepStats", "DeviceStepStats", "NodeExecStats", "run_traced", "CPU_DEVICE"]

CPU_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"

_SCALARS = {bool: (numbers.Integral,), int: (numbers.Integral,), float: (numbers.Real,), str: (str, bytes)}


class _Message:
    """A protobuf-like record: `_FIELDS` maps each field to its default (a value, a list/dict for
    repeated/map fields, or a _Message class for a nested message)."""

    _FIELDS = {}
    __slots__ = ("_values",)

    def __init__(self, **fields):
        object.__setattr__(self, "_values", {})
        for name, default in self._FIELDS.items():
            if isinstance(default, type):
                self._values[name] = default()
            else:
                self._values[name] = copy.copy(default)
        for name, value in fields.items():
            if name not in self._FIELDS:
                raise ValueError(f'Protocol message {type(self).__name__} has no "{name}" field.')
            self._set(name, value)

    def _set(self, name, value):
        default = self._FIELDS[name]
        if isinstance(default, type):
            if isinstance(value, dict):
                value = default(**value)
            elif not isinstance(value, default):
                raise TypeError(f"{type(self).__name__}.{name} must be a {default.__name__}, "
                                f"not {type(value).__name__}")
        elif isinstance(default, (list, dict)):
            value = list(value) if isinstance(default, list) else dict(value)
        else:
            kinds = _SCALARS[type(default)]
            if not isinstance(value, kinds):
                raise TypeError(f"{type(self).__name__}.{name} must be a {type(default).__name__}, "
                                f"not {type(value).__name__} ({value!r})")
            value = type(default)(value) if not isinstance(value, bytes) else value
        self._values[name] = value

    def __getattr__(self, name):
        try:
            return object.__getattribute__(self, "_values")[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}") from None

    def __setattr__(self, name, value):
        if name not in self._FIELDS:
            raise AttributeError(f"Assignment not allowed (no field \"{name}\" in protocol message object).")
        self._set(name, value)

    def HasField(self, name):  # noqa: N802 - protobuf's name
        if name not in self._FIELDS:
            raise ValueError(f'Protocol message {type(self).__name__} has no field {name}.')
        value = self._values[name]
        default = self._FIELDS[name]
        return value != (default() if isinstance(default, type) else default)

    def Clear(self):  # noqa: N802
        self.__init__()

    def CopyFrom(self, other):  # noqa: N802
        if type(other) is not type(self):
            raise TypeError(f"CopyFrom needs a {type(self).__name__}, not {type(other).__name__}")
        object.__setattr__(self, "_values", copy.deepcopy(other._values))

    def __eq__(self, other):
        return type(other) is type(self) and other._values == self._values

    __hash__ = None

    def __deepcopy__(self, memo):
        out = type(self)()
        object.__setattr__(out, "_values", copy.deepcopy(self._values, memo))
        return out

    def __repr__(self):
        changed = [f"{k}={v!r}" for k, v in self._values.items() if self.HasField(k)]
        return f"{type(self).__name__}({', '.join(changed)})"


# -- step statistics (what a traced run records)
class NodeExecStats(_Message):
    """One kernel's run: its node name and times (microseconds and nanoseconds since the epoch for
    the start, relative to it for the rest)."""
    _FIELDS = {"node_name": "", "all_start_micros": 0, "op_start_rel_micros": 0, "op_end_rel_micros": 0,
               "all_end_rel_micros": 0, "timeline_label": "", "scheduled_micros": 0, "thread_id": 0,
               "all_start_nanos": 0, "op_start_rel_nanos": 0, "op_end_rel_nanos": 0, "all_end_rel_nanos": 0,
               "scheduled_nanos": 0}
    __slots__ = ()


class DeviceStepStats(_Message):
    _FIELDS = {"device": "", "node_stats": []}
    __slots__ = ()


class StepStats(_Message):
    _FIELDS = {"dev_stats": []}
    __slots__ = ()


class CostGraphDef(_Message):
    _FIELDS = {"node": [], "cost": []}
    __slots__ = ()


# -- run options and metadata
class RunOptions(_Message):
    """Options for one `Session.run`: `trace_level` (NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE,
    FULL_TRACE: any trace times each kernel into `run_metadata.step_stats`); the others are accepted
    and ignored (`timeout_in_ms`, thread pools, partition graphs, debug options)."""
    NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE, FULL_TRACE = 0, 1, 2, 3
    _FIELDS = {"trace_level": 0, "timeout_in_ms": 0, "inter_op_thread_pool": 0, "output_partition_graphs": False,
               "debug_options": None, "report_tensor_allocations_upon_oom": False, "experimental": None}
    __slots__ = ()

    def _set(self, name, value):
        if self._FIELDS[name] is None:      # debug_options / experimental: kept as given
            self._values[name] = value
            return
        super()._set(name, value)


class _TraceLevel:
    """`RunOptions.TraceLevel`: the enum's values, `Name(value)` and `Value(name)`."""
    NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE, FULL_TRACE = 0, 1, 2, 3
    _NAMES = ("NO_TRACE", "SOFTWARE_TRACE", "HARDWARE_TRACE", "FULL_TRACE")

    @classmethod
    def Name(cls, value):  # noqa: N802
        return cls._NAMES[value]

    @classmethod
    def Value(cls, name):  # noqa: N802
        return cls._NAMES.index(name)


RunOptions.TraceLevel = _TraceLevel


class RunMetadata(_Message):
    """What a `Session.run` reports: `step_stats` (filled when RunOptions asked for a trace);
    `cost_graph`, `partition_graphs`, `function_graphs` stay empty."""
    _FIELDS = {"step_stats": StepStats, "cost_graph": CostGraphDef, "partition_graphs": [],
               "function_graphs": [], "session_metadata": None}
    __slots__ = ()

    def _set(self, name, value):
        if name == "session_metadata":
            self._values[name] = value
            return
        super()._set(name, value)


# -- session configuration (accepted, ignored)
class GPUOptions(_Message):
    _FIELDS = {"per_process_gpu_memory_fraction": 0.0, "allow_growth": False, "allocator_type": "",
               "deferred_deletion_bytes": 0, "visible_device_list": "", "polling_active_delay_usecs": 0,
               "polling_inactive_delay_msecs": 0, "force_gpu_compatible": False}
    __slots__ = ()


class OptimizerOptions(_Message):
    L1, L0 = 0, -1
    DEFAULT, OFF, ON_1, ON_2 = 0, -1, 1, 2
    _FIELDS = {"do_common_subexpression_elimination": False, "do_constant_folding": False,
               "max_folded_constant_in_bytes": 0, "do_function_inlining": False, "opt_level": 0,
               "global_jit_level": 0, "cpu_global_jit": False}
    __slots__ = ()


class GraphOptions(_Message):
    _FIELDS = {"enable_recv_scheduling": False, "optimizer_options": OptimizerOptions, "build_cost_model": 0,
               "build_cost_model_after": 0, "infer_shapes": False, "place_pruned_graph": False,
               "enable_bfloat16_sendrecv": False, "timeline_step": 0}
    __slots__ = ()


class ConfigProto(_Message):
    """`Session(config=ConfigProto(...))`: accepted and ignored (one CPU device, NumPy's threads)."""
    _FIELDS = {"device_count": {}, "intra_op_parallelism_threads": 0, "inter_op_parallelism_threads": 0,
               "use_per_session_threads": False, "placement_period": 0, "device_filters": [],
               "gpu_options": GPUOptions, "allow_soft_placement": False, "log_device_placement": False,
               "graph_options": GraphOptions, "operation_timeout_in_ms": 0, "isolate_session_state": False,
               "share_cluster_devices_in_session": False}
    __slots__ = ()


# -- a traced run
def _timed(kernel, op, records):
    def run(*args, **attrs):
        wall = time.time_ns()
        start = time.perf_counter_ns()
        try:
            return kernel(*args, **attrs)
        finally:
            records.append((op, wall, time.perf_counter_ns() - start))
    return run


def _label(op):
    inputs = ", ".join(t.op.name if t.value_index == 0 else t.name for t in op.inputs)
    return f"{op.name} = {op.type}({inputs})"


def run_traced(execute, plan, feed_values, resources, run_metadata):
    """Runs `plan` through `execute(plan, feed_values, resources)` with each kernel timed, and adds
    one DeviceStepStats (the CPU, a NodeExecStats per kernel run) to `run_metadata.step_stats`.
    Steps the plan folded when it was made (constants and what depends only on them) do not run,
    so they are not listed."""
    records = []
    traced = copy.copy(plan)
    traced.steps = [(step[0], _timed(step[1], step[0], records)) + tuple(step[2:]) for step in plan.steps]
    try:
        return execute(traced, feed_values, resources)
    finally:
        if run_metadata is not None:
            thread = threading.get_ident() & 0x7FFFFFFF
            nodes = []
            for op, wall, dur in records:
                nodes.append(NodeExecStats(
                    node_name=op.name, all_start_micros=wall // 1000, op_end_rel_micros=dur // 1000,
                    all_end_rel_micros=dur // 1000, all_start_nanos=wall, op_end_rel_nanos=dur,
                    all_end_rel_nanos=dur, scheduled_micros=wall // 1000, scheduled_nanos=wall,
                    timeline_label=_label(op), thread_id=thread))
            run_metadata.step_stats.dev_stats.append(DeviceStepStats(device=CPU_DEVICE, node_stats=nodes))

"""Recording of eagerly executed ops for GradientTape.

Only while a tape is active (`_tapes` non-empty) does `apply_op` call `record`, and a tape keeps an
op only if one of its inputs is watched (a source, a watched variable, or an output of a kept op).
A tape holds strong references to everything it watched, so `id()` stays a faithful key.
"""

__all__ = ["Tape", "EagerOperation", "record", "push_tape", "pop_tape", "variable_accessed"]

_tapes = []  # recording tapes, innermost last


class EagerOperation:
    """What a gradient function sees for an eagerly executed op: the same contract as a graph
    Operation (`type`, `name`, `inputs`, `outputs`, `get_attr`)."""

    __slots__ = ("_opdef", "inputs", "outputs", "_attrs", "grad_fn", "_input_counts", "skip_input_indices")

    # No graph: lets `ops.get_gradient_function`'s `getattr(op, "_graph", None)` hit a class attribute
    # instead of raising and catching AttributeError for every op the tape differentiates.
    _graph = None

    def __init__(self, opdef, inputs, outputs, attrs, grad_fn=None, input_counts=None):
        self._opdef = opdef
        self.inputs = inputs
        self.outputs = outputs
        self._attrs = attrs
        self.grad_fn = grad_fn
        self._input_counts = input_counts
        # Inputs that need no gradient in the current backward pass (set by imperative_grad).
        self.skip_input_indices = None

    @property
    def type(self):
        return self._opdef.name if self._opdef is not None else "CustomGradient"

    @property
    def name(self):
        return self.type

    @property
    def graph(self):
        return None

    @property
    def device(self):
        return "/job:localhost/replica:0/task:0/device:CPU:0"

    @property
    def control_inputs(self):
        return []

    @property
    def _gradient_type(self):
        return None

    def values(self):
        return tuple(self.outputs)

    def get_attr(self, name):
        if name in self._attrs:
            return self._attrs[name]
        opdef = self._opdef
        if opdef is not None and name in opdef.attr_positions:
            p = opdef.attr_positions[name][0]
            flat_index = p
            if opdef.has_list_input:
                flat_index, counts = 0, iter(self._input_counts or ())
                for q, is_list in enumerate(opdef.list_inputs):
                    if q == p:
                        break
                    flat_index += next(counts) if is_list else 1
            return self.inputs[flat_index].dtype
        if name == "N" and self._input_counts:
            return self._input_counts[0]
        raise ValueError(f"Operation '{self.type}' has no attr named '{name}'")

    def __repr__(self):
        return f"<EagerOperation type={self.type}>"


class Tape:
    """The recording state of one GradientTape."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self.watched = set()        # ids of tensors whose gradient can flow
        self.keep = []              # strong refs: ids stay unique while the tape lives
        self.records = []           # EagerOperations in execution order
        self.watched_variables = []

    def watch(self, tensor):
        if id(tensor) not in self.watched:
            self.watched.add(id(tensor))
            self.keep.append(tensor)

    def is_watched(self, tensor):
        return id(tensor) in self.watched


def push_tape(tape):
    _tapes.append(tape)


def pop_tape(tape):
    if tape in _tapes:
        _tapes.remove(tape)


def record(opdef, inputs, outputs, attrs, grad_fn=None):
    """Adds an executed op to every recording tape that watches one of its inputs."""
    flat = inputs
    counts = None
    if opdef is not None and opdef.has_list_input:
        flat, counts = [], []
        for is_list, x in zip(opdef.list_inputs, inputs):
            if is_list:
                flat.extend(x)
                counts.append(len(x))
            else:
                flat.append(x)
    entry = None
    for tape in _tapes:
        watched = tape.watched
        for x in flat:
            if id(x) in watched:
                break
        else:
            continue
        if entry is None:
            entry = EagerOperation(opdef, list(flat), list(outputs), attrs, grad_fn, counts)
        tape.records.append(entry)
        keep = tape.keep
        for o in outputs:  # tape.watch(o), inlined: this runs for every recorded op
            if id(o) not in watched:
                watched.add(id(o))
                keep.append(o)


def variable_accessed(variable):
    """Called when a trainable variable is read: tapes that watch accessed variables watch it."""
    for tape in _tapes:
        if tape.watch_accessed_variables and variable.trainable:
            handle = variable.handle
            if id(handle) not in tape.watched:
                tape.watch(handle)
                tape.watched_variables.append(variable)


def could_record():
    return bool(_tapes)

"""Recording of eagerly executed ops for GradientTape.

Only while a tape is active (`_tape_state.tapes` non-empty) does `apply_op` call `record`, and a tape
keeps an op only if one of its inputs is watched (a source, a watched variable, or an output of a
kept op). A tape holds strong references to everything it watched, so `id()` stays a faithful key.

The stack of recording tapes belongs to the calling thread (as in TF): a tape never sees the ops or
variable reads of another thread, and a new thread starts with no tape. `_tape_state.tapes` is the
calling thread's list (`tape._tapes` still names it). Reading a `threading.local` costs several
times a plain attribute, so hot paths test `_active.any` first (True while any thread has a tape):
`if _active.any and _tape_state.tapes:`.
"""
import contextlib
import threading

from segflow._core.operation import eager_record

__all__ = ["Tape", "record", "record_graph_op", "push_tape", "pop_tape", "variable_accessed", "suspended"]


class _TapeState(threading.local):
    def __init__(self):
        self.tapes = []  # the calling thread's recording tapes, innermost last


_tape_state = _TapeState()


class _Active:
    """Tapes pushed by `push_tape` and not yet popped, over all threads."""

    __slots__ = ("any", "count", "lock")

    def __init__(self):
        self.any = False   # count > 0; written under lock, before a pushed tape can see any op
        self.count = 0
        self.lock = threading.Lock()


_active = _Active()


class _ThreadTapes:
    """`tape._tapes`: stands for the calling thread's tape list (truth test, iteration, len, and the
    list methods), for code that reads it by that name. `if tape._tapes:` stays cheap while no
    thread records."""

    __slots__ = ()

    def __bool__(self):
        return _active.any and bool(_tape_state.tapes)

    def __len__(self):
        return len(_tape_state.tapes)

    def __iter__(self):
        return iter(_tape_state.tapes)

    def __contains__(self, tape):
        return tape in _tape_state.tapes

    def __getitem__(self, index):
        return _tape_state.tapes[index]

    def __getattr__(self, name):  # append, extend, remove, clear, ...: the calling thread's list
        return getattr(_tape_state.tapes, name)

    def __repr__(self):
        return repr(_tape_state.tapes)


_tapes = _ThreadTapes()


class Tape:
    """The recording state of one GradientTape."""

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self.watched = set()        # ids of tensors whose gradient can flow
        self.keep = []              # strong refs: ids stay unique while the tape lives
        self.records = []           # Operation records (graph None) in execution order
        self.watched_variables = []

    def watch(self, tensor):
        if id(tensor) not in self.watched:
            self.watched.add(id(tensor))
            self.keep.append(tensor)

    def is_watched(self, tensor):
        return id(tensor) in self.watched




def push_tape(tape, tapes=None):
    """Starts `tape` recording the ops of the calling thread (or of the thread whose tape list
    `tapes` is); returns that list, for `pop_tape`, so that a tape stopped from another thread
    leaves the right one."""
    if tapes is None:
        tapes = _tape_state.tapes
    with _active.lock:
        _active.count += 1
        _active.any = True
    tapes.append(tape)
    return tapes


def pop_tape(tape, tapes=None):
    if tapes is None:
        tapes = _tape_state.tapes
    try:
        tapes.remove(tape)
    except ValueError:
        return
    with _active.lock:
        _active.count -= 1
        _active.any = _active.count > 0


def record(opdef, inputs, outputs, attrs, grad_fn=None):
    """Adds an executed op to every recording tape (of the calling thread) that watches one of its
    inputs."""
    record_on(_tape_state.tapes, opdef, inputs, outputs, attrs, grad_fn)


def record_on(tapes, opdef, inputs, outputs, attrs, grad_fn=None):
    """`record` onto `tapes`, the calling thread's tape list (`_tape_state.tapes`). The record
    keeps `inputs` and `outputs` as tuples (not copied when they are tuples already, as apply_op's
    are); its outputs keep the output tensors alive, so their ids need no `tape.keep` entry."""
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
    for tape in tapes:
        watched = tape.watched
        for x in flat:
            if id(x) in watched:
                break
        else:
            continue
        if entry is None:
            entry = eager_record(opdef, flat if type(flat) is tuple else tuple(flat),
                                 outputs if type(outputs) is tuple else tuple(outputs), attrs, counts, grad_fn)
        tape.records.append(entry)
        for o in outputs:    # tape.watch(o), inlined: this runs for every recorded op
            watched.add(id(o))


def record_one(tapes, opdef, inputs, result, attrs):
    """`record_on` for an op of one output and no list inputs, with `inputs` the tuple apply_op got:
    what the plain-op runners call (`apply._plain_runner`). The same loop without the list-input
    flattening and the tuple checks, which cost 1.5% of a 10-op eager chain's forward + gradient."""
    entry = None
    for tape in tapes:
        watched = tape.watched
        for x in inputs:
            if id(x) in watched:
                break
        else:
            continue
        if entry is None:
            entry = eager_record(opdef, inputs, (result,), attrs)
        tape.records.append(entry)
        watched.add(id(result))


def would_record(tapes, flat_inputs):
    """Whether `record_on(tapes, ...)` would record an op with these (flat) inputs: some tape
    watches one of them."""
    for tape in tapes:
        watched = tape.watched
        for x in flat_inputs:
            if id(x) in watched:
                return True
    return False


def record_graph_op(op):
    """Adds a graph Operation just built to every recording tape (of the calling thread) that
    watches one of its inputs: a GradientTape inside a graph (or a traced function) records the
    graph ops built while it is active, and its gradient() builds the backward graph from them."""
    for tape in _tape_state.tapes:
        watched = tape.watched
        for x in op.inputs:
            if id(x) in watched:
                break
        else:
            continue
        tape.records.append(op)
        for o in op.outputs:
            if id(o) not in watched:
                watched.add(id(o))
                tape.keep.append(o)


def variable_accessed(variable):
    """Called when a trainable variable is read: tapes that watch accessed variables watch it."""
    if not _active.any:
        return
    for tape in _tape_state.tapes:
        if tape.watch_accessed_variables and variable.trainable:
            handle = variable._gradient_source()    # inside a traced function: the captured handle
            if id(handle) not in tape.watched:
                tape.watch(handle)
                tape.watched_variables.append(variable)


@contextlib.contextmanager
def suspended():
    """No tape of the calling thread records inside (a function being traced builds its own graph;
    the tapes around the call see the call, not the ops of the trace)."""
    saved = _tape_state.tapes
    _tape_state.tapes = []
    try:
        yield
    finally:
        _tape_state.tapes = saved


def could_record():
    return _active.any and bool(_tape_state.tapes)

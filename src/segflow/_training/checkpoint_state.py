"""The `checkpoint` state file of a checkpoint directory, and the functions that find checkpoints
(TF's `checkpoint_management` and `checkpoint_utils`).

The state file is TensorFlow's CheckpointState in protobuf text format, so it reads the same:

    model_checkpoint_path: "model-2"
    all_model_checkpoint_paths: "model-1"
    all_model_checkpoint_paths: "model-2"
    all_model_checkpoint_timestamps: 1796156678.43
    last_preserved_timestamp: 1796156677.21

Relative paths are relative to the directory. The file is written to a temporary file and renamed.
"""
import os
import re

from segflow._training.checkpoint_format import CheckpointReader, checkpoint_exists_internal, index_filename

__all__ = ["CheckpointState", "checkpoint_exists", "get_checkpoint_mtimes", "get_checkpoint_state",
           "latest_checkpoint", "list_variables", "load_checkpoint", "load_variable", "remove_checkpoint",
           "update_checkpoint_state", "update_checkpoint_state_internal", "meta_graph_filename"]

def _log():
    import logging      # on first use: `import segflow` stays cheap
    return logging.getLogger("segflow")


class CheckpointState:
    """TF's CheckpointState message: the latest checkpoint and those still kept."""

    def __init__(self, model_checkpoint_path="", all_model_checkpoint_paths=(), all_model_checkpoint_timestamps=(),
                 last_preserved_timestamp=0.0):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths)
        self.all_model_checkpoint_timestamps = list(all_model_checkpoint_timestamps)
        self.last_preserved_timestamp = float(last_preserved_timestamp)

    def __eq__(self, other):
        return isinstance(other, CheckpointState) and vars(self) == vars(other)

    def __repr__(self):
        return _to_text(self)


_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _quote(text):
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\{ord(ch):03o}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


_UNESCAPE = re.compile(rb"\\([0-7]{1,3}|x[0-9a-fA-F]{1,2}|.)", re.S)
_SIMPLE = {b"n": b"\n", b"r": b"\r", b"t": b"\t", b"a": b"\a", b"b": b"\b", b"f": b"\f", b"v": b"\v"}


def _unquote(token):
    """A text-format string literal's value: escapes (octal ones are UTF-8 bytes) undone."""
    if len(token) < 2 or token[0] != token[-1] or token[0] not in "\"'":
        raise ValueError(f"expected a quoted string, got {token}")

    def sub(m):
        e = m.group(1)
        if e[:1] == b"x":
            return bytes([int(e[1:], 16)])
        if e[:1] in b"01234567" and e[:1] != b"":
            return bytes([int(e, 8) & 0xFF])
        return _SIMPLE.get(e, e)
    return _UNESCAPE.sub(sub, token[1:-1].encode("utf-8")).decode("utf-8", errors="surrogateescape")


def _to_text(state):
    lines = [f"model_checkpoint_path: {_quote(state.model_checkpoint_path)}"]
    lines += [f"all_model_checkpoint_paths: {_quote(p)}" for p in state.all_model_checkpoint_paths]
    lines += [f"all_model_checkpoint_timestamps: {float(t)!r}" for t in state.all_model_checkpoint_timestamps]
    if state.last_preserved_timestamp:
        lines.append(f"last_preserved_timestamp: {state.last_preserved_timestamp!r}")
    return "\n".join(lines) + "\n"


def _parse(text):
    state = CheckpointState()
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep:
            raise ValueError(f"cannot parse line {line!r}")
        key, value = key.strip(), value.strip()
        if key == "model_checkpoint_path":
            state.model_checkpoint_path = _unquote(value)
        elif key == "all_model_checkpoint_paths":
            state.all_model_checkpoint_paths.append(_unquote(value))
        elif key == "all_model_checkpoint_timestamps":
            state.all_model_checkpoint_timestamps.append(float(value))
        elif key == "last_preserved_timestamp":
            state.last_preserved_timestamp = float(value)
        else:
            raise ValueError(f"unknown field {key!r}")
    return state


def _state_filename(save_dir, latest_filename):
    return os.path.join(save_dir, latest_filename or "checkpoint")


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The CheckpointState of `checkpoint_dir`'s state file (relative paths joined with the
    directory), or None when there is no (readable) state file.

    Raises:
      ValueError: the state file has no model_checkpoint_path.
    """
    checkpoint_dir = os.fspath(checkpoint_dir)
    path = _state_filename(checkpoint_dir, latest_filename)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            state = _parse(f.read())
    except (OSError, ValueError, UnicodeDecodeError) as e:
        _log().warning("%s: %s: Checkpoint ignored", path, e)
        return None
    if not state.model_checkpoint_path:
        raise ValueError("Invalid checkpoint state loaded from " + checkpoint_dir)
    if not os.path.isabs(state.model_checkpoint_path):
        state.model_checkpoint_path = os.path.join(checkpoint_dir, state.model_checkpoint_path)
    state.all_model_checkpoint_paths = [p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)
                                        for p in state.all_model_checkpoint_paths]
    return state


def update_checkpoint_state_internal(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                                     latest_filename=None, save_relative_paths=False,
                                     all_model_checkpoint_timestamps=None, last_preserved_timestamp=None):
    """Writes the state file of `save_dir`: `model_checkpoint_path` is the latest, kept last in
    `all_model_checkpoint_paths`; with `save_relative_paths` absolute paths are written relative
    to `save_dir`.

    Raises:
      RuntimeError: the checkpoint's path is the state file's.
      ValueError: timestamps given for some paths only.
    """
    save_dir = os.fspath(save_dir) or "."
    path = _state_filename(save_dir, latest_filename)
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    stamps = list(all_model_checkpoint_timestamps or [])
    if stamps and len(stamps) != len(paths):
        raise ValueError(f"Checkpoint timestamps, if provided, must match checkpoint paths (got paths {paths} and "
                         f"timestamps {stamps})")
    if save_relative_paths:
        def rel(p):
            return os.path.relpath(p, save_dir) if os.path.isabs(p) else p
        model_checkpoint_path, paths = rel(model_checkpoint_path), [rel(p) for p in paths]
    target = model_checkpoint_path if os.path.isabs(model_checkpoint_path) else \
        os.path.join(save_dir, model_checkpoint_path)
    if os.path.abspath(target) == os.path.abspath(path):
        raise RuntimeError(f"Save path '{model_checkpoint_path}' conflicts with path used for checkpoint state.  "
                           "Please use a different save path.")
    state = CheckpointState(model_checkpoint_path, paths, stamps, last_preserved_timestamp or 0.0)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(_to_text(state))
    os.replace(tmp, path)


def update_checkpoint_state(save_dir, model_checkpoint_path, all_model_checkpoint_paths=None,
                            latest_filename=None, all_model_checkpoint_timestamps=None,
                            last_preserved_timestamp=None):
    """Writes the state file of `save_dir` (paths as given; see update_checkpoint_state_internal)."""
    update_checkpoint_state_internal(save_dir, model_checkpoint_path, all_model_checkpoint_paths,
                                     latest_filename, False, all_model_checkpoint_timestamps,
                                     last_preserved_timestamp)


def checkpoint_exists(checkpoint_prefix):
    """True when `checkpoint_prefix` names a checkpoint (`prefix.index` exists)."""
    return checkpoint_exists_internal(checkpoint_prefix)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the latest checkpoint of `checkpoint_dir` (from its state file), or None when
    there is no state file or its latest checkpoint's files are gone."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state and state.model_checkpoint_path:
        if checkpoint_exists_internal(state.model_checkpoint_path):
            return state.model_checkpoint_path
        _log().error("Couldn't match files for checkpoint %s", state.model_checkpoint_path)
    return None


def get_checkpoint_mtimes(checkpoint_prefixes):
    """The modification times (seconds since the epoch) of the checkpoints that exist."""
    return [os.path.getmtime(index_filename(p)) for p in checkpoint_prefixes if checkpoint_exists_internal(p)]


def meta_graph_filename(checkpoint_filename, meta_graph_suffix="meta"):
    basename = re.sub(r"-[\d\?]+-of-\d+$", "", checkpoint_filename)
    return ".".join([basename, meta_graph_suffix])


def remove_checkpoint(checkpoint_prefix, checkpoint_format_version=None, meta_graph_suffix="meta"):
    """Deletes the files of a checkpoint (index, data, meta graph); missing ones are skipped."""
    paths = [index_filename(checkpoint_prefix), meta_graph_filename(checkpoint_prefix, meta_graph_suffix)]
    directory, base = os.path.split(checkpoint_prefix)
    data = re.compile(re.escape(base) + r"\.data-.{5}-of-.{5}$")
    try:
        paths += [os.path.join(directory, f) for f in os.listdir(directory or ".") if data.match(f)]
    except FileNotFoundError:
        pass
    for p in paths:
        try:
            os.remove(p)
        except FileNotFoundError:
            pass


def _resolve(ckpt_dir_or_file):
    path = os.fspath(ckpt_dir_or_file)
    if os.path.isdir(path):
        found = latest_checkpoint(path)
        if found is None:
            raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}")
        return found
    return path


def load_checkpoint(ckpt_dir_or_file):
    """A CheckpointReader for a checkpoint prefix, or for the latest checkpoint of a directory.

    Raises:
      ValueError: a directory without checkpoints.
      NotFoundError: no checkpoint with that prefix.
    """
    return CheckpointReader(_resolve(ckpt_dir_or_file))


def load_variable(ckpt_dir_or_file, name):
    """The array saved as `name` (a trailing ":0" is dropped)."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def list_variables(ckpt_dir_or_file):
    """Sorted (name, shape) pairs of the checkpoint's tensors."""
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(name, shapes[name]) for name in sorted(shapes)]


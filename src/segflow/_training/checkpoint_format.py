"""segflow's checkpoint files: a named set of arrays under one prefix, and the reader for it.

A checkpoint with prefix `dir/model-7` is two files, TensorFlow's names but segflow's own content
(TensorFlow cannot read them, nor segflow TensorFlow's):

    dir/model-7.index                  JSON, UTF-8:
        {"format": "segflow-checkpoint", "version": 1, "uuid": "<32 hex>", "byte_order": "little",
         "data_size": <bytes of the data file>,
         "tensors": {"<name>": {"dtype": "float32", "shape": [2, 3], "offset": 64, "size": 24,
                                "crc32": <zlib.crc32 of those bytes>}, ...}}
    dir/model-7.data-00000-of-00001    b"SFCKPT\\0\\1", the same uuid (16 bytes), then each tensor's bytes
                                       at its offset (64-byte aligned), C order, the index's byte order

Every dtype a variable can hold is stored by its segflow name ("bfloat16", "float8_e4m3fn",
"qint8", "complex128", "bool", ...) as raw bytes. A string tensor stores its element lengths
(uint64) followed by the bytes of the elements (str elements are written as UTF-8; they read back
as bytes, as TF's strings do). Nothing is ever pickled.

Writing goes to temporary files beside the final ones, flushed to disk; then the old index is
removed, the data file renamed into place and the index last: a crash never leaves a partial file
under a final name, and an index only ever describes the data file written with it (the uuid and
each tensor's crc32 are checked on reading; a mismatch is a DataLossError).

(json and zlib are imported on first use: `import segflow` stays cheap.)
"""
import os
import sys

import numpy as np

from segflow._core import dtypes, errors

__all__ = ["CheckpointReader", "NewCheckpointReader", "write_bundle", "checkpoint_exists_internal",
           "data_filename", "index_filename"]

FORMAT = "segflow-checkpoint"
VERSION = 1
_MAGIC = b"SFCKPT\x00\x01"
_HEADER = len(_MAGIC) + 16
_ALIGN = 64


def index_filename(prefix):
    return prefix + ".index"


def data_filename(prefix):
    return prefix + ".data-00000-of-00001"


def checkpoint_exists_internal(prefix):
    """True when `prefix` names a segflow checkpoint (its `.index` file exists)."""
    return prefix is not None and os.path.isfile(index_filename(os.fspath(prefix)))


def _encode(name, value, dtype_name=None):
    """(dtype name, shape, bytes) of one array (`dtype_name`: its segflow dtype, when the array's
    own dtype does not say it, as for the quantized types held as plain integers)."""
    arr = np.asarray(value)
    if arr.dtype == object or arr.dtype.kind in "SU":
        flat = []
        for x in arr.reshape(-1):
            if isinstance(x, str):
                x = x.encode("utf-8")
            elif isinstance(x, np.bytes_):
                x = bytes(x)
            if not isinstance(x, bytes):
                raise errors.InvalidArgumentError(
                    None, None, f"Saving '{name}': a string tensor holds a {type(x).__name__}, not bytes or str")
            flat.append(x)
        lengths = np.array([len(x) for x in flat], dtype="<u8")
        return "string", list(arr.shape), lengths.tobytes() + b"".join(flat)
    try:
        dtype = dtypes.as_dtype(dtype_name) if dtype_name else dtypes.from_numpy(arr.dtype)
    except (TypeError, KeyError, ValueError):
        raise errors.InvalidArgumentError(None, None, f"Saving '{name}': cannot save dtype {arr.dtype}") from None
    if _storage(dtype).itemsize != arr.dtype.itemsize:
        raise errors.InvalidArgumentError(None, None, f"Saving '{name}': an array of {arr.dtype} is not {dtype.name}")
    return dtype.name, list(arr.shape), np.ascontiguousarray(arr).tobytes()


def _storage(dtype):
    """The NumPy dtype the values are held in (a quantized type's integer field)."""
    np_dtype = dtype.np
    return np_dtype.fields[np_dtype.names[0]][0] if np_dtype.names else np_dtype


def _fsync_write(path, chunks):
    with open(path, "wb") as f:
        for c in chunks:
            f.write(c)
        f.flush()
        os.fsync(f.fileno())


def write_bundle(prefix, tensors, dtype_names=None, meta=None):
    """Writes `tensors` ({name: array}) as the checkpoint `prefix` (see the module docstring);
    `dtype_names` ({name: segflow dtype name}) overrides the dtype read from an array.

    Raises:
      ValueError: the directory of `prefix` does not exist.
      InvalidArgumentError: a value of a dtype that cannot be saved.
    """
    prefix = os.fspath(prefix)
    parent = os.path.dirname(prefix) or "."
    if not os.path.isdir(parent):
        raise ValueError(f"Parent directory of {prefix} doesn't exist, can't save.")
    import json
    import zlib
    uid = os.urandom(16)
    tmp = f".tmp-{uid.hex()[:12]}"
    data_tmp, index_tmp = data_filename(prefix) + tmp, index_filename(prefix) + tmp
    try:
        entries = {}
        with open(data_tmp, "wb") as f:      # one tensor's bytes in memory at a time
            f.write(_MAGIC + uid)
            offset = _HEADER
            for name in sorted(tensors):
                dtype_name, shape, raw = _encode(name, tensors[name], (dtype_names or {}).get(name))
                pad = (-offset) % _ALIGN
                f.write(b"\0" * pad)
                offset += pad
                entries[name] = {"dtype": dtype_name, "shape": shape, "offset": offset, "size": len(raw),
                                 "crc32": zlib.crc32(raw)}
                f.write(raw)
                offset += len(raw)
                del raw
            f.flush()
            os.fsync(f.fileno())
        index = {"format": FORMAT, "version": VERSION, "uuid": uid.hex(), "byte_order": sys.byteorder,
                 "data_size": offset, "tensors": entries}
        if meta:
            index["meta"] = meta
        _fsync_write(index_tmp, [json.dumps(index, sort_keys=True).encode("utf-8")])
        if os.path.exists(index_filename(prefix)):
            os.remove(index_filename(prefix))
        os.replace(data_tmp, data_filename(prefix))
        os.replace(index_tmp, index_filename(prefix))
    finally:
        for path in (data_tmp, index_tmp):
            if os.path.exists(path):
                os.remove(path)
    return prefix


class CheckpointReader:
    """Reads the arrays of one checkpoint (TF's `CheckpointReader`, from `load_checkpoint`).

    Raises (constructor):
      NotFoundError: no checkpoint with this prefix.
      DataLossError: the index is not a segflow checkpoint index.
    """

    def __init__(self, prefix):
        import json
        prefix = os.fspath(prefix)
        self._prefix = prefix
        path = index_filename(prefix)
        if not os.path.isfile(path):
            raise errors.NotFoundError(None, None, f"Unsuccessful TensorSliceReader constructor: Failed to find "
                                                   f"any matching files for {prefix}")
        try:
            with open(path, "rb") as f:
                index = json.loads(f.read().decode("utf-8"))
            ok = index.get("format") == FORMAT and isinstance(index.get("tensors"), dict)
        except (ValueError, UnicodeDecodeError, AttributeError):
            ok = False
        if not ok:
            raise errors.DataLossError(None, None, f"Unable to open table file {path}: not a segflow checkpoint "
                                                   "index (TensorFlow's own checkpoints cannot be read)")
        if index.get("version", 0) > VERSION:
            raise errors.DataLossError(None, None, f"Checkpoint {prefix} has format version {index['version']}; "
                                                   f"this segflow reads versions up to {VERSION}")
        self._index = index
        self._tensors = index["tensors"]

    @property
    def prefix(self):
        return self._prefix

    def has_tensor(self, name):
        return name in self._tensors

    def get_variable_to_shape_map(self):
        """{name: shape as a list of ints}."""
        return {n: list(e["shape"]) for n, e in self._tensors.items()}

    def get_variable_to_dtype_map(self):
        """{name: DType}."""
        return {n: dtypes.as_dtype(e["dtype"]) for n, e in self._tensors.items()}

    def _GetVariableToDataTypeMap(self):  # noqa: N802 - TF's name
        return self.get_variable_to_dtype_map()

    def debug_string(self):
        lines = [f"{n} ({e['dtype']}) {e['shape']}" for n, e in sorted(self._tensors.items())]
        return ("\n".join(lines) + "\n").encode("utf-8")

    def get_tensor(self, name):
        """The array saved as `name` (a new, writable array).

        Raises:
          NotFoundError: no tensor of that name.
          DataLossError: the data file is missing, truncated, or does not match the index.
        """
        return self.get_tensors([name])[name]

    def get_tensors(self, names):
        """{name: array} for several names, reading the data file once."""
        for name in names:
            if name not in self._tensors:
                raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint {self._prefix}")
        path = data_filename(self._prefix)
        out = {}
        try:
            with open(path, "rb") as f:
                head = f.read(_HEADER)
                if head[:len(_MAGIC)] != _MAGIC or head[len(_MAGIC):].hex() != self._index.get("uuid"):
                    raise self._loss("the data file was not written with this index")
                for name in names:
                    out[name] = self._read_one(f, name)
        except FileNotFoundError:
            raise self._loss(f"the data file {path} is missing") from None
        return out

    def _loss(self, what):
        return errors.DataLossError(None, None, f"Checkpoint {self._prefix} is corrupted: {what}")

    def _read_one(self, f, name):
        import zlib
        e = self._tensors[name]
        f.seek(e["offset"])
        buf = bytearray(e["size"])
        if f.readinto(buf) != e["size"] or zlib.crc32(buf) != e["crc32"]:
            raise self._loss(f"the bytes of tensor '{name}' are truncated or changed (checksum mismatch)")
        shape = tuple(e["shape"])
        if e["dtype"] == "string":
            count = int(np.prod(shape, dtype=np.int64))
            lengths = np.frombuffer(buf, dtype="<u8", count=count)
            out = np.empty(count, dtype=object)
            pos = 8 * count
            for i, n in enumerate(lengths.tolist()):
                out[i] = bytes(buf[pos:pos + n])
                pos += n
            return out.reshape(shape)
        arr = np.frombuffer(buf, dtype=dtypes.as_dtype(e["dtype"]).np).reshape(shape)
        if self._index.get("byte_order", sys.byteorder) != sys.byteorder:
            arr = arr.byteswap()
        return arr


def NewCheckpointReader(filepattern):  # noqa: N802 - TF's name
    """A `CheckpointReader` for the checkpoint `filepattern` (a prefix)."""
    return CheckpointReader(filepattern)

"""A graph's description as TF's `GraphDef` / `NodeDef` messages hold it, as plain values:
`Graph.as_graph_def()` gives a GraphDef whose `node` lists one NodeDef per op (name, op type,
inputs as "op:index" / "^op" strings, device, attrs), printed in TF's text format. segflow builds
graphs from Python; these describe them (for printing, inspecting, counting nodes)."""
import numpy as np

__all__ = ["GraphDef", "NodeDef"]


_DT_NAMES = {"float32": "FLOAT", "float64": "DOUBLE", "float16": "HALF"}


def _text_value(value):
    """One attr value in text format."""
    name = getattr(value, "name", None)
    if isinstance(value, (bool, np.bool_)):
        return "b: " + ("true" if value else "false")
    if isinstance(value, (int, np.integer)):
        return f"i: {int(value)}"
    if isinstance(value, (float, np.floating)):
        return f"f: {float(value)!r}"
    if isinstance(value, (str, bytes)):
        text = value.decode(errors="replace") if isinstance(value, bytes) else value
        return f"s: {text!r}"
    if hasattr(value, "as_numpy_dtype") and name is not None:
        return f"type: DT_{_DT_NAMES.get(name, name.upper())}"
    if hasattr(value, "as_proto"):
        return f"shape {{ {value.as_proto()} }}"
    if isinstance(value, (list, tuple)):
        return "list { " + " ".join(_text_value(v) for v in value) + " }"
    if isinstance(value, np.ndarray):
        return f"tensor {{ dtype: {value.dtype} shape: {list(value.shape)} }}"
    return repr(value)


class NodeDef:
    """One node: `name`, `op` (its type), `input` (list of "op:index" and "^op" strings), `device`,
    `attr` (dict name -> value). Also readable as a mapping (`node["name"]`)."""

    __slots__ = ("name", "op", "input", "device", "attr")

    def __init__(self, name="", op="", input=(), device="", attr=None):
        self.name = name
        self.op = op
        self.input = list(input)
        self.device = device
        self.attr = dict(attr or {})

    def __getitem__(self, key):
        if key not in self.__slots__:
            raise KeyError(key)
        return getattr(self, key)

    def keys(self):
        return list(self.__slots__)

    def CopyFrom(self, other):  # noqa: N802 - protobuf's name
        self.name, self.op, self.input = other.name, other.op, list(other.input)
        self.device, self.attr = other.device, dict(other.attr)

    def __eq__(self, other):
        if not isinstance(other, NodeDef):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in ("name", "op", "input", "device")) and \
            set(self.attr) == set(other.attr)

    __hash__ = None

    def __str__(self):
        lines = [f'name: "{self.name}"', f'op: "{self.op}"']
        lines += [f'input: "{i}"' for i in self.input]
        if self.device:
            lines.append(f'device: "{self.device}"')
        for key in sorted(self.attr):
            lines.append(f'attr {{\n  key: "{key}"\n  value {{\n    {_text_value(self.attr[key])}\n  }}\n}}')
        return "\n".join(lines) + "\n"

    def __repr__(self):
        return f"NodeDef(name={self.name!r}, op={self.op!r}, input={self.input!r})"


class GraphDef:
    """A graph as a list of NodeDefs (`node`), in creation order, and `versions` (a dict)."""

    __slots__ = ("node", "versions")

    def __init__(self, node=(), versions=None):
        self.node = list(node)
        self.versions = dict(versions or {"producer": 0})

    def __str__(self):
        parts = ["node {\n" + "".join("  " + line + "\n" for line in str(n).rstrip("\n").split("\n")) + "}\n"
                 for n in self.node]
        return "".join(parts) + f"versions {{\n  producer: {self.versions.get('producer', 0)}\n}}\n"

    def __repr__(self):
        return f"GraphDef({len(self.node)} nodes)"

    def ByteSize(self):  # noqa: N802 - protobuf's name: the text size stands in for the wire size
        return len(str(self))

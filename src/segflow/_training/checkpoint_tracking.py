"""The object graph a `Checkpoint` saves: which objects it reaches from its root, by which path, and
the checkpoint key of every variable (TF's object-based checkpoint keys).

Children of an object, in order:
- a `Checkpoint`: the objects given to it (keyword arguments, attributes set later), then its
  `save_counter`;
- an `sf.Module`, a TF1 layer (`Dense`): its attributes that reach something trackable, in the
  order they were set;
- a TF1 optimizer: its non-slot variables by name ("beta1_power"); its slots are keyed by their
  primary variable (below);
- a list or tuple: its items "0", "1", ...; a dict: its values by key;
- any object with a `_trackable_children()` method returning {name: child}.
Variables and partitioned variables are leaves.

Objects are visited breadth first, each once: an object reachable by several paths is saved under
the first (shortest) one. Keys, as TF writes them ("." in a name escaped as "..", "/" as ".S"):

    model/dense/kernel/.ATTRIBUTES/VARIABLE_VALUE
    model/dense/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE
    optimizer/beta1_power/.ATTRIBUTES/VARIABLE_VALUE

Deliberate difference from TF: objects are matched to checkpoint values by these paths, not by
the topology of a stored object graph (the same thing unless the model's structure changed).
"""
import collections
import sys

from segflow._core import mode as context
from segflow._core.graph import get_default_graph
from segflow._ops.module import Module
from segflow._ops.partitioned_variables import PartitionedVariable
from segflow._training.checkpoint_values import Saveable, is_variable, variable_key
from segflow._training.optimizer import Optimizer

__all__ = ["ObjectGraph", "VALUE_SUFFIX", "SLOT_MARK", "escape", "name_to_key_map"]

VALUE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
SLOT_MARK = "/.OPTIMIZER_SLOT/"
OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"

_MODULE_INTERNAL = frozenset(("_name", "_scope_name", "_name_scope_ctx"))


def escape(name):
    return str(name).replace(".", "..").replace("/", ".S")


def _layer_types():
    """TF1 layers tracked like modules (Dense); none can exist before their module is imported,
    which `import segflow` does not do."""
    mod = sys.modules.get("segflow._ops.dense_layer")
    return (mod.Dense,) if mod is not None else ()


def is_leaf(x):
    return is_variable(x) or isinstance(x, PartitionedVariable)


def is_trackable(x):
    """Whether a Checkpoint can hold `x` (a variable, module, layer, optimizer, Checkpoint,
    container, or an object with `_trackable_children`)."""
    if isinstance(x, type):
        return False
    return (is_leaf(x) or isinstance(x, (Module, Optimizer, list, tuple, dict) + _layer_types())
            or callable(getattr(x, "_trackable_children", None)) or hasattr(x, "_checkpoint_children"))


def _reaches_trackable(x, depth=0):
    if is_leaf(x) or (is_trackable(x) and not isinstance(x, (list, tuple, dict))):
        return True
    if depth > 50:
        return False
    if isinstance(x, dict):
        return any(_reaches_trackable(v, depth + 1) for v in x.values())
    if isinstance(x, (list, tuple)):
        return any(_reaches_trackable(v, depth + 1) for v in x)
    return False


def children(obj):
    """[(name, child)] of `obj` in the order described in the module docstring."""
    if is_leaf(obj):
        return []
    hook = getattr(obj, "_checkpoint_children", None)
    if hook is not None:                       # a Checkpoint
        return list(hook().items())
    hook = getattr(obj, "_trackable_children", None)
    if callable(hook):
        return list(hook().items())
    if isinstance(obj, Optimizer):
        graph = None if context.executing_eagerly() else get_default_graph()
        return [(name, v) for (name, g), v in obj._non_slot_dict.items() if g is graph]
    if isinstance(obj, dict):
        return [(str(k), v) for k, v in obj.items() if _reaches_trackable(v)]
    if isinstance(obj, (list, tuple)):
        return [(str(i), v) for i, v in enumerate(obj) if _reaches_trackable(v)]
    if isinstance(obj, (Module,) + _layer_types()):
        skip = Module._TF_MODULE_IGNORED_PROPERTIES | _MODULE_INTERNAL
        return [(k, v) for k, v in vars(obj).items() if k not in skip and _reaches_trackable(v)]
    return []


class ObjectGraph:
    """The objects reachable from `root`, each with its path (a tuple of escaped names)."""

    def __init__(self, root):
        self.paths = collections.OrderedDict()      # id(obj) -> path
        self.objects = {}                            # id(obj) -> obj
        queue = collections.deque([root])
        self.paths[id(root)] = ()
        self.objects[id(root)] = root
        while queue:
            obj = queue.popleft()
            base = self.paths[id(obj)]
            for name, child in children(obj):
                if id(child) in self.paths:
                    continue
                self.paths[id(child)] = base + (escape(name),)
                self.objects[id(child)] = child
                queue.append(child)

    def path_text(self, obj):
        return "/".join(self.paths[id(obj)])

    def by_path(self):
        return {"/".join(p): self.objects[i] for i, p in self.paths.items()}

    def optimizers(self):
        return [o for o in self.objects.values() if isinstance(o, Optimizer)]

    def saveables(self):
        """{checkpoint key: Saveable} of every variable (and optimizer slot) in the graph."""
        out = {}
        for i, path in self.paths.items():
            obj = self.objects[i]
            if not path or not is_leaf(obj):
                continue
            key = "/".join(path) + VALUE_SUFFIX
            if isinstance(obj, PartitionedVariable):
                out[key] = Saveable.of_shards(key, list(obj))
            else:
                out[key] = Saveable.of_variable(key, obj)
        for opt in self.optimizers():
            opt_path = self.path_text(opt)
            for slot_name in sorted(opt._slots):
                for var_id, slot in opt._slots[slot_name].items():
                    primary = opt._slot_primaries.get(var_id)
                    if primary is None or id(primary) not in self.paths:
                        continue
                    key = f"{self.path_text(primary)}{SLOT_MARK}{opt_path}/{escape(slot_name)}{VALUE_SUFFIX}"
                    out[key] = Saveable.of_variable(key, slot)
        return out

    def describe(self, saveables):
        """A JSON-able description stored beside the values (as TF stores its object graph): the
        objects' paths, and each key's variable name (what a name-based Saver looks up)."""
        names = {key: variable_key(s.variables[0]) for key, s in saveables.items() if len(s.parts) == 1}
        return {"format": "segflow-object-graph", "version": 1,
                "paths": ["/".join(p) for p in self.paths.values()], "variable_names": names}


def name_to_key_map(reader):
    """{variable name: checkpoint key} from an object-based checkpoint's description (names that
    several keys share are left out), or {} for a name-based checkpoint."""
    import json
    if not reader.has_tensor(OBJECT_GRAPH_KEY):
        return {}
    try:
        described = json.loads(bytes(reader.get_tensor(OBJECT_GRAPH_KEY).item()).decode("utf-8"))
        names = dict(described.get("variable_names", {}))
    except (ValueError, TypeError, AttributeError, UnicodeDecodeError):
        return {}
    counts = collections.Counter(names.values())
    return {name: key for key, name in names.items() if counts[name] == 1}


def split_slot_key(key):
    """(primary path, optimizer path, slot name) of a slot key, or None."""
    if SLOT_MARK not in key or not key.endswith(VALUE_SUFFIX):
        return None
    primary, rest = key.split(SLOT_MARK, 1)
    rest = rest[:-len(VALUE_SUFFIX)]
    if "/" not in rest:
        return None
    opt_path, slot = rest.rsplit("/", 1)
    return primary, opt_path, slot

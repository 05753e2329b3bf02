"""`sf.Module` (TF's `tf.Module`): a home for the variables and sub-modules of a model.

Its `variables`, `trainable_variables` and `submodules` are found by walking the module's
attributes (and lists, tuples and dicts in them) in attribute-name order, each object once; a
variable held by two sub-modules is listed once. `name_scope` is the scope the module's ops and
variables are named under (`with self.name_scope:`), and `Module.with_name_scope` wraps a method
in it.
"""
import functools
import re

from segflow._core.graph import name_scope as _name_scope

__all__ = ["Module"]

_VALID_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")


_CAMEL = re.compile(r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))")


def _camel_to_snake(name):
    """TF's default module name: "MyMLP" -> "my_mlp", "_Dense" -> "__dense"."""
    return _CAMEL.sub(r"_\1", name).lower()


def _is_variable(x):
    return not isinstance(x, type) and hasattr(x, "handle") and hasattr(x, "assign") and hasattr(x, "trainable")


class _ScopeContext:
    """`module.name_scope`: re-enters the module's scope (its ops get the same prefix each time)."""

    def __init__(self, scope):
        self._scope = scope
        self._ctx = None

    def __enter__(self):
        self._ctx = _name_scope(self._scope)
        return self._ctx.__enter__()

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)

    @property
    def name(self):
        return self._scope


class Module:
    """Base class for models and layers: subclass it, create variables in `__init__` (or on the
    first call) and assign them (or sub-modules) to attributes."""

    _TF_MODULE_IGNORED_PROPERTIES = frozenset(("_self_unconditional_checkpoint_dependencies",))

    def __init__(self, name=None):
        if name is None:
            name = _camel_to_snake(type(self).__name__)
        elif not _VALID_NAME.match(name):
            raise ValueError(f"{name!r} is not a valid module name. Module names must be valid Python "
                             "identifiers (e.g. a valid class name).")
        self._name = name
        with _name_scope(name) as scope:
            self._scope_name = scope
        self._name_scope_ctx = _ScopeContext(self._scope_name)

    @property
    def name(self):
        return self._name

    @property
    def name_scope(self):
        return self._name_scope_ctx

    @property
    def variables(self):
        """Every variable reachable from this module's attributes (its own and its sub-modules')."""
        return tuple(self._flatten(_is_variable))

    @property
    def trainable_variables(self):
        return tuple(self._flatten(lambda x: _is_variable(x) and x.trainable))

    @property
    def non_trainable_variables(self):
        return tuple(self._flatten(lambda x: _is_variable(x) and not x.trainable))

    @property
    def submodules(self):
        """Every Module reachable from this module's attributes (not the module itself)."""
        return tuple(self._flatten(lambda x: isinstance(x, Module)))

    def _flatten(self, predicate, recursive=True):
        seen = {id(self)}
        out = []

        def visit(x, depth):
            if id(x) in seen:
                return
            if predicate(x):
                seen.add(id(x))
                out.append(x)
            if isinstance(x, Module):
                seen.add(id(x))
                if recursive or depth == 0:
                    for key in sorted(vars(x)):
                        if key not in Module._TF_MODULE_IGNORED_PROPERTIES and key not in ("_name_scope_ctx",):
                            visit(vars(x)[key], depth + 1)
            elif isinstance(x, dict):
                seen.add(id(x))
                for key in sorted(x, key=repr):
                    visit(x[key], depth)
            elif isinstance(x, (list, tuple)):
                seen.add(id(x))
                for item in x:
                    visit(item, depth)
        for key in sorted(vars(self)):
            if key != "_name_scope_ctx":
                visit(vars(self)[key], 0)
        return out

    @classmethod
    def with_name_scope(cls, method):
        """Decorator: `method` runs inside the module's name scope."""
        @functools.wraps(method)
        def wrapped(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)
        return wrapped

    def __repr__(self):
        return f"<{type(self).__module__}.{type(self).__name__} '{self._name}'>"

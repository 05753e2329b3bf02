"""`tf.compat.v1.flags` (and `tf.compat.v1.app.flags`): absl's flags, as TF routes them.

absl is imported on first use (the first DEFINE, the first read of FLAGS, or any other absl name
looked up here), so `import segflow` stays cheap. As in TF:
- `FLAGS` is absl's global FlagValues, wrapped so that reading a flag before the flags were parsed
  parses `sys.argv` first (absl alone raises UnparsedFlagAccessError);
- DEFINE_string / integer / float / boolean (bool) also take TF1's old keyword names
  `flag_name`, `default_value`, `docstring` (with a warning);
- every other absl.flags name (DEFINE_list, DEFINE_enum, DEFINE_multi_string, mark_flag_as_required,
  FlagValues, the error classes, ...) is absl's own object.
Flags defined through these wrappers are attributed to the module that calls them (absl's key
flags), as TF does by disclaiming its own module.
"""
import sys as _sys

__all__ = ["FLAGS", "DEFINE_bool", "DEFINE_boolean", "DEFINE_enum", "DEFINE_float", "DEFINE_integer", "DEFINE_list",
           "DEFINE_multi_enum", "DEFINE_multi_float", "DEFINE_multi_integer", "DEFINE_multi_string",
           "DEFINE_string", "mark_flag_as_required", "mark_flags_as_required", "absl_flags"]

_ABSL = []


def absl_flags():
    """The absl.flags module (imported on the first call)."""
    if not _ABSL:
        import absl.flags
        absl.flags.disclaim_key_flags()     # flags DEFINEd through this module belong to its caller
        _ABSL.append(absl.flags)
    return _ABSL[0]


def __getattr__(name):
    """Any other absl.flags name (the module's own `__getattr__`: absl loads on first use)."""
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(absl_flags(), name)
    except AttributeError:
        raise AttributeError(f"module 'segflow.compat.v1.flags' (absl.flags) has no attribute '{name}'") from None


_RENAMED_ARGUMENTS = {"flag_name": "name", "default_value": "default", "docstring": "help"}


def _define(absl_name, renames=True):
    def define(*args, **kwargs):
        if renames and any(old in kwargs for old in _RENAMED_ARGUMENTS):
            for old, new in _RENAMED_ARGUMENTS.items():
                if old in kwargs:
                    kwargs[new] = kwargs.pop(old)
            import logging
            logging.warning("Use of the keyword argument names (flag_name, default_value, docstring) is "
                             "deprecated, please use (name, default, help) instead.")
        flag_values = kwargs.get("flag_values")
        if isinstance(flag_values, _FlagValuesWrapper):
            kwargs["flag_values"] = flag_values._wrapped
        return getattr(absl_flags(), absl_name)(*args, **kwargs)
    define.__name__ = define.__qualname__ = absl_name
    define.__doc__ = f"absl.flags.{absl_name} (absl is imported on the first call)."
    return define


DEFINE_string = _define("DEFINE_string")
DEFINE_boolean = _define("DEFINE_boolean")
DEFINE_bool = DEFINE_boolean
DEFINE_float = _define("DEFINE_float")
DEFINE_integer = _define("DEFINE_integer")
DEFINE_list = _define("DEFINE_list", renames=False)
DEFINE_enum = _define("DEFINE_enum", renames=False)
DEFINE_multi_string = _define("DEFINE_multi_string", renames=False)
DEFINE_multi_integer = _define("DEFINE_multi_integer", renames=False)
DEFINE_multi_float = _define("DEFINE_multi_float", renames=False)
DEFINE_multi_enum = _define("DEFINE_multi_enum", renames=False)
mark_flag_as_required = _define("mark_flag_as_required", renames=False)
mark_flags_as_required = _define("mark_flags_as_required", renames=False)


class _FlagValuesWrapper:
    """absl's `flags.FLAGS`, loaded on first use; reading a flag before parsing parses `sys.argv`
    (TF's tf.flags.FLAGS). Everything else is the wrapped FlagValues' own behaviour."""

    @property
    def _wrapped(self):
        return absl_flags().FLAGS

    def __getattribute__(self, name):
        # everything (methods, __class__: isinstance(FLAGS, absl.flags.FlagValues) holds) is absl's
        if name in ("__dict__", "_wrapped"):
            return object.__getattribute__(self, name)
        return absl_flags().FLAGS.__getattribute__(name)

    def __getattr__(self, name):
        wrapped = absl_flags().FLAGS
        if not wrapped.is_parsed():
            wrapped(_sys.argv)
        return wrapped.__getattr__(name)

    def __setattr__(self, name, value):
        return absl_flags().FLAGS.__setattr__(name, value)

    def __delattr__(self, name):
        return absl_flags().FLAGS.__delattr__(name)

    def __dir__(self):
        return absl_flags().FLAGS.__dir__()

    def __getitem__(self, name):
        return absl_flags().FLAGS.__getitem__(name)

    def __setitem__(self, name, flag):
        return absl_flags().FLAGS.__setitem__(name, flag)

    def __contains__(self, name):
        return absl_flags().FLAGS.__contains__(name)

    def __len__(self):
        return absl_flags().FLAGS.__len__()

    def __iter__(self):
        return absl_flags().FLAGS.__iter__()

    def __str__(self):
        return absl_flags().FLAGS.__str__()

    def __repr__(self):
        return absl_flags().FLAGS.__repr__()

    def __call__(self, *args, **kwargs):
        return absl_flags().FLAGS.__call__(*args, **kwargs)


FLAGS = _FlagValuesWrapper()

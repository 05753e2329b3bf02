"""`sf.compat.v1.flags` (TensorFlow's `tf.compat.v1.flags` and `tf.compat.v1.app.flags`): absl's
flags, loaded on first use (see segflow._platform.flags). Names not listed here (DEFINE_alias,
FlagValues, register_validator, the error classes, ...) are absl.flags' own, looked up through
the module's `__getattr__`."""
from segflow._platform.flags import (
    DEFINE_bool, DEFINE_boolean, DEFINE_enum, DEFINE_float, DEFINE_integer, DEFINE_list, DEFINE_multi_enum,
    DEFINE_multi_float, DEFINE_multi_integer, DEFINE_multi_string, DEFINE_string, FLAGS, mark_flag_as_required,
    mark_flags_as_required
)
from segflow._platform.flags import __getattr__  # noqa: F401 - absl.flags' other names, on first use

__all__ = ["DEFINE_bool", "DEFINE_boolean", "DEFINE_enum", "DEFINE_float", "DEFINE_integer", "DEFINE_list",
           "DEFINE_multi_enum", "DEFINE_multi_float", "DEFINE_multi_integer", "DEFINE_multi_string", "DEFINE_string",
           "FLAGS", "mark_flag_as_required", "mark_flags_as_required"]

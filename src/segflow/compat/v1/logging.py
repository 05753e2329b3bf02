"""`sf.compat.v1.logging` (TensorFlow's `tf.compat.v1.logging`): TF's logging functions on Python's
logging, with the logger "segflow" (see segflow._platform.tf_logging)."""
from segflow._platform.tf_logging import (
    DEBUG, ERROR, FATAL, INFO, WARN, WARNING, TaskLevelStatusMessage, debug, error, fatal, flush, get_verbosity,
    info, log, log_every_n, log_first_n, log_if, set_verbosity, vlog, warn, warning
)

__all__ = ["DEBUG", "ERROR", "FATAL", "INFO", "WARN", "WARNING", "TaskLevelStatusMessage", "debug", "error", "fatal",
           "flush", "get_verbosity", "info", "log", "log_every_n", "log_first_n", "log_if", "set_verbosity", "vlog",
           "warn", "warning"]

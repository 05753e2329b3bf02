"""`tf.compat.v1.logging` and `tf.get_logger`, on Python's `logging`, with the logger named
"segflow" (TF's is "tensorflow": a program that configures `logging.getLogger("tensorflow")` for
TF configures `logging.getLogger("segflow")` here; one name per library keeps the two apart when
both are installed).

As in TF: the first `get_logger()` adds a stderr handler to the logger when the root logger has
none (stdout, and level INFO, in an interactive session); records propagate to the root logger;
the levels are the standard library's (`DEBUG` 10 ... `FATAL` 50); `fatal` logs at FATAL and does
not exit; `vlog(level, ...)` logs at `level`; `log_every_n` / `log_first_n` count per call site.
Records name the caller's file and line, not this module's. `logging` itself is imported by the
first `get_logger()` (or log call), so `import segflow` does not load it.

Deliberate differences: `flush()` flushes the logger's handlers (TF raises NotImplementedError),
and `WARNING` is exported beside TF's `WARN` (the same level).
"""
import sys as _sys
import threading as _threading

# The standard library's levels (logging itself is imported by the first get_logger()).
DEBUG, INFO, WARN, WARNING, ERROR, FATAL = 10, 20, 30, 30, 40, 50

__all__ = ["DEBUG", "ERROR", "FATAL", "INFO", "WARN", "WARNING", "TaskLevelStatusMessage", "debug", "error", "fatal",
           "flush", "get_logger", "get_verbosity", "info", "log", "log_every_n", "log_first_n", "log_if",
           "set_verbosity", "vlog", "warn", "warning"]

LOGGER_NAME = "segflow"

_logger = None
_lock = _threading.Lock()
_counts = {}         # call site (file, line) -> calls so far, for log_every_n / log_first_n


def get_logger():
    """The "segflow" `logging.Logger` (TF's `tf.get_logger()`)."""
    global _logger
    if _logger is not None:
        return _logger
    import logging as _logging
    with _lock:
        if _logger is None:
            logger = _logging.getLogger(LOGGER_NAME)
            if not _logging.getLogger().handlers:
                interactive = hasattr(_sys, "ps1") or bool(_sys.flags.interactive)
                if interactive:
                    logger.setLevel(INFO)
                handler = _logging.StreamHandler(_sys.stdout if interactive else _sys.stderr)
                handler.setFormatter(_logging.Formatter(_logging.BASIC_FORMAT, None))
                logger.addHandler(handler)
                # With its own handler the logger does not also pass records to the root logger:
                # otherwise a root handler added later (absl's, by app.run) prints each line twice.
                logger.propagate = False
            _logger = logger
    return _logger


def _emit(level, msg, args, kwargs):
    """Logs from a public function of this module, one frame below the caller to name."""
    kwargs["stacklevel"] = kwargs.get("stacklevel", 1) + 2      # skip _emit and the public function
    get_logger().log(level, msg, *args, **kwargs)


def log(level, msg, *args, **kwargs):
    _emit(level, msg, args, kwargs)


def debug(msg, *args, **kwargs):
    _emit(DEBUG, msg, args, kwargs)


def info(msg, *args, **kwargs):
    _emit(INFO, msg, args, kwargs)


def warn(msg, *args, **kwargs):
    _emit(WARN, msg, args, kwargs)


def warning(msg, *args, **kwargs):
    _emit(WARN, msg, args, kwargs)


def error(msg, *args, **kwargs):
    _emit(ERROR, msg, args, kwargs)


def fatal(msg, *args, **kwargs):
    """Logs at FATAL (CRITICAL); the program goes on, as in TF."""
    _emit(FATAL, msg, args, kwargs)


def vlog(level, msg, *args, **kwargs):
    """Logs at `level` (TF's verbose log is a plain log at that level)."""
    _emit(level, msg, args, kwargs)


def TaskLevelStatusMessage(msg):
    """Logs `msg` at ERROR, as TF does."""
    _emit(ERROR, msg, (), {})


def log_if(level, msg, condition, *args):
    """Logs `msg % args` at `level` when `condition` holds."""
    if condition:
        _emit(level, msg, args, {})


def _next_count():
    frame = _sys._getframe(2)       # the caller of log_every_n / log_first_n
    site = (frame.f_code.co_filename, frame.f_lineno)
    with _lock:
        n = _counts.get(site, -1) + 1
        _counts[site] = n
    return n


def log_every_n(level, msg, n, *args):
    """Logs `msg % args` at `level` on the 1st, (n+1)th, (2n+1)th ... call from this line."""
    if not _next_count() % n:
        _emit(level, msg, args, {})


def log_first_n(level, msg, n, *args):
    """Logs `msg % args` at `level` on the first `n` calls from this line."""
    if _next_count() < n:
        _emit(level, msg, args, {})


def get_verbosity():
    """The logger's effective level (WARN unless set: the root logger's default)."""
    return get_logger().getEffectiveLevel()


def set_verbosity(v):
    """Sets the lowest level the logger emits (e.g. `sf.compat.v1.logging.INFO`)."""
    get_logger().setLevel(v)


def flush():
    """Flushes the logger's handlers (TF's raises NotImplementedError)."""
    for handler in get_logger().handlers:
        handler.flush()

"""TensorFlow's module name for tape recording: a face over segflow._core.tape."""
from segflow._core.tape import Tape, pop_tape, push_tape, record, variable_accessed  # noqa: F401

__all__ = ["Tape", "record", "push_tape", "pop_tape", "variable_accessed"]

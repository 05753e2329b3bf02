"""segflow's exceptions: TensorFlow's classes and names, so `except errors.InvalidArgumentError` ports.

`invalid_input(op, input_name, message)` builds the one error prefix every op uses:
    InvalidArgumentError: UnsortedSegmentSum 'seg': input 'segment_ids': segment_ids[1] = 9 is out of range [0, 4)
"""

OK = 0
CANCELLED = 1
UNKNOWN = 2
INVALID_ARGUMENT = 3
DEADLINE_EXCEEDED = 4
NOT_FOUND = 5
ALREADY_EXISTS = 6
PERMISSION_DENIED = 7
RESOURCE_EXHAUSTED = 8
FAILED_PRECONDITION = 9
ABORTED = 10
OUT_OF_RANGE = 11
UNIMPLEMENTED = 12
INTERNAL = 13
UNAVAILABLE = 14
DATA_LOSS = 15
UNAUTHENTICATED = 16


class OpError(Exception):
    """An error raised while building or running an op. `op` is the Operation (or None)."""

    error_code = UNKNOWN

    def __init__(self, node_def=None, op=None, message="", *args):
        super().__init__(message)
        self.node_def = node_def
        self.op = op
        self.message = message

    def __str__(self):
        return self.message


def _make(name, code, doc):
    cls = type(name, (OpError,), {"__doc__": doc, "error_code": code})
    return cls


CancelledError = _make("CancelledError", CANCELLED, "The operation was cancelled.")
UnknownError = _make("UnknownError", UNKNOWN, "An unknown error.")
InvalidArgumentError = _make("InvalidArgumentError", INVALID_ARGUMENT,
                             "An op received an invalid argument: wrong dtype, shape or value.")
DeadlineExceededError = _make("DeadlineExceededError", DEADLINE_EXCEEDED, "A deadline expired.")
NotFoundError = _make("NotFoundError", NOT_FOUND, "A requested entity was not found.")
AlreadyExistsError = _make("AlreadyExistsError", ALREADY_EXISTS, "An entity already exists.")
PermissionDeniedError = _make("PermissionDeniedError", PERMISSION_DENIED, "Permission denied.")
ResourceExhaustedError = _make("ResourceExhaustedError", RESOURCE_EXHAUSTED, "Out of a resource.")
FailedPreconditionError = _make("FailedPreconditionError", FAILED_PRECONDITION,
                                "The system is not in a state to run the op (e.g. an uninitialized variable).")
AbortedError = _make("AbortedError", ABORTED, "The operation was aborted.")
OutOfRangeError = _make("OutOfRangeError", OUT_OF_RANGE, "An index or iterator went past its range.")
UnimplementedError = _make("UnimplementedError", UNIMPLEMENTED, "The operation is not implemented.")
InternalError = _make("InternalError", INTERNAL, "An internal invariant broke.")
UnavailableError = _make("UnavailableError", UNAVAILABLE, "A service is unavailable.")
DataLossError = _make("DataLossError", DATA_LOSS, "Data was lost or corrupted.")
UnauthenticatedError = _make("UnauthenticatedError", UNAUTHENTICATED, "Not authenticated.")


class OpName:
    """Op type and node name, for errors raised before the Operation exists (or without one)."""

    __slots__ = ("type", "name")

    def __init__(self, op_type, name=None):
        self.type = op_type
        self.name = name


class GraphBuildError(InvalidArgumentError, ValueError):
    """A static check that failed while building a graph: an InvalidArgumentError that
    `except ValueError` (what TF raises from a shape function) also catches."""


class DTypeError(InvalidArgumentError, TypeError):
    """Wrong input dtype: an InvalidArgumentError that `except TypeError` (TF graph style) also catches."""


def op_prefix(op_type, node_name=None):
    """`UnsortedSegmentSum 'seg'`: the op type and node name that start every op error."""
    return f"{op_type} '{node_name}'" if node_name else op_type


def invalid_input(op, input_name, message, cls=None):
    """An InvalidArgumentError (or `cls`) for op `op` (an Operation, or an OpName before one exists),
    naming the input; the error's `.op` is the Operation, as TF's."""
    text = f"{op_prefix(op.type, getattr(op, 'name', None))}: input '{input_name}': {message}"
    return (cls or InvalidArgumentError)(None, None if isinstance(op, OpName) else op, text)


def invalid_op(op, message, cls=None):
    """An InvalidArgumentError (or `cls`) for op `op` about the op as a whole (attrs, arity)."""
    return (cls or InvalidArgumentError)(None, None if isinstance(op, OpName) else op,
                                         f"{op_prefix(op.type, getattr(op, 'name', None))}: {message}")


__all__ = [n for n in list(globals()) if n.endswith("Error")] + [
    "OpError", "OpName", "invalid_input", "invalid_op", "op_prefix"]

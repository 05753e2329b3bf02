"""TensorFlow's module name for the error classes and codes: a face over segflow._core.errors."""
from segflow._core.errors import (  # noqa: F401
    OpError, CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError,
    NotFoundError, AlreadyExistsError, PermissionDeniedError, ResourceExhaustedError,
    FailedPreconditionError, AbortedError, OutOfRangeError, UnimplementedError, InternalError,
    UnavailableError, DataLossError, UnauthenticatedError, OpError, invalid_input, invalid_op,
    op_prefix, OK, CANCELLED, UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND,
    ALREADY_EXISTS, PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION, ABORTED,
    OUT_OF_RANGE, UNIMPLEMENTED, INTERNAL, UNAVAILABLE, DATA_LOSS, UNAUTHENTICATED,
)

__all__ = [
    'OpError', 'CancelledError', 'UnknownError', 'InvalidArgumentError',
    'DeadlineExceededError', 'NotFoundError', 'AlreadyExistsError', 'PermissionDeniedError',
    'ResourceExhaustedError', 'FailedPreconditionError', 'AbortedError', 'OutOfRangeError',
    'UnimplementedError', 'InternalError', 'UnavailableError', 'DataLossError',
    'UnauthenticatedError', 'OpError', 'invalid_input', 'invalid_op', 'op_prefix', 'OK',
    'CANCELLED', 'UNKNOWN', 'INVALID_ARGUMENT', 'DEADLINE_EXCEEDED', 'NOT_FOUND',
    'ALREADY_EXISTS', 'PERMISSION_DENIED', 'RESOURCE_EXHAUSTED', 'FAILED_PRECONDITION',
    'ABORTED', 'OUT_OF_RANGE', 'UNIMPLEMENTED', 'INTERNAL', 'UNAVAILABLE', 'DATA_LOSS',
    'UNAUTHENTICATED',
]

"""TensorFlow's `session` module name: a face over segflow._core.session."""
from segflow._core.session import Session, InteractiveSession, BaseSession

__all__ = [
    'Session', 'InteractiveSession', 'BaseSession'
]

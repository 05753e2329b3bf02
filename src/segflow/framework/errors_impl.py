"""TensorFlow's module name for the error classes (tensorflow.python.framework.errors_impl): the
classes of segflow.framework.errors, a face over segflow._core.errors."""
from segflow._core.errors import *  # noqa: F401,F403
from segflow._core.errors import __all__  # noqa: F401

"""TensorFlow's `script_ops` module name: a face over segflow._ops.script_ops."""
from segflow._ops.script_ops import eager_py_func, numpy_function, py_func, py_func_common, py_function

__all__ = ["eager_py_func", "numpy_function", "py_func", "py_func_common", "py_function"]

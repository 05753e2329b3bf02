"""Python functions as ops: `numpy_function` / `compat.v1.py_func` (op types "PyFunc" and
"PyFuncStateless": the function gets and returns NumPy arrays) and `py_function` (op type
"EagerPyFunc": the function gets eager Tensors, runs eagerly even inside a graph, and is
differentiable).

    y = sf.numpy_function(lambda a: np.sinh(a), [x], sf.float32)
    z = sf.py_function(lambda a: a * sf.exp(a), [x], sf.float32)    # tape.gradient(z, x) works

As in TF 2.21:
- Executing eagerly, `py_func` / `numpy_function` call the function at once on NumPy copies of the
  inputs and convert what it returns, with no op and no check against `Tout` (so no gradient); an
  exception it raises propagates unchanged.
- As graph ops (a Session, a traced `sf.function`) the kernel calls the function. PyFunc demands
  outputs of exactly the `Tout` dtypes (a Python float is float64); EagerPyFunc converts them to
  `Tout` as `convert_to_tensor` does. A wrong count or dtype is an InvalidArgumentError naming the
  op; an exception raised by the function becomes ValueError/TypeError -> InvalidArgumentError,
  StopIteration -> OutOfRangeError, MemoryError -> ResourceExhaustedError, NotImplementedError
  -> UnimplementedError, anything else -> UnknownError, with the Python traceback in the message.
- Graph outputs have unknown shapes (`set_shape` narrows them).
- PyFunc has no gradient unless `gradient_override_map` names one; EagerPyFunc's gradient
  differentiates the function with a GradientTape: eagerly, the tape recorded while the forward
  ran (TF's approach); in a graph, the backward op runs the function again under a tape.

Deliberate differences: an EagerPyFunc whose function returns more values than `Tout` names is an
error (TF drops the extra ones when `Tout` is one dtype); the function's gradient w.r.t. an integer
input is None (TF fails); EagerPyFunc has gradients of any order (TF's are first order); `inp` must
be a list or tuple (TF iterates any iterable, a tensor's rows included).
"""
import itertools

import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core import mode as context
from segflow._core import tape as tape_lib
from segflow._core.apply import apply_op
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import get_default_graph
from segflow._core.registry import TensorSpec, register_op
from segflow._core.tensor import EagerTensor
from segflow._core.tensor_spec import TensorSpec as _UserTensorSpec
from segflow._ops.backprop import GradientTape
from segflow.util import nest

__all__ = ["eager_py_func", "numpy_function", "py_func", "py_func_common", "py_function"]

_TOKENS = itertools.count()


def _new_token():
    return f"pyfunc_{next(_TOKENS)}"


# ----------------------------------------------------------------------------------------------
# Errors: what the function raised, as TF's PyFunc kernel reports it

def _error_class(exc):
    if isinstance(exc, (ValueError, TypeError)):
        return errors.InvalidArgumentError
    if isinstance(exc, StopIteration):
        return errors.OutOfRangeError
    if isinstance(exc, MemoryError):
        return errors.ResourceExhaustedError
    if isinstance(exc, NotImplementedError):
        return errors.UnimplementedError
    return errors.UnknownError


def _prefixed(op_type, state, message):
    """Eagerly the kernel names the op itself; a Session adds the op type and node name."""
    return f"{errors.op_prefix(op_type)}: {message}" if state.key is None else message


def _raised(op_type, state, exc):
    import traceback
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    message = f"{type(exc).__name__}: {exc}\n{text}"
    return _error_class(exc)(None, None, _prefixed(op_type, state, message))


def _count_error(op_type, state, token, got, want):
    return errors.InvalidArgumentError(None, None, _prefixed(
        op_type, state, f"{token} returns {got} values, but expects to see {want} values."))


def _values(ret):
    """What the function returned as a list of values (a list or tuple is several; None is none)."""
    if isinstance(ret, (list, tuple)):
        return list(ret)
    return [] if ret is None else [ret]


def _dtype_text(np_dtype):
    try:
        return dtypes.from_numpy(np_dtype).name
    except TypeError:
        return str(np_dtype)


# ----------------------------------------------------------------------------------------------
# PyFunc / PyFuncStateless: NumPy arrays in, NumPy arrays out

def _numpy_output(value, i, token, dtype, op_type, state):
    """`value` as an array of exactly `dtype` (strings: an object array of bytes), else an error."""
    if dtype == dtypes.string:
        arr = np.asarray(value)
        if arr.dtype.kind in "SUO":
            out = np.empty(arr.shape, object)
            out.reshape(-1)[:] = [v.encode() if isinstance(v, str) else v for v in arr.reshape(-1)]
            return out
    else:
        arr = np.array(value)       # a copy: the function may keep and change what it returned
        if arr.dtype == dtype.as_numpy_dtype:
            return arr
    raise errors.InvalidArgumentError(None, None, _prefixed(
        op_type, state, f"{i}-th value returned by {token} is {_dtype_text(arr.dtype)}, but expects {dtype.name}"))


def _numpy_kernel(op_type):
    def kernel(state, inputs, token, Tin, Tout, func):
        # copies (the function may write into its arguments); a scalar as a NumPy scalar, as TF passes it
        args = [a[()] if a.ndim == 0 else a for a in (np.array(x) for x in inputs)]
        try:
            ret = func(*args)
        except Exception as exc:  # noqa: BLE001 - every exception becomes an op error, as in TF
            raise _raised(op_type, state, exc) from exc
        values = _values(ret)
        if len(values) != len(Tout):
            raise _count_error(op_type, state, token, len(values), len(Tout))
        return [_numpy_output(v, i, token, dt, op_type, state) for i, (v, dt) in enumerate(zip(values, Tout))]
    kernel.__name__ = f"_{op_type}_kernel"
    return kernel


def _infer_py_func(op, inputs, token, Tin, Tout, func):
    return [TensorSpec(dt, tensor_shape.unknown_shape()) for dt in Tout]


_ATTRS = {"token": "", "Tin": (), "Tout": (), "func": None}
_COUNT = dict(num_outputs=lambda attrs, counts: len(attrs["Tout"]), list_output=True)

# stateful=True for all three (in segflow's sense: the kernel gets its ExecState and a plan never
# folds the call away); PyFuncStateless differs from PyFunc in its op type only.
register_op("PyFunc", inputs=("input*",), infer=_infer_py_func, kernel=_numpy_kernel("PyFunc"), stateful=True,
            defaults=_ATTRS, **_COUNT)
register_op("PyFuncStateless", inputs=("input*",), infer=_infer_py_func, kernel=_numpy_kernel("PyFuncStateless"),
            stateful=True, defaults=_ATTRS, **_COUNT)


# ----------------------------------------------------------------------------------------------
# EagerPyFunc: eager Tensors in, Tensors out, run eagerly even inside a graph


def differentiable(dtype):
    return dtype.is_floating or dtype.is_complex


class EagerFunc:
    """The callable an EagerPyFunc holds (its "func" attr): the user's function, the output dtypes,
    and, eagerly under a tape, what the forward run recorded (`recorded`: (tape, args, outputs))
    for the gradient."""

    __slots__ = ("func", "Tout", "is_grad_func", "recorded")

    def __init__(self, func, Tout, is_grad_func=False):
        self.func = func
        self.Tout = tuple(Tout)
        self.is_grad_func = is_grad_func
        self.recorded = None

    def call(self, args, token, state):
        """Runs the function on eager tensors `args`; its outputs converted to `Tout` (EagerTensors)."""
        try:
            values = _values(self.func(*args))
        except Exception as exc:  # noqa: BLE001 - every exception becomes an op error, as in TF
            if self.is_grad_func and isinstance(exc, errors.OpError):
                raise       # the forward function's, reported already (the gradient reruns it)
            raise _raised("EagerPyFunc", state, exc) from exc
        if len(values) != len(self.Tout):
            raise _count_error("EagerPyFunc", state, token, len(values), len(self.Tout))
        return [self._convert(v, dt, state) for v, dt in zip(values, self.Tout)]

    def _convert(self, value, dtype, state):
        if hasattr(value, "_dense_var_to_tensor"):
            raise errors.UnknownError(None, None, _prefixed(
                "EagerPyFunc", state, "RuntimeError: Attempting to return a variable from an eagerly executed "
                "py_func. Only numeric data structures like Tensors or NumPy arrays should be returned; to "
                "return the value of a variable, obtain the Tensor backing it with `.read_value()`"))
        if value is None and self.is_grad_func:
            return EagerTensor(np.zeros((), dtype.as_numpy_dtype))
        try:
            out = convert_to_tensor(value, dtype=dtype)
        except (ValueError, TypeError) as exc:
            raise _raised("EagerPyFunc", state, exc) from exc
        if not isinstance(out, EagerTensor):
            raise errors.InvalidArgumentError(None, None, _prefixed(
                "EagerPyFunc", state, f"the function returned a symbolic tensor {out.name}; it runs eagerly and "
                "must return eager tensors or arrays"))
        return out

    def __repr__(self):
        return f"<EagerFunc {getattr(self.func, '__name__', self.func)!r}>"


def _eager_kernel(state, inputs, token, Tin, Tout, func):
    with context.eager_mode():
        args = [EagerTensor(np.array(a)) for a in inputs]   # copies: arrays of the graph stay as they are
        if state.key is None and tape_lib.could_record() and any(differentiable(t.dtype) for t in args):
            # Eagerly under a tape: record the forward run, so the gradient needs no second run.
            with GradientTape(persistent=True) as tape:
                for t in args:
                    if differentiable(t.dtype):
                        tape.watch(t)
                outs = func.call(args, token, state)
            func.recorded = (tape, args, outs)
        else:
            outs = func.call(args, token, state)
    return [t._value for t in outs]


register_op("EagerPyFunc", inputs=("input*",), infer=_infer_py_func, kernel=_eager_kernel, stateful=True,
            defaults=_ATTRS, **_COUNT)


# ----------------------------------------------------------------------------------------------
# The public functions


def _dtype_list(Tout):
    """(list of DTypes, whether Tout was a list or tuple)."""
    is_list = isinstance(Tout, (list, tuple))
    out = []
    for t in (Tout if is_list else [Tout]):
        if isinstance(t, _UserTensorSpec):
            t = t.dtype
        try:
            out.append(dtypes.as_dtype(t))
        except TypeError:
            raise TypeError(f"Tout must be a DType (or TensorSpec) or a list of them, got {Tout!r}") from None
    return out, is_list


def _check_func(func, inp):
    if not callable(func):
        raise ValueError(f"Expected func to be callable. Received func={func} of type {type(func)}.")
    if inp is None:
        return []
    if not isinstance(inp, (list, tuple)):
        raise TypeError(f"inp must be a list or tuple of tensors (the function's arguments), got {type(inp).__name__}")
    return [x.read_value() if hasattr(x, "_dense_var_to_tensor") and hasattr(x, "read_value") else x for x in inp]


def _graph_call(op_type, func, inp, Tout, name):
    """Adds a PyFunc / PyFuncStateless / EagerPyFunc node; returns as TF does: a tensor for one
    dtype, a list for a list of dtypes, the Operation for an empty list (graph mode)."""
    dts, is_list = _dtype_list(Tout)
    if op_type == "EagerPyFunc":
        func = EagerFunc(func, dts)
    tensors = [convert_to_tensor(x) for x in inp]
    outs = apply_op(op_type, tensors, token=_new_token(), Tin=tuple(t.dtype for t in tensors), Tout=tuple(dts),
                    func=func, name=name)
    if not dts and not context.executing_eagerly():
        op = get_default_graph().get_operations()[-1]   # the node just built (it has no output to return)
        return op if is_list else None
    return outs if is_list else outs[0]


def _decorator(script_op, api_name, func, inp, Tout, **kwargs):
    """TF's decorator form: `@sf.numpy_function(Tout=sf.float32)`; None when `func` is given."""
    if Tout is None:
        raise TypeError(f"Missing required argument: 'Tout'\n  If using {api_name} as a decorator, set `Tout`\n"
                        f"  **by name** above the function:\n  `@{api_name}(Tout=tout)`")
    if func is None:
        if inp is not None:
            raise TypeError(f"Don't set the `inp` argument when using {api_name} as a decorator (`func=None`).")

        def decorator(fun):
            def wrapper(*args):
                return script_op(fun, inp=list(args), Tout=Tout, **kwargs)
            wrapper.__name__ = getattr(fun, "__name__", "wrapper")
            wrapper.__doc__ = getattr(fun, "__doc__", None)
            wrapper.__wrapped__ = fun
            return wrapper
        return decorator
    if inp is None:
        raise TypeError(f"Missing argument `inp`: the list of arguments to the function (unless {api_name} is used "
                        "as a decorator, with `func=None`)")
    return None


def py_func_common(func, inp, Tout, stateful=True, name=None):
    """Wraps the NumPy function `func` as an op ("PyFunc"; "PyFuncStateless" with `stateful=False`).

    Args:
      func: takes NumPy arrays (one per item of `inp`) and returns an array, a scalar, a list or
        tuple of them (one per dtype in `Tout`), or None when `Tout` is empty.
      inp: a list of tensors (or values convertible to tensors).
      Tout: a DType, or a list or tuple of DTypes.
      stateful: whether the function has side effects (only the op type differs).
      name: a name for the op.
    Returns:
      A tensor (`Tout` one dtype) or a list of tensors (`Tout` a list); in a graph an empty `Tout`
      list gives the Operation. Executing eagerly the function runs at once and its results are
      converted as they are (one result is returned unwrapped), as in TF.
    Raises:
      ValueError: `func` is not callable. In a graph, running the op raises InvalidArgumentError
      when `func` returns the wrong number or dtypes of values, and an exception `func` raises
      becomes the error of the op (see the module docstring).
    """
    inp = _check_func(func, inp)
    if context.executing_eagerly():
        result = nest.flatten(func(*[np.array(x) for x in inp]))
        result = [x if x is None else convert_to_tensor(x) for x in result]
        return result[0] if len(result) == 1 else result
    return _graph_call("PyFunc" if stateful else "PyFuncStateless", func, inp, Tout, name)


def py_func(func, inp, Tout, stateful=True, name=None):
    """TF1's `tf.py_func`: `py_func_common` (NumPy arrays in and out, no gradient)."""
    return py_func_common(func, inp, Tout, stateful=stateful, name=name)


def numpy_function(func=None, inp=None, Tout=None, stateful=True, name=None):
    """`tf.numpy_function`: wraps the NumPy function `func` as an op (see `py_func_common`).

    With `func=None` it returns a decorator: `@sf.numpy_function(Tout=sf.float32)`.
    """
    decorator = _decorator(numpy_function, "sf.numpy_function", func, inp, Tout, stateful=stateful, name=name)
    if decorator is not None:
        return decorator
    return py_func_common(func, inp, Tout, stateful=stateful, name=name)


def eager_py_func(func=None, inp=None, Tout=None, name=None):
    """`tf.py_function`: wraps `func`, which takes eager Tensors and runs eagerly, as an op
    ("EagerPyFunc"), in eager execution and in graphs alike.

    Args:
      func: takes one eager Tensor per item of `inp`; returns tensors or arrays (converted to the
        `Tout` dtypes), a list or tuple of them, or None when `Tout` is empty.
      inp: a list of tensors.
      Tout: a DType or a list or tuple of DTypes (or TensorSpecs).
      name: a name for the op.
    Returns:
      A tensor (`Tout` one dtype) or a list of tensors (`Tout` a list; in a graph an empty list
      gives the Operation). With `func=None`: a decorator.
    Gradients: w.r.t. the float and complex inputs, by differentiating `func` with a GradientTape
    (eagerly the forward run's; in a graph, or to differentiate again, the backward op runs `func`
    again).
    """
    decorator = _decorator(eager_py_func, "sf.py_function", func, inp, Tout, name=name)
    if decorator is not None:
        return decorator
    inp = _check_func(func, inp)
    return _graph_call("EagerPyFunc", func, inp, Tout, name)


py_function = eager_py_func

"""Run-time printing and checks that work eagerly, in graphs and inside sf.function: `sf.print`
(`PrintV2`), the `sf.debugging.assert_*` family (`Assert`) and `check_numerics` (`CheckNumerics`).

Eagerly they act at once (assertions return None, as TF2's do). Building a graph they are
stateful ops: `sf.print` and the assertions return the op (run it, or make other ops depend on it
with control_dependencies; inside sf.function every stateful op runs in program order, so nothing
extra is needed). A failed check raises InvalidArgumentError naming the check, its message and the
values involved (the first `summarize` of them).
"""
import sys

import numpy as np

from segflow._core import dtypes, errors
from segflow._core import mode as context
from segflow._core.apply import apply_op
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._core.registry import NotDifferentiable, RegisterGradient, TensorSpec, register_op
from segflow._core.tensor import Tensor
from segflow._ops import elementwise as cw, shape as shape_ops

__all__ = ["print_v2", "Assert", "assert_equal", "assert_none_equal", "assert_less", "assert_less_equal",
           "assert_greater", "assert_greater_equal", "assert_non_negative", "assert_positive",
           "assert_negative", "assert_non_positive", "assert_rank", "assert_rank_at_least", "check_numerics",
           "assert_type", "assert_near"]

_STREAMS = {"stderr": lambda: sys.stderr, "stdout": lambda: sys.stdout}


def _text(value, summarize):
    arr = np.asarray(value)
    if arr.dtype == object or arr.dtype.kind in "SU":
        arr = np.vectorize(lambda b: b.decode() if isinstance(b, bytes) else b, otypes=[object])(arr) \
            if arr.size else arr
        if arr.ndim == 0:
            return str(arr.item())
    if summarize is None or summarize < 0:
        threshold = sys.maxsize
        edge = 3
    else:
        threshold, edge = 2 * summarize, summarize
    return np.array2string(arr, threshold=threshold, edgeitems=edge, separator=" ").replace("\n", "\n ")


# -- print
def _infer_print(op, inputs, template, output_stream, end, summarize):
    return []


def _print_kernel(state, inputs, template, output_stream, end, summarize):
    values = iter(inputs)
    parts = [t if t is not None else _text(next(values), summarize) for t in template]
    stream = output_stream
    if isinstance(stream, str):
        stream = _STREAMS.get(stream.replace("sys.", ""), lambda: sys.stderr)()
    text = "".join(parts) + end
    if callable(getattr(stream, "write", None)):
        stream.write(text)
        flush = getattr(stream, "flush", None)
        if callable(flush):
            flush()
    elif callable(stream):
        stream(text)
    return []


register_op("PrintV2", inputs=("inputs*",), infer=_infer_print, kernel=_print_kernel, stateful=True,
            num_outputs=0, defaults={"template": (), "output_stream": "stderr", "end": "\n", "summarize": 3})


def print_v2(*inputs, output_stream=sys.stderr, summarize=3, sep=" ", end="\n", name=None):
    """Prints `inputs` (tensors and Python values) when it runs: at once eagerly, each time the op
    runs in a graph (returned; run it or depend on it) and on every call of an sf.function.
    Tensors show at most `summarize` leading and trailing elements per axis (None or -1: all)."""
    template, tensors = [], []
    for i, x in enumerate(inputs):
        if i:
            template.append(sep)
        if isinstance(x, Tensor) or hasattr(x, "_dense_var_to_tensor"):
            tensors.append(x if isinstance(x, Tensor) else x.value())
            template.append(None)
        elif isinstance(x, np.ndarray):
            tensors.append(convert_to_tensor(x))
            template.append(None)
        else:
            template.append(str(x))
    if isinstance(output_stream, str) and output_stream not in ("stderr", "stdout", "sys.stderr", "sys.stdout"):
        raise ValueError(f"output_stream {output_stream!r} is not supported: pass sys.stdout, sys.stderr or a file")
    with name_scope(name, "PrintV2"):
        out = apply_op("PrintV2", tensors, template=tuple(template), output_stream=output_stream, end=end,
                       summarize=-1 if summarize is None else int(summarize))
    return None if context.executing_eagerly() else out


# -- Assert
def _infer_assert(op, condition, data, summarize=3, template=()):
    if condition.dtype != dtypes.bool:
        raise errors.invalid_input(op, "condition", f"must be bool, not {condition.dtype.name}")
    return []


def _assert_kernel(state, condition, data, summarize=3, template=()):
    if np.all(condition):
        return []
    values = iter(data)
    text = "\n".join(t if t is not None else _text(next(values), summarize) for t in template)
    raise errors.InvalidArgumentError(None, None, "assertion failed: " + text)


register_op("Assert", inputs=("condition", "data*"), infer=_infer_assert, kernel=_assert_kernel, stateful=True,
            num_outputs=0, defaults={"summarize": 3, "template": ()})


def Assert(condition, data, summarize=None, name=None):  # noqa: N802 - TF's name
    """Raises InvalidArgumentError when `condition` (a bool tensor) is not all true; the message
    shows the items of `data` (strings as they are, tensors' values), one per line."""
    template, tensors = [], []
    for d in data:
        if isinstance(d, str):
            template.append(d)
        else:
            tensors.append(d if isinstance(d, Tensor) else convert_to_tensor(d))
            template.append(None)
    with name_scope(name, "Assert"):
        cond = condition if isinstance(condition, Tensor) else convert_to_tensor(condition)
        out = apply_op("Assert", cond, tensors, summarize=3 if summarize is None else int(summarize),
                       template=tuple(template))
    return None if context.executing_eagerly() else out


def _label(t, default):
    return default if context.executing_eagerly() else f"{default} ({t.name})"


def _binary_assert(check, what):
    def assert_fn(x, y, message=None, summarize=None, name=None, data=None):
        with name_scope(name, "assert_" + what):
            x = x if isinstance(x, Tensor) else convert_to_tensor(x)
            y = y if isinstance(y, Tensor) else convert_to_tensor(y, dtype=x.dtype)
            cond = check(x, y)
            text = f"{message + ': ' if message else ''}Condition x {_SYMBOLS[what]} y did not hold element-wise:"
            shown = [text, _label(x, "x") + " = ", x, _label(y, "y") + " = ", y] if data is None else \
                [text] + list(data)
            return Assert(cond, shown, summarize=summarize)
    assert_fn.__name__ = "assert_" + what
    assert_fn.__doc__ = f"Raises InvalidArgumentError unless x {_SYMBOLS[what]} y holds for every element."
    return assert_fn


_SYMBOLS = {"equal": "==", "none_equal": "!=", "less": "<", "less_equal": "<=", "greater": ">",
            "greater_equal": ">="}
assert_equal = _binary_assert(cw.equal, "equal")
assert_none_equal = _binary_assert(cw.not_equal, "none_equal")
assert_less = _binary_assert(cw.less, "less")
assert_less_equal = _binary_assert(cw.less_equal, "less_equal")
assert_greater = _binary_assert(cw.greater, "greater")
assert_greater_equal = _binary_assert(cw.greater_equal, "greater_equal")


def _sign_assert(check, what):
    def assert_fn(x, message=None, summarize=None, name=None):
        with name_scope(name, "assert_" + what):
            x = x if isinstance(x, Tensor) else convert_to_tensor(x)
            zero = shape_ops.zeros_like(x)
            text = f"{message + ': ' if message else ''}Condition x {_SIGN_SYMBOLS[what]} 0 did not hold " \
                   "element-wise:"
            return Assert(check(x, zero), [text, _label(x, "x") + " = ", x], summarize=summarize)
    assert_fn.__name__ = "assert_" + what
    assert_fn.__doc__ = f"Raises InvalidArgumentError unless every element of x is {what.replace('_', ' ')}."
    return assert_fn


_SIGN_SYMBOLS = {"non_negative": ">=", "positive": ">", "negative": "<", "non_positive": "<="}
assert_non_negative = _sign_assert(cw.greater_equal, "non_negative")
assert_positive = _sign_assert(cw.greater, "positive")
assert_negative = _sign_assert(cw.less, "negative")
assert_non_positive = _sign_assert(cw.less_equal, "non_positive")


def assert_near(x, y, rtol=None, atol=None, message=None, summarize=None, name=None):
    """Raises unless |x - y| <= atol + rtol * |y| everywhere (defaults: 10 * the dtype's eps)."""
    with name_scope(name, "assert_near"):
        x = x if isinstance(x, Tensor) else convert_to_tensor(x)
        y = y if isinstance(y, Tensor) else convert_to_tensor(y, dtype=x.dtype)
        eps = float(np.finfo(x.dtype.as_numpy_dtype).eps) if x.dtype.is_floating else 0.0
        rtol = 10 * eps if rtol is None else rtol
        atol = 10 * eps if atol is None else atol
        tol = convert_to_tensor(atol, dtype=x.dtype) + convert_to_tensor(rtol, dtype=x.dtype) * cw.abs(y)
        text = f"{message + ': ' if message else ''}x and y not equal to tolerance rtol = {rtol}, atol = {atol}"
        return Assert(cw.less_equal(cw.abs(x - y), tol), [text, _label(x, "x") + " = ", x, _label(y, "y") + " = ", y],
                      summarize=summarize)


def assert_rank(x, rank, message=None, name=None):
    """Raises ValueError (static rank known) or InvalidArgumentError unless x has rank `rank`."""
    return _rank_check(x, rank, message, name, at_least=False)


def assert_rank_at_least(x, rank, message=None, name=None):
    return _rank_check(x, rank, message, name, at_least=True)


def _rank_check(x, rank, message, name, at_least):
    x = x if isinstance(x, Tensor) else convert_to_tensor(x)
    want = int(np.asarray(rank.numpy() if hasattr(rank, "numpy") else rank))
    r = x.shape.rank
    what = "at least " if at_least else ""
    if r is not None:
        if (r < want) if at_least else (r != want):
            text = f"{message + '. ' if message else ''}Tensor {getattr(x, 'name', 'x')} must have rank {what}{want}. " \
                   f"Received rank {r}, shape {x.shape}"
            raise ValueError(text)
        return None if context.executing_eagerly() else shape_ops.identity(x).op
    with name_scope(name, "assert_rank"):
        actual = shape_ops.rank(x)
        cond = cw.greater_equal(actual, want) if at_least else cw.equal(actual, want)
        return Assert(cond, [f"{message + ': ' if message else ''}Tensor must have rank {what}{want}, got",
                             actual])


def assert_type(tensor, tf_type, message=None, name=None):
    if tensor.dtype.base_dtype != dtypes.as_dtype(tf_type):
        raise TypeError(f"{message + ': ' if message else ''}{getattr(tensor, 'name', 'tensor')} must be of type "
                        f"{dtypes.as_dtype(tf_type).name}, not {tensor.dtype.name}")
    return None


# -- check_numerics
def _check_numerics_kernel(tensor, message=""):
    if not np.all(np.isfinite(tensor)):
        kinds = []
        if np.any(np.isnan(tensor)):
            kinds.append("NaN")
        if np.any(np.isinf(tensor)):
            kinds.append("Inf")
        raise errors.InvalidArgumentError(None, None, f"{message} : Tensor had {' and '.join(kinds)} values")
    return tensor


register_op("CheckNumerics", inputs=("tensor",), attrs={"T": "tensor"},
            allowed={"T": dtypes.FLOATING + dtypes.COMPLEX},
            infer=lambda op, tensor, message="": [TensorSpec(tensor.dtype, tensor.shape)],
            kernel=_check_numerics_kernel, defaults={"message": ""})


@RegisterGradient("CheckNumerics")
def _check_numerics_grad(op, grad):
    """The gradient is checked too (TF's does the same)."""
    return check_numerics(grad, "Not a number (NaN) or infinity (Inf) values detected in gradient. "
                          + op.get_attr("message"))


def check_numerics(tensor, message, name=None):
    """`tensor` unchanged; raises InvalidArgumentError (with `message`) if it holds NaN or Inf."""
    tensor = tensor if isinstance(tensor, Tensor) else convert_to_tensor(tensor)
    return apply_op("CheckNumerics", tensor, message=message, name=name)


NotDifferentiable("Assert")
NotDifferentiable("PrintV2")

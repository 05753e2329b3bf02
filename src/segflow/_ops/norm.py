"""`norm` (TF's `tf.norm` / `linalg_ops.norm`): vector p-norms and the matrix norms TF offers
("fro", 1, inf), built from reductions so the gradient is theirs (as in TF, the gradient of the
euclidean norm at 0 is NaN)."""
import numpy as np

from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._core.tensor import Tensor
from segflow._ops import elementwise as cw, reduce as reduce_ops

__all__ = ["norm"]


def _axes(axis):
    if axis is None:
        return None
    if isinstance(axis, Tensor):
        raise ValueError("norm: axis must be a Python int or a pair of them, not a tensor")
    if isinstance(axis, (list, tuple)):
        axis = [int(a) for a in axis]
        if len(axis) not in (1, 2) or (len(axis) == 2 and axis[0] == axis[1]):
            raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")
        return axis[0] if len(axis) == 1 else tuple(axis)
    return int(axis)


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None, keep_dims=None):  # noqa: A002
    """The `ord`-norm of `tensor`: over all elements (axis None: the vector norm of the flattened
    tensor), along one `axis` (vector norms) or over two (matrix norms).

    ord: "euclidean" (2-norm of a vector, Frobenius of a matrix), "fro", a positive number p
    (vectors: (sum |x|^p)^(1/p)), 1 or np.inf (matrices: largest column / row sum of |x|).
    """
    keepdims = bool(keepdims if keepdims is not None else keep_dims)
    axis = _axes(axis)
    matrix = isinstance(axis, tuple)
    if matrix:
        if ord not in ("euclidean", "fro", 1, np.inf):
            raise ValueError(f"'ord' must be a supported matrix norm in ['euclidean', 'fro', 1, inf], got {ord!r}")
    else:
        if ord == "fro":
            ord = "euclidean"       # the Frobenius norm of a flattened tensor is its 2-norm
        if not (ord == "euclidean" or ord == np.inf or (isinstance(ord, (int, float)) and ord > 0)):
            raise ValueError(f"'ord' must be a supported vector norm, got {ord!r}")
    with name_scope(name, "norm"):
        x = tensor if isinstance(tensor, Tensor) else convert_to_tensor(tensor)
        a = cw.abs(x)           # real also for complex x: the norm is real
        if matrix:
            r0, r1 = axis
            if ord in ("euclidean", "fro"):
                return cw.sqrt(reduce_ops.reduce_sum(a * a, list(axis), keepdims=keepdims))
            if ord == 1:        # the largest column sum: sum over rows (axis r0) then max over r1
                sums = reduce_ops.reduce_sum(a, r0, keepdims=True)
                out = reduce_ops.reduce_max(sums, r1, keepdims=True)
            else:               # inf: the largest row sum
                sums = reduce_ops.reduce_sum(a, r1, keepdims=True)
                out = reduce_ops.reduce_max(sums, r0, keepdims=True)
            return out if keepdims else reduce_ops.reduce_sum(out, list(axis))
        if ord == "euclidean" or ord == 2:
            return cw.sqrt(reduce_ops.reduce_sum(a * a, axis, keepdims=keepdims))
        if ord == np.inf:
            return reduce_ops.reduce_max(a, axis, keepdims=keepdims)
        if ord == 1:
            return reduce_ops.reduce_sum(a, axis, keepdims=keepdims)
        p = convert_to_tensor(float(ord), dtype=a.dtype)
        return cw.pow(reduce_ops.reduce_sum(cw.pow(a, p), axis, keepdims=keepdims),
                      convert_to_tensor(1.0 / float(ord), dtype=a.dtype))

"""Matrix products: MatMul (2-D) and BatchMatMulV2 (batched, broadcasting). Gradients in linalg_grad.py."""

from __future__ import annotations

import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.convert import convert_to_tensor
from segflow._core.tensor import Tensor
from segflow._core.apply import apply_op
from segflow._core.registry import TensorSpec, register_op
from segflow.kernels import BadInput
from segflow._core.typing import Name, TensorLike

__all__ = ["matmul", "diag", "diag_part"]

_MATMUL_TYPES = dtypes.FLOATING + dtypes.COMPLEX + (dtypes.int32, dtypes.int64)


def _matrix_dims(shape, transpose):
    dims = shape.as_list() if shape.rank is not None else None
    if dims is None:
        return None, None, None
    rows, cols = dims[-2], dims[-1]
    return (cols, rows, dims[:-2]) if transpose else (rows, cols, dims[:-2])


def _infer_matmul(op, a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False):
    batched = op.type == "BatchMatMulV2"
    for name, t in (("a", a), ("b", b)):
        r = t.shape.rank
        if r is not None and (r != 2 if not batched else r < 2):
            raise errors.invalid_input(op, name, f"must be {'a matrix' if not batched else 'at least 2-D'}, "
                                       f"got shape {t.shape}")
    m, ka, batch_a = _matrix_dims(a.shape, transpose_a or adjoint_a)
    kb, n, batch_b = _matrix_dims(b.shape, transpose_b or adjoint_b)
    if ka is not None and kb is not None and ka != kb:
        raise errors.invalid_input(op, "b", f"Matrix size-incompatible: In[0]: {a.shape}, In[1]: {b.shape} "
                                   f"(inner dimensions {ka} and {kb} differ)")
    if a.shape.rank is None or b.shape.rank is None:
        return [TensorSpec(a.dtype, tensor_shape.unknown_shape())]
    try:
        batch = tensor_shape.broadcast_shape(tensor_shape.TensorShape(batch_a), tensor_shape.TensorShape(batch_b))
    except ValueError:
        raise errors.invalid_input(op, "b", f"batch dimensions of {b.shape} do not broadcast with those of "
                                   f"'a' {a.shape}") from None
    return [TensorSpec(a.dtype, batch.concatenate([m, n]))]


def _operand(x, transpose, adjoint):
    if adjoint:
        x = np.conj(x)
    if transpose or adjoint:
        x = np.swapaxes(x, -1, -2)
    return x


def _check_matmul(a, b, transpose_a, transpose_b, adjoint_a, adjoint_b, batched):
    for name, x in (("a", a), ("b", b)):
        if x.ndim != 2 and not batched or x.ndim < 2:
            raise BadInput(name, f"must be {'at least 2-D' if batched else 'a matrix'}, got shape {x.shape}")
    ka = a.shape[-2] if transpose_a or adjoint_a else a.shape[-1]
    kb = b.shape[-1] if transpose_b or adjoint_b else b.shape[-2]
    if ka != kb:
        raise BadInput("b", f"Matrix size-incompatible: In[0]: {a.shape}, In[1]: {b.shape} "
                            f"(inner dimensions {ka} and {kb} differ)")
    if a.ndim == 2 and b.ndim == 2:
        return
    try:
        np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise BadInput("b", f"batch dimensions of {b.shape} do not broadcast with those of 'a' {a.shape}") from None


def _matmul_kernel(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False):
    if not (transpose_a or transpose_b or adjoint_a or adjoint_b) and a.ndim == 2 == b.ndim \
            and a.shape[1] == b.shape[0]:
        return np.matmul(a, b)    # the common case, checked: no operand views
    _check_matmul(a, b, transpose_a, transpose_b, adjoint_a, adjoint_b, batched=False)
    return np.matmul(_operand(a, transpose_a, adjoint_a), _operand(b, transpose_b, adjoint_b))


def _batch_matmul_kernel(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False):
    _check_matmul(a, b, transpose_a, transpose_b, adjoint_a, adjoint_b, batched=True)
    return np.matmul(_operand(a, transpose_a, adjoint_a), _operand(b, transpose_b, adjoint_b))


_DEFAULTS = {"transpose_a": False, "transpose_b": False, "adjoint_a": False, "adjoint_b": False}
register_op("MatMul", inputs=("a", "b"), attrs={"T": ("a", "b")}, allowed={"T": _MATMUL_TYPES},
            infer=_infer_matmul, kernel=_matmul_kernel, defaults=_DEFAULTS)
register_op("BatchMatMulV2", inputs=("a", "b"), attrs={"T": ("a", "b")}, allowed={"T": _MATMUL_TYPES},
            infer=_infer_matmul, kernel=_batch_matmul_kernel, defaults=_DEFAULTS)


def matmul(a: TensorLike, b: TensorLike, transpose_a: bool = False, transpose_b: bool = False, adjoint_a: bool = False,
           adjoint_b: bool = False, a_is_sparse: bool = False, b_is_sparse: bool = False, name: Name = None) -> Tensor:
    """The matrix product of `a` and `b`, each optionally transposed or adjoined (conjugate transpose).

    Args:
      a, b: tensors of one dtype (float, complex, int32 or int64) and rank >= 2; inputs of rank > 2 are
        batches of matrices whose batch dimensions broadcast (NumPy rules). Python values take the
        other operand's dtype.
      transpose_a, transpose_b, adjoint_a, adjoint_b: use op(a) = a^T or a^H (per operand, at most one).
      a_is_sparse, b_is_sparse: accepted for TF compatibility; ignored.
    Returns:
      Shape `batch + [m, n]` (MatMul for two matrices, BatchMatMulV2 otherwise).
    Raises:
      InvalidArgumentError naming input 'b' when the inner dimensions differ or batch dimensions do not
      broadcast; naming 'a'/'b' when an input is not a matrix.
    """
    if transpose_a and adjoint_a or transpose_b and adjoint_b:
        raise ValueError("Only one of transpose and adjoint may be True for each operand")
    # NumPy arrays go to apply_op as they are (eagerly it reads them in place, without a copy)
    if not isinstance(a, (Tensor, np.ndarray)):
        a = convert_to_tensor(a, preferred_dtype=getattr(b, "dtype", None))
    if not isinstance(b, (Tensor, np.ndarray)):
        b = convert_to_tensor(b, dtype_hint=a.dtype)
    ra, rb = a.ndim, b.ndim      # an eager tensor's and an array's without building a TensorShape
    batched = ra is None or rb is None or ra > 2 or rb > 2  # unknown rank: the batched op handles both
    return apply_op("BatchMatMulV2" if batched else "MatMul", a, b, name=name, transpose_a=transpose_a,
                    transpose_b=transpose_b, adjoint_a=adjoint_a, adjoint_b=adjoint_b)


Tensor._override_operator("__matmul__", matmul)
Tensor._override_operator("__rmatmul__", lambda y, x: matmul(x, y))


# -- diag / diag_part: a tensor of rank k on the diagonal of one of rank 2k, and back
def _infer_diag(op, diagonal):
    shape = diagonal.shape
    if shape.rank is None:
        return [TensorSpec(diagonal.dtype, tensor_shape.unknown_shape())]
    if shape.rank == 0:
        raise errors.invalid_input(op, "diagonal", "must be at least rank 1, got a scalar")
    return [TensorSpec(diagonal.dtype, shape.as_list() * 2)]


def _diag_kernel(diagonal):
    n = diagonal.size
    out = np.zeros((n, n), diagonal.dtype)
    out[np.arange(n), np.arange(n)] = diagonal.reshape(-1)
    return out.reshape(diagonal.shape * 2)


def _infer_diag_part(op, input):
    shape = input.shape
    if shape.rank is None:
        return [TensorSpec(input.dtype, tensor_shape.unknown_shape())]
    dims = shape.as_list()
    k = len(dims) // 2
    if len(dims) == 0 or len(dims) % 2:
        raise errors.invalid_input(op, "input", f"must have an even, non-zero rank, got shape {shape}")
    for a, b in zip(dims[:k], dims[k:]):
        if a is not None and b is not None and a != b:
            raise errors.invalid_input(op, "input", f"dimensions must match in pairs, got shape {shape}")
    return [TensorSpec(input.dtype, [a if a is not None else b for a, b in zip(dims[:k], dims[k:])])]


def _diag_part_kernel(input):
    k = input.ndim // 2
    if input.ndim == 0 or input.ndim % 2 or input.shape[:k] != input.shape[k:]:
        raise BadInput("input", f"must have shape d + d for some d, got {list(input.shape)}")
    n = int(np.prod(input.shape[:k]))
    return input.reshape(n, n)[np.arange(n), np.arange(n)].reshape(input.shape[:k])


register_op("Diag", inputs=("diagonal",), attrs={"T": "diagonal"}, infer=_infer_diag, kernel=_diag_kernel)
register_op("DiagPart", inputs=("input",), attrs={"T": "input"}, infer=_infer_diag_part, kernel=_diag_part_kernel)


def diag(diagonal: TensorLike, name: Name = None) -> Tensor:
    """A tensor of shape `d + d` with `diagonal` (shape d) on its diagonal and zeros elsewhere:
    out[i..., i...] = diagonal[i...] (TF's `diag`)."""
    return apply_op("Diag", diagonal, name=name)


def diag_part(input: TensorLike, name: Name = None) -> Tensor:
    """The diagonal of a tensor of shape `d + d`: out[i...] = input[i..., i...] (TF's `diag_part`)."""
    return apply_op("DiagPart", input, name=name)

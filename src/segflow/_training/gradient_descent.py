"""Plain gradient descent (TF1's `GradientDescentOptimizer`)."""

from __future__ import annotations

from typing import Any, Callable, Union
from segflow._core.convert import convert_to_tensor
from segflow._core.indexed_slices import IndexedSlices
from segflow._training import optimizer
from segflow._ops import cast as cast_ops
from segflow._core.typing import TensorLike

__all__ = ["GradientDescentOptimizer"]


class GradientDescentOptimizer(optimizer.Optimizer):
    """`var -= learning_rate * grad`.

    Sparse gradients subtract `learning_rate * values` from the rows they name with `scatter_sub`;
    repeated indices add up (no deduplication is needed), untouched rows do not move, which is
    exactly the dense update.

    Args:
      learning_rate: a float, a scalar tensor, or a callable returning one.
      use_locking, name: as for `Optimizer`.
    """

    def __init__(self, learning_rate: Union[float, TensorLike, Callable[[], Any]], use_locking: bool = False,
                 name: str = "GradientDescent") -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._learning_rate_tensor = None

    def _prepare(self):
        self._learning_rate_tensor = convert_to_tensor(self._call_if_callable(self._learning_rate),
                                                           name="learning_rate")

    def _lr(self, var):
        return cast_ops.cast(self._learning_rate_tensor, var.dtype.base_dtype)

    def _apply_dense(self, grad, var):
        return var.assign_sub(self._lr(var) * grad, use_locking=self._use_locking, read_value=False)

    def _apply_sparse_duplicate_indices(self, grad, var):
        return var.scatter_sub(IndexedSlices(self._lr(var) * grad.values, grad.indices, grad.dense_shape),
                               use_locking=self._use_locking)

    def _apply_sparse(self, grad, var):
        return self._apply_sparse_duplicate_indices(grad, var)

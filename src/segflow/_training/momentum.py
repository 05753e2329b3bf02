"""Momentum (TF1's `MomentumOptimizer`, the `ApplyMomentum` kernel's formulas)."""

from __future__ import annotations

from typing import Any, Callable, Union
from segflow._core.convert import convert_to_tensor
from segflow._core.indexed_slices import IndexedSlices
from segflow._ops import control as control_flow_ops
from segflow._training import optimizer
from segflow._ops import cast as cast_ops
from segflow._ops import gather as gather_ops
from segflow._core.typing import TensorLike

__all__ = ["MomentumOptimizer"]


class MomentumOptimizer(optimizer.Optimizer):
    """Gradient descent with momentum; slot "momentum" (zeros) per variable:

        accum = momentum * accum + grad
        var  -= lr * accum                                   (use_nesterov=False)
        var  -= lr * grad + lr * momentum * accum            (use_nesterov=True)

    Sparse gradients (duplicates summed first) apply these formulas to the gathered rows only, as
    TF's `SparseApplyMomentum` does: the accumulators of untouched rows do not decay and those rows
    do not move.

    Args:
      learning_rate, momentum: floats, scalar tensors, or callables returning them.
      use_nesterov: Nesterov momentum.
    """

    def __init__(self, learning_rate: Union[float, TensorLike, Callable[[], Any]],
                 momentum: Union[float, TensorLike, Callable[[], Any]], use_locking: bool = False,
                 name: str = "Momentum", use_nesterov: bool = False) -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list):
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        self._learning_rate_tensor = convert_to_tensor(self._call_if_callable(self._learning_rate),
                                                           name="learning_rate")
        self._momentum_tensor = convert_to_tensor(self._call_if_callable(self._momentum), name="momentum")

    def _hyper(self, var):
        dtype = var.dtype.base_dtype
        return cast_ops.cast(self._learning_rate_tensor, dtype), cast_ops.cast(self._momentum_tensor, dtype)

    def _step(self, lr, mu, grad, accum_t):
        if self._use_nesterov:
            return lr * grad + lr * mu * accum_t
        return lr * accum_t

    def _apply_dense(self, grad, var):
        lr, mu = self._hyper(var)
        accum = self.get_slot(var, "momentum")
        accum_t = accum.assign(mu * accum + grad, use_locking=self._use_locking)
        var_update = var.assign_sub(self._step(lr, mu, grad, accum_t), use_locking=self._use_locking,
                                    read_value=False)
        return control_flow_ops.group(var_update, accum_t)

    def _apply_sparse(self, grad, var):
        lr, mu = self._hyper(var)
        accum = self.get_slot(var, "momentum")
        idx = grad.indices
        accum_rows = mu * gather_ops.gather(accum, idx) + grad.values
        accum_t = accum.scatter_update(IndexedSlices(accum_rows, idx), use_locking=self._use_locking)
        var_update = var.scatter_sub(IndexedSlices(self._step(lr, mu, grad.values, accum_rows), idx),
                                     use_locking=self._use_locking)
        return control_flow_ops.group(var_update, accum_t)

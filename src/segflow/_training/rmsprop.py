"""RMSProp (TF1's `RMSPropOptimizer`, the `ApplyRMSProp` / `ApplyCenteredRMSProp` kernels' formulas)."""

from __future__ import annotations

from typing import Any, Callable, Union
from segflow._core.convert import convert_to_tensor
from segflow._core.indexed_slices import IndexedSlices
from segflow._ops import elementwise as math_ops
from segflow._ops import control as control_flow_ops
from segflow._training import optimizer
from segflow._ops import cast as cast_ops
from segflow._ops import gather as gather_ops
from segflow._core.typing import TensorLike

__all__ = ["RMSPropOptimizer"]


class RMSPropOptimizer(optimizer.Optimizer):
    """RMSProp; slots "rms" (starting at ones, as in TF1), "momentum" (zeros) and, when centered,
    "mg" (zeros):

        ms  = decay * ms + (1 - decay) * grad ** 2
        mg  = decay * mg + (1 - decay) * grad                 (centered only)
        den = ms + epsilon           or   ms - mg ** 2 + epsilon   (centered)
        mom = momentum * mom + lr * grad / sqrt(den)
        var -= mom

    Sparse gradients (duplicates summed first) update the gathered rows only, as TF's
    `SparseApplyRMSProp`: other rows' statistics do not decay and those rows do not move.
    """

    def __init__(self, learning_rate: Union[float, TensorLike, Callable[[], Any]],
                 decay: Union[float, TensorLike, Callable[[], Any]] = 0.9,
                 momentum: Union[float, TensorLike, Callable[[], Any]] = 0.0,
                 epsilon: Union[float, TensorLike, Callable[[], Any]] = 1e-10, use_locking: bool = False,
                 centered: bool = False, name: str = "RMSProp") -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._decay = decay
        self._momentum = momentum
        self._epsilon = epsilon
        self._centered = centered

    def _create_slots(self, var_list):
        for v in var_list:
            dtype = v.dtype.base_dtype
            self._get_or_make_slot_with_initializer(v, 1.0, v.shape, dtype, "rms", self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _prepare(self):
        c = self._call_if_callable
        self._learning_rate_tensor = convert_to_tensor(c(self._learning_rate), name="learning_rate")
        self._decay_tensor = convert_to_tensor(c(self._decay), name="decay")
        self._momentum_tensor = convert_to_tensor(c(self._momentum), name="momentum")
        self._epsilon_tensor = convert_to_tensor(c(self._epsilon), name="epsilon")

    def _hyper(self, var):
        dtype = var.dtype.base_dtype
        return [cast_ops.cast(t, dtype) for t in (self._learning_rate_tensor, self._decay_tensor,
                                                   self._momentum_tensor, self._epsilon_tensor)]

    def _apply_dense(self, grad, var):
        lr, rho, mu, eps = self._hyper(var)
        ms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        ms_t = ms.assign(rho * ms + (1 - rho) * grad * grad, use_locking=self._use_locking)
        updates = [ms_t]
        if self._centered:
            mg = self.get_slot(var, "mg")
            mg_t = mg.assign(rho * mg + (1 - rho) * grad, use_locking=self._use_locking)
            updates.append(mg_t)
            denom = ms_t - mg_t * mg_t + eps
        else:
            denom = ms_t + eps
        mom_t = mom.assign(mu * mom + lr * grad / math_ops.sqrt(denom), use_locking=self._use_locking)
        updates.append(mom_t)
        var_update = var.assign_sub(mom_t, use_locking=self._use_locking, read_value=False)
        return control_flow_ops.group(var_update, *updates)

    def _apply_sparse(self, grad, var):
        lr, rho, mu, eps = self._hyper(var)
        ms, mom = self.get_slot(var, "rms"), self.get_slot(var, "momentum")
        idx, g = grad.indices, grad.values
        ms_rows = rho * gather_ops.gather(ms, idx) + (1 - rho) * g * g
        updates = [ms.scatter_update(IndexedSlices(ms_rows, idx), use_locking=self._use_locking)]
        if self._centered:
            mg = self.get_slot(var, "mg")
            mg_rows = rho * gather_ops.gather(mg, idx) + (1 - rho) * g
            updates.append(mg.scatter_update(IndexedSlices(mg_rows, idx), use_locking=self._use_locking))
            denom = ms_rows - mg_rows * mg_rows + eps
        else:
            denom = ms_rows + eps
        mom_rows = mu * gather_ops.gather(mom, idx) + lr * g / math_ops.sqrt(denom)
        updates.append(mom.scatter_update(IndexedSlices(mom_rows, idx), use_locking=self._use_locking))
        var_update = var.scatter_sub(IndexedSlices(mom_rows, idx), use_locking=self._use_locking)
        return control_flow_ops.group(var_update, *updates)

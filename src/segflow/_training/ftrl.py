"""FTRL-Proximal (TF1's `FtrlOptimizer`, the `ApplyFtrl` / `ApplyFtrlV2` kernels' formulas)."""

from __future__ import annotations

from typing import Any, Callable, Optional, Union
from segflow._core.convert import convert_to_tensor
from segflow._core.indexed_slices import IndexedSlices
from segflow._ops import shape as array_ops, elementwise as math_ops
from segflow._ops import control as control_flow_ops
from segflow._training import optimizer
from segflow._ops import cast as cast_ops
from segflow._ops import gather as gather_ops
from segflow._core.typing import TensorLike

__all__ = ["FtrlOptimizer"]


class FtrlOptimizer(optimizer.Optimizer):
    """FTRL-Proximal (McMahan et al., 2013); slots "accum" (starting at `initial_accumulator_value`)
    and "linear" (zeros). With p = learning_rate_power (<= 0), l2s = l2_shrinkage:

        g_s       = grad + 2 * l2s * var
        accum_new = accum + grad ** 2
        linear   += g_s - (accum_new ** -p - accum ** -p) / lr * var
        quadratic = accum_new ** -p / lr + 2 * l2
        var       = (sign(linear) * l1 - linear) / quadratic   if |linear| > l1   else 0
        accum     = accum_new

    Sparse gradients (duplicates summed first) update the gathered rows only, as TF's
    `SparseApplyFtrl`; a dense step also recomputes the rows whose gradient is zero (from their
    `linear`), so the two differ on untouched rows.

    Raises:
      ValueError: a negative regularization strength, a positive learning_rate_power, or a
        negative initial_accumulator_value.
    """

    def __init__(self, learning_rate: Union[float, TensorLike, Callable[[], Any]], learning_rate_power: float = -0.5,
                 initial_accumulator_value: float = 0.1, l1_regularization_strength: float = 0.0,
                 l2_regularization_strength: float = 0.0, use_locking: bool = False, name: str = "Ftrl",
                 accum_name: Optional[str] = None, linear_name: Optional[str] = None,
                 l2_shrinkage_regularization_strength: float = 0.0) -> None:
        super().__init__(use_locking, name)
        if initial_accumulator_value < 0.0:
            raise ValueError(f"initial_accumulator_value {initial_accumulator_value} needs to be positive or zero")
        if learning_rate_power > 0.0:
            raise ValueError(f"learning_rate_power {learning_rate_power} needs to be negative or zero")
        for label, value in (("l1_regularization_strength", l1_regularization_strength),
                             ("l2_regularization_strength", l2_regularization_strength),
                             ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength)):
            if value < 0.0:
                raise ValueError(f"{label} {value} needs to be positive or zero")
        self._learning_rate = learning_rate
        self._learning_rate_power = learning_rate_power
        self._initial_accumulator_value = initial_accumulator_value
        self._l1_regularization_strength = l1_regularization_strength
        self._l2_regularization_strength = l2_regularization_strength
        self._l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self._accum_name = accum_name
        self._linear_name = linear_name

    def _create_slots(self, var_list):
        for v in var_list:
            self._get_or_make_slot_with_initializer(v, self._initial_accumulator_value, v.shape, v.dtype.base_dtype,
                                                    "accum", self._accum_name or self._name)
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _prepare(self):
        c = self._call_if_callable
        self._learning_rate_tensor = convert_to_tensor(c(self._learning_rate), name="learning_rate")
        self._learning_rate_power_tensor = convert_to_tensor(c(self._learning_rate_power),
                                                                 name="learning_rate_power")
        self._l1_tensor = convert_to_tensor(c(self._l1_regularization_strength), name="l1")
        self._l2_tensor = convert_to_tensor(c(self._l2_regularization_strength), name="l2")
        self._l2_shrinkage_tensor = convert_to_tensor(c(self._l2_shrinkage_regularization_strength),
                                                          name="l2_shrinkage")

    def _new_values(self, grad, var_value, accum_value, linear_value, dtype):
        """(var, accum, linear) after one step, for whole tensors or gathered rows alike."""
        cast = lambda t: cast_ops.cast(t, dtype)  # noqa: E731
        lr, p = cast(self._learning_rate_tensor), cast(self._learning_rate_power_tensor)
        l1, l2, l2s = cast(self._l1_tensor), cast(self._l2_tensor), cast(self._l2_shrinkage_tensor)
        accum_new = accum_value + grad * grad
        if self._learning_rate_power == -0.5:
            new_pow, old_pow = math_ops.sqrt(accum_new), math_ops.sqrt(accum_value)
        else:
            new_pow, old_pow = math_ops.pow(accum_new, -p), math_ops.pow(accum_value, -p)
        g_s = grad + 2 * l2s * var_value if self._l2_shrinkage_regularization_strength else grad
        linear_new = linear_value + g_s - (new_pow - old_pow) / lr * var_value
        quadratic = new_pow / lr + 2 * l2
        shrunk = (math_ops.sign(linear_new) * l1 - linear_new) / quadratic
        var_new = math_ops.where(math_ops.abs(linear_new) > l1, shrunk, array_ops.zeros_like(shrunk))
        return var_new, accum_new, linear_new

    def _apply_dense(self, grad, var):
        accum, linear = self.get_slot(var, "accum"), self.get_slot(var, "linear")
        var_new, accum_new, linear_new = self._new_values(grad, var.read_value(), accum.read_value(),
                                                          linear.read_value(), var.dtype.base_dtype)
        updates = [accum.assign(accum_new, use_locking=self._use_locking, read_value=False),
                   linear.assign(linear_new, use_locking=self._use_locking, read_value=False),
                   var.assign(var_new, use_locking=self._use_locking, read_value=False)]
        return control_flow_ops.group(*updates)

    def _apply_sparse(self, grad, var):
        accum, linear = self.get_slot(var, "accum"), self.get_slot(var, "linear")
        idx = grad.indices
        var_new, accum_new, linear_new = self._new_values(
            grad.values, gather_ops.gather(var, idx), gather_ops.gather(accum, idx), gather_ops.gather(linear, idx),
            var.dtype.base_dtype)
        updates = [accum.scatter_update(IndexedSlices(accum_new, idx), use_locking=self._use_locking),
                   linear.scatter_update(IndexedSlices(linear_new, idx), use_locking=self._use_locking),
                   var.scatter_update(IndexedSlices(var_new, idx), use_locking=self._use_locking)]
        return control_flow_ops.group(*updates)

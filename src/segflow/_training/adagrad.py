"""Adagrad (TF1's `AdagradOptimizer`, the `ApplyAdagrad` kernel's formulas)."""

from __future__ import annotations

from typing import Any, Callable, Union
from segflow._core.convert import convert_to_tensor
from segflow._ops import control as control_flow_ops
from segflow._training import optimizer
from segflow._ops import cast as cast_ops
from segflow._training import training_ops
from segflow._core.typing import TensorLike

__all__ = ["AdagradOptimizer"]


class AdagradOptimizer(optimizer.Optimizer):
    """Adagrad; slot "accumulator" per variable, starting at `initial_accumulator_value`:

        accum += grad ** 2
        var   -= lr * grad / sqrt(accum)

    A row whose gradient is zero does not change, so the sparse update (duplicates summed, then
    gathered rows only) equals the dense one.

    Args:
      learning_rate: a float, a scalar tensor, or a callable returning one.
      initial_accumulator_value: positive float.
    Raises:
      ValueError: `initial_accumulator_value` is not positive.
    """

    def __init__(self, learning_rate: Union[float, TensorLike, Callable[[], Any]],
                 initial_accumulator_value: float = 0.1, use_locking: bool = False, name: str = "Adagrad") -> None:
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list):
        for v in var_list:
            dtype = v.dtype.base_dtype
            self._get_or_make_slot_with_initializer(v, self._initial_accumulator_value, v.shape, dtype,
                                                    "accumulator", self._name)

    def _prepare(self):
        self._learning_rate_tensor = convert_to_tensor(self._call_if_callable(self._learning_rate),
                                                           name="learning_rate")

    def _apply_dense(self, grad, var):
        # One fused op (training_ops.py), with the arithmetic of
        #   acc_t = acc.assign_add(grad * grad);  var.assign_sub(lr * grad / sqrt(acc_t))
        lr = cast_ops.cast(self._learning_rate_tensor, var.dtype.base_dtype)
        acc = self.get_slot(var, "accumulator")
        return control_flow_ops.group(training_ops.resource_apply_adagrad(var, acc, lr, grad))

    def _apply_sparse(self, grad, var):
        # One fused op (training_ops.py) over the gathered rows, with the arithmetic of
        #   acc_rows = gather(acc, idx) + g * g;  acc.scatter_update(acc_rows);
        #   var.scatter_sub(lr * g / sqrt(acc_rows))
        lr = cast_ops.cast(self._learning_rate_tensor, var.dtype.base_dtype)
        acc = self.get_slot(var, "accumulator")
        return control_flow_ops.group(training_ops.resource_sparse_apply_adagrad(var, acc, lr, grad.values,
                                                                                 grad.indices))

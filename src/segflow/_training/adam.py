"""Adam (TF1's `AdamOptimizer`) and its lazy sparse variant (`LazyAdamOptimizer`, from tf.contrib.opt).

Both keep the slots "m" and "v" (zeros) per variable and the non-slot variables "beta1_power" and
"beta2_power" (starting at beta1 and beta2, multiplied by them in `_finish` after every step). At
step t (beta1_power = beta1 ** t):

    lr_t = lr * sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
    m    = beta1 * m + (1 - beta1) * grad
    v    = beta2 * v + (1 - beta2) * grad ** 2
    var -= lr_t * m / (sqrt(v) + epsilon)

They differ for sparse gradients (IndexedSlices, duplicates summed first):

- AdamOptimizer is faithful to the dense update: the moments of every row decay each step
  (`m *= beta1` on the whole slot, then a scatter_add of `(1 - beta1) * grad` into the gathered
  rows) and every row of `var` moves by `lr_t * m / (sqrt(v) + epsilon)`, exactly as if the
  gradient were dense with zeros elsewhere. The work is proportional to the table.
- LazyAdamOptimizer touches only the gathered rows: their moments are updated with the formulas
  above and written back with scatter_update, and only those rows of `var` move (scatter_sub).
  Other rows' moments do not decay. The work is proportional to the rows in the gradient.
"""

from __future__ import annotations

from typing import Any, Callable, Union
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import control_dependencies
from segflow._core.indexed_slices import IndexedSlices
from segflow._ops import elementwise as math_ops
from segflow._ops import control as control_flow_ops
from segflow._training import optimizer, slot_creator, training_ops
from segflow._ops import cast as cast_ops
from segflow._core.typing import TensorLike

__all__ = ["AdamOptimizer", "LazyAdamOptimizer"]


class AdamOptimizer(optimizer.Optimizer):
    """Adam (Kingma & Ba), TF1's formulas (see the module docstring); sparse == dense.

    Args:
      learning_rate, beta1, beta2, epsilon: floats, scalar tensors, or callables returning them.
    """

    def __init__(self, learning_rate: Union[float, TensorLike, Callable[[], Any]] = 0.001,
                 beta1: Union[float, TensorLike, Callable[[], Any]] = 0.9,
                 beta2: Union[float, TensorLike, Callable[[], Any]] = 0.999,
                 epsilon: Union[float, TensorLike, Callable[[], Any]] = 1e-8, use_locking: bool = False,
                 name: str = "Adam") -> None:
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta1 = beta1
        self._beta2 = beta2
        self._epsilon = epsilon
        self._lr_t = self._beta1_t = self._beta2_t = self._epsilon_t = None

    def _get_beta_accumulators(self):
        return self._get_non_slot_variable("beta1_power"), self._get_non_slot_variable("beta2_power")

    def _create_slots(self, var_list):
        first_var = min(var_list, key=lambda x: x.name)
        self._create_non_slot_variable(initial_value=self._call_if_callable(self._beta1), name="beta1_power",
                                       colocate_with=first_var)
        self._create_non_slot_variable(initial_value=self._call_if_callable(self._beta2), name="beta2_power",
                                       colocate_with=first_var)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _prepare(self):
        c = self._call_if_callable
        self._lr_t = convert_to_tensor(c(self._lr), name="learning_rate")
        self._beta1_t = convert_to_tensor(c(self._beta1), name="beta1")
        self._beta2_t = convert_to_tensor(c(self._beta2), name="beta2")
        self._epsilon_t = convert_to_tensor(c(self._epsilon), name="epsilon")

    def _hyper(self, var):
        """(lr_t, beta1, beta2, epsilon) in var's dtype; lr_t carries the bias corrections."""
        dtype = var.dtype.base_dtype
        beta1_power, beta2_power = self._get_beta_accumulators()
        b1p = cast_ops.cast(beta1_power, dtype)
        b2p = cast_ops.cast(beta2_power, dtype)
        lr = cast_ops.cast(self._lr_t, dtype)
        b1 = cast_ops.cast(self._beta1_t, dtype)
        b2 = cast_ops.cast(self._beta2_t, dtype)
        eps = cast_ops.cast(self._epsilon_t, dtype)
        return lr * math_ops.sqrt(1 - b2p) / (1 - b1p), b1, b2, eps

    def _apply_dense(self, grad, var):
        lr, b1, b2, eps = self._hyper(var)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_t = m.assign(b1 * m + (1 - b1) * grad, use_locking=self._use_locking)
        v_t = v.assign(b2 * v + (1 - b2) * grad * grad, use_locking=self._use_locking)
        var_update = var.assign_sub(lr * m_t / (math_ops.sqrt(v_t) + eps), use_locking=self._use_locking,
                                    read_value=False)
        return control_flow_ops.group(var_update, m_t, v_t)

    def _decayed_moments(self, grad, var, b1, b2):
        """m and v of every row decayed, plus the gathered rows' share of the gradient."""
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        idx, g = grad.indices, grad.values
        m_t = m.assign(m * b1, use_locking=self._use_locking)
        m_t = m_t.scatter_add(IndexedSlices(g * (1 - b1), idx), use_locking=self._use_locking)
        v_t = v.assign(v * b2, use_locking=self._use_locking)
        v_t = v_t.scatter_add(IndexedSlices(g * g * (1 - b2), idx), use_locking=self._use_locking)
        return m_t, v_t

    def _apply_sparse(self, grad, var):
        # One fused in-place op (training_ops.py): the same arithmetic as _decayed_moments followed by
        # var.assign_sub(lr * m_t / (sqrt(v_t) + eps)), without temporaries of the table's size.
        lr, b1, b2, eps = self._hyper(var)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        return control_flow_ops.group(training_ops.resource_sparse_apply_adam(var, m, v, lr, b1, b2, eps, grad.values,
                                                                        grad.indices))

    def _finish(self, update_ops, name_scope):
        # The beta powers advance once per step, after every variable's update has read them.
        with control_dependencies([u for u in update_ops if u is not None]):
            beta1_power, beta2_power = self._get_beta_accumulators()
            with _colocate(beta1_power):
                update_beta1 = beta1_power.assign(beta1_power * self._beta1_t, use_locking=self._use_locking)
                update_beta2 = beta2_power.assign(beta2_power * self._beta2_t, use_locking=self._use_locking)
        return control_flow_ops.group(*update_ops, update_beta1, update_beta2, name=optimizer._op_name(name_scope))


def _colocate(var):
    return slot_creator.colocate_with_variable(var)


class LazyAdamOptimizer(AdamOptimizer):
    """Adam whose sparse updates touch only the gathered rows (tf.contrib.opt.LazyAdamOptimizer):

        m[i] = beta1 * m[i] + (1 - beta1) * g_i        for the gathered rows i only
        v[i] = beta2 * v[i] + (1 - beta2) * g_i ** 2
        var[i] -= lr_t * m[i] / (sqrt(v[i]) + epsilon)

    Dense gradients get Adam's dense update.
    """

    def __init__(self, learning_rate: Union[float, TensorLike, Callable[[], Any]] = 0.001,
                 beta1: Union[float, TensorLike, Callable[[], Any]] = 0.9,
                 beta2: Union[float, TensorLike, Callable[[], Any]] = 0.999,
                 epsilon: Union[float, TensorLike, Callable[[], Any]] = 1e-8, use_locking: bool = False,
                 name: str = "LazyAdam") -> None:
        super().__init__(learning_rate, beta1, beta2, epsilon, use_locking, name)

    def _apply_sparse(self, grad, var):
        # One fused op (training_ops.py) over the gathered rows, with the arithmetic of
        #   m_rows = b1 * gather(m, idx) + (1 - b1) * g;  v_rows = b2 * gather(v, idx) + (1 - b2) * g * g
        #   m.scatter_update(m_rows); v.scatter_update(v_rows); var.scatter_sub(lr * m_rows / (sqrt(v_rows) + eps))
        lr, b1, b2, eps = self._hyper(var)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        return control_flow_ops.group(training_ops.resource_sparse_apply_lazy_adam(var, m, v, lr, b1, b2, eps,
                                                                             grad.values, grad.indices))

"""Nadam: Adam with Nesterov momentum (tf.contrib.opt's `NadamOptimizer`, the `ApplyAdam` kernel with
use_nesterov=True), and its lazy sparse variant `LazyNadamOptimizer`.

Slots, beta powers and lr_t are Adam's (see adam.py). At step t:

    lr_t  = lr * sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
    m     = beta1 * m + (1 - beta1) * grad
    v     = beta2 * v + (1 - beta2) * grad ** 2
    m_bar = beta1 * m + (1 - beta1) * grad
    var  -= lr_t * m_bar / (sqrt(v) + epsilon)

Sparse gradients (duplicates summed first):

- NadamOptimizer equals the dense update: every row's moments decay, every row of var moves by
  `lr_t * beta1 * m / (sqrt(v) + epsilon)` and the gathered rows also by
  `lr_t * (1 - beta1) * g / (sqrt(v) + epsilon)`. (tf.contrib's sparse Nadam moves only the
  gathered rows of var while decaying all moments, which matches neither the dense update nor a
  lazy one; we keep the dense semantics.)
- LazyNadamOptimizer touches only the gathered rows (moments and var), like LazyAdamOptimizer.
"""
from segflow._core.indexed_slices import IndexedSlices
from segflow._ops import elementwise as math_ops
from segflow._ops import control as control_flow_ops
from segflow._training import adam
from segflow._ops import gather as gather_ops

__all__ = ["NadamOptimizer", "LazyNadamOptimizer"]


class NadamOptimizer(adam.AdamOptimizer):
    """Nadam (Dozat), TF's formulas (see the module docstring); sparse == dense."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False, name="Nadam"):
        super().__init__(learning_rate, beta1, beta2, epsilon, use_locking, name)

    def _apply_dense(self, grad, var):
        lr, b1, b2, eps = self._hyper(var)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_t = m.assign(b1 * m + (1 - b1) * grad, use_locking=self._use_locking)
        v_t = v.assign(b2 * v + (1 - b2) * grad * grad, use_locking=self._use_locking)
        m_bar = b1 * m_t + (1 - b1) * grad
        var_update = var.assign_sub(lr * m_bar / (math_ops.sqrt(v_t) + eps), use_locking=self._use_locking,
                                    read_value=False)
        return control_flow_ops.group(var_update, m_t, v_t)

    def _apply_sparse(self, grad, var):
        lr, b1, b2, eps = self._hyper(var)
        idx, g = grad.indices, grad.values
        m_t, v_t = self._decayed_moments(grad, var, b1, b2)
        denom = math_ops.sqrt(v_t) + eps
        # Every row: the momentum part of m_bar; the gathered rows: the gradient part too.
        dense_update = var.assign_sub(lr * b1 * m_t / denom, use_locking=self._use_locking)
        denom_rows = math_ops.sqrt(gather_ops.gather(v_t, idx)) + eps
        var_update = dense_update.scatter_sub(IndexedSlices(lr * (1 - b1) * g / denom_rows, idx),
                                              use_locking=self._use_locking)
        return control_flow_ops.group(var_update, m_t, v_t)


class LazyNadamOptimizer(NadamOptimizer):
    """Nadam whose sparse updates touch only the gathered rows i:

        m[i] = beta1 * m[i] + (1 - beta1) * g_i
        v[i] = beta2 * v[i] + (1 - beta2) * g_i ** 2
        var[i] -= lr_t * (beta1 * m[i] + (1 - beta1) * g_i) / (sqrt(v[i]) + epsilon)

    Dense gradients get Nadam's dense update.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, use_locking=False,
                 name="LazyNadam"):
        super().__init__(learning_rate, beta1, beta2, epsilon, use_locking, name)

    def _apply_sparse(self, grad, var):
        lr, b1, b2, eps = self._hyper(var)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        idx, g = grad.indices, grad.values
        m_rows = b1 * gather_ops.gather(m, idx) + (1 - b1) * g
        v_rows = b2 * gather_ops.gather(v, idx) + (1 - b2) * g * g
        m_t = m.scatter_update(IndexedSlices(m_rows, idx), use_locking=self._use_locking)
        v_t = v.scatter_update(IndexedSlices(v_rows, idx), use_locking=self._use_locking)
        m_bar = b1 * m_rows + (1 - b1) * g
        var_update = var.scatter_sub(IndexedSlices(lr * m_bar / (math_ops.sqrt(v_rows) + eps), idx),
                                     use_locking=self._use_locking)
        return control_flow_ops.group(var_update, m_t, v_t)

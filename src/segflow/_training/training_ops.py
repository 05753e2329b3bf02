"""Fused optimizer updates of variables (TF's `training_ops`), for updates that would otherwise
build temporaries of the table's size.

`ResourceSparseApplyAdam`: AdamOptimizer's sparse step with TF's dense-faithful semantics (every
row's moments decay; every row of var moves), done in place on var, m and v:

    m   *= beta1;  m[indices] += (1 - beta1) * grad          (duplicates all add)
    v   *= beta2;  v[indices] += (1 - beta2) * grad * grad
    var -= lr * m / (sqrt(v) + epsilon)

with the same operations, in the same order and dtype, as the unfused
`m.assign(m * beta1).scatter_add(...)` / `var.assign_sub(lr * m / (sqrt(v) + epsilon))`, but the
whole-table parts run over blocks of rows, so no new array of the table's size is made (only the
copy-on-write copy of a slot or var whose current value someone still holds). Indices are
validated before anything is written.

`ResourceSparseApplyAdagrad`: AdagradOptimizer's sparse step on the rows named (accumulator rows
updated, var rows moved) in one pass, with the arithmetic of the unfused gather / scatter ops.
`ResourceApplyAdagrad`: its dense step, in place, with the arithmetic of the unfused
`accum.assign_add(grad * grad)` / `var.assign_sub(lr * grad / sqrt(accum))` (seven ops eagerly).

`ResourceSparseApplyLazyAdam`: LazyAdamOptimizer's sparse step (only the rows named: their moments
updated and written back, their var rows moved), in one pass over those rows in place
(kernels/training.py), with the arithmetic of the unfused gather / scatter_update / scatter_sub ops.
"""
import contextlib
import math

import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.registry import NotDifferentiable
from segflow._core.apply import apply_op
from segflow._core.registry import TensorSpec, register_op
from segflow.kernels import BadInput, ids, scatter
from segflow.kernels import training as training_kernels
from segflow.kernels.quiet import quietly
from segflow._ops import variable_ops as rvo

__all__ = ["resource_sparse_apply_adam", "resource_sparse_apply_lazy_adam", "resource_sparse_apply_adagrad",
           "resource_apply_adagrad", "check_gradient"]

def _infer_sparse_apply_adam(op, var, m, v, lr, beta1, beta2, epsilon, grad, indices):
    for name, h in (("var", var), ("m", m), ("v", v)):
        if h.dtype != dtypes.resource:
            raise errors.invalid_input(op, name, f"must be a variable handle (dtype resource), not {h.dtype.name}")
    if indices.dtype not in (dtypes.int32, dtypes.int64):
        raise errors.invalid_input(op, "indices", f"must be int32 or int64, not {indices.dtype.name}")
    for name, t in (("lr", lr), ("beta1", beta1), ("beta2", beta2), ("epsilon", epsilon)):
        if t.dtype != grad.dtype:
            raise errors.invalid_input(op, name, f"has dtype {t.dtype.name}, grad has {grad.dtype.name}")
        if t.shape.rank not in (None, 0):
            raise errors.invalid_input(op, name, f"must be a scalar, got shape {t.shape}")
    return []


def _validated(rv, slots, grad, indices):
    """(W, [slot arrays], rows, g): var and its slots (name -> resource) as writable 2-D arrays and
    the gradient as one row per index, everything checked before anything is written. The caller
    holds the resources' locks."""
    table = rv.peek()
    for name, r in slots.items():
        if r.peek().shape != table.shape or r.peek().dtype != table.dtype:
            raise BadInput(name, f"shape {r.peek().shape} / dtype {r.peek().dtype} differs from var "
                                 f"'{rv.name}' ({table.shape}, {table.dtype})")
    rows, g = rvo.rows_and_updates(rv, table, indices, grad)
    n = table.shape[0]
    d = math.prod(table.shape[1:])
    return (rv.writable().reshape(n, d), [r.writable().reshape(n, d) for r in slots.values()], rows,
            g.reshape(rows.size, d))


def _sparse_apply_kernel(step):
    """A fused Adam step on var, m, v holding their locks: validate everything, then `step` in place."""
    def kernel(state, var, m, v, lr, beta1, beta2, epsilon, grad, indices):
        resources = rvo.resource_of(var), rvo.resource_of(m), rvo.resource_of(v)
        with rvo.locked(*resources):
            W, (M, V), rows, g = _validated(resources[0], {"m": resources[1], "v": resources[2]}, grad, indices)
            step(W, M, V, rows, g, lr, beta1, beta2, epsilon)
        return ()
    return kernel


def _sparse_apply_adagrad_kernel(state, var, accum, lr, grad, indices):
    rv, ra = rvo.resource_of(var), rvo.resource_of(accum)
    with rvo.locked(rv, ra):
        W, (A,), rows, g = _validated(rv, {"accum": ra}, grad, indices)
        training_kernels.adagrad_rows(W, A, rows, g, lr)
    return ()


def _infer_sparse_apply_adagrad(op, var, accum, lr, grad, indices):
    for name, h in (("var", var), ("accum", accum)):
        if h.dtype != dtypes.resource:
            raise errors.invalid_input(op, name, f"must be a variable handle (dtype resource), not {h.dtype.name}")
    if lr.dtype != grad.dtype or lr.shape.rank not in (None, 0):
        raise errors.invalid_input(op, "lr", f"must be a scalar of grad's dtype {grad.dtype.name}, got "
                                   f"{lr.dtype.name} {lr.shape}")
    return []


def _adam_step(W, M, V, rows, g, lr, beta1, beta2, epsilon):
    one = W.dtype.type(1)
    training_kernels.adam_decay(M, V, beta1, beta2)
    if rows.size:
        scatter.scatter_rows(M, rows, g * (one - beta1), "add")
        scatter.scatter_rows(V, rows, g * g * (one - beta2), "add")
    training_kernels.adam_step(W, M, V, lr, epsilon)


_sparse_apply_adam_kernel = _sparse_apply_kernel(_adam_step)
_sparse_apply_lazy_adam_kernel = _sparse_apply_kernel(training_kernels.lazy_adam_rows)


register_op("ResourceSparseApplyLazyAdam",
            inputs=("var", "m", "v", "lr", "beta1", "beta2", "epsilon", "grad", "indices"),
            attrs={"T": "grad", "Tindices": "indices"}, allowed={"Tindices": (dtypes.int32, dtypes.int64)},
            infer=_infer_sparse_apply_adam,
            kernel=_sparse_apply_lazy_adam_kernel, stateful=True, num_outputs=0)
NotDifferentiable("ResourceSparseApplyLazyAdam")
register_op("ResourceSparseApplyAdam",
            inputs=("var", "m", "v", "lr", "beta1", "beta2", "epsilon", "grad", "indices"),
            attrs={"T": "grad", "Tindices": "indices"}, allowed={"Tindices": (dtypes.int32, dtypes.int64)},
            infer=_infer_sparse_apply_adam,
            kernel=_sparse_apply_adam_kernel, stateful=True, num_outputs=0)
NotDifferentiable("ResourceSparseApplyAdam")


register_op("ResourceSparseApplyAdagrad", inputs=("var", "accum", "lr", "grad", "indices"),
            attrs={"T": "grad", "Tindices": "indices"}, allowed={"Tindices": (dtypes.int32, dtypes.int64)},
            infer=_infer_sparse_apply_adagrad, kernel=_sparse_apply_adagrad_kernel, stateful=True, num_outputs=0)
NotDifferentiable("ResourceSparseApplyAdagrad")


def _apply_adagrad_kernel(state, var, accum, lr, grad):
    rv, ra = rvo.resource_of(var), rvo.resource_of(accum)
    with rvo.locked(rv, ra):
        table, slot = rv.peek(), ra.peek()
        for arg, arr in (("accum", slot), ("grad", grad)):
            if arr.shape != table.shape or arr.dtype != table.dtype:
                raise BadInput(arg, f"shape {list(arr.shape)} / dtype {arr.dtype} differs from var "
                                    f"'{rv.name}' ({list(table.shape)}, {table.dtype})")
        A = ra.writable()
        np.add(A, grad * grad, out=A)
        step = quietly(_adagrad_step, lr, grad, A)     # 0 / 0 is nan without a warning, as unfused
        W = rv.writable()
        np.subtract(W, step, out=W)
    return ()


def _adagrad_step(lr, grad, accum):
    return np.true_divide(lr * grad, np.sqrt(accum))


def _infer_apply_adagrad(op, var, accum, lr, grad):
    return _infer_sparse_apply_adagrad(op, var, accum, lr, grad, None)    # the same checks but indices


register_op("ResourceApplyAdagrad", inputs=("var", "accum", "lr", "grad"), attrs={"T": ("lr", "grad")},
            infer=_infer_apply_adagrad, kernel=_apply_adagrad_kernel, stateful=True, num_outputs=0)
NotDifferentiable("ResourceApplyAdagrad")


def resource_apply_adagrad(var, accum, lr, grad, name=None):
    """Adagrad's dense step on variables var and accum, in place, with the arithmetic of the
    unfused ops (accum += grad * grad; var -= lr * grad / sqrt(accum)); lr a scalar of var's
    dtype. Returns the Operation (graph), None (eagerly)."""
    ctrl = getattr(var, "_ctrl", None)
    with (ctrl() if ctrl is not None else contextlib.nullcontext()):
        return rvo.apply_no_output("ResourceApplyAdagrad", var.handle, accum.handle, lr, grad, name=name)


def resource_sparse_apply_adagrad(var, accum, lr, grad, indices, name=None):
    """Adagrad's sparse step on the rows `indices` of variables var and accum (see the module
    docstring); lr a scalar of var's dtype. Returns the Operation (graph), None (eagerly)."""
    ctrl = getattr(var, "_ctrl", None)
    with (ctrl() if ctrl is not None else contextlib.nullcontext()):
        return rvo.apply_no_output("ResourceSparseApplyAdagrad", var.handle, accum.handle, lr, grad, indices,
                                    name=name)


def resource_sparse_apply_adam(var, m, v, lr, beta1, beta2, epsilon, grad, indices, name=None):
    """Adam's dense-faithful sparse step on variables var, m, v (see the module docstring).

    lr, beta1, beta2, epsilon: scalar tensors of var's dtype (lr with Adam's bias correction);
    grad: `indices.shape + var.shape[1:]`. Returns the Operation (graph), None (eagerly).
    """
    ctrl = getattr(var, "_ctrl", None)
    with (ctrl() if ctrl is not None else contextlib.nullcontext()):
        return rvo.apply_no_output("ResourceSparseApplyAdam", var.handle, m.handle, v.handle, lr, beta1, beta2,
                                    epsilon, grad, indices, name=name)


def resource_sparse_apply_lazy_adam(var, m, v, lr, beta1, beta2, epsilon, grad, indices, name=None):
    """LazyAdam's sparse step on the rows `indices` of variables var, m, v (see the module docstring).
    Returns the Operation (graph), None (eagerly)."""
    ctrl = getattr(var, "_ctrl", None)
    with (ctrl() if ctrl is not None else contextlib.nullcontext()):
        return rvo.apply_no_output("ResourceSparseApplyLazyAdam", var.handle, m.handle, v.handle, lr, beta1,
                                    beta2, epsilon, grad, indices, name=name)


# ----------------------------------------------------------------------------------------------
# Gradient checks that run before an optimizer touches any state


def _infer_check_sparse_gradient(op, var, values, indices):
    rvo.check_handle(op, var)
    shape = rvo.handle_shape(var)
    if shape.rank == 0:
        raise errors.invalid_input(op, "var", "is a scalar variable: it has no rows to update sparsely")
    if shape.rank is not None and indices.shape.rank is not None:
        want = tensor_shape.TensorShape(indices.shape.as_list() + shape.as_list()[1:])
        if not want.is_compatible_with(values.shape):
            raise errors.invalid_input(op, "values", f"shape {values.shape} must be indices.shape + "
                                       f"variable.shape[1:] = {want}")
    return [TensorSpec(values.dtype, values.shape), TensorSpec(indices.dtype, indices.shape)]


def _check_sparse_gradient_kernel(state, var, values, indices):
    res = rvo.resource_of(var)
    with res.lock:
        shape = res.peek().shape
    if not shape:
        raise BadInput("var", f"variable '{res.name}' is a scalar: it has no rows to update sparsely")
    ids.check_in_range(indices, 0, shape[0])
    want = indices.shape + shape[1:]
    if values.shape != want:
        raise BadInput("values", f"shape {list(values.shape)} must be indices.shape + variable.shape[1:] = "
                                 f"{list(want)} (variable '{res.name}')")
    return values, indices


register_op("CheckSparseGradient", inputs=("var", "values", "indices"),
            attrs={"T": "values", "Tindices": "indices"}, allowed={"Tindices": (dtypes.int32, dtypes.int64)},
            infer=_infer_check_sparse_gradient, kernel=_check_sparse_gradient_kernel, stateful=True,
            num_outputs=2)
NotDifferentiable("CheckSparseGradient")


def _infer_check_dense_gradient(op, var, grad):
    rvo.check_handle(op, var)
    if not rvo.handle_shape(var).is_compatible_with(grad.shape):
        raise errors.invalid_input(op, "grad", f"shape {grad.shape} differs from the variable's shape "
                                   f"{rvo.handle_shape(var)}")
    return [TensorSpec(grad.dtype, grad.shape)]


def _check_dense_gradient_kernel(state, var, grad):
    res = rvo.resource_of(var)
    with res.lock:
        shape = res.peek().shape
    if grad.shape != shape:
        raise BadInput("grad", f"shape {list(grad.shape)} differs from the shape {list(shape)} of variable "
                               f"'{res.name}'")
    return grad


register_op("CheckDenseGradient", inputs=("var", "grad"), attrs={"T": "grad"},
            infer=_infer_check_dense_gradient, kernel=_check_dense_gradient_kernel, stateful=True)
NotDifferentiable("CheckDenseGradient")


def check_gradient(grad, var):
    """`grad` (a Tensor or IndexedSlices) checked against variable `var` before any update: integer
    indices in [0, var.shape[0]), values of shape indices.shape + var.shape[1:]; a dense gradient
    of var's shape. Raises InvalidArgumentError (eagerly now, in a Session when run). Returns the
    checked gradient; in graph mode, build the update under `control_dependencies` of its op."""
    if isinstance(grad, IndexedSlices):
        values, indices = apply_op("CheckSparseGradient", var.handle, grad.values, grad.indices)
        return IndexedSlices(values, indices, grad.dense_shape)
    return apply_op("CheckDenseGradient", var.handle, grad)

"""Gradients of the ops in shape_ops.py."""
from segflow._core.convert import convert_to_tensor
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.registry import NotDifferentiable, RegisterGradient
from segflow._ops import elementwise as cw
from segflow._ops import shape as so
from segflow._ops.reduce import reduce_sum


@RegisterGradient("Identity")
def _identity_grad(op, grad):
    return grad


@RegisterGradient("PlaceholderWithDefault")
def _placeholder_with_default_grad(op, grad):
    return grad


@RegisterGradient("IdentityN")
def _identity_n_grad(op, *grads):
    return list(grads)


@RegisterGradient("PreventGradient")
def _prevent_gradient_grad(op, grad):
    raise LookupError(f"Gradient explicitly disabled for {op.name}: {op.get_attr('message')}")


@RegisterGradient("Reshape")
def _reshape_grad(op, grad):
    if isinstance(grad, IndexedSlices):
        grad = convert_to_tensor(grad)
    return so.reshape(grad, so.shape(op.inputs[0])), None


@RegisterGradient("BroadcastTo")
def _broadcast_to_grad(op, grad):
    return cw.sum_to_shape(grad, so.shape(op.inputs[0])), None


@RegisterGradient("Fill")
def _fill_grad(op, grad):
    return None, reduce_sum(grad)


for _t in ("StopGradient", "Shape", "Size", "Rank", "ZerosLike", "OnesLike", "Placeholder", "Const", "OneHot"):
    NotDifferentiable(_t)

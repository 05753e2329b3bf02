"""Gradients of the ops in shape_ops.py."""
from segflow.framework import ops
from segflow._ops import elementwise as cw
from segflow._ops import shape as so


@ops.RegisterGradient("Identity")
def _identity_grad(op, grad):
    return grad


@ops.RegisterGradient("PlaceholderWithDefault")
def _placeholder_with_default_grad(op, grad):
    return grad


@ops.RegisterGradient("IdentityN")
def _identity_n_grad(op, *grads):
    return list(grads)


@ops.RegisterGradient("PreventGradient")
def _prevent_gradient_grad(op, grad):
    raise LookupError(f"Gradient explicitly disabled for {op.name}: {op.get_attr('message')}")


@ops.RegisterGradient("Reshape")
def _reshape_grad(op, grad):
    if isinstance(grad, ops.IndexedSlices):
        grad = ops.convert_to_tensor(grad)
    return so.reshape(grad, so.shape(op.inputs[0])), None


@ops.RegisterGradient("BroadcastTo")
def _broadcast_to_grad(op, grad):
    return cw.sum_to_shape(grad, so.shape(op.inputs[0])), None


@ops.RegisterGradient("Fill")
def _fill_grad(op, grad):
    from segflow._ops.reduce import reduce_sum
    return None, reduce_sum(grad)


@ops.RegisterGradient("ConcatV2")
def _concat_grad(op, grad):
    from segflow._ops import slicing as join_ops
    values = op.inputs[:-1]
    axis = op.inputs[-1]
    sizes = [so.shape(v) for v in values]
    if isinstance(grad, ops.IndexedSlices):
        grad = ops.convert_to_tensor(grad)
    return join_ops.split_by_shapes(grad, sizes, axis) + [None]


@ops.RegisterGradient("Pack")
def _pack_grad(op, grad):
    from segflow._ops import slicing as join_ops
    return join_ops.unstack(grad, num=len(op.inputs), axis=op.get_attr("axis"))


@ops.RegisterGradient("AddN")
def _add_n_grad(op, grad):
    return [grad] * len(op.inputs)


for _t in ("StopGradient", "Shape", "Size", "Rank", "ZerosLike", "OnesLike", "Placeholder", "Const", "OneHot"):
    ops.NotDifferentiable(_t)

"""Gradients of the ops in nn_ops.py, written with public ops so they differentiate again."""
from segflow._core.convert import convert_to_tensor
from segflow._core.registry import RegisterGradient
from segflow._ops import elementwise as cw
from segflow._core.apply import apply_op
from segflow._ops import nn
from segflow._ops import nn_conv
from segflow._ops import reduce as ro
from segflow._ops import shape as so
from segflow._ops import cast as cast_ops
from segflow._ops import join as join_ops
from segflow._ops import one_hot as one_hot_ops
from segflow._ops import transpose as transpose_ops
from segflow._ops.sequence import range as range_




@RegisterGradient("Relu")
def _relu_grad(op, grad):
    # Through where the output is positive, 0 elsewhere (at 0 too, as in TF).
    y = op.outputs[0]
    grad = convert_to_tensor(grad)
    return cw.where(cw.greater(y, so.zeros_like(y)), grad, so.zeros_like(grad))


@RegisterGradient("Relu6")
def _relu6_grad(op, grad):
    x = op.inputs[0]
    grad = convert_to_tensor(grad)
    inside = cw.logical_and(cw.greater(x, so.zeros_like(x)), cw.less(x, so.fill(so.shape(x), cast_ops.cast(6, x.dtype))))
    return cw.where(inside, grad, so.zeros_like(grad))


@RegisterGradient("LeakyRelu")
def _leaky_relu_grad(op, grad):
    x = op.inputs[0]
    grad = convert_to_tensor(grad)
    alpha = cast_ops.cast(op.get_attr("alpha"), grad.dtype)
    return cw.where(cw.greater(x, so.zeros_like(x)), grad, cw.multiply(grad, alpha))


@RegisterGradient("Softmax")
def _softmax_grad(op, grad):
    # y = softmax(x): dx = (dy - sum(dy * y, -1)) * y, from the output alone.
    y = op.outputs[0]
    grad = convert_to_tensor(grad)
    return cw.multiply(cw.subtract(grad, ro.reduce_sum(cw.multiply(grad, y), -1, keepdims=True)), y)


@RegisterGradient("LogSoftmax")
def _log_softmax_grad(op, grad):
    # y = log_softmax(x): dx = dy - sum(dy, -1) * exp(y).
    y = op.outputs[0]
    grad = convert_to_tensor(grad)
    return cw.subtract(grad, cw.multiply(ro.reduce_sum(grad, -1, keepdims=True), cw.exp(y)))


@RegisterGradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_xent_grad(op, grad_loss, grad_backprop):
    # d loss / d logits = softmax(logits) - onehot(labels), rebuilt from public ops (not the op's
    # second output) so the result can be differentiated again. The second output is TF's
    # "backprop", an internal value: its gradient is ignored, as in TF.
    logits, labels = op.inputs
    depth = so.shape(logits)[-1]
    onehot = one_hot_ops.one_hot(labels, depth, dtype=logits.dtype)
    return cw.multiply(transpose_ops.expand_dims(convert_to_tensor(grad_loss), -1), cw.subtract(nn.softmax(logits), onehot)), None


@RegisterGradient("SoftmaxCrossEntropyWithLogits")
def _xent_grad(op, grad_loss, grad_backprop):
    # loss = -sum(labels * log_softmax(logits)): d/dlogits = softmax(logits) * sum(labels) - labels
    # (= softmax - labels for distributions); d/dlabels = -log_softmax(logits). Results are summed
    # back to each input's shape (labels may broadcast).
    logits, labels = op.inputs
    g = transpose_ops.expand_dims(convert_to_tensor(grad_loss), -1)
    label_mass = ro.reduce_sum(labels, -1, keepdims=True)
    d_logits = cw.multiply(g, cw.subtract(cw.multiply(nn.softmax(logits), label_mass), labels))
    d_labels = cw.multiply(g, cw.negative(nn.log_softmax(logits)))
    return cw.sum_to_shape(d_logits, so.shape(logits)), cw.sum_to_shape(d_labels, so.shape(labels))


@RegisterGradient("BiasAdd")
def _bias_add_grad(op, grad):
    # The bias gets the upstream gradient summed over every axis but the channel axis.
    grad = convert_to_tensor(grad)
    data_format = op.get_attr("data_format")
    rank = so.rank(grad)
    if data_format is not None and data_format.startswith("NC"):
        axes = join_ops.concat([so.zeros([1], rank.dtype), range_(2, rank)], 0)
    else:
        axes = range_(0, rank - 1)
    return grad, ro.reduce_sum(grad, axes)


# -- convolution and max pooling (nn_conv.py)
def _conv_attrs(op):
    """The geometry attrs of a Conv2D-family op, as the public functions take them."""
    padding = op.get_attr("padding")
    explicit = list(op.get_attr("explicit_paddings"))
    if padding == "EXPLICIT":
        padding = [explicit[i:i + 2] for i in range(0, 8, 2)]
    return dict(strides=op.get_attr("strides"), padding=padding, data_format=op.get_attr("data_format"),
                dilations=op.get_attr("dilations"))


@RegisterGradient("Conv2D")
def _conv2d_grad(op, grad):
    x, f = op.inputs
    attrs = _conv_attrs(op)
    return (nn_conv.conv2d_backprop_input(so.shape(x), f, grad, **attrs),
            nn_conv.conv2d_backprop_filter(x, so.shape(f), grad, **attrs))


@RegisterGradient("Conv2DBackpropInput")
def _conv2d_backprop_input_grad(op, grad):
    # dx = conv^T(dy, f) is linear in f and dy: d/ddy = conv(grad, f), d/df = filter grad of conv(grad, .)
    _, f, dy = op.inputs
    attrs = _conv_attrs(op)
    return (None, nn_conv.conv2d_backprop_filter(grad, so.shape(f), dy, **attrs),
            nn_conv.conv2d(grad, f, **attrs))


@RegisterGradient("Conv2DBackpropFilter")
def _conv2d_backprop_filter_grad(op, grad):
    x, _, dy = op.inputs
    attrs = _conv_attrs(op)
    return (nn_conv.conv2d_backprop_input(so.shape(x), grad, dy, **attrs), None,
            nn_conv.conv2d(x, grad, **attrs))


def _pool_attrs(op):
    return dict(ksize=op.get_attr("ksize"), strides=op.get_attr("strides"), padding=op.get_attr("padding"),
                data_format=op.get_attr("data_format"))


@RegisterGradient("MaxPool")
def _max_pool_grad(op, grad):
    return nn_conv.max_pool_grad(op.inputs[0], op.outputs[0], grad, **_pool_attrs(op))


@RegisterGradient("MaxPoolGrad")
def _max_pool_grad_grad(op, grad):
    # The pooled gradient is linear in `grad`: its transpose picks each window's maximum position.
    x, y, _ = op.inputs
    attrs = _pool_attrs(op)
    return (so.zeros_like(x), so.zeros_like(y),
            apply_op("MaxPoolGradGrad", x, y, grad, ksize=attrs["ksize"], strides=attrs["strides"],
                     padding=attrs["padding"], data_format=attrs["data_format"]))


@RegisterGradient("MaxPoolGradGrad")
def _max_pool_grad_grad_grad(op, grad):
    x, y, _ = op.inputs
    return (so.zeros_like(x), so.zeros_like(y), nn_conv.max_pool_grad(x, y, grad, **_pool_attrs(op)))

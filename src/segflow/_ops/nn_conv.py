"""2-D convolution and max pooling over NHWC images: Conv2D with its two backprop ops (the gradients
w.r.t. the input and the filter, themselves differentiable), MaxPool and MaxPoolGrad. Gradients in
nn_grad.py.

Padding is "VALID" (windows inside the image), "SAME" (output size ceil(in / stride), the image
padded as evenly as possible, the extra row/column at the end) or, for conv2d, "EXPLICIT" with
`explicit_paddings` `[[0, 0], [top, bottom], [left, right], [0, 0]]` flattened. Kernels loop over
the filter's positions and multiply whole strided views, so the cost is one matrix product per
filter tap.
"""
import numpy as np

from segflow._core import dtypes, errors
from segflow._core import fold as tensor_util
from segflow._core.apply import apply_op
from segflow._core.convert import convert_to_tensor
from segflow._core.registry import TensorSpec, register_op
from segflow._core.tensor import Tensor
from segflow.kernels import BadInput
from segflow._ops import shape as so

__all__ = ["conv2d", "conv2d_v2", "conv2d_backprop_input", "conv2d_backprop_filter", "max_pool",
           "max_pool_v2", "max_pool2d", "max_pool_grad"]

_FLOAT = dtypes.FLOATING
_CONV_ATTRS = {"strides": "list(int)", "padding": "string", "explicit_paddings": "list(int)",
               "data_format": "string", "dilations": "list(int)", "use_cudnn_on_gpu": "bool"}
_CONV_DEFAULTS = {"explicit_paddings": (), "data_format": "NHWC", "dilations": (1, 1, 1, 1),
                  "use_cudnn_on_gpu": True}


# -- geometry
def _pads(size, k, stride, dilation, padding, explicit=None):
    """(output size, padding before, padding after) of one spatial dimension."""
    eff = (k - 1) * dilation + 1
    if padding == "VALID":
        out = (size - eff) // stride + 1 if size >= eff else 0
        return out, 0, 0
    if padding == "SAME":
        out = -(-size // stride)
        total = max((out - 1) * stride + eff - size, 0)
        return out, total // 2, total - total // 2
    before, after = explicit
    padded = size + before + after
    return ((padded - eff) // stride + 1 if padded >= eff else 0), before, after


def _check_geometry(where, strides, dilations, padding, explicit_paddings, data_format):
    """The attrs as (sh, sw), (dh, dw), padding, [(top, bottom), (left, right)]; BadInput naming
    `where` (an input) when they cannot describe an NHWC convolution."""
    if data_format not in ("NHWC", b"NHWC"):
        raise BadInput(where, f"data_format {data_format!r} is not supported on the CPU; use 'NHWC'")
    strides, dilations = list(strides), list(dilations)
    if len(strides) != 4 or strides[0] != 1 or strides[3] != 1 or min(strides) < 1:
        raise BadInput(where, f"strides must be [1, h, w, 1] with h, w >= 1, got {strides}")
    if len(dilations) != 4 or dilations[0] != 1 or dilations[3] != 1 or min(dilations) < 1:
        raise BadInput(where, f"dilations must be [1, h, w, 1] with h, w >= 1, got {dilations}")
    padding = padding.decode() if isinstance(padding, bytes) else padding
    explicit = None
    if padding == "EXPLICIT":
        p = list(explicit_paddings)
        if len(p) != 8 or p[0] or p[1] or p[6] or p[7] or min(p) < 0:
            raise BadInput(where, f"explicit_paddings must be [0, 0, top, bottom, left, right, 0, 0] with "
                                  f"non-negative entries, got {p}")
        explicit = [(p[2], p[3]), (p[4], p[5])]
    elif padding not in ("VALID", "SAME"):
        raise BadInput(where, f"padding must be 'VALID', 'SAME' or 'EXPLICIT', got {padding!r}")
    return strides[1:3], dilations[1:3], padding, explicit or [None, None]


def _window(xp, i, j, out_h, out_w, sh, sw, dh, dw):
    """The view of padded `xp` [N, H, W, C] that filter tap (i, j) meets at every output position."""
    r, c = i * dh, j * dw
    return xp[:, r:r + sh * (out_h - 1) + 1:sh, c:c + sw * (out_w - 1) + 1:sw, :]


def _conv_shape(in_shape, f_shape, strides, dilations, padding, explicit):
    n, h, w, _ = in_shape
    (sh, sw), (dh, dw) = strides, dilations
    oh, top, bottom = _pads(h, f_shape[0], sh, dh, padding, explicit[0])
    ow, left, right = _pads(w, f_shape[1], sw, dw, padding, explicit[1])
    return (n, oh, ow, f_shape[3]), (top, bottom, left, right)


# -- Conv2D
def _conv2d_kernel(input, filter, strides, padding, explicit_paddings=(), data_format="NHWC",
                   dilations=(1, 1, 1, 1), use_cudnn_on_gpu=True):
    st, dl, padding, explicit = _check_geometry("input", strides, dilations, padding, explicit_paddings,
                                                data_format)
    if input.ndim != 4:
        raise BadInput("input", f"must be 4-D [batch, height, width, channels], got shape {input.shape}")
    if filter.ndim != 4:
        raise BadInput("filter", f"must be 4-D [height, width, in_channels, out_channels], got shape {filter.shape}")
    if filter.shape[2] == 0 or input.shape[3] % filter.shape[2]:
        raise BadInput("filter", f"has {filter.shape[2]} input channels, the input {input.shape} has "
                                 f"{input.shape[3]}")
    if input.shape[3] != filter.shape[2]:
        raise BadInput("filter", "grouped convolutions (input channels a multiple of the filter's) are not "
                                 "supported")
    out_shape, (top, bottom, left, right) = _conv_shape(input.shape, filter.shape, st, dl, padding, explicit)
    xp = np.pad(input, ((0, 0), (top, bottom), (left, right), (0, 0)))
    out = np.zeros(out_shape, dtype=np.result_type(input.dtype, filter.dtype))
    if 0 in out_shape:
        return out.astype(input.dtype)
    for i in range(filter.shape[0]):
        for j in range(filter.shape[1]):
            out += _window(xp, i, j, out_shape[1], out_shape[2], *st, *dl) @ filter[i, j]
    return out.astype(input.dtype, copy=False)


def _attr_geometry(op, attrs):
    try:
        return _check_geometry("input", attrs.get("strides", ()), attrs.get("dilations", (1, 1, 1, 1)),
                               attrs.get("padding"), attrs.get("explicit_paddings", ()),
                               attrs.get("data_format", "NHWC"))
    except BadInput as e:
        raise errors.invalid_input(op, e.input_name, e.message) from None


def _spatial_out(in_shape, f_hw, geometry):
    st, dl, padding, explicit = geometry
    dims = []
    for k in range(2):
        size, f = in_shape[1 + k], f_hw[k]
        if size is None or f is None:
            dims.append(None)
        else:
            dims.append(_pads(size, f, st[k], dl[k], padding, explicit[k])[0])
    return dims


def _infer_conv2d(op, input, filter, **attrs):
    geometry = _attr_geometry(op, attrs)
    if input.shape.rank not in (None, 4):
        raise errors.invalid_input(op, "input", f"must be 4-D [batch, height, width, channels], got shape "
                                   f"{input.shape}")
    if filter.shape.rank not in (None, 4):
        raise errors.invalid_input(op, "filter", f"must be 4-D [height, width, in, out], got shape {filter.shape}")
    xs = input.shape.as_list() if input.shape.rank else [None] * 4
    fs = filter.shape.as_list() if filter.shape.rank else [None] * 4
    if xs[3] is not None and fs[2] is not None and xs[3] != fs[2]:
        raise errors.invalid_input(op, "filter", f"has {fs[2]} input channels, the input {input.shape} has {xs[3]}")
    return [TensorSpec(input.dtype, [xs[0]] + _spatial_out(xs, fs[:2], geometry) + [fs[3]])]


register_op("Conv2D", inputs=("input", "filter"), attrs={"T": ("input", "filter")}, allowed={"T": _FLOAT},
            infer=_infer_conv2d, kernel=_conv2d_kernel, defaults=_CONV_DEFAULTS).attr_types = _CONV_ATTRS


# -- Conv2DBackpropInput: d conv2d / d input
def _backprop_input_kernel(input_sizes, filter, out_backprop, strides, padding, explicit_paddings=(),
                           data_format="NHWC", dilations=(1, 1, 1, 1), use_cudnn_on_gpu=True):
    st, dl, padding, explicit = _check_geometry("out_backprop", strides, dilations, padding, explicit_paddings,
                                                data_format)
    in_shape = tuple(int(d) for d in np.asarray(input_sizes).reshape(-1))
    if len(in_shape) != 4:
        raise BadInput("input_sizes", f"must have 4 entries, got {list(in_shape)}")
    out_shape, (top, bottom, left, right) = _conv_shape(in_shape, filter.shape, st, dl, padding, explicit)
    if out_backprop.shape != out_shape:
        raise BadInput("out_backprop", f"has shape {out_backprop.shape}, expected {out_shape}")
    dxp = np.zeros((in_shape[0], in_shape[1] + top + bottom, in_shape[2] + left + right, in_shape[3]),
                   dtype=out_backprop.dtype)
    if out_backprop.size:
        for i in range(filter.shape[0]):
            for j in range(filter.shape[1]):
                _window(dxp, i, j, out_shape[1], out_shape[2], *st, *dl)[...] += out_backprop @ filter[i, j].T
    return np.ascontiguousarray(dxp[:, top:top + in_shape[1], left:left + in_shape[2], :])


def _infer_from_sizes(sizes_position):
    """The infer function of a backprop op: its output has the shape that input `sizes_position`
    holds (where it is known) and the dtype of out_backprop (the last input)."""
    def infer(op, *inputs, **attrs):
        _attr_geometry(op, attrs)
        shape = tensor_util.constant_value_as_shape(inputs[sizes_position])
        return [TensorSpec(inputs[-1].dtype, [None] * 4 if shape.rank is None else shape)]
    return infer


register_op("Conv2DBackpropInput", inputs=("input_sizes", "filter", "out_backprop"),
            attrs={"T": ("filter", "out_backprop")}, allowed={"T": _FLOAT}, infer=_infer_from_sizes(0),
            kernel=_backprop_input_kernel, defaults=_CONV_DEFAULTS).attr_types = _CONV_ATTRS


# -- Conv2DBackpropFilter: d conv2d / d filter
def _backprop_filter_kernel(input, filter_sizes, out_backprop, strides, padding, explicit_paddings=(),
                            data_format="NHWC", dilations=(1, 1, 1, 1), use_cudnn_on_gpu=True):
    st, dl, padding, explicit = _check_geometry("out_backprop", strides, dilations, padding, explicit_paddings,
                                                data_format)
    f_shape = tuple(int(d) for d in np.asarray(filter_sizes).reshape(-1))
    if len(f_shape) != 4:
        raise BadInput("filter_sizes", f"must have 4 entries, got {list(f_shape)}")
    if input.ndim != 4:
        raise BadInput("input", f"must be 4-D, got shape {input.shape}")
    out_shape, (top, bottom, left, right) = _conv_shape(input.shape, f_shape, st, dl, padding, explicit)
    if out_backprop.shape != out_shape:
        raise BadInput("out_backprop", f"has shape {out_backprop.shape}, expected {out_shape}")
    xp = np.pad(input, ((0, 0), (top, bottom), (left, right), (0, 0)))
    df = np.zeros(f_shape, dtype=out_backprop.dtype)
    if out_backprop.size:
        for i in range(f_shape[0]):
            for j in range(f_shape[1]):
                win = _window(xp, i, j, out_shape[1], out_shape[2], *st, *dl)
                df[i, j] = np.tensordot(win, out_backprop, axes=([0, 1, 2], [0, 1, 2]))
    return df


register_op("Conv2DBackpropFilter", inputs=("input", "filter_sizes", "out_backprop"),
            attrs={"T": ("input", "out_backprop")}, allowed={"T": _FLOAT}, infer=_infer_from_sizes(1),
            kernel=_backprop_filter_kernel, defaults=_CONV_DEFAULTS).attr_types = _CONV_ATTRS


# -- public conv functions
def _four(value, name):
    """An int or list of 1, 2 or 4 ints as TF's 4-entry [1, h, w, 1] form."""
    if isinstance(value, (int, np.integer)):
        return [1, int(value), int(value), 1]
    value = [int(v) for v in value]
    if len(value) == 1:
        return [1, value[0], value[0], 1]
    if len(value) == 2:
        return [1, value[0], value[1], 1]
    if len(value) == 4:
        return value
    raise ValueError(f"{name} should be of length 1, 2 or 4, got {value}")


def _padding_attrs(padding):
    """(padding string, explicit_paddings) from TF's padding argument: a string or the explicit
    [[0, 0], [top, bottom], [left, right], [0, 0]] list."""
    if isinstance(padding, (list, tuple)):
        flat = [int(p) for pair in padding for p in pair]
        return "EXPLICIT", flat
    padding = padding.decode() if isinstance(padding, bytes) else padding
    if padding not in ("VALID", "SAME"):
        raise ValueError(f"padding must be 'VALID', 'SAME' or a list of paddings, got {padding!r}")
    return padding, []


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True, data_format="NHWC",
           dilations=(1, 1, 1, 1), name=None, filters=None):
    """The 2-D convolution (cross-correlation, as TF computes it) of NHWC `input` with `filter`
    [height, width, in_channels, out_channels]: output [batch, out_h, out_w, out_channels].

    Args:
      strides, dilations: an int or 1, 2 or 4 ints ([1, h, w, 1]).
      padding: "VALID", "SAME", or explicit [[0, 0], [top, bottom], [left, right], [0, 0]].
      data_format: "NHWC" (the CPU's only layout).
      filters: TF2's name for `filter`.
    """
    if filters is not None:
        if filter is not None:
            raise ValueError("Pass either `filter` or `filters`, not both")
        filter = filters
    if filter is None or strides is None or padding is None:
        raise TypeError("conv2d needs input, filter, strides and padding")
    pad, explicit = _padding_attrs(padding)
    input = input if isinstance(input, Tensor) else convert_to_tensor(input)
    filter = filter if isinstance(filter, Tensor) else convert_to_tensor(filter, dtype=input.dtype)
    return apply_op("Conv2D", input, filter, strides=_four(strides, "strides"), padding=pad,
                    explicit_paddings=explicit, data_format=data_format, dilations=_four(dilations, "dilations"),
                    use_cudnn_on_gpu=use_cudnn_on_gpu, name=name)


def conv2d_v2(input, filters, strides, padding, data_format="NHWC", dilations=None, name=None):
    """TF2's `tf.nn.conv2d`: `conv2d` with `filters` and no use_cudnn_on_gpu."""
    return conv2d(input, filters, strides, padding, data_format=data_format,
                  dilations=(1, 1, 1, 1) if dilations is None else dilations, name=name)


def conv2d_backprop_input(input_sizes, filter=None, out_backprop=None, strides=None, padding=None,
                          use_cudnn_on_gpu=True, data_format="NHWC", dilations=(1, 1, 1, 1), name=None,
                          filters=None):
    """The gradient of conv2d w.r.t. its input, of shape `input_sizes`, given `out_backprop`, the
    gradient w.r.t. its output."""
    filter = filters if filter is None else filter
    pad, explicit = _padding_attrs(padding)
    return apply_op("Conv2DBackpropInput", so._shape_arg(input_sizes), filter, out_backprop,
                    strides=_four(strides, "strides"), padding=pad, explicit_paddings=explicit,
                    data_format=data_format, dilations=_four(dilations, "dilations"),
                    use_cudnn_on_gpu=use_cudnn_on_gpu, name=name)


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding, use_cudnn_on_gpu=True,
                           data_format="NHWC", dilations=(1, 1, 1, 1), name=None):
    """The gradient of conv2d w.r.t. its filter, of shape `filter_sizes`, given `out_backprop`."""
    pad, explicit = _padding_attrs(padding)
    return apply_op("Conv2DBackpropFilter", input, so._shape_arg(filter_sizes), out_backprop,
                    strides=_four(strides, "strides"), padding=pad, explicit_paddings=explicit,
                    data_format=data_format, dilations=_four(dilations, "dilations"),
                    use_cudnn_on_gpu=use_cudnn_on_gpu, name=name)


# -- MaxPool
_POOL_ATTRS = {"ksize": "list(int)", "strides": "list(int)", "padding": "string", "data_format": "string",
               "explicit_paddings": "list(int)"}


def _pool_geometry(where, ksize, strides, padding, data_format):
    st, _, padding, _ = _check_geometry(where, strides, (1, 1, 1, 1), padding, (), data_format)
    ksize = list(ksize)
    if len(ksize) != 4 or ksize[0] != 1 or ksize[3] != 1 or min(ksize) < 1:
        raise BadInput(where, f"ksize must be [1, h, w, 1] with h, w >= 1 (no pooling over the batch or "
                              f"channels), got {ksize}")
    return ksize[1:3], st, padding


def _pool_windows(input, ksize, strides, padding, data_format):
    """(padded input, out shape, pads, k, st): the padding holds -inf (or the dtype's lowest value)."""
    k, st, padding = _pool_geometry("input", ksize, strides, padding, data_format)
    if input.ndim != 4:
        raise BadInput("input", f"must be 4-D [batch, height, width, channels], got shape {input.shape}")
    oh, top, bottom = _pads(input.shape[1], k[0], st[0], 1, padding)
    ow, left, right = _pads(input.shape[2], k[1], st[1], 1, padding)
    low = -np.inf if input.dtype.kind == "f" else np.iinfo(input.dtype).min
    xp = np.pad(input, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=low)
    return xp, (input.shape[0], oh, ow, input.shape[3]), (top, left), k, st


def _pool_argmax(xp, out_shape, k, st):
    """The max over each window and the (first) tap it came from."""
    best = np.full(out_shape, -np.inf if xp.dtype.kind == "f" else np.iinfo(xp.dtype).min, xp.dtype)
    where = np.zeros(out_shape, np.int64)
    for i in range(k[0]):
        for j in range(k[1]):
            win = _window(xp, i, j, out_shape[1], out_shape[2], *st, 1, 1)
            better = win > best
            best = np.where(better, win, best)
            where[better] = i * k[1] + j
    return best, where


def _max_pool_kernel(input, ksize, strides, padding, data_format="NHWC", explicit_paddings=()):
    xp, out_shape, _, k, st = _pool_windows(input, ksize, strides, padding, data_format)
    if 0 in out_shape:
        return np.zeros(out_shape, input.dtype)
    return _pool_argmax(xp, out_shape, k, st)[0]


def _infer_max_pool(op, input, **attrs):
    try:
        k, st, padding = _pool_geometry("input", attrs.get("ksize", ()), attrs.get("strides", ()),
                                        attrs.get("padding"), attrs.get("data_format", "NHWC"))
    except BadInput as e:
        raise errors.invalid_input(op, e.input_name, e.message) from None
    if input.shape.rank not in (None, 4):
        raise errors.invalid_input(op, "input", f"must be 4-D [batch, height, width, channels], got shape "
                                   f"{input.shape}")
    xs = input.shape.as_list() if input.shape.rank else [None] * 4
    return [TensorSpec(input.dtype, [xs[0]] + _spatial_out(xs, k, (st, (1, 1), padding, [None, None])) + [xs[3]])]


register_op("MaxPool", inputs=("input",), attrs={"T": "input"}, allowed={"T": dtypes.REAL_NUMERIC},
            infer=_infer_max_pool, kernel=_max_pool_kernel,
            defaults={"data_format": "NHWC", "explicit_paddings": ()}).attr_types = _POOL_ATTRS


def _max_pool_grad_kernel(orig_input, orig_output, grad, ksize, strides, padding, data_format="NHWC",
                          explicit_paddings=()):
    xp, out_shape, (top, left), k, st = _pool_windows(orig_input, ksize, strides, padding, data_format)
    if grad.shape != out_shape:
        raise BadInput("grad", f"has shape {grad.shape}, expected the pooled shape {out_shape}")
    dxp = np.zeros(xp.shape, grad.dtype)
    if grad.size:
        _, where = _pool_argmax(xp, out_shape, k, st)
        for i in range(k[0]):
            for j in range(k[1]):
                _window(dxp, i, j, out_shape[1], out_shape[2], *st, 1, 1)[...] += \
                    np.where(where == i * k[1] + j, grad, np.zeros((), grad.dtype))
    h, w = orig_input.shape[1:3]
    return np.ascontiguousarray(dxp[:, top:top + h, left:left + w, :])


def _max_pool_grad_grad_kernel(orig_input, orig_output, grad, ksize, strides, padding, data_format="NHWC",
                               explicit_paddings=()):
    xp, out_shape, (top, left), k, st = _pool_windows(orig_input, ksize, strides, padding, data_format)
    if grad.shape != orig_input.shape:
        raise BadInput("grad", f"has shape {grad.shape}, expected the input's shape {orig_input.shape}")
    out = np.zeros(out_shape, grad.dtype)
    if out.size:
        _, where = _pool_argmax(xp, out_shape, k, st)
        gp = np.pad(grad, ((0, 0), (top, xp.shape[1] - top - grad.shape[1]),
                           (left, xp.shape[2] - left - grad.shape[2]), (0, 0)))
        for i in range(k[0]):
            for j in range(k[1]):
                win = _window(gp, i, j, out_shape[1], out_shape[2], *st, 1, 1)
                out = np.where(where == i * k[1] + j, win, out)
    return out


def _infer_like_input(op, orig_input, orig_output, grad, **attrs):
    return [TensorSpec(grad.dtype, orig_input.shape)]


def _infer_like_output(op, orig_input, orig_output, grad, **attrs):
    return [TensorSpec(grad.dtype, orig_output.shape)]


register_op("MaxPoolGrad", inputs=("orig_input", "orig_output", "grad"), attrs={"T": ("orig_input", "grad")},
            allowed={"T": dtypes.REAL_NUMERIC}, infer=_infer_like_input, kernel=_max_pool_grad_kernel,
            defaults={"data_format": "NHWC", "explicit_paddings": ()}).attr_types = _POOL_ATTRS
register_op("MaxPoolGradGrad", inputs=("orig_input", "orig_output", "grad"),
            attrs={"T": ("orig_input", "grad")}, allowed={"T": dtypes.REAL_NUMERIC}, infer=_infer_like_output,
            kernel=_max_pool_grad_grad_kernel,
            defaults={"data_format": "NHWC", "explicit_paddings": ()}).attr_types = _POOL_ATTRS


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None, input=None):
    """The maximum over each `ksize` window of NHWC `value` (TF1's `nn.max_pool`; `input` is TF2's
    name for `value`). ksize, strides: an int or 1, 2 or 4 ints; padding "VALID" or "SAME"."""
    if input is not None:
        value = input
    padding = padding.decode() if isinstance(padding, bytes) else padding
    if padding not in ("VALID", "SAME"):
        raise ValueError(f"padding must be 'VALID' or 'SAME', got {padding!r}")
    return apply_op("MaxPool", value, ksize=_four(ksize, "ksize"), strides=_four(strides, "strides"),
                    padding=padding, data_format=data_format, name=name)


def max_pool_v2(input, ksize, strides, padding, data_format=None, name=None):
    """TF2's `tf.nn.max_pool` for 2-D NHWC inputs."""
    return max_pool(input, ksize, strides, padding, data_format=data_format or "NHWC", name=name)


max_pool2d = max_pool_v2


def max_pool_grad(orig_input, orig_output, grad, ksize, strides, padding, data_format="NHWC", name=None):
    """The gradient of max_pool: `grad` (pooled shape) sent to the first maximum of each window."""
    return apply_op("MaxPoolGrad", orig_input, orig_output, grad, ksize=_four(ksize, "ksize"),
                    strides=_four(strides, "strides"), padding=padding, data_format=data_format, name=name)

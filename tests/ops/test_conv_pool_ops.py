"""conv2d and max_pool (NHWC): values against direct NumPy loops, shapes, errors, and gradients
(first and second order) against numerical Jacobians."""
import numpy as np
import pytest

import segflow as sf
from segflow.eager import backprop
from segflow.ops import nn_ops

from gradcheck import check_gradients, check_second_order

_RNG = np.random.default_rng(5)


def _pad_amounts(size, k, stride, dilation, padding):
    eff = (k - 1) * dilation + 1
    if padding == "VALID":
        return max((size - eff) // stride + 1, 0), 0, 0
    out = -(-size // stride)
    total = max((out - 1) * stride + eff - size, 0)
    return out, total // 2, total - total // 2


def _conv_ref(x, f, strides, padding, dilations=(1, 1)):
    """Direct definition: out[n, a, b, o] = sum x_padded[n, a*s + i*d, b*s + j*d, c] f[i, j, c, o]."""
    n, h, w, c = x.shape
    kh, kw, _, o = f.shape
    if isinstance(padding, str):
        oh, top, bottom = _pad_amounts(h, kh, strides[0], dilations[0], padding)
        ow, left, right = _pad_amounts(w, kw, strides[1], dilations[1], padding)
    else:
        (top, bottom), (left, right) = padding
        oh = (h + top + bottom - (kh - 1) * dilations[0] - 1) // strides[0] + 1
        ow = (w + left + right - (kw - 1) * dilations[1] - 1) // strides[1] + 1
    xp = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)))
    out = np.zeros((n, oh, ow, o))
    for a in range(oh):
        for b in range(ow):
            for i in range(kh):
                for j in range(kw):
                    out[:, a, b, :] += xp[:, a * strides[0] + i * dilations[0], b * strides[1] + j * dilations[1], :] \
                        @ f[i, j]
    return out


def _pool_ref(x, k, strides, padding):
    n, h, w, c = x.shape
    oh, top, bottom = _pad_amounts(h, k[0], strides[0], 1, padding)
    ow, left, right = _pad_amounts(w, k[1], strides[1], 1, padding)
    xp = np.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)), constant_values=-np.inf)
    out = np.empty((n, oh, ow, c))
    for a in range(oh):
        for b in range(ow):
            out[:, a, b, :] = xp[:, a * strides[0]:a * strides[0] + k[0], b * strides[1]:b * strides[1] + k[1], :] \
                .max(axis=(1, 2))
    return out


CASES = [((1, 1), "SAME", (1, 1)), ((2, 1), "SAME", (1, 1)), ((1, 2), "VALID", (1, 1)), ((2, 2), "VALID", (1, 1)),
         ((1, 1), "SAME", (2, 1)), ((1, 1), [[1, 0], [2, 1]], (1, 1))]


@pytest.mark.parametrize("strides, padding, dilations", CASES)
def test_conv2d_values(mode, strides, padding, dilations):
    x = _RNG.standard_normal((2, 5, 6, 3))
    f = _RNG.standard_normal((3, 2, 3, 4))
    pad = padding if isinstance(padding, str) else [[0, 0]] + padding + [[0, 0]]
    y = nn_ops.conv2d(sf.constant(x), sf.constant(f), [1, *strides, 1], pad, dilations=[1, *dilations, 1])
    expected = _conv_ref(x, f, strides, padding, dilations)
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(mode.evaluate(y), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("strides, padding, dilations", CASES[:4] + CASES[5:])
def test_conv2d_gradients(mode, strides, padding, dilations):
    x = _RNG.standard_normal((1, 4, 5, 2))
    f = _RNG.standard_normal((2, 3, 2, 3))
    pad = padding if isinstance(padding, str) else [[0, 0]] + padding + [[0, 0]]

    def fn(a, b):
        return nn_ops.conv2d(a, b, [1, *strides, 1], pad, dilations=[1, *dilations, 1])

    check_gradients(mode, fn, [x, f], tol=1e-6)
    check_second_order(mode, fn, [x, f], tol=1e-6)
    check_second_order(mode, lambda b, a: fn(a, b), [f, x], tol=1e-6)


def test_conv2d_gradient_of_a_one_pixel_image():
    grad = backprop.gradients_function(lambda i, k, s: nn_ops.conv2d(i, k, s, "SAME"), params=(0,))(
        sf.constant([[[[1.0]]]]), sf.constant([[[[2.0]]]]), [1, 1, 1, 1])[0]
    assert grad.numpy().tolist() == [[[[2.0]]]]


def test_conv2d_tf2_signature_and_errors():
    x, f = sf.ones((1, 3, 3, 2)), sf.ones((2, 2, 2, 1))
    assert sf.nn.conv2d(x, f, 1, "VALID").numpy().reshape(-1).tolist() == [8.0] * 4
    with pytest.raises(sf.errors.InvalidArgumentError, match="input channels"):
        nn_ops.conv2d(x, sf.ones((2, 2, 3, 1)), 1, "VALID")
    with pytest.raises(sf.errors.InvalidArgumentError, match="strides"):
        nn_ops.conv2d(x, f, [2, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="padding"):
        nn_ops.conv2d(x, f, 1, "FULL")
    with sf.Graph().as_default():
        y = nn_ops.conv2d(sf.placeholder(sf.float32, [None, 7, None, 2]), f, 2, "SAME")
        assert y.shape.as_list() == [None, 4, None, 1]


@pytest.mark.parametrize("k, strides, padding", [((2, 2), (2, 2), "VALID"), ((3, 2), (1, 2), "SAME"),
                                                 ((2, 3), (2, 1), "SAME")])
def test_max_pool_values_and_gradients(mode, k, strides, padding):
    x = _RNG.permutation(2 * 5 * 4 * 3).reshape(2, 5, 4, 3).astype(np.float64) / 7   # no ties
    y = nn_ops.max_pool(sf.constant(x), [1, *k, 1], [1, *strides, 1], padding)
    np.testing.assert_array_equal(mode.evaluate(y), _pool_ref(x, k, strides, padding))

    def fn(a):
        return nn_ops.max_pool(a, [1, *k, 1], [1, *strides, 1], padding)

    check_gradients(mode, fn, [x], tol=1e-6)
    # the gradient of the pooling gradient, w.r.t. the upstream gradient
    pooled = mode.evaluate(y)
    check_gradients(mode, lambda g: nn_ops.max_pool_grad(sf.constant(x), sf.constant(pooled), g, [1, *k, 1],
                                                         [1, *strides, 1], padding), [np.ones_like(pooled)],
                    tol=1e-6)


def test_max_pool_ties_send_the_gradient_to_the_first_maximum():
    x = sf.constant(np.ones((1, 2, 2, 1)))
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = sf.nn.max_pool(x, 2, 2, "VALID")
    assert tape.gradient(y, x).numpy().reshape(-1).tolist() == [1.0, 0.0, 0.0, 0.0]


def test_max_pool_attr_kinds_and_errors():
    from segflow import pywrap_tfe
    assert backprop.op_attr_type("MaxPool", "ksize") == [pywrap_tfe.TF_ATTR_INT]
    assert backprop.op_attr_type("MaxPool", "padding") == pywrap_tfe.TF_ATTR_STRING
    assert backprop.op_attr_type("Conv2D", "use_cudnn_on_gpu") == pywrap_tfe.TF_ATTR_BOOL
    with pytest.raises(sf.errors.InvalidArgumentError, match="batch or channels"):
        nn_ops.max_pool(sf.ones((1, 2, 2, 2)), [1, 1, 1, 2], 1, "VALID")

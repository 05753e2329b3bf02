"""Moments and batch normalization, composites of public ops (their gradients come from the
parts): `moments`, `weighted_moments` (TF2 spellings with `keepdims`, and `*_v1` with TF1's
`keep_dims` too), `normalize_moments`, `batch_normalization`.

    mean, var = sf.nn.moments(x, axes=[0, 1, 2])           # per-channel statistics of NHWC input
    y = sf.nn.batch_normalization(x, mean, var, beta, gamma, 1e-3)

As in TensorFlow, float16 statistics are computed in float32 and cast back, `shift` is accepted and
ignored by `moments`, and the variance is the population (biased) one. `moments` stops the gradient
at the mean inside the variance, as TensorFlow does: first-order gradients are exact (that term is
zero), but second-order ones (hessians through the variance) lack the mean's term, as TF's do.
"""

from __future__ import annotations

from segflow._core import dtypes
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._core.tensor import Tensor
from segflow._ops import cast as cast_ops
from segflow._ops import elementwise as cw
from segflow._ops import reduce as ro
from segflow._ops import shape as so
from segflow._ops import transpose as transpose_ops
from typing import Optional
from segflow._core.typing import AxisLike, Name, TensorLike

__all__ = ["moments", "moments_v1", "weighted_moments", "weighted_moments_v1", "normalize_moments",
           "batch_normalization"]


def _tensor(x, name=None):
    return x if isinstance(x, Tensor) else convert_to_tensor(x, name=name)


def _keep_dims(keepdims, keep_dims):
    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
    return bool(keepdims if keepdims is not None else keep_dims)


def _squeeze(t, axes):
    return transpose_ops.squeeze(t, [axes] if isinstance(axes, int) else list(axes))


def moments(x: TensorLike, axes: AxisLike, shift: Optional[TensorLike] = None, keepdims: bool = False,
            name: Name = None) -> tuple[Tensor, Tensor]:
    """Mean and (population) variance of `x` over `axes`.

    Args:
      x: a numeric tensor (float16 is computed in float32; integers give truncated means as
        reduce_mean does).
      axes: an int or list of ints, the axes to reduce.
      shift: ignored (TensorFlow ignores it too).
      keepdims: keep the reduced axes with length 1.
    Returns:
      (mean, variance), each of x's dtype.
    """
    with name_scope(name, "moments", [x, axes]):
        x = _tensor(x, "x")
        y = cast_ops.cast(x, dtypes.float32) if x.dtype == dtypes.float16 else x
        mean = ro.reduce_mean(y, axes, keepdims=True, name="mean")
        # stop_gradient changes nothing: d variance / d mean is sum(2 (mean - x)) / n = 0
        variance = ro.reduce_mean(cw.squared_difference(y, so.stop_gradient(mean)), axes, keepdims=True,
                                  name="variance")
        if not keepdims:
            mean, variance = _squeeze(mean, axes), _squeeze(variance, axes)
        if x.dtype == dtypes.float16:
            return cast_ops.cast(mean, dtypes.float16), cast_ops.cast(variance, dtypes.float16)
        return mean, variance


def moments_v1(x: TensorLike, axes: AxisLike, shift: Optional[TensorLike] = None, name: Name = None,
               keep_dims: Optional[bool] = None, keepdims: Optional[bool] = None) -> tuple[Tensor, Tensor]:
    """TF1's `moments`: as `moments`, with `keep_dims` as the older name of `keepdims`."""
    return moments(x, axes, shift=shift, keepdims=_keep_dims(keepdims, keep_dims), name=name)


def weighted_moments(x: TensorLike, axes: AxisLike, frequency_weights: TensorLike, keepdims: bool = False,
                     name: Name = None) -> tuple[Tensor, Tensor]:
    """Weighted mean and variance of `x` over `axes`: sum(w x) / sum(w) and sum(w (x - mean)^2) / sum(w).

    Args:
      x: a float tensor.
      axes: the axes to reduce.
      frequency_weights: weights broadcastable to x's shape (cast to x's dtype).
    Returns:
      (weighted_mean, weighted_variance); 0 where the weights sum to 0.
    """
    with name_scope(name, "weighted_moments", [x, frequency_weights, axes]):
        x = _tensor(x, "x")
        w = _tensor(frequency_weights, "frequency_weights")
        needs_cast = x.dtype == dtypes.float16
        if needs_cast:
            x = cast_ops.cast(x, dtypes.float32)
        if w.dtype != x.dtype:
            w = cast_ops.cast(w, x.dtype)
        weighted_sum = ro.reduce_sum(cw.multiply(w, x), axes, keepdims=True, name="weighted_input_sum")
        # w broadcast to x's shape (w + 0 * x), so that the weight count matches the items summed
        sum_of_weights = ro.reduce_sum(cw.add(w, so.zeros_like(x)), axes, keepdims=True, name="sum_of_weights")
        mean = cw.div_no_nan(weighted_sum, sum_of_weights)
        distsq = ro.reduce_sum(cw.multiply(w, cw.squared_difference(x, mean)), axes, keepdims=True,
                               name="weighted_distsq")
        variance = cw.div_no_nan(distsq, sum_of_weights)
        if not keepdims:
            mean, variance = _squeeze(mean, axes), _squeeze(variance, axes)
        if needs_cast:
            return cast_ops.cast(mean, dtypes.float16), cast_ops.cast(variance, dtypes.float16)
        return mean, variance


def weighted_moments_v1(x: TensorLike, axes: AxisLike, frequency_weights: TensorLike, name: Name = None,
                        keep_dims: Optional[bool] = None, keepdims: Optional[bool] = None) -> tuple[Tensor, Tensor]:
    """TF1's `weighted_moments`, with `keep_dims` as the older name of `keepdims`."""
    return weighted_moments(x, axes, frequency_weights, keepdims=_keep_dims(keepdims, keep_dims), name=name)


def normalize_moments(counts: TensorLike, mean_ss: TensorLike, variance_ss: TensorLike, shift: Optional[TensorLike],
                      name: Name = None) -> tuple[Tensor, Tensor]:
    """Mean and variance from sufficient statistics: mean = mean_ss / counts (+ shift), variance =
    variance_ss / counts - (mean_ss / counts)^2.

    Args:
      counts: the number of items summed.
      mean_ss: the sum of the (shifted) items; variance_ss: the sum of their squares.
      shift: the shift that was subtracted from the items, or None.
    """
    with name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        mean_ss = _tensor(mean_ss)
        divisor = cw.reciprocal(convert_to_tensor(counts, dtype=mean_ss.dtype) if not isinstance(counts, Tensor)
                                else counts, name="divisor")
        if shift is not None:
            shifted_mean = cw.multiply(mean_ss, divisor, name="shifted_mean")
            mean = cw.add(shifted_mean, shift, name="mean")
        else:
            shifted_mean = cw.multiply(mean_ss, divisor, name="mean")
            mean = shifted_mean
        variance = cw.subtract(cw.multiply(variance_ss, divisor), cw.square(shifted_mean), name="variance")
        return mean, variance


def batch_normalization(x: TensorLike, mean: TensorLike, variance: TensorLike, offset: Optional[TensorLike],
                        scale: Optional[TensorLike], variance_epsilon: float, name: Name = None) -> Tensor:
    """(x - mean) / sqrt(variance + variance_epsilon) * scale + offset, computed as x * inv +
    (offset - mean * inv) with inv = scale * rsqrt(variance + variance_epsilon), as TensorFlow does.

    Args:
      x: a float tensor; mean, variance, offset, scale: tensors broadcastable to it (offset and
        scale may be None: no shift, no scaling).
      variance_epsilon: a small float that keeps the division finite.
    """
    with name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = _tensor(x, "x")
        variance = _tensor(variance)
        inv = cw.rsqrt(cw.add(variance, convert_to_tensor(variance_epsilon, dtype=variance.dtype)))
        if scale is not None:
            inv = cw.multiply(inv, scale)
        shift = cw.subtract(offset, cw.multiply(mean, inv)) if offset is not None \
            else cw.negative(cw.multiply(mean, inv))
        return cw.add(cw.multiply(x, cast_ops.cast(inv, x.dtype)), cast_ops.cast(shift, x.dtype))

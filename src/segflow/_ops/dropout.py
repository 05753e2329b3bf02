"""Dropout: `dropout` (TF2's `tf.nn.dropout(x, rate, ...)`) and `dropout_v1` (TF1's
`tf.compat.v1.nn.dropout(x, keep_prob=None, ..., rate=None)`), built from public ops as TensorFlow
builds it: x / (1 - rate) where uniform(noise_shape) >= rate, else 0. The gradient is therefore the
kept mask times 1 / (1 - rate) times the upstream gradient, in every mode, from the parts' gradients.

    y = sf.nn.dropout(x, rate=0.5, seed=1)     # half the entries zeroed, the rest doubled
"""
import numbers

import numpy as np

from segflow._core import errors, shapes as tensor_shape
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._core.tensor import Tensor
from segflow._ops import cast as cast_ops
from segflow._ops import elementwise as cw
from segflow._ops import random as random_ops
from segflow._ops import shape as so

__all__ = ["dropout", "dropout_v1"]


def _noise_shape(x, noise_shape):
    """`noise_shape` as a shape argument: x's shape when None; None entries take x's dimension."""
    if noise_shape is None:
        return so.shape(x)
    if isinstance(noise_shape, Tensor):
        return noise_shape
    dims = noise_shape.as_list() if isinstance(noise_shape, tensor_shape.TensorShape) else list(noise_shape)
    x_dims = x.shape.as_list() if x.shape.rank is not None else None
    if x_dims is not None and len(dims) == len(x_dims):
        dims = [x_dims[i] if d is None else d for i, d in enumerate(dims)]
    if x_dims is not None and all(isinstance(d, (int, np.integer)) for d in dims):
        try:
            np.broadcast_shapes(tuple(int(d) for d in dims), tuple(1 if d is None else d for d in x_dims))
        except ValueError:
            raise errors.InvalidArgumentError(
                None, None, f"dropout: noise_shape {list(dims)} does not broadcast to x's shape {x.shape}") from None
    if any(d is None for d in dims):
        raise ValueError(f"dropout: noise_shape {dims} has unknown entries that x's shape {x.shape} cannot fill")
    return so._shape_arg([int(d) for d in dims])


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Zeroes each entry of `x` with probability `rate` and scales the rest by 1 / (1 - rate).

    Args:
      x: a floating point tensor.
      rate: the drop probability, a Python float in [0, 1) or a scalar tensor (a tensor rate of 1
        gives all zeros).
      noise_shape: 1-D shape broadcastable to x's shape: the shape of the random keep mask (e.g.
        `[batch, 1]` keeps or drops whole rows); None entries take x's dimension.
      seed: the op seed of the uniform draw (with the global seed, see `sf.random.set_seed`).
    Returns:
      A tensor of x's shape and dtype. A Python rate of 0 returns `x` itself.
    Raises:
      ValueError: a Python rate outside [0, 1), a rate that is no number or scalar tensor, a
        non-floating `x`, a tensor rate that is not a scalar.
      InvalidArgumentError: a noise_shape that does not broadcast to x's shape.
    """
    with name_scope(name, "dropout", [x]):
        is_number = isinstance(rate, numbers.Real) and not isinstance(rate, bool)
        if is_number and not 0 <= rate < 1:
            raise ValueError(f"`rate` must be a scalar tensor or a float in the range [0, 1). Received: rate={rate}")
        x = x if isinstance(x, Tensor) else convert_to_tensor(x, name="x")
        if not x.dtype.is_floating:
            raise ValueError(f"`x.dtype` must be a floating point tensor as `x` will be scaled. "
                             f"Received: x_dtype={x.dtype.name}")
        if is_number and rate == 0:
            random_ops.get_seed(seed)     # draw the op seed anyway, so later ops' seeds do not shift
            return x
        if is_number:
            scaled = cw.multiply(x, convert_to_tensor(1.0 / (1.0 - rate), dtype=x.dtype))
            rate_t = convert_to_tensor(rate, dtype=x.dtype)
        elif isinstance(rate, Tensor) or isinstance(rate, np.ndarray):
            rate_t = rate if isinstance(rate, Tensor) else convert_to_tensor(rate)
            if rate_t.shape.rank not in (None, 0):
                raise ValueError(f"dropout: `rate` must be a scalar tensor, got shape {rate_t.shape}")
            if not (rate_t.dtype.is_floating or rate_t.dtype.is_integer):
                raise ValueError(f"dropout: `rate` must be a number, got dtype {rate_t.dtype.name}")
            if rate_t.dtype != x.dtype:
                rate_t = cast_ops.cast(rate_t, x.dtype, name="rate")
            scaled = cw.realdiv(x, cw.subtract(convert_to_tensor(1, dtype=x.dtype), rate_t))
        else:
            raise ValueError(f"`rate` must be a scalar or scalar tensor. Received: rate={rate}")
        noise = random_ops.random_uniform(_noise_shape(x, noise_shape), dtype=x.dtype, seed=seed)
        keep = cw.greater_equal(noise, rate_t)
        return cw.where_v2(keep, scaled, convert_to_tensor(0, dtype=x.dtype))


def dropout_v1(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """TF1's dropout: keep each entry with probability `keep_prob` (deprecated spelling of
    `rate = 1 - keep_prob`), scaled by 1 / keep_prob; otherwise as `dropout`.

    Raises:
      ValueError: both or neither of keep_prob and rate given; a rate outside [0, 1).
    """
    if keep_prob is not None:
        if rate is not None:
            raise ValueError("Cannot specify both 'keep_prob' and 'rate'.")
        rate = 1 - keep_prob
    if rate is None:
        raise ValueError(f"`rate` must be provided. Received: rate={rate}")
    return dropout(x, rate, noise_shape=noise_shape, seed=seed, name=name)


"""Initializers (TF1's `init_ops`): objects that, called with a shape and dtype, build the initial
value of a variable.

    init = VarianceScaling(scale=2.0, mode="fan_in", distribution="truncated_normal", seed=1)
    w = init([3, 3, 16, 32])            # conv kernel: fan_in = 3 * 3 * 16
    v = get_variable("w", [784, 10], initializer=glorot_uniform_initializer(seed=7))

Every initializer is `__call__(shape, dtype=None, partition_info=None)`; with `partition_info`
(a shard of a partitioned variable), the fan computation uses the whole variable's shape. Random
initializers draw from segflow's random ops with their op `seed`, so a seeded initializer repeats
under the global seed rules of random.py (eagerly and in graphs). `get_config()` /
`from_config()` round-trip the constructor arguments.

The Orthogonal initializer needs a QR factorization: the `Qr` op row (NumPy's, not
differentiable) is defined here.
"""
import math

import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.apply import apply_op
from segflow._core.convert import convert_to_tensor, to_numpy
from segflow._core.registry import NotDifferentiable, TensorSpec, register_op
from segflow._core.tensor import EagerTensor
from segflow.kernels import BadInput
from segflow._ops import constant as constant_op
from segflow._ops import elementwise as cw
from segflow._ops import gather as gather_ops
from segflow._ops import random as random_ops
from segflow._ops import shape as shape_ops
from segflow._ops import slicing as slicing_ops
from segflow._ops import transpose as transpose_ops

__all__ = ["Initializer", "Zeros", "Ones", "Constant", "RandomUniform", "RandomNormal", "TruncatedNormal",
           "UniformUnitScaling", "VarianceScaling", "GlorotUniform", "GlorotNormal", "Orthogonal", "Identity",
           "zeros_initializer", "ones_initializer", "constant_initializer", "random_uniform_initializer",
           "random_normal_initializer", "truncated_normal_initializer", "uniform_unit_scaling_initializer",
           "variance_scaling_initializer", "glorot_uniform_initializer", "glorot_normal_initializer",
           "orthogonal_initializer", "identity_initializer", "lecun_normal", "lecun_uniform", "he_normal",
           "he_uniform", "qr"]

# scipy.stats.truncnorm.std(a=-2, b=2, loc=0., scale=1.): the stddev of a unit normal cut at 2 sigma
_TRUNCATED_STDDEV = .87962566103423978


# ----------------------------------------------------------------------------------------------
# Qr: the factorization Orthogonal uses


def _infer_qr(op, input, full_matrices=False):
    shape = input.shape
    if shape.rank is None:
        return [TensorSpec(input.dtype, tensor_shape.unknown_shape())] * 2
    if shape.rank < 2:
        raise errors.invalid_input(op, "input", f"must have rank >= 2, got shape {shape}")
    dims = shape.as_list()
    batch, m, n = dims[:-2], dims[-2], dims[-1]
    k = None if m is None or n is None else min(m, n)
    if full_matrices:
        return [TensorSpec(input.dtype, batch + [m, m]), TensorSpec(input.dtype, batch + [m, n])]
    return [TensorSpec(input.dtype, batch + [m, k]), TensorSpec(input.dtype, batch + [k, n])]


def _qr_kernel(input, full_matrices=False):
    if input.ndim < 2:
        raise BadInput("input", f"must have rank >= 2, got shape {input.shape}")
    work = input if input.dtype in (np.float32, np.float64, np.complex64, np.complex128) \
        else input.astype(np.float32)        # half / bfloat16: factor in float32
    q, r = np.linalg.qr(work, mode="complete" if full_matrices else "reduced")
    return q.astype(input.dtype), r.astype(input.dtype)


register_op("Qr", inputs=("input",), attrs={"T": "input"}, allowed={"T": dtypes.FLOATING + dtypes.COMPLEX},
            infer=_infer_qr, kernel=_qr_kernel, num_outputs=2, defaults={"full_matrices": False})
NotDifferentiable("Qr")


def qr(input, full_matrices=False, name=None):
    """(q, r) with input = q @ r over the last two dimensions; q has orthonormal columns and r is
    upper triangular (TF's `linalg.qr`; not differentiable here)."""
    q, r = apply_op("Qr", input, full_matrices=bool(full_matrices), name=name)
    return q, r


# ----------------------------------------------------------------------------------------------
# helpers


def _assert_float_dtype(dtype):
    dtype = dtypes.as_dtype(dtype)
    if not dtype.is_floating:
        raise ValueError(f"Argument `dtype` is expected to be floating point. Received: {dtype}.")
    return dtype


def _dims(shape):
    """A static shape as a list of ints (initializers that compute from the shape need it known)."""
    if isinstance(shape, EagerTensor):
        shape = shape.numpy().tolist()
    s = tensor_shape.as_shape(shape)
    if not s.is_fully_defined():
        raise ValueError(f"The shape to initialize must be fully defined, got {s}")
    return [int(d) for d in s.as_list()]


def _compute_fans(shape):
    """(fan_in, fan_out) of a weight shape: a 2-D [in, out] matrix, or a convolution kernel
    [..., in_depth, out_depth] whose receptive field multiplies both."""
    if len(shape) < 1:
        fan_in = fan_out = 1
    elif len(shape) == 1:
        fan_in = fan_out = shape[0]
    elif len(shape) == 2:
        fan_in, fan_out = shape
    else:
        receptive_field = 1
        for dim in shape[:-2]:
            receptive_field *= dim
        fan_in = shape[-2] * receptive_field
        fan_out = shape[-1] * receptive_field
    return int(fan_in), int(fan_out)


def _scaled(gain, value, dtype):
    return cw.multiply(convert_to_tensor(gain, dtype=dtype), value)


# ----------------------------------------------------------------------------------------------
# Initializers


class Initializer:
    """Base class: `__call__(shape, dtype=None, partition_info=None)` returns the initial tensor."""

    def __call__(self, shape, dtype=None, partition_info=None):
        raise NotImplementedError

    def get_config(self):
        """The constructor arguments, as a JSON-serializable dict."""
        return {}

    @classmethod
    def from_config(cls, config):
        """The initializer `get_config()` describes: `cls(**config)`."""
        return cls(**config)


class _Filled(Initializer):
    """Tensors filled by `_fill(shape, dtype)`."""

    def __init__(self, dtype=dtypes.float32):
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        return type(self)._fill(shape, self.dtype if dtype is None else dtypes.as_dtype(dtype))

    def get_config(self):
        return {"dtype": self.dtype.name}


class Zeros(_Filled):
    """Tensors of zeros."""
    _fill = staticmethod(shape_ops.zeros)


class Ones(_Filled):
    """Tensors of ones."""
    _fill = staticmethod(shape_ops.ones)


class Constant(Initializer):
    """Tensors holding `value` (TF1 rules): a scalar fills the shape; a list or array is laid out
    in row-major order and, when shorter than the shape, its last element fills the rest.

    Raises (on call):
      ValueError: more elements than the shape holds. TypeError: `verify_shape` and the value's
        shape differs from the requested one.
    """

    def __init__(self, value=0, dtype=dtypes.float32, verify_shape=False):
        if not (np.isscalar(value) or isinstance(value, (list, tuple, np.ndarray))):
            raise TypeError(f"Invalid type for initial value={value} of type: {type(value).__name__}. Expected "
                            "Python scalar, list or tuple of values, or numpy.ndarray.")
        self.value = value
        self.dtype = dtypes.as_dtype(dtype)
        self._verify_shape = verify_shape

    def __call__(self, shape, dtype=None, partition_info=None, verify_shape=None):
        dtype = self.dtype if dtype is None else dtypes.as_dtype(dtype)
        verify_shape = self._verify_shape if verify_shape is None else verify_shape
        dims = _dims(shape)
        size = math.prod(dims)
        strict = not isinstance(self.value, (np.ndarray, np.generic))
        arr = to_numpy(self.value, dtype, strict=strict)
        if size == 0:
            return constant_op.constant(np.empty(dims, arr.dtype), dtype=dtype)
        if verify_shape and arr.shape != tuple(dims):
            raise TypeError(f"Expected Tensor's shape: {tuple(dims)}, but got {arr.shape}.")
        if arr.size > size:
            raise ValueError(f"Too many elements provided. Needed at most {size}, but received {arr.size}")
        flat = arr.reshape(-1)
        if flat.size < size:
            fill = flat[-1] if flat.size else np.zeros((), arr.dtype)
            flat = np.concatenate([flat, np.full(size - flat.size, fill, arr.dtype)])
        return constant_op.constant(flat.reshape(dims), dtype=dtype)

    def get_config(self):
        return {"value": self.value, "dtype": self.dtype.name}


class RandomUniform(Initializer):
    """Uniform samples in [minval, maxval) (maxval defaults to 1 for floats)."""

    def __init__(self, minval=.0, maxval=None, seed=None, dtype=dtypes.float32):
        self.minval = minval
        self.maxval = maxval
        self.seed = seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self.dtype if dtype is None else dtypes.as_dtype(dtype)
        return random_ops.random_uniform(shape, self.minval, self.maxval, dtype, seed=self.seed)

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed, "dtype": self.dtype.name}


class _MeanStddev(Initializer):
    """The arguments of the two normal initializers."""

    def __init__(self, mean=0.0, stddev=1.0, seed=None, dtype=dtypes.float32):
        self.mean = mean
        self.stddev = stddev
        self.seed = seed
        self.dtype = _assert_float_dtype(dtype)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed, "dtype": self.dtype.name}


class RandomNormal(_MeanStddev):
    """Normal samples with `mean` and `stddev`."""

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self.dtype if dtype is None else dtypes.as_dtype(dtype)
        return random_ops.random_normal(shape, self.mean, self.stddev, dtype, seed=self.seed)


class TruncatedNormal(_MeanStddev):
    """Normal samples with `mean` and `stddev`, redrawn when more than 2 stddev from the mean."""

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self.dtype if dtype is None else dtypes.as_dtype(dtype)
        return random_ops.truncated_normal(shape, self.mean, self.stddev, dtype, seed=self.seed)


class UniformUnitScaling(Initializer):
    """Uniform in [-m, m], m = factor * sqrt(3 / input_size), input_size the product of all
    dimensions but the last (deprecated in TF for VarianceScaling(distribution="uniform"))."""

    def __init__(self, factor=1.0, seed=None, dtype=dtypes.float32):
        self.factor = factor
        self.seed = seed
        self.dtype = _assert_float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self.dtype if dtype is None else dtypes.as_dtype(dtype)
        scale_shape = _dims(shape if partition_info is None else partition_info.full_shape)
        input_size = 1.0
        for dim in scale_shape[:-1]:
            input_size *= float(dim)
        input_size = max(input_size, 1.0)     # zero-size tensors
        max_val = math.sqrt(3 / input_size) * self.factor
        return random_ops.random_uniform(shape, -max_val, max_val, dtype, seed=self.seed)

    def get_config(self):
        return {"factor": self.factor, "seed": self.seed, "dtype": self.dtype.name}


_DISTRIBUTIONS = ("normal", "uniform", "truncated_normal", "untruncated_normal")


class VarianceScaling(Initializer):
    """Samples whose variance is `scale / n`, n the fan-in, fan-out or their average (`mode`).

    distribution "truncated_normal" (and its deprecated alias "normal"): a normal cut at 2 stddev,
    stddev = sqrt(scale / n) / 0.87962566103423978 (so the cut samples keep the variance);
    "untruncated_normal": stddev = sqrt(scale / n); "uniform": in [-limit, limit],
    limit = sqrt(3 * scale / n). For kernels of rank > 2 the fans include the receptive field.
    """

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None, dtype=dtypes.float32):
        if scale <= 0.:
            raise ValueError(f"Argument `scale` must be a positive float. Received: {scale}")
        if mode not in {"fan_in", "fan_out", "fan_avg"}:
            raise ValueError(f"Argument `mode` should be one of ('fan_in', 'fan_out', 'fan_avg'). Received: {mode}")
        distribution = distribution.lower()
        if distribution not in _DISTRIBUTIONS:
            raise ValueError("Argument `distribution` should be one of ('normal', uniform', 'truncated_normal', "
                             f"'untruncated_normal'). Received: {distribution}")
        self.scale = scale
        self.mode = mode
        self.distribution = distribution
        self.seed = seed
        self.dtype = _assert_float_dtype(dtype)

    def _variance(self, shape, partition_info):
        fan_in, fan_out = _compute_fans(_dims(shape if partition_info is None else partition_info.full_shape))
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.}[self.mode]
        return self.scale / max(1., n)

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self.dtype if dtype is None else dtypes.as_dtype(dtype)
        scale = self._variance(shape, partition_info)
        if self.distribution in ("normal", "truncated_normal"):
            stddev = math.sqrt(scale) / _TRUNCATED_STDDEV
            return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(scale), dtype, seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)

    def get_config(self):
        return {"scale": self.scale, "mode": self.mode, "distribution": self.distribution, "seed": self.seed,
                "dtype": self.dtype.name}


class GlorotUniform(VarianceScaling):
    """Glorot/Xavier uniform: in [-limit, limit], limit = sqrt(6 / (fan_in + fan_out))."""

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(scale=1.0, mode="fan_avg", distribution="uniform", seed=seed, dtype=dtype)

    def get_config(self):
        return {"seed": self.seed, "dtype": self.dtype.name}


class GlorotNormal(VarianceScaling):
    """Glorot/Xavier normal: truncated normal with stddev sqrt(2 / (fan_in + fan_out)) (before the
    truncation correction)."""

    def __init__(self, seed=None, dtype=dtypes.float32):
        super().__init__(scale=1.0, mode="fan_avg", distribution="truncated_normal", seed=seed, dtype=dtype)

    def get_config(self):
        return {"seed": self.seed, "dtype": self.dtype.name}


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times `gain`: the Q of the QR factorization of a normal matrix,
    each column's sign set by R's diagonal so the result is uniform over orthogonal matrices.
    Shapes of rank > 2 are flattened to [prod(shape[:-1]), shape[-1]]."""

    def __init__(self, gain=1.0, seed=None, dtype=dtypes.float32):
        self.gain = gain
        self.dtype = _assert_float_dtype(dtype)
        self.seed = seed

    def __call__(self, shape, dtype=None, partition_info=None):
        dtype = self.dtype if dtype is None else dtypes.as_dtype(dtype)
        dims = _dims(shape)
        if len(dims) < 2:
            raise ValueError("The tensor to initialize, specified by argument `shape` must be at least "
                             f"two-dimensional. Received shape={shape}")
        num_rows = int(math.prod(dims[:-1]))
        num_cols = int(dims[-1])
        flat_shape = (num_cols, num_rows) if num_rows < num_cols else (num_rows, num_cols)
        a = random_ops.random_normal(flat_shape, dtype=dtype, seed=self.seed)
        q, r = qr(a, full_matrices=False)
        k = min(flat_shape)
        diagonal = np.repeat(np.arange(k, dtype=np.int32), 2).reshape(k, 2)
        q = cw.multiply(q, cw.sign(gather_ops.gather_nd(r, diagonal)))
        if num_rows < num_cols:
            q = transpose_ops.transpose(q)
        return _scaled(self.gain, shape_ops.reshape(q, dims), dtype)

    def get_config(self):
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}


class Identity(Initializer):
    """The identity matrix times `gain` (2-D shapes only; a shard gets its part of it)."""

    def __init__(self, gain=1.0, dtype=dtypes.float32):
        self.gain = gain
        self.dtype = _assert_float_dtype(dtype)

    def __call__(self, shape, dtype=None, partition_info=None):
        full_shape = _dims(shape if partition_info is None else partition_info.full_shape)
        if len(full_shape) != 2:
            raise ValueError("The tensor to initialize, specified by argument `shape` must be at least "
                             f"two-dimensional. Received shape={shape}")
        dtype = self.dtype if dtype is None else dtypes.as_dtype(dtype)
        value = constant_op.constant(np.eye(*full_shape), dtype=dtype)
        if partition_info is not None:
            value = slicing_ops.slice(value, list(partition_info.var_offset), _dims(shape))
        return _scaled(self.gain, value, dtype)

    def get_config(self):
        return {"gain": self.gain, "dtype": self.dtype.name}


# TF1's lowercase names
zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
uniform_unit_scaling_initializer = UniformUnitScaling
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
orthogonal_initializer = Orthogonal
identity_initializer = Identity


def lecun_normal(seed=None):
    """LeCun normal: truncated normal, stddev sqrt(1 / fan_in) (before the truncation correction)."""
    return VarianceScaling(scale=1., mode="fan_in", distribution="truncated_normal", seed=seed)


def lecun_uniform(seed=None):
    """LeCun uniform: in [-limit, limit], limit = sqrt(3 / fan_in)."""
    return VarianceScaling(scale=1., mode="fan_in", distribution="uniform", seed=seed)


def he_normal(seed=None):
    """He normal: truncated normal, stddev sqrt(2 / fan_in) (before the truncation correction)."""
    return VarianceScaling(scale=2., mode="fan_in", distribution="truncated_normal", seed=seed)


def he_uniform(seed=None):
    """He uniform: in [-limit, limit], limit = sqrt(6 / fan_in)."""
    return VarianceScaling(scale=2., mode="fan_in", distribution="uniform", seed=seed)

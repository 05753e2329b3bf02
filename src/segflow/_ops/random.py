"""Random tensors with TensorFlow's seed semantics: random_normal, random_uniform (float and int),
truncated_normal, random_shuffle, multinomial/categorical, and the seeds (set_seed, get_seed).

Seeds (as in TF):
- A global seed (`set_seed(s)`: eagerly it is the process's global seed; while building a graph it
  is `graph.seed`) combined with an op seed decides each op's stream. With a global seed and no op
  seed, the op seed is derived deterministically (eagerly: a counter that `set_seed` resets; in a
  graph: the number of ops built so far). With an op seed only, a fixed default global seed is used.
  With neither, the stream is fresh entropy, so results differ from run to run.
- Each random op is a stateful kernel: in a graph its generator lives in the Session, keyed by node
  name, so two Sessions running one seeded graph see the same sequence and repeated runs in one
  Session see new values. Eagerly, seeded generators are kept per (seed, seed2) until `set_seed` is
  called again, so a sequence of calls repeats after re-setting the seed.

Random ops are not differentiable (their shape input has no gradient); gradients do flow through the
mean/stddev/minval/maxval arithmetic around them.
"""

from __future__ import annotations

import numpy as np

from segflow._core import mode as context
from segflow._core import dtypes, errors
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import get_default_graph, name_scope
from segflow._core.registry import NotDifferentiable
from segflow._core.tensor import Tensor
from segflow._core import apply as op_def, fold as tensor_util
from segflow._core.apply import apply_op
from segflow._core.registry import TensorSpec, register_op
from segflow.kernels import BadInput
from segflow._ops import elementwise as cw
from segflow._ops import shape as so
from typing import Optional
from segflow._core.typing import DTypeLike, IntLike, Name, ShapeLike, TensorLike

__all__ = ["random_normal", "random_uniform", "truncated_normal", "random_shuffle", "multinomial",
           "set_random_seed", "get_seed"]

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2 ** 31 - 1
_FLOAT = dtypes.FLOATING


class _EagerSeed:
    """The eager global seed and the counter that derives op seeds from it."""
    seed = None
    counter = 0


def set_seed(seed: Optional[int]) -> None:
    """Sets the global random seed: eagerly for the process (restarting every seeded sequence), and
    while building a graph as that graph's seed. `None` clears it."""
    seed = None if seed is None else int(seed)
    if context.executing_eagerly():
        _EagerSeed.seed = seed
        _EagerSeed.counter = 0
        resources = op_def._EAGER_RESOURCES
        for key in [k for k in resources if isinstance(k, tuple) and k and k[0] == "random"]:
            del resources[key]
    else:
        get_default_graph().seed = seed


set_random_seed = set_seed


def get_seed(op_seed):
    """The (seed, seed2) pair an op with op seed `op_seed` uses, from the global seed (TF's rules);
    (None, None) when neither is set."""
    if context.executing_eagerly():
        global_seed = _EagerSeed.seed
    else:
        graph = get_default_graph()
        global_seed = graph.seed
    if global_seed is not None:
        if op_seed is None:
            if context.executing_eagerly():
                _EagerSeed.counter += 1
                op_seed = _EagerSeed.counter
            else:
                op_seed = graph.num_operations()
        seeds = (int(global_seed), int(op_seed))
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, int(op_seed))
    else:
        return None, None
    if seeds == (0, 0):       # (0, 0) means "unseeded" to the kernels
        seeds = (0, _MAXINT32)
    return seeds


def _seed_attrs(seed):
    s1, s2 = get_seed(seed)
    attrs = {"seed": 0 if s1 is None else s1, "seed2": 0 if s2 is None else s2}
    if seed is None and s1 is not None and context.executing_eagerly():
        # An op seed drawn from the eager counter is never seen again (until set_seed restarts the
        # counter, which drops the generators anyway): no need to keep its generator.
        attrs["transient"] = True
    return attrs


def _generator(state, seed, seed2, transient=False):
    """The op's NumPy Generator: kept in the Session (graph, by node name) or in eager resources
    (by seed pair); fresh entropy when unseeded."""
    if state.key is None:
        if seed == 0 and seed2 == 0:
            return np.random.default_rng()
        if transient:
            return np.random.default_rng([seed & 0xFFFFFFFFFFFFFFFF, seed2 & 0xFFFFFFFFFFFFFFFF])
        key = ("random", "eager", seed, seed2)
    else:
        key = ("random", state.key)
    gen = state.resources.get(key)
    if gen is None:
        gen = np.random.default_rng() if seed == 0 and seed2 == 0 else \
            np.random.default_rng([seed & 0xFFFFFFFFFFFFFFFF, seed2 & 0xFFFFFFFFFFFFFFFF])
        state.resources[key] = gen
    return gen


def _dims(shape):
    shape = np.asarray(shape)
    if shape.ndim != 1:
        raise BadInput("shape", f"must be a vector, got shape {shape.shape}")
    if np.any(shape < 0):
        raise BadInput("shape", f"dimensions must be non-negative, got {shape.tolist()}")
    return tuple(int(d) for d in shape)


def _infer_random(op, shape, dtype, seed=0, seed2=0, transient=False):
    if shape.shape.rank not in (None, 1):
        raise errors.invalid_input(op, "shape", f"must be a vector, got shape {shape.shape}")
    dims = tensor_util.constant_value(shape)
    if dims is not None and np.any(np.asarray(dims) < 0):
        raise errors.invalid_input(op, "shape", f"dimensions must be non-negative, got {np.asarray(dims).tolist()}")
    return [TensorSpec(dtype, tensor_util.constant_value_as_shape(shape))]


def _standard_normal_kernel(state, shape, dtype, seed=0, seed2=0, transient=False):
    gen = _generator(state, seed, seed2, transient)
    return gen.standard_normal(_dims(shape)).astype(dtype.as_numpy_dtype)


def _uniform_kernel(state, shape, dtype, seed=0, seed2=0, transient=False):
    gen = _generator(state, seed, seed2, transient)
    out = gen.random(_dims(shape)).astype(dtype.as_numpy_dtype)
    # float16/float32 rounding can turn a value just below 1 into 1; keep the range [0, 1)
    return np.minimum(out, np.nextafter(np.ones((), out.dtype), np.zeros((), out.dtype)))


def _truncated_normal_kernel(state, shape, dtype, seed=0, seed2=0, transient=False):
    gen = _generator(state, seed, seed2, transient)
    out = gen.standard_normal(_dims(shape))
    bad = np.abs(out) > 2.0
    while bad.any():               # redraw values more than 2 standard deviations out
        out[bad] = gen.standard_normal(int(bad.sum()))
        bad = np.abs(out) > 2.0
    return out.astype(dtype.as_numpy_dtype)


_SEEDS = {"seed": 0, "seed2": 0, "transient": False}
for _name, _kernel in (("RandomStandardNormal", _standard_normal_kernel), ("RandomUniform", _uniform_kernel),
                       ("TruncatedNormal", _truncated_normal_kernel)):
    register_op(_name, inputs=("shape",), attrs={"T": "shape"}, allowed={"T": dtypes.INDEX}, infer=_infer_random,
                kernel=_kernel, defaults=dict(_SEEDS, dtype=dtypes.float32), stateful=True)


def _infer_uniform_int(op, shape, minval, maxval, seed=0, seed2=0, transient=False):
    for name, t in (("minval", minval), ("maxval", maxval)):
        if t.shape.rank not in (None, 0):
            raise errors.invalid_input(op, name, f"must be a scalar, got shape {t.shape}")
    lo, hi = tensor_util.constant_value(minval), tensor_util.constant_value(maxval)
    if lo is not None and hi is not None and not lo < hi:
        raise errors.invalid_input(op, "maxval", f"Need minval < maxval: {int(lo)} >= {int(hi)}")
    return _infer_random(op, shape, minval.dtype)


def _uniform_int_kernel(state, shape, minval, maxval, seed=0, seed2=0, transient=False):
    for name, v in (("minval", minval), ("maxval", maxval)):
        if np.ndim(v) != 0:
            raise BadInput(name, f"must be a scalar, got shape {np.shape(v)}")
    if not minval < maxval:
        raise BadInput("maxval", f"Need minval < maxval: {int(minval)} >= {int(maxval)}")
    dims = _dims(shape)
    gen = _generator(state, seed, seed2, transient)
    return gen.integers(minval, maxval, size=dims, dtype=np.asarray(minval).dtype)


register_op("RandomUniformInt", inputs=("shape", "minval", "maxval"),
            attrs={"T": "shape", "Tout": ("minval", "maxval")}, allowed={"T": dtypes.INDEX, "Tout": dtypes.INDEX},
            infer=_infer_uniform_int, kernel=_uniform_int_kernel, defaults=dict(_SEEDS), stateful=True)


def _infer_shuffle(op, value, seed=0, seed2=0, transient=False):
    return [TensorSpec(value.dtype, value.shape)]


def _shuffle_kernel(state, value, seed=0, seed2=0, transient=False):
    gen = _generator(state, seed, seed2, transient)
    if value.ndim == 0:
        return np.array(value, copy=True)
    return value[gen.permutation(value.shape[0])]


register_op("RandomShuffle", inputs=("value",), attrs={"T": "value"}, infer=_infer_shuffle,
            kernel=_shuffle_kernel, defaults=dict(_SEEDS), stateful=True)


def _infer_multinomial(op, logits, num_samples, output_dtype=dtypes.int64, seed=0, seed2=0, transient=False):
    if logits.shape.rank not in (None, 2):
        raise errors.invalid_input(op, "logits", f"must be a matrix [batch, classes], got shape {logits.shape}")
    if num_samples.shape.rank not in (None, 0):
        raise errors.invalid_input(op, "num_samples", f"must be a scalar, got shape {num_samples.shape}")
    n = tensor_util.constant_value(num_samples)
    if n is not None and int(n) < 0:
        raise errors.invalid_input(op, "num_samples", f"must be non-negative, got {int(n)}")
    batch = logits.shape.as_list()[0] if logits.shape.rank == 2 else None
    return [TensorSpec(output_dtype, [batch, None if n is None else int(n)])]


def _multinomial_kernel(state, logits, num_samples, output_dtype=dtypes.int64, seed=0, seed2=0, transient=False):
    if logits.ndim != 2:
        raise BadInput("logits", f"must be a matrix [batch, classes], got shape {logits.shape}")
    n = int(num_samples)
    if n < 0:
        raise BadInput("num_samples", f"must be non-negative, got {n}")
    if logits.shape[1] == 0 and logits.shape[0] and n:
        raise BadInput("logits", "needs at least one class")
    gen = _generator(state, seed, seed2, transient)
    x = logits.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        p = np.exp(x - np.max(x, axis=1, keepdims=True)) if x.size else x
    out = np.empty((logits.shape[0], n), output_dtype.as_numpy_dtype)
    for b in range(logits.shape[0]):
        row = p[b]
        if not np.isfinite(row).all() or row.sum() <= 0:
            raise BadInput("logits", f"row {b} does not give a probability distribution: {logits[b].tolist()}")
        out[b] = gen.choice(row.size, size=n, p=row / row.sum())
    return out


register_op("Multinomial", inputs=("logits", "num_samples"), attrs={"T": "logits"},
            allowed={"T": dtypes.REAL_NUMERIC}, infer=_infer_multinomial, kernel=_multinomial_kernel,
            defaults=dict(_SEEDS, output_dtype=dtypes.int64), stateful=True)


# -- public functions
def _float_dtype(dtype, fn):
    dtype = dtypes.as_dtype(dtype)
    if dtype not in _FLOAT:
        raise TypeError(f"{fn}: dtype must be a floating point type (float16, bfloat16, float32, float64), "
                        f"got {dtype.name}")
    return dtype


def _scaled(op_type, shape, loc, scale, dtype, seed, name, default_name):
    dtype = _float_dtype(dtype, default_name)
    with name_scope(name, default_name, [shape, loc, scale]):
        loc = convert_to_tensor(loc, dtype=dtype)
        scale = convert_to_tensor(scale, dtype=dtype)
        rnd = apply_op(op_type, so._shape_arg(shape), dtype=dtype, **_seed_attrs(seed))
        return cw.add(cw.multiply(rnd, scale), loc)


def random_normal(shape: ShapeLike, mean: TensorLike = 0.0, stddev: TensorLike = 1.0, dtype: DTypeLike = dtypes.float32,
                  seed: Optional[int] = None, name: Name = None) -> Tensor:
    """Normal samples: mean + stddev * N(0, 1), of shape `shape` and a float `dtype`.

    `seed` is the op seed (combined with the global seed; see the module docstring).
    """
    return _scaled("RandomStandardNormal", shape, mean, stddev, dtype, seed, name, "random_normal")


def truncated_normal(shape: ShapeLike, mean: TensorLike = 0.0, stddev: TensorLike = 1.0,
                     dtype: DTypeLike = dtypes.float32, seed: Optional[int] = None, name: Name = None) -> Tensor:
    """Normal samples redrawn until within 2 standard deviations of the mean."""
    return _scaled("TruncatedNormal", shape, mean, stddev, dtype, seed, name, "truncated_normal")


def random_uniform(shape: ShapeLike, minval: TensorLike = 0, maxval: Optional[TensorLike] = None,
                   dtype: DTypeLike = dtypes.float32, seed: Optional[int] = None, name: Name = None) -> Tensor:
    """Uniform samples in [minval, maxval).

    Floats: maxval defaults to 1. Integers (int32/int64): maxval is required and minval < maxval.
    Raises:
      ValueError: an integer dtype without maxval. InvalidArgumentError: minval >= maxval.
    """
    dtype = dtypes.as_dtype(dtype)
    with name_scope(name, "random_uniform", [shape, minval, maxval]):
        shape_t = so._shape_arg(shape)
        if dtype.is_integer:
            if dtype not in dtypes.INDEX:
                raise TypeError(f"random_uniform: integer dtype must be int32 or int64, got {dtype.name}")
            if maxval is None:
                raise ValueError(f"Must specify maxval for integer dtype {dtype.name}")
            lo = convert_to_tensor(minval, dtype=dtype)
            hi = convert_to_tensor(maxval, dtype=dtype)
            return apply_op("RandomUniformInt", shape_t, lo, hi, **_seed_attrs(seed))
        dtype = _float_dtype(dtype, "random_uniform")
        lo = convert_to_tensor(minval, dtype=dtype)
        hi = convert_to_tensor(1 if maxval is None else maxval, dtype=dtype)
        rnd = apply_op("RandomUniform", shape_t, dtype=dtype, **_seed_attrs(seed))
        return cw.add(cw.multiply(rnd, cw.subtract(hi, lo)), lo)


def random_shuffle(value: TensorLike, seed: Optional[int] = None, name: Name = None) -> Tensor:
    """`value` with its first dimension randomly permuted."""
    return apply_op("RandomShuffle", value, name=name, **_seed_attrs(seed))


def multinomial(logits: TensorLike, num_samples: IntLike, seed: Optional[int] = None, name: Name = None,
                output_dtype: Optional[DTypeLike] = None) -> Tensor:
    """Class indices drawn from softmax(logits) per row: shape [batch, num_samples]."""
    output_dtype = dtypes.as_dtype(output_dtype or dtypes.int64)
    if output_dtype not in dtypes.INDEX:
        raise TypeError(f"multinomial: output_dtype must be int32 or int64, got {output_dtype.name}")
    if not isinstance(num_samples, Tensor):
        num_samples = np.asarray(num_samples, np.int32)
    return apply_op("Multinomial", logits, num_samples, output_dtype=output_dtype, name=name,
                    **_seed_attrs(seed))


def categorical(logits: TensorLike, num_samples: IntLike, dtype: Optional[DTypeLike] = None, seed: Optional[int] = None,
                name: Name = None) -> Tensor:
    """TF2's name for `multinomial`."""
    return multinomial(logits, num_samples, seed=seed, name=name, output_dtype=dtype)


for _t in ("RandomStandardNormal", "RandomUniform", "TruncatedNormal", "RandomUniformInt", "RandomShuffle",
           "Multinomial"):
    NotDifferentiable(_t)

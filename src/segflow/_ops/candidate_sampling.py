"""Candidate samplers (TF's candidate_sampling_ops): log_uniform, uniform, learned_unigram,
fixed_unigram and all candidate samplers, and compute_accidental_hits.

Each sampler op takes `true_classes` (int64 [batch, num_true]) and returns (sampled_candidates int64
[num_sampled], true_expected_count float32 [batch, num_true], sampled_expected_count float32
[num_sampled]). The expected count of a class of probability p is p * num_sampled, or, for
unique=True when rejections happened, 1 - (1 - p) ** num_tries (TF's formulas; see
kernels/sampling.py).

The ops are stateful like the random ops (`_ops/random.py`): seeded through `get_seed`; in a graph
the generator (and the learned unigram counts) live in the Session, keyed by node; eagerly they are
kept per op type, seeds and attrs (TF's kernel cache) until `set_seed`. The learned unigram sampler
starts with a count of 1 per class and, after sampling, counts the batch's true classes once more.
The fixed unigram sampler reproduces TF's sharding exactly, including that the ids of `unigrams`
start after the reserved ids kept in this shard.

Deliberate differences from TF: the random streams are NumPy's, not Philox, so sampled values
differ from TF's for the same seed; unique sampling that can never finish (fewer nonzero-weight
classes than num_sampled) raises InvalidArgumentError where TF loops or aborts.
"""
import collections

import numpy as np

from segflow._core import mode as context
from segflow._core import dtypes, errors
from segflow._core.apply import apply_op
from segflow._core.convert import convert_to_tensor
from segflow._core.registry import NotDifferentiable, TensorSpec, register_op
from segflow._core.tensor import Tensor
from segflow._ops.random import get_seed
from segflow.kernels import BadInput, sampling

__all__ = ["log_uniform_candidate_sampler", "uniform_candidate_sampler", "learned_unigram_candidate_sampler",
           "fixed_unigram_candidate_sampler", "all_candidate_sampler", "compute_accidental_hits"]

_OUTPUTS = ["sampled_candidates", "true_expected_count", "sampled_expected_count"]
_RESULTS = {t: collections.namedtuple(t, _OUTPUTS) for t in (
    "LogUniformCandidateSampler", "UniformCandidateSampler", "LearnedUnigramCandidateSampler",
    "FixedUnigramCandidateSampler", "AllCandidateSampler")}
_AccidentalHits = collections.namedtuple("ComputeAccidentalHits", ["indices", "ids", "weights"])
_SEEDS = {"seed": 0, "seed2": 0, "transient": False}
_FIXED = {"vocab_file": "", "distortion": 1.0, "num_reserved_ids": 0, "num_shards": 1, "shard": 0, "unigrams": ()}


# -- the distributions (uniforms in [0, 1) -> candidates; probabilities; updates)

class _Uniform:
    def __init__(self, range_max):
        self.range_max = range_max

    def values(self, u):
        return np.minimum(np.floor(u * self.range_max).astype(np.int64), self.range_max - 1)

    def probability(self, v):
        return np.full(np.shape(v), 1.0 / self.range_max)


class _LogUniform(_Uniform):
    def values(self, u):
        return sampling.log_uniform_values(u, self.range_max)

    def probability(self, v):
        return sampling.log_uniform_probability(v, self.range_max)


class _Weighted:
    """Fixed weights (the fixed unigram sampler)."""

    def __init__(self, weights):
        self.cum = np.cumsum(weights)
        self.weights = weights
        self.total = float(self.cum[-1])
        self.nonzero = int(np.count_nonzero(weights))

    def values(self, u):
        return sampling.weighted_values(self.cum, u)

    def probability(self, v):
        return self.weights[v] / self.total


_Learned = sampling.UnigramCounts


class _State:
    """A sampler op's generator and distribution (with the learned counts)."""
    __slots__ = ("gen", "dist")

    def __init__(self, gen, dist):
        self.gen, self.dist = gen, dist


def _new_generator(seed, seed2):
    if seed == 0 and seed2 == 0:
        return np.random.default_rng()
    return np.random.default_rng([seed & 0xFFFFFFFFFFFFFFFF, seed2 & 0xFFFFFFFFFFFFFFFF])


def _sampler_state(state, op_type, make_dist, seed, seed2, transient, attrs_key):
    """The op's generator and distribution: in the Session (graph, by node), kept per op type,
    seeds and attrs (eager), or new (an eager op seed drawn from the counter: never seen again)."""
    if state.key is not None:
        key = ("random", state.key)
    elif transient:
        return _State(_new_generator(seed, seed2), make_dist())
    else:
        key = ("random", "sampler", op_type, seed, seed2) + attrs_key
    found = state.resources.get(key)
    if found is None:
        found = state.resources[key] = _State(_new_generator(seed, seed2), make_dist())
    return found


# -- checks

def _check_attrs(op, num_true, num_sampled, unique, range_max):
    for attr, v in (("num_true", num_true), ("num_sampled", num_sampled), ("range_max", range_max)):
        if v < 1:
            raise errors.invalid_op(op, f"attr '{attr}' must be at least 1, got {v}")
    if unique and num_sampled > range_max:
        raise errors.invalid_op(op, f"Sampler's range is too small: unique sampling of num_sampled={num_sampled} "
                                    f"from range_max={range_max} candidates")


def _fixed_attrs(op, range_max, vocab_file, distortion, num_reserved_ids, num_shards, shard, unigrams):
    if bool(vocab_file) == bool(len(unigrams)):
        raise errors.invalid_op(op, "Must only provide one of vocab_file and unigrams." if vocab_file else
                                "Must provide either vocab_file or unigrams.")
    if num_reserved_ids < 0:
        raise errors.invalid_op(op, f"attr 'num_reserved_ids' must be non-negative, got {num_reserved_ids}")
    if num_shards < 1 or not 0 <= shard < num_shards:
        raise errors.invalid_op(op, f"attrs 'num_shards' = {num_shards}, 'shard' = {shard}: need 0 <= shard < "
                                    "num_shards")
    if len(unigrams):
        size = len(_shard_weights(np.asarray(unigrams, np.float32), distortion, num_reserved_ids, num_shards, shard))
        if size != range_max:
            raise errors.invalid_op(op, f"range is {range_max} must be equal to weights size {size} (the reserved ids "
                                        f"and unigrams that fall in shard {shard} of {num_shards})")


def _infer_true_classes(op, true_classes, num_true):
    if true_classes.dtype != dtypes.int64:
        raise errors.invalid_input(op, "true_classes", f"must be int64, not {true_classes.dtype.name}",
                                   cls=errors.DTypeError)
    shape = true_classes.shape
    if shape.rank not in (None, 2):
        raise errors.invalid_input(op, "true_classes", f"must be a matrix [batch, num_true], got shape {shape}")
    if shape.rank == 2 and shape.as_list()[1] not in (None, num_true):
        raise errors.invalid_input(op, "true_classes", f"must have num_true columns, expected: {num_true} was: "
                                                       f"{shape.as_list()[1]}")
    return shape.as_list()[0] if shape.rank == 2 else None


def _check_true_classes(true_classes, num_true, range_max, what="range_max"):
    if true_classes.dtype != np.int64:
        raise BadInput("true_classes", f"must be int64, not {true_classes.dtype}")
    if true_classes.ndim != 2:
        raise BadInput("true_classes", f"must be a matrix [batch, num_true], got shape {list(true_classes.shape)}")
    if true_classes.shape[1] != num_true:
        raise BadInput("true_classes", f"must have num_true columns, expected: {num_true} was: "
                                       f"{true_classes.shape[1]}")
    bad = np.flatnonzero((true_classes < 0) | (true_classes >= range_max))
    if bad.size:
        i = int(bad[0])
        raise BadInput("true_classes", f"true_classes[{i // num_true},{i % num_true}] = {true_classes.flat[i]} is "
                                       f"out of range [0, {range_max}) ({what})")


# -- the ops

def _infer_sampler(op, true_classes, num_true=1, num_sampled=1, unique=False, range_max=None, seed=0, seed2=0,
                   transient=False, **fixed):
    range_max = num_sampled if range_max is None else range_max
    _check_attrs(op, num_true, num_sampled, unique, range_max)
    if fixed:
        _fixed_attrs(op, range_max, **fixed)
    batch = _infer_true_classes(op, true_classes, num_true)
    return [TensorSpec(dtypes.int64, [num_sampled]), TensorSpec(dtypes.float32, [batch, num_true]),
            TensorSpec(dtypes.float32, [num_sampled])]


def _sample(dist_state, true_classes, num_sampled, unique):
    """The three outputs, then the distribution's update (the learned sampler counts true classes)."""
    gen, dist = dist_state.gen, dist_state.dist
    values, tries = sampling.sample(lambda n: dist.values(gen.random(n)), num_sampled, unique)
    true_count = sampling.expected_count(dist.probability(true_classes), num_sampled, tries)
    sampled_count = sampling.expected_count(dist.probability(values), num_sampled, tries)
    if isinstance(dist, _Learned):
        dist.add(true_classes)
    return values, true_count, sampled_count


def _range_kernel(op_type, make):
    def kernel(state, true_classes, num_true=1, num_sampled=1, unique=False, range_max=1, seed=0, seed2=0,
               transient=False):
        _check_true_classes(true_classes, num_true, range_max)
        s = _sampler_state(state, op_type, lambda: make(range_max), seed, seed2, transient,
                           (num_true, num_sampled, unique, range_max))
        return _sample(s, true_classes, num_sampled, unique)
    return kernel


_RANGE_ATTRS = dict(_SEEDS, num_true=1, num_sampled=1, unique=False, range_max=1)
for _type, _make in (("UniformCandidateSampler", _Uniform), ("LogUniformCandidateSampler", _LogUniform),
                     ("LearnedUnigramCandidateSampler", _Learned)):
    register_op(_type, inputs=("true_classes",), infer=_infer_sampler, kernel=_range_kernel(_type, _make),
                defaults=_RANGE_ATTRS, num_outputs=3, stateful=True)


def _shard_weights(raw, distortion, num_reserved_ids, num_shards, shard):
    """TF's FixedUnigramSampler weights: 0 for the reserved ids of this shard, then raw[k] ** distortion
    for the k whose id (the number of reserved ids kept + k) falls in this shard."""
    reserved = sum(1 for i in range(num_reserved_ids) if i % num_shards == shard)
    ids = reserved + np.arange(raw.shape[0])
    kept = raw[ids % num_shards == shard].astype(np.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        kept = np.power(kept, np.float32(distortion))
    return np.concatenate([np.zeros(reserved, np.float32), kept]).astype(np.float64)


def _read_vocab(path):
    """The last comma-separated field of every non-empty line of `path`, as float32."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise errors.NotFoundError(None, None, f"FixedUnigramCandidateSampler: vocab_file '{path}': {e}") from None
    out = []
    for line in lines:
        if not line:
            continue
        try:
            out.append(float(line.split(",")[-1]))
        except ValueError:
            raise BadInput("vocab_file", f"Wrong vocabulary format at line: {line}") from None
    return np.asarray(out, np.float32)


def _fixed_dist(range_max, vocab_file, distortion, num_reserved_ids, num_shards, shard, unigrams):
    raw = _read_vocab(vocab_file) if vocab_file else np.asarray(unigrams, np.float32)
    weights = _shard_weights(raw, distortion, num_reserved_ids, num_shards, shard)
    what = "vocab_file" if vocab_file else "unigrams"
    if weights.shape[0] != range_max:
        raise BadInput(what, f"range is {range_max} must be equal to weights size {weights.shape[0]}")
    if not np.all(weights >= 0) or not np.all(np.isfinite(weights)):
        raise BadInput(what, "weights (after distortion) must be finite and non-negative")
    if not np.any(weights > 0):
        raise BadInput(what, "no candidate has a nonzero weight")
    return _Weighted(weights)


def _fixed_kernel(state, true_classes, num_true=1, num_sampled=1, unique=False, range_max=1, seed=0, seed2=0,
                  transient=False, vocab_file="", distortion=1.0, num_reserved_ids=0, num_shards=1, shard=0,
                  unigrams=()):
    _check_true_classes(true_classes, num_true, range_max)
    fixed = (vocab_file, distortion, num_reserved_ids, num_shards, shard, tuple(unigrams))
    s = _sampler_state(state, "FixedUnigramCandidateSampler", lambda: _fixed_dist(range_max, *fixed), seed, seed2,
                       transient, (num_true, num_sampled, unique, range_max) + fixed)
    if unique and s.dist.nonzero < num_sampled:
        raise BadInput("vocab_file" if vocab_file else "unigrams",
                       f"only {s.dist.nonzero} candidates have a nonzero weight; unique sampling of "
                       f"num_sampled={num_sampled} needs as many")
    return _sample(s, true_classes, num_sampled, unique)


register_op("FixedUnigramCandidateSampler", inputs=("true_classes",), infer=_infer_sampler, kernel=_fixed_kernel,
            defaults=dict(_RANGE_ATTRS, **_FIXED), num_outputs=3, stateful=True)


def _all_kernel(state, true_classes, num_true=1, num_sampled=1, unique=False, seed=0, seed2=0, transient=False):
    _check_true_classes(true_classes, num_true, num_sampled, what="num_sampled")
    return (np.arange(num_sampled, dtype=np.int64), np.ones(true_classes.shape, np.float32),
            np.ones(num_sampled, np.float32))


register_op("AllCandidateSampler", inputs=("true_classes",), infer=_infer_sampler, kernel=_all_kernel,
            defaults=dict(_SEEDS, num_true=1, num_sampled=1, unique=False), num_outputs=3, stateful=True)


def _infer_hits(op, true_classes, sampled_candidates, num_true=1, seed=0, seed2=0):
    _infer_true_classes(op, true_classes, num_true)
    if sampled_candidates.dtype != dtypes.int64:
        raise errors.invalid_input(op, "sampled_candidates", f"must be int64, not {sampled_candidates.dtype.name}",
                                   cls=errors.DTypeError)
    if sampled_candidates.shape.rank not in (None, 1):
        raise errors.invalid_input(op, "sampled_candidates", f"must be a vector, got shape {sampled_candidates.shape}")
    return [TensorSpec(dtypes.int32, [None]), TensorSpec(dtypes.int64, [None]), TensorSpec(dtypes.float32, [None])]


def _hits_kernel(true_classes, sampled_candidates, num_true=1, seed=0, seed2=0):
    for name, x in (("true_classes", true_classes), ("sampled_candidates", sampled_candidates)):
        if x.dtype != np.int64:
            raise BadInput(name, f"must be int64, not {x.dtype}")
    if true_classes.ndim != 2 or true_classes.shape[1] != num_true:
        raise BadInput("true_classes", f"must be a [batch_size, num_true={num_true}] matrix, got shape "
                                       f"{list(true_classes.shape)}")
    if sampled_candidates.ndim != 1:
        raise BadInput("sampled_candidates", f"must be a vector, got shape {list(sampled_candidates.shape)}")
    return sampling.accidental_hits(true_classes, sampled_candidates)


register_op("ComputeAccidentalHits", inputs=("true_classes", "sampled_candidates"), infer=_infer_hits,
            kernel=_hits_kernel, defaults={"num_true": 1, "seed": 0, "seed2": 0}, num_outputs=3)

for _t in list(_RESULTS) + ["ComputeAccidentalHits"]:
    NotDifferentiable(_t)


# -- public functions

def _seed_attrs(seed):
    s1, s2 = get_seed(seed)
    attrs = {"seed": 0 if s1 is None else s1, "seed2": 0 if s2 is None else s2}
    if seed is None and s1 is not None and context.executing_eagerly():
        attrs["transient"] = True      # an op seed from the eager counter: its state is never reused
    return attrs


def _int64(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x, dtype=dtypes.int64)


def _sampler(op_type, true_classes, name, seed, **attrs):
    _check_attrs(errors.OpName(op_type, name), attrs["num_true"], attrs["num_sampled"], attrs["unique"],
                 attrs.get("range_max", attrs["num_sampled"]))
    outs = apply_op(op_type, _int64(true_classes), name=name, **attrs, **_seed_attrs(seed))
    return _RESULTS[op_type](*outs)


def _ints(num_true, num_sampled, unique, range_max=None):
    out = {"num_true": int(num_true), "num_sampled": int(num_sampled), "unique": bool(unique)}
    if range_max is not None:
        out["range_max"] = int(range_max)
    return out


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """Samples classes from the log-uniform (Zipfian) distribution P(k) = log((k+2)/(k+1)) / log(range_max+1).

    Args:
      true_classes: int64 [batch_size, num_true], each in [0, range_max).
      num_true, num_sampled, range_max: ints >= 1; unique: sample without replacement (by rejection).
      seed: op seed (with the global seed; see `sf.random.set_seed`).
    Returns:
      (sampled_candidates int64 [num_sampled], true_expected_count float32 [batch_size, num_true],
      sampled_expected_count float32 [num_sampled]).
    Raises:
      InvalidArgumentError: a true class out of range, the wrong shape, an attr < 1, or unique with
        num_sampled > range_max.
    """
    return _sampler("LogUniformCandidateSampler", true_classes, name, seed,
                    **_ints(num_true, num_sampled, unique, range_max))


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """Samples classes uniformly from [0, range_max); arguments and results as
    `log_uniform_candidate_sampler`."""
    return _sampler("UniformCandidateSampler", true_classes, name, seed,
                    **_ints(num_true, num_sampled, unique, range_max))


def learned_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None, name=None):
    """Samples classes in proportion to how often they were true classes of earlier calls (1 + count
    each); this call's true classes are counted after it samples. Arguments and results as
    `log_uniform_candidate_sampler`."""
    return _sampler("LearnedUnigramCandidateSampler", true_classes, name, seed,
                    **_ints(num_true, num_sampled, unique, range_max))


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, vocab_file="",
                                    distortion=1.0, num_reserved_ids=0, num_shards=1, shard=0, unigrams=(),
                                    seed=None, name=None):
    """Samples classes with fixed weights, each raised to `distortion`.

    The weights come from `unigrams` (a list of floats) or `vocab_file` (the last comma-separated
    field of each line), exactly one of them. Ids [0, num_reserved_ids) get weight 0; with
    `num_shards` > 1 only the ids of `shard` are kept (TF's numbering), and range_max must equal the
    number of weights kept. Results as `log_uniform_candidate_sampler`.
    """
    fixed = {"vocab_file": "" if vocab_file is None else str(vocab_file), "distortion": float(distortion),
             "num_reserved_ids": int(num_reserved_ids), "num_shards": int(num_shards), "shard": int(shard),
             "unigrams": tuple(float(u) for u in (() if unigrams is None else unigrams))}
    _fixed_attrs(errors.OpName("FixedUnigramCandidateSampler", name), int(range_max), **fixed)
    return _sampler("FixedUnigramCandidateSampler", true_classes, name, seed,
                    **_ints(num_true, num_sampled, unique, range_max), **fixed)


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """All classes [0, num_sampled) as the sample, every expected count 1 (for tests: with it a sampled
    loss is the full one). `unique` is ignored."""
    return _sampler("AllCandidateSampler", true_classes, name, seed, **_ints(num_true, num_sampled, unique))


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """The positions where a sampled candidate equals one of a row's true classes.

    Args:
      true_classes: int64 [batch_size, num_true]; sampled_candidates: int64 [num_sampled].
    Returns:
      (indices int32 [n]: the row, ids int64 [n]: the position in sampled_candidates (the last one
      for a value sampled twice), weights float32 [n]: -FLT_MAX), one entry per true class found,
      in row-major order of true_classes.
    """
    attrs = _seed_attrs(seed)
    attrs.pop("transient", None)
    outs = apply_op("ComputeAccidentalHits", _int64(true_classes), _int64(sampled_candidates), name=name,
                    num_true=int(num_true), **attrs)
    return _AccidentalHits(*outs)

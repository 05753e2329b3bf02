"""Fuzz cases for segflow's ops that take indices, ids or sizes: generators, NumPy references and
one executor, shared by the pytest sample (test_fuzz.py) and the long runner (run_fuzz.py).

A case is Python source: input arrays written out as NumPy expressions (big-endian, strided,
transposed, read-only, unaligned, broadcast, Python lists ...), then a few lines calling segflow
eagerly or in a graph fed through placeholders, which set `result` (and, for stateful ops,
`__state`, a function reading the variables, and `__before = __state()` just before the call).
What runs is exactly the reproducer `python tests/fuzz/cases.py --seed N` prints.

The NumPy reference (TensorFlow's semantics) decides each case:

    value   the call must return this (exact for integer and ordering ops, allclose for float
            arithmetic), dtype and shape included
    error   the call must raise a segflow error (a subclass of errors.OpError)
    either  a segflow error, or exactly the value (TF versions differ, or the request is huge)

and the outcome is one of: pass, raised (an OpError where one is allowed), or a failure:

    non-segflow-exception  anything raised that is not an OpError (IndexError, OverflowError,
                           MemoryError, TypeError ...)
    accepted-invalid       returned where the reference says error (a silent wrong answer)
    wrong-value            returned something other than the reference (shape, dtype, values)
    rejected-valid         raised an OpError on an input the reference computes
    state-changed          a stateful call raised, but a variable or optimizer slot changed
    mutated-input          a NumPy input array was written to
    crash / hang           (found by run_fuzz.py, which runs cases in worker processes)

`run_case(seed)` builds and runs one case; `make_case(seed)` only builds it. With `safe=True` the
generators leave out the inputs that once crashed the process or allocate huge arrays, so the
case can run inside pytest; run_fuzz.py always runs everything, in subprocesses.
"""
import math
import sys
import traceback

import numpy as np

try:  # registers the name "bfloat16" with NumPy (segflow imports it too)
    import ml_dtypes  # noqa: F401
except ImportError:  # pragma: no cover
    pass

NAN, INF = float("nan"), float("inf")
I32MIN, I32MAX = -2**31, 2**31 - 1
I64MIN, I64MAX = -2**63, 2**63 - 1
# Index values far outside any range (int32 / int64 boundaries, values that wrap when narrowed).
EXTREMES = [I64MIN, I64MIN + 1, -2**40, I32MIN - 1, I32MIN, I32MAX, 2**31, 2**32, 2**32 + 1, 2**40,
            I64MAX - 1, I64MAX]
# Sizes (num_segments, depth, multiples, dims) that cannot be allocated unless something is empty.
HUGE = [2**31 - 1, 2**31, 2**32, 2**33, 2**40, 2**48, 2**62, I64MAX]
HUGE_BYTES = 2**40          # an output of this many bytes (or more) must be refused: ResourceExhausted
BIG_BYTES = 2**26           # from here up to HUGE_BYTES: refused or answered
# A huge request that is not empty asks for at least this much (more than a worker's memory limit,
# so it fails at once instead of filling gigabytes): see more_than_memory().
OVER_MEMORY = 2**32

FLOAT_DT = ["float16", "float32", "float64"]
REAL_DT = ["float16", "float32", "float64", "int32", "int64", "uint8"]
NUM_DT = REAL_DT + ["complex64"]
ANY_DT = ["float32", "float64", "float16", "int32", "int64", "bool", "bfloat16", "uint8", "complex64"]
# Index dtypes with weights: native, big-endian, float (NaN, inf, 0.5), odd integer widths, bool.
IDX_DT = [("int32", 28), ("int64", 24), (">i4", 7), (">i8", 7), ("float32", 4), ("float64", 5),
          ("int16", 2), ("uint8", 2), ("uint32", 1), ("bool", 1)]
IDX_OK = ("int32", "int64")
IDX_MAYBE = ("int8", "int16", "uint8", "uint16", "uint32", "uint64")  # some TF versions take these


# ------------------------------------------------------------------------------------------------
# Random sources: NumPy (the runner: fast) or hypothesis (pytest: deterministic, replayable)


class NpSource:
    def __init__(self, seed, safe=False):
        self.rng = np.random.default_rng(seed)
        self.safe = safe

    def int(self, lo, hi):
        return int(self.rng.integers(lo, hi, endpoint=True))

    def bool(self, p=0.5):
        return bool(self.rng.random() < p)

    def choice(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def weighted(self, pairs):
        w = np.array([p[1] for p in pairs], float)
        return pairs[int(self.rng.choice(len(pairs), p=w / w.sum()))][0]

    def ints(self, n, lo, hi):
        return [int(x) for x in self.rng.integers(lo, hi, size=n, endpoint=True)]

    def picks(self, n, pool):
        return [pool[int(i)] for i in self.rng.integers(len(pool), size=n)] if n else []

    def mask(self, n, p):
        return [bool(b) for b in self.rng.random(n) < p]


class HypSource:
    """The same interface over hypothesis' `data.draw`."""

    def __init__(self, data, safe=True):
        from hypothesis import strategies as st
        self.st = st
        self.data = data
        self.safe = safe

    def int(self, lo, hi):
        return self.data.draw(self.st.integers(lo, hi))

    def bool(self, p=0.5):
        return self.data.draw(self.st.integers(0, 999)) >= 1000 - p * 1000

    def choice(self, seq):
        return seq[self.data.draw(self.st.integers(0, len(seq) - 1))]

    def weighted(self, pairs):
        total = sum(p[1] for p in pairs)
        x = self.data.draw(self.st.integers(0, total - 1))
        for item, w in pairs:
            if x < w:
                return item
            x -= w
        return pairs[-1][0]

    def ints(self, n, lo, hi):
        return self.data.draw(self.st.lists(self.st.integers(lo, hi), min_size=n, max_size=n))

    def picks(self, n, pool):
        return [pool[i] for i in self.data.draw(self.st.lists(self.st.integers(0, len(pool) - 1),
                                                              min_size=n, max_size=n))]

    def mask(self, n, p):
        return [self.bool(p) for _ in range(n)]


# ------------------------------------------------------------------------------------------------
# Arrays written as source


def native(dt):
    dt = np.dtype(dt)
    return dt if dt.isnative else dt.newbyteorder("=")


def is_float(dt):
    dt = np.dtype(dt)
    return dt.kind == "f" or dt.name == "bfloat16"


def _lit(v):
    return repr(v.tolist())


def _py_dtype(values):
    """The dtype segflow (like TF) gives a Python list or scalar of these values."""
    v = np.asarray(values)
    if v.dtype.kind == "b":
        return np.dtype(np.bool_)
    if v.dtype.kind in "iu":
        if v.size and (int(v.min()) < I32MIN or int(v.max()) > I32MAX):
            return np.dtype(np.int64)
        return np.dtype(np.int32)
    if v.dtype.kind == "c":
        return np.dtype(np.complex128)
    return np.dtype(np.float32)


class Arr:
    """An input array: `values` (native byte order; the reference reads these), the dtype written
    in the source (may be big-endian) and a layout:

      C contiguous   L Python list/scalar   G NumPy scalar   S strided (every other row)
      N reversed (negative strides)   T transposed view   F Fortran order   R read-only
      U unaligned, read-only   Z broadcast along axis 0 (stride 0, read-only)   K sf.constant
    """

    def __init__(self, values, dtype, layout="C"):
        self.dtype = str(np.dtype(dtype).str if not np.dtype(dtype).isnative else np.dtype(dtype).name)
        self.values = np.asarray(values, dtype=native(dtype))
        self.layout = layout

    @property
    def shape(self):
        return self.values.shape

    def render(self):
        v, dt, lay = self.values, self.dtype, self.layout
        shp = v.shape
        if lay == "L":
            return _lit(v)
        if lay == "G":
            return f"np.{native(dt).name}({_lit(v)})"

        def arr(x):
            s = f"np.array({_lit(x)}, dtype={dt!r})"
            return s + f".reshape({x.shape})" if x.size == 0 and x.ndim != 1 else s
        base = arr(v)
        if lay == "C" or (v.ndim == 0 and lay not in ("R", "K")):
            return base
        if lay == "K":
            return f"sf.constant({base})"
        if lay == "R":
            return f"np.broadcast_to({base}, {shp})"
        if lay == "F":
            return f"np.asfortranarray({base})"
        if lay == "T":
            return f"{arr(v.T)}.T"
        if lay == "N":
            return f"{arr(v[::-1])}[::-1]"
        if lay == "S":
            d = np.empty((2 * shp[0],) + shp[1:], dtype=v.dtype)
            d[::2] = v
            d[1::2] = _garbage(v.dtype)
            return f"{arr(d)}[::2]"
        if lay == "U":
            return f"np.frombuffer(bytes(1) + {base}.tobytes(), dtype={dt!r}, offset=1).reshape({shp})"
        if lay == "Z":
            return f"np.broadcast_to({arr(v[0])}, {shp})"
        raise ValueError(lay)

    def seen(self):
        """(dtype, values) an eager op receives."""
        if self.layout in ("L",):
            return _py_dtype(self.values), self.values
        return native(self.dtype), self.values

    def fed_dtype(self):
        """The dtype of np.asarray(value) when this is fed to a placeholder."""
        if self.layout == "L":
            k = self.values.dtype.kind
            if self.values.size == 0:
                return np.dtype(np.float64)
            return np.dtype({"b": np.bool_, "i": np.int64, "u": np.int64, "f": np.float64,
                             "c": np.complex128}[k])
        return np.dtype(self.dtype)

    def is_view_of_numpy(self):
        return self.layout not in ("L", "G", "K")


def _garbage(dt):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return True
    if dt.kind in "iu":
        return np.iinfo(dt).max
    return np.nan


def pick_layout(R, ndim, size, python=True, broadcast=False, tensor=False):
    opts = [("C", 50), ("R", 7)]
    if python:
        opts.append(("L", 8))
    if ndim >= 1:
        opts += [("S", 8), ("N", 5)]
    if ndim >= 2:
        opts += [("T", 6), ("F", 3)]
    if size:
        opts.append(("U", 4))
    if broadcast and ndim >= 1 and size:
        opts.append(("Z", 3))
    if tensor:
        opts.append(("K", 3))
    return R.weighted(opts)


def mkarr(R, values, dtype, python=True, broadcast=False, tensor=False, layout=None):
    values = np.asarray(values, dtype=native(dtype))
    lay = layout or pick_layout(R, values.ndim, values.size, python, broadcast, tensor)
    if lay == "Z":
        values = np.broadcast_to(values[:1], values.shape).copy()
    if lay == "L" and (values.dtype.name in ("bfloat16", "float16") or
                       (values.ndim > 1 and values.size == 0)):   # a list would lose the shape
        lay = "C"
    return Arr(values, dtype, lay)


def gen_shape(R, rank, lo=0, hi=4):
    return tuple(R.int(lo, hi) for _ in range(rank))


def gen_values(R, dtype, shape, special=0.12, small=False):
    """Data: quarter-integers (exact sums in every float type) with NaN/inf/-0.0 sprinkled in;
    small integers; `small`: values whose products stay exact."""
    dt = native(dtype)
    n = math.prod(shape)
    if dt.kind == "b":
        vals = [bool(x) for x in R.ints(n, 0, 1)]
    elif dt.kind == "u":
        vals = R.ints(n, 0, 2 if small else 9)
    elif dt.kind == "i":
        vals = R.ints(n, -2, 2) if small else R.ints(n, -5, 5)
    else:
        if small:
            vals = R.picks(n, [-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0])
        else:
            vals = [q / 4 for q in R.ints(n, -32, 32)]
        if special and n and R.bool(0.5):
            for i, m in enumerate(R.mask(n, special)):
                if m:
                    vals[i] = R.choice([NAN, INF, -INF, -0.0])
        if dt.kind == "c":
            im = [q / 4 for q in R.ints(n, -8, 8)]
            vals = [complex(a, b) for a, b in zip(vals, im)]
    return np.array(vals, dtype=dt).reshape(shape)


def huge_sizes(dt, row_bytes):
    """HUGE sizes that fit dtype `dt` (when an integer dtype) and make an output of row_bytes per
    unit either empty (row_bytes 0) or at least HUGE_BYTES."""
    return [v for v in HUGE if (dt is None or np.dtype(dt).kind not in "iu" or _fits(v, dt)) and
            (row_bytes == 0 or v * row_bytes >= OVER_MEMORY)]


def more_than_memory(dims, itemsize):
    """`dims` (a list of sizes, some huge) with the largest raised to 2**40 when the request is
    not empty yet smaller than OVER_MEMORY bytes."""
    dims = list(dims)
    n = math.prod(dims)
    if dims and n > 0 and n * itemsize < OVER_MEMORY:
        k = max(range(len(dims)), key=lambda i: dims[i])
        dims[k] = 2**40
    return dims


def _fits(v, dt):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return v in (0, 1)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return info.min <= v <= info.max
    return True


def gen_index(R, shape, lo, hi, bad=0.2, good_extra=(), bad_pool=None, dtypes=IDX_DT, sort=False,
              python=True, dtype=None, floats=True, tensor=False):
    """Index values mostly in [lo, hi); with probability `bad` one or two outside it (neighbours of
    the range and EXTREMES); `good_extra` values also valid (e.g. INT64_MIN for ids that may be
    negative). The dtype (big-endian, float with NaN ...) and layout are random too."""
    n = math.prod(shape)
    if bad_pool is None:
        bad_pool = [hi, hi + 1, hi + 5, lo - 1, lo - 2] + [e for e in EXTREMES if not lo <= e < hi]
    bad_pool = [b for b in bad_pool if not lo <= b < hi]
    if hi > lo:
        vals = R.ints(n, lo, hi - 1)
    else:
        vals = R.picks(n, bad_pool) if bad_pool else [0] * n
    if n and good_extra and R.bool(0.2):
        vals[R.int(0, n - 1)] = R.choice(list(good_extra))
    if n and bad_pool and R.bool(bad):
        for _ in range(R.int(1, 2)):
            vals[R.int(0, n - 1)] = R.choice(bad_pool)
    if sort:
        vals.sort()
    if dtype is None:
        pool = dtypes if floats else [d for d in dtypes if not d[0].startswith("float") and d[0] != "bool"]
        dtype = R.weighted(pool)
    dt = native(dtype)
    if dt.kind in "iub":
        if dt.kind == "b":
            vals = [bool(v % 2) for v in vals]
        else:
            info = np.iinfo(dt)
            vals = [min(max(v, info.min), info.max) for v in vals]
    else:
        vals = [float(v) for v in vals]
        if n and R.bool(0.6):
            for i, m in enumerate(R.mask(n, 0.3)):
                if m:
                    vals[i] = R.choice([NAN, INF, -INF, 0.5, 1e30, -0.0, 2.0**63])
    values = np.array(vals, dtype=dt).reshape(shape)
    return mkarr(R, values, dtype, python=python, tensor=tensor)


def scalar_arr(R, value, intended=("int32", "int64"), python=True):
    """A scalar count (num_segments, depth ...): Python int, NumPy scalar, 0-d array, sf.constant."""
    if isinstance(value, float):
        dt = R.choice(["float32", "float64"])
        lay = R.choice(["L", "L", "C", "G"] if python else ["C", "G"])
        return Arr(np.array(value, dt), dt, lay)
    fits32 = I32MIN <= value <= I32MAX
    dt = R.choice([d for d in intended if _fits(value, d)] or ["int64"]) if R.bool(0.8) else \
        R.choice([d for d in ("int64", ">i8") + (("int32", ">i4", "uint8", "int16") if fits32 else ())
                  if _fits(value, d)])
    lay = R.weighted([("L", 45 if python else 0), ("G", 15), ("C", 25), ("R", 5), ("K", 10)])
    if lay == "G" and not np.dtype(dt).isnative:
        lay = "C"
    return Arr(np.array(value, native(dt)), dt, lay)


# ------------------------------------------------------------------------------------------------
# References: a Ctx collects why a case must (or may) fail


class _MustFail(Exception):
    pass


class Ctx:
    def __init__(self):
        self.maybe = []
        self.features = set()
        self.dangerous = False      # the case asks for a huge size: run it in a subprocess only

    def error(self, why):
        raise _MustFail(why)

    def either(self, why):
        self.maybe.append(why)


class Expect:
    def __init__(self, kind, value=None, tol=None, why="", stateful=False, alt=None):
        self.kind = kind          # "value" | "error" | "either"
        self.value = value        # array or list of arrays (None: any result is accepted)
        self.tol = tol            # None: exact; (rtol, atol): allclose
        self.why = why
        self.stateful = stateful
        self.alt = alt            # another acceptable value (where TF's own answer is ambiguous)


def reference(fn, stateful=False):
    """Runs the reference `fn(ctx) -> (value, tol)`; returns (Expect, ctx)."""
    ctx = Ctx()
    try:
        r = fn(ctx)
    except _MustFail as e:
        return Expect("error", why=str(e), stateful=stateful), ctx
    value, tol = r[0], r[1]
    alt = r[2] if len(r) > 2 else None
    if ctx.maybe:
        return Expect("either", value, tol, why="; ".join(ctx.maybe), stateful=stateful, alt=alt), ctx
    return Expect("value", value, tol, why="valid", stateful=stateful, alt=alt), ctx


def tol_for(dtype):
    dt = np.dtype(dtype)
    name = dt.name
    if name in ("float16",):
        return (4e-3, 2e-3)
    if name == "bfloat16":
        return (3e-2, 2e-2)
    if name in ("float32", "complex64"):
        return (3e-5, 1e-5)
    if name in ("float64", "complex128"):
        return (1e-10, 1e-12)
    return None


def check_index_dtype(ctx, name, dt, allowed=IDX_OK, maybe=IDX_MAYBE, values=None):
    dt = np.dtype(dt)
    if dt.kind in "fcb" or dt.name == "bfloat16":
        if values is not None and np.size(values) == 0 and dt.kind == "f":
            ctx.either(f"{name} is an empty {dt.name} array")   # no index to misread
            return
        ctx.error(f"{name} has dtype {dt.name}")
    if dt.name not in allowed:
        if dt.name in maybe:
            ctx.either(f"{name} has dtype {dt.name}")
        else:
            ctx.error(f"{name} has dtype {dt.name}")


def check_count(ctx, name, dt, vals, allowed=IDX_OK):
    """A scalar count argument: integer dtype, 0-d, non-negative. Returns the int."""
    check_index_dtype(ctx, name, dt, allowed)
    if np.ndim(vals) != 0:
        ctx.error(f"{name} is not a scalar")
    n = int(vals)
    if n < 0:
        ctx.error(f"{name} is negative")
    return n


def size_check(ctx, shape, itemsize, what="output"):
    """The output of `shape` must be refused when it cannot be allocated (HUGE_BYTES or more); an
    empty output with huge dimensions is fine (TF answers it) unless the dimensions overflow int64;
    a big one (BIG_BYTES up to HUGE_BYTES) may be refused (ResourceExhausted) or answered."""
    n = 1
    for d in shape:
        if d:
            n *= d
    if any(d > 2**24 for d in shape):
        ctx.dangerous = True
    if any(d == 0 for d in shape):
        if n * itemsize >= 2**63:
            ctx.either(f"empty {what} whose other dims overflow int64 (NumPy cannot make it)")
        elif any(d > 2**24 for d in shape):
            ctx.features.add("huge-empty-" + what)
        return True
    if n * itemsize >= HUGE_BYTES:
        ctx.dangerous = True
        ctx.error(f"huge {what} ({n} elements)")
    if n * itemsize >= BIG_BYTES:
        ctx.dangerous = True
        ctx.either(f"big {what} ({n} elements)")
    return n <= 2**24


class Shaped:
    """A result known by shape and dtype only (an empty array too large for NumPy to make)."""

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)


def filled(shape, dtype, value=0):
    try:
        return np.full(shape, value, dtype)
    except (ValueError, MemoryError):
        return Shaped(shape, dtype)


# ------------------------------------------------------------------------------------------------
# Plans: which inputs exist, which are fed through placeholders (graph mode), the code


class Plan:
    def __init__(self, R, mode, op):
        self.R = R
        self.mode = mode
        self.op = op
        self.inputs = {}       # name -> Arr or source text
        self.feeds = {}        # name -> (placeholder dtype name, shape source)
        self.dangerous = False
        self.tags = set()

    def add(self, name, x):
        self.inputs[name] = x
        if isinstance(x, Arr):
            if x.layout != "C":
                self.tags.add("layout-" + x.layout)
            if not np.dtype(x.dtype).isnative:
                self.tags.add("big-endian")
        return x

    def feed(self, name, intended=IDX_OK, p=0.75):
        """Graph mode: feed `name` through a placeholder of an intended dtype, or of the fed value's own."""
        a = self.inputs[name]
        if self.mode != "graph" or not isinstance(a, Arr) or a.layout == "K" or not self.R.bool(p):
            return
        own = native(a.fed_dtype())
        ph = self.R.choice(list(intended)) if self.R.bool(0.8) else own.name
        if np.dtype(ph).name == "bfloat16":
            ph = "float32"
        shp = self.R.choice(["None", repr(list(a.shape)), repr([None] * a.values.ndim)])
        self.feeds[name] = (np.dtype(ph).name, shp)

    def seen(self, ctx, name):
        """(dtype, values) the op sees for input `name` (after a feed's conversion)."""
        a = self.inputs[name]
        if name not in self.feeds:
            dt, v = a.seen()
            if a.layout == "L" and a.values.size == 0:
                ctx.either(f"{name} is an empty Python list (float32 in TF)")
                dt = np.dtype(np.int32)
            return dt, v
        return _feed_convert(ctx, name, a.fed_dtype(), a.values, np.dtype(self.feeds[name][0]))

    def names(self):
        return {n: ("p" + n if n in self.feeds else n) for n in self.inputs}

    def ph_lines(self, indent="    "):
        return [f"{indent}p{n} = sf.placeholder(sf.{dt}, {shp})" for n, (dt, shp) in self.feeds.items()]

    def feed_dict(self):
        return "{" + ", ".join(f"p{n}: {n}" for n in self.feeds) + "}"

    def simple(self, call):
        """Code for a stateless call (a template with {name} fields)."""
        if self.mode == "eager":
            return f"result = _np({call.format(**self.names())})\n"
        lines = ["_g = sf.Graph()", "with _g.as_default():"] + self.ph_lines()
        lines.append(f"    out = {call.format(**self.names())}")
        lines.append("    _s = sf.Session(graph=_g)")
        lines.append(f"    result = _np(_s.run(out, {self.feed_dict()}))")
        return "\n".join(lines) + "\n"


def _feed_convert(ctx, name, fed, values, ph):
    """Session.run's conversion of a fed value (floats into integers truncate toward zero, as TF)."""
    fed, ph = np.dtype(fed), np.dtype(ph)
    if native(fed) == ph:
        return ph, values
    kf, kt = fed.kind, ph.kind
    if kt in "iu" and kf in "iufc" and values.size:
        info = np.iinfo(ph)
        re = np.real(values)
        if np.any(np.isnan(re.astype(np.float64))) if kf in "fc" else False:
            ctx.error(f"{name}: NaN fed to an integer placeholder")
        lo, hi = (float(re.min()), float(re.max())) if kf in "fc" else (int(re.min()), int(re.max()))
        if lo < info.min or hi > info.max:
            ctx.error(f"{name}: fed value out of range of {ph.name}")
    # floats truncate toward zero into integers (TF); complex never converts to a real dtype
    lossy = (kf == "c" and kt in "iufb") or (kt == "b" and kf != "b")
    if lossy:
        ctx.error(f"{name}: lossy feed {fed.name} -> {ph.name}")
    if kf == "f" and kt in "iu":
        return ph, np.array([int(x) for x in np.trunc(values).reshape(-1)], dtype=object).reshape(values.shape) \
            .astype(ph)
    return ph, values.astype(ph)


# ------------------------------------------------------------------------------------------------
# Families. Each returns (plan, code, expect, ctx).


def _as_i64(vals):
    return np.asarray(vals).astype(np.int64)


UNSORTED = {"sum": NUM_DT, "prod": NUM_DT, "max": REAL_DT, "min": REAL_DT, "mean": FLOAT_DT + ["complex64"],
            "sqrt_n": FLOAT_DT}


def _extreme_init(kind, dt):
    dt = np.dtype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
    else:
        info = np.finfo(dt)
    return info.min if kind == "max" else info.max


def _segment_reduce(kind, data, ids, rows, dt, empty_extreme=True, pure=False):
    """out[j] = reduce of data[i] over ids[i] == j (negative ids dropped); `rows` output rows.
    data: ids.shape + tail. Sums accumulate wide; max/min propagate NaN."""
    dt = np.dtype(dt)
    tail = data.shape[ids.ndim:]
    flat_ids = ids.reshape(-1)
    flat = data.reshape((flat_ids.size,) + tail)
    keep = flat_ids >= 0
    flat_ids, flat = flat_ids[keep], flat[keep]
    wide = np.complex128 if dt.kind == "c" else (np.float64 if is_float(dt) else np.int64)
    if kind in ("sum", "mean", "sqrt_n"):
        out = np.zeros((rows,) + tail, wide)
        np.add.at(out, flat_ids, flat.astype(wide))
        if kind != "sum":
            count = np.bincount(flat_ids, minlength=rows).reshape((rows,) + (1,) * len(tail)).astype(np.float64)
            with np.errstate(all="ignore"):
                div = count if kind == "mean" else np.sqrt(count)
                div = np.where(count > 0, div, 1)
                if out.dtype.kind == "c":     # by a real count: each part on its own
                    out = np.where(count > 0, (out.real / div) + 1j * (out.imag / div), 0)
                else:
                    out = np.where(count > 0, out / div, 0)
    elif kind == "prod":
        out = np.ones((rows,) + tail, wide)
        np.multiply.at(out, flat_ids, flat.astype(wide))
    else:
        wide = np.float64 if is_float(dt) else np.int64
        # TF starts from the lowest (highest) finite value, so a segment of -inf (+inf) alone gives
        # that value; `pure` starts from -inf (+inf) instead (what a plain max/min gives).
        init = (-np.inf if kind == "max" else np.inf) if pure and is_float(dt) else _extreme_init(kind, dt)
        out = np.full((rows,) + tail, init, wide)
        (np.maximum if kind == "max" else np.minimum).at(out, flat_ids, flat.astype(wide))
        seen_rows = np.zeros(rows, bool)
        seen_rows[flat_ids] = True
        out[~seen_rows] = _extreme_init(kind, dt) if empty_extreme else 0   # sorted ops: empty segments hold 0
    with np.errstate(all="ignore"):
        return out.astype(dt)


def fam_unsorted_segment(R, mode):
    kind = R.choice(list(UNSORTED))
    p = Plan(R, mode, f"unsorted_segment_{kind}")
    ddt = R.choice(UNSORTED[kind])
    k = R.choice([0, 1, 1, 1, 2])
    ids_shape = gen_shape(R, k)
    tail = gen_shape(R, R.int(0, 2), 0, 3)
    huge = not R.safe and R.bool(0.07)
    nseg = R.int(0, 5)
    if huge:
        if R.bool(0.5):
            tail = tail + (0,)
        nseg = R.choice(huge_sizes(None, math.prod(tail) * np.dtype(ddt).itemsize))
        p.dangerous = True
    if R.bool(0.04):
        nseg = -R.int(1, 3)
    data_shape = ids_shape + tail
    if ids_shape and R.bool(0.05):
        data_shape = (ids_shape[0] + 1,) + data_shape[1:]
    data = gen_values(R, ddt, data_shape, small=(kind == "prod"))
    data = p.add("D", mkarr(R, data, ddt, python=False, broadcast=True, tensor=mode == "eager")).values
    hi = max(nseg, 0) if nseg < 2**20 else 7
    p.add("I", gen_index(R, ids_shape, -2, hi, good_extra=(I64MIN, I32MIN, -2**40),
                         tensor=mode == "eager"))
    if R.bool(0.05):
        p.add("N", Arr(np.array([max(nseg, 0)]), "int32", "C"))        # not a scalar
    elif R.bool(0.04):
        p.add("N", scalar_arr(R, float(max(nseg, 0)) + R.choice([0.0, 0.5])))
    else:
        p.add("N", scalar_arr(R, nseg))
    p.feed("I")
    p.feed("N", p=0.4)

    def ref(ctx):
        idt, ids = p.seen(ctx, "I")
        check_index_dtype(ctx, "segment_ids", idt, values=ids)
        ndt, nv = p.seen(ctx, "N")
        n = check_count(ctx, "num_segments", ndt, nv)
        if data_shape[:len(ids_shape)] != ids_shape:
            ctx.error("segment_ids shape is not a prefix of data's")
        ids = _as_i64(ids)
        if ids.size and ids.max() >= n:
            ctx.error("segment id >= num_segments")
        size_check(ctx, (n,) + tail, np.dtype(ddt).itemsize)
        if n > 2**24 and kind in ("mean", "sqrt_n"):
            ctx.either("mean/sqrt_n count rows: O(num_segments) memory in TF too")
        if math.prod(tail) == 0:
            return filled((n,) + tail, ddt), None
        if n * math.prod(tail) > 2**24:
            return None, None
        out = _segment_reduce(kind, data, ids, n, ddt)
        if kind in ("max", "min"):
            return out, None, _segment_reduce(kind, data, ids, n, ddt, pure=True)
        return out, tol_for(ddt)
    exp, ctx = reference(ref)
    return p, p.simple(f"sf.math.unsorted_segment_{kind}({{D}}, {{I}}, {{N}})"), exp, ctx


SORTED = {"sum": NUM_DT, "prod": NUM_DT, "max": REAL_DT, "min": REAL_DT, "mean": FLOAT_DT}


def fam_segment(R, mode):
    kind = R.choice(list(SORTED))
    p = Plan(R, mode, f"segment_{kind}")
    ddt = R.choice(SORTED[kind])
    n = R.int(0, 6)
    tail = gen_shape(R, R.int(0, 2), 0, 3)
    data_shape = (n,) + tail
    if R.bool(0.03):
        data_shape = ()
    ids_shape = (n,)
    if R.bool(0.05):
        ids_shape = (max(n + R.choice([-1, 1]), 0),)
    if R.bool(0.03):
        ids_shape = (n, 1)
    huge = not R.safe and R.bool(0.06)
    hi = 5
    ids = gen_index(R, ids_shape, 0, hi, bad=0.1, sort=R.bool(0.9), tensor=mode == "eager",
                    bad_pool=[-1, -2, I32MIN, I64MIN])
    zero_tail = R.bool(0.5)
    if huge and ids.values.size and ids.values.dtype.kind in "iu":
        big = R.choice(huge_sizes(ids.values.dtype, 0 if zero_tail else
                                  math.prod(tail) * np.dtype(ddt).itemsize) or [127])
        ids.values.reshape(-1)[-1] = big
        if zero_tail:
            tail = tail + (0,)
            data_shape = data_shape + (0,) if data_shape else data_shape
        p.dangerous = True
    data = gen_values(R, ddt, data_shape, small=(kind == "prod"))
    data = p.add("D", mkarr(R, data, ddt, python=False, broadcast=True)).values
    p.add("I", ids)
    p.feed("I")

    def ref(ctx):
        idt, iv = p.seen(ctx, "I")
        check_index_dtype(ctx, "segment_ids", idt, values=iv)
        iv = _as_i64(iv)
        if data.ndim < 1:
            ctx.error("data is a scalar")
        if iv.ndim != 1:
            ctx.error("segment_ids is not a vector")
        if iv.shape[0] != data.shape[0]:
            ctx.error("segment_ids length differs from data's first dim")
        if iv.size and iv.min() < 0:
            ctx.error("negative segment id")
        if iv.size and np.any(np.diff(iv) < 0):
            ctx.error("segment ids are not sorted")
        last = int(iv[-1]) if iv.size else -1
        if last >= I64MAX:
            ctx.error("output rows overflow int64")
        rows = last + 1
        size_check(ctx, (rows,) + data.shape[1:], np.dtype(ddt).itemsize)
        if math.prod(data.shape[1:]) == 0:
            return filled((rows,) + data.shape[1:], ddt), None
        if rows * math.prod(data.shape[1:]) > 2**24:
            return None, None
        out = _segment_reduce(kind, data, iv, rows, ddt, empty_extreme=False)
        if kind in ("max", "min"):
            return out, None, _segment_reduce(kind, data, iv, rows, ddt, empty_extreme=False, pure=True)
        return out, tol_for(ddt)
    exp, ctx = reference(ref)
    return p, p.simple(f"sf.math.segment_{kind}({{D}}, {{I}})"), exp, ctx


def fam_sparse_segment(R, mode):
    kind = R.choice(["sum", "mean", "sqrt_n"])
    with_n = R.bool(0.5)
    style = R.choice(["kw", "fn"]) if with_n else None
    p = Plan(R, mode, f"sparse_segment_{kind}" + ("_with_num_segments" if with_n else ""))
    ddt = R.choice(["float16", "float32", "float64"] + (["int32", "int64"] if kind == "sum" else []))
    rows = R.int(0, 5)
    tail = gen_shape(R, R.int(0, 2), 0, 3)
    data = gen_values(R, ddt, (rows,) + tail)
    k = R.int(0, 6)
    data = p.add("D", mkarr(R, data, ddt, python=False, broadcast=True)).values
    p.add("I", gen_index(R, (k,) if R.bool(0.97) else (k, 1), 0, rows, bad=0.15))
    seg_len = k if R.bool(0.95) else max(0, k + R.choice([-1, 1]))
    p.add("S", gen_index(R, (seg_len,), 0, 4, bad=0.1, sort=R.bool(0.9), bad_pool=[-1, -2, I32MIN, I64MIN]))
    nseg = R.int(0, 6)
    huge = not R.safe and R.bool(0.05)
    if huge:
        nseg = R.choice(huge_sizes(None, math.prod(tail) * np.dtype(ddt).itemsize))
        p.dangerous = True
    if with_n:
        p.add("N", scalar_arr(R, nseg if R.bool(0.96) else -1))
    p.feed("I")
    p.feed("S")
    if with_n:
        p.feed("N", p=0.3)

    def ref(ctx):
        idt, iv = p.seen(ctx, "I")
        sdt, sv = p.seen(ctx, "S")
        check_index_dtype(ctx, "indices", idt, values=iv)
        check_index_dtype(ctx, "segment_ids", sdt, values=sv)
        iv, sv = _as_i64(iv), _as_i64(sv)
        if iv.ndim != 1 or sv.ndim != 1:
            ctx.error("indices / segment_ids not vectors")
        if iv.shape[0] != sv.shape[0]:
            ctx.error("indices and segment_ids lengths differ")
        if iv.size and (iv.min() < 0 or iv.max() >= rows):
            ctx.error("index out of range")
        if sv.size and sv.min() < 0:
            ctx.error("negative segment id")
        if sv.size and np.any(np.diff(sv) < 0):
            ctx.error("segment ids are not sorted")
        if with_n:
            ndt, nv = p.seen(ctx, "N")
            n = check_count(ctx, "num_segments", ndt, nv)
            if sv.size and sv.max() >= n:
                ctx.error("segment id >= num_segments")
        else:
            n = int(sv[-1]) + 1 if sv.size else 0
        size_check(ctx, (n,) + tail, np.dtype(ddt).itemsize)
        if n > 2**24 and kind in ("mean", "sqrt_n"):
            ctx.either("mean/sqrt_n count rows: O(num_segments) memory in TF too")
        if math.prod(tail) == 0:
            return filled((n,) + tail, ddt), None
        if n * math.prod(tail) > 2**24:
            return None, None
        picked = data[iv] if iv.size else np.zeros((0,) + tail, data.dtype)
        return _segment_reduce(kind, picked, sv, n, ddt), tol_for(ddt)
    exp, ctx = reference(ref)
    if not with_n:
        call = f"sf.math.sparse_segment_{kind}({{D}}, {{I}}, {{S}})"
    elif style == "kw":
        call = f"sf.math.sparse_segment_{kind}({{D}}, {{I}}, {{S}}, num_segments={{N}})"
    else:
        call = f"sf.math.sparse_segment_{kind}_with_num_segments({{D}}, {{I}}, {{S}}, {{N}})"
    return p, p.simple(call), exp, ctx


def fam_bincount(R, mode):
    p = Plan(R, mode, "bincount")
    shape = gen_shape(R, R.choice([0, 1, 1, 2]), 0, 5)
    arr = gen_index(R, shape, 0, 6, bad=0.2, bad_pool=[-1, -2, I32MIN, I64MIN] +
                    ([] if R.safe else [2**40, I64MAX, I32MAX, 2**31]), python=True)
    if any(abs(int(v)) >= 2**31 - 1 for v in arr.values.reshape(-1).tolist() if arr.values.dtype.kind in "iu"):
        p.dangerous = True
    p.add("A", arr)
    args = []
    weights = None
    if R.bool(0.35):
        wdt = R.choice(["int32", "int64", "float32", "float64", "float16"])
        wshape = shape if R.bool(0.93) else shape + (1,)
        weights = gen_values(R, wdt, wshape)
        weights = p.add("W", mkarr(R, weights, wdt, python=False)).values
        args.append("weights={W}")
    minlength = maxlength = None
    if R.bool(0.3):
        minlength = R.choice([0, 1, 3, 8, -1] + ([] if R.safe else [2**40, 2**31]))
        if minlength >= 2**31:
            p.dangerous = True
        args.append(f"minlength={minlength}")
    if R.bool(0.3):
        maxlength = R.choice([0, 1, 2, 4, 10, -1])
        args.append(f"maxlength={maxlength}")
    out_dt = None
    if weights is None and R.bool(0.3):
        out_dt = R.choice(["int32", "int64", "float32", "float64"])
        args.append(f"dtype=sf.{out_dt}")
    p.feed("A")
    if weights is not None:
        p.feed("W", intended=(np.dtype(weights.dtype).name,), p=0.3)

    def ref(ctx):
        adt, av = p.seen(ctx, "A")
        check_index_dtype(ctx, "arr", adt, values=av)
        av = _as_i64(av)
        if av.size and av.min() < 0:
            ctx.error("negative value in arr")
        if weights is not None:
            wdt, wv = p.seen(ctx, "W")
            if wv.shape != av.shape:
                ctx.error("weights shape differs from arr's")
        if minlength is not None and minlength < 0:
            ctx.either("negative minlength (TF ignores it; segflow's docstring says it raises)")
        if maxlength is not None and maxlength < 0:
            ctx.error("negative maxlength")
        size = int(av.max()) + 1 if av.size else 0
        if minlength is not None:
            size = max(size, minlength)
        if maxlength is not None:
            size = min(size, maxlength)
        odt = np.dtype(weights.dtype) if weights is not None else np.dtype(out_dt or "int32")
        if size > I32MAX:
            ctx.either("bincount size does not fit int32")
        if not size_check(ctx, (size,), odt.itemsize):
            return None, None
        keep = av.reshape(-1) < size
        wide = np.float64 if odt.kind == "f" else np.int64
        out = np.zeros(size, wide)
        w = np.ones(av.size, wide) if weights is None else weights.reshape(-1).astype(wide)
        np.add.at(out, av.reshape(-1)[keep], w[keep])
        return out.astype(odt), tol_for(odt)
    exp, ctx = reference(ref)
    return p, p.simple("sf.math.bincount({A}" + "".join(", " + a for a in args) + ")"), exp, ctx


def _gather_ref(params, idx, axis, bd):
    if bd == 0:
        return np.take(params, idx, axis=axis)
    bshape = params.shape[:bd]
    b = math.prod(bshape)
    pp = params.reshape((b,) + params.shape[bd:])
    ii = idx.reshape((b,) + idx.shape[bd:])
    outs = [np.take(pp[k], ii[k], axis=axis - bd) for k in range(b)]
    tail_shape = params.shape[bd:axis] + idx.shape[bd:] + params.shape[axis + 1:]
    out = np.stack(outs) if b else np.zeros((0,) + tail_shape, params.dtype)
    return out.reshape(bshape + out.shape[1:])


def fam_gather(R, mode):
    p = Plan(R, mode, "gather")
    pdt = R.choice(ANY_DT)
    rank = R.int(1, 3)
    pshape = gen_shape(R, rank, 0, 4)
    params = gen_values(R, pdt, pshape)
    params = p.add("P", mkarr(R, params, pdt, python=R.bool(0.3) and pdt in ("float32", "int32"), broadcast=True,
                              tensor=mode == "eager")).values
    bd = 0 if R.bool(0.8) else R.choice([1, -1, 2])
    axis_v = R.choice([None, 0, 0, 1, -1, 2, rank, -rank - 1]) if R.bool(0.9) else None
    axis_style = R.weighted([("int", 70), ("np", 10), ("list", 5), ("float", 4), ("const", 6), ("arr0", 5)])
    norm_axis = bd if axis_v is None else axis_v
    ax_ok = -rank <= norm_axis < rank
    a_n = norm_axis % rank if ax_ok else 0
    ishape_rank = R.int(0, 2)
    ishape = gen_shape(R, ishape_rank, 0, 3)
    bdn = bd + ishape_rank if bd < 0 else bd
    if bdn > 0 and R.bool(0.8):      # batch dims that match
        ishape = tuple(pshape[:bdn]) + ishape[bdn:] if len(ishape) >= bdn else ishape
    n_axis = pshape[a_n]
    p.add("I", gen_index(R, ishape, 0, n_axis, tensor=mode == "eager"))
    p.feed("I")
    args = ["{P}", "{I}"]
    if axis_v is not None or axis_style != "int":
        if axis_v is None:
            axis_v = norm_axis
        lit = {"int": repr(axis_v), "np": f"np.int64({axis_v})", "list": f"[{axis_v}]", "float": f"{axis_v}.0",
               "const": f"sf.constant({axis_v})", "arr0": f"np.array({axis_v})"}[axis_style]
        if axis_style == "const" and mode == "graph":
            lit = repr(axis_v)
            axis_style = "int"
        args.append(f"axis={lit}")
    if bd:
        args.append(f"batch_dims={bd}")

    def ref(ctx):
        idt, iv = p.seen(ctx, "I")
        check_index_dtype(ctx, "indices", idt, values=iv)
        if axis_style in ("list", "float"):
            ctx.error(f"axis given as {axis_style}")
        if not ax_ok:
            ctx.error("axis out of range")
        b = bd + iv.ndim if bd < 0 else bd
        if b < 0 or b > iv.ndim:
            ctx.error("batch_dims out of range")
        if b > a_n:
            ctx.error("batch_dims > axis")
        if tuple(pshape[:b]) != tuple(iv.shape[:b]):
            ctx.error("batch dims of params and indices differ")
        iv = _as_i64(iv)
        if iv.size and (iv.min() < 0 or iv.max() >= pshape[a_n]):
            ctx.error("index out of range")
        return _gather_ref(params, iv, a_n, b), None
    exp, ctx = reference(ref)
    return p, p.simple("sf.gather(" + ", ".join(args) + ")"), exp, ctx


def fam_variable_read(R, mode):
    """sparse_read / gather / embedding_lookup on a Variable (and embedding_lookup on tensors and
    partitioned tables). The variable must not change."""
    how = R.weighted([("sparse_read", 25), ("gather_v", 20), ("gather_v_axis", 5), ("embed_v", 20),
                      ("embed_t", 10), ("embed_parts", 15), ("gather_nd_v", 5)])
    p = Plan(R, mode, {"sparse_read": "Variable.sparse_read", "gather_v": "gather(Variable)",
                       "gather_v_axis": "gather(Variable, axis)", "embed_v": "embedding_lookup(Variable)",
                       "embed_t": "embedding_lookup(tensor)", "embed_parts": "embedding_lookup(partitions)",
                       "gather_nd_v": "Variable.gather_nd"}[how])
    vdt = R.choice(["float32", "float64", "float16", "int32", "int64"])
    rows = R.int(0 if how != "embed_parts" else 1, 5)
    tail = gen_shape(R, R.choice([0, 1, 1, 2]), 1, 3)
    table = gen_values(R, vdt, (rows,) + tail)
    ishape = gen_shape(R, R.choice([0, 1, 1, 2]), 0, 3)
    floats = not R.safe
    on_var = how not in ("embed_t", "embed_parts")
    idx = gen_index(R, ishape, 0, rows, floats=floats or not on_var)
    if on_var and (native(idx.seen()[0]).kind in "fb" or native(idx.seen()[0]).name not in IDX_OK):
        p.dangerous = True
    max_norm = None
    strategy = None
    nparts = 1
    axis = 0
    if how == "gather_v_axis":
        axis = R.choice([0, 1, -1]) if len(tail) else 0
        nax = (axis % (1 + len(tail)))
        dim = ((rows,) + tail)[nax]
        idx = gen_index(R, ishape, 0, dim, floats=floats)
        p.dangerous = p.dangerous or native(idx.seen()[0]).kind in "fb"
    if how.startswith("embed") and vdt in ("float32", "float64") and R.bool(0.2):
        max_norm = R.choice([0.5, 1.0, 3.0])
    if how == "embed_parts":
        nparts = R.int(1, min(3, rows))
        strategy = R.choice(["mod", "div"])
    table = p.add("V", mkarr(R, table, vdt, python=False, broadcast=True)).values
    p.add("I", idx)
    p.feed("I")
    nm = p.names()
    if how == "embed_parts":
        if strategy == "mod":
            ids_per = [list(range(q, rows, nparts)) for q in range(nparts)]
        else:
            per, extra = divmod(rows, nparts)
            ids_per, start = [], 0
            for q in range(nparts):
                c = per + (1 if q < extra else 0)
                ids_per.append(list(range(start, start + c)))
                start += c
        parts = [table[ids] if ids else np.zeros((0,) + tail, table.dtype) for ids in ids_per]
        for q, part in enumerate(parts):
            p.add(f"P{q}", mkarr(R, part, vdt, python=False))
        plist = "[" + ", ".join(f"P{q}" for q in range(nparts)) + "]"
    extra = (f", max_norm={max_norm}" if max_norm is not None else "")
    call = {"sparse_read": f"v.sparse_read({nm['I']})",
            "gather_v": f"sf.gather(v, {nm['I']})",
            "gather_v_axis": f"sf.gather(v, {nm['I']}, axis={axis})",
            "embed_v": f"sf.compat.v1.nn.embedding_lookup(v, {nm['I']}{extra})",
            "embed_t": f"sf.compat.v1.nn.embedding_lookup(V, {nm['I']}{extra})",
            "embed_parts": f"sf.compat.v1.nn.embedding_lookup({plist if how == 'embed_parts' else ''}, {nm['I']}, "
                           f"partition_strategy={strategy!r}{extra})",
            "gather_nd_v": f"v.gather_nd({nm['I']})"}[how]
    if how == "gather_nd_v":
        # a [..., 1] index into the rows
        idx = gen_index(R, ishape + (1,), 0, rows, floats=floats)
        p.dangerous = p.dangerous or native(idx.seen()[0]).kind in "fb"
        p.add("I", idx)
        p.feeds.pop("I", None)
        p.feed("I")
        call = f"v.gather_nd({p.names()['I']})"
    if mode == "eager":
        code = f"v = sf.Variable(V)\n__state = lambda: [v.numpy()]\n__before = __state()\nresult = _np([{call}, v])\n"
    else:
        code = "\n".join(["_g = sf.Graph()", "with _g.as_default():", "    v = sf.Variable(V)"] + p.ph_lines() +
                         [f"    out = {call}", "    _init = sf.global_variables_initializer()",
                          "    _reads = [v.read_value()]",
                          "    _s = sf.Session(graph=_g)", "    _s.run(_init)", "    __state = lambda: _s.run(_reads)",
                          "    __before = __state()",
                          f"    result = _np([_s.run(out, {p.feed_dict()})] + __state())"]) + "\n"

    def ref(ctx):
        idt, iv = p.seen(ctx, "I")
        check_index_dtype(ctx, "ids", idt, values=iv)
        iv = _as_i64(iv)
        if how == "gather_nd_v":
            if iv.ndim < 1:
                ctx.error("0-d indices")
            if iv.size and (iv.min() < 0 or iv.max() >= rows):
                ctx.error("index out of range")
            out = table[iv[..., 0]] if iv.size else np.zeros(iv.shape[:-1] + tail, table.dtype)
            return [out, table], None
        full = table
        n = ((rows,) + tail)[axis % (1 + len(tail))]
        if iv.size and (iv.min() < 0 or iv.max() >= n):
            ctx.error("id out of range")
        out = np.take(full, iv, axis=axis % full.ndim)
        tol = None
        if max_norm is not None:
            o = out.astype(np.float64)
            red = tuple(range(iv.ndim, o.ndim))
            with np.errstate(all="ignore"):      # TF's clip_by_norm: t * c / maximum(norm, c), NaN spreads
                norm = np.sqrt(np.sum(o * o, axis=red, keepdims=True)) if red else np.abs(o)
                o = o * max_norm / np.maximum(norm, max_norm)
            out = o.astype(table.dtype)
            tol = tol_for(table.dtype)
        return [out, table], tol
    exp, ctx = reference(ref, stateful=True)
    return p, code, exp, ctx


def fam_gather_nd(R, mode):
    p = Plan(R, mode, "gather_nd")
    pdt = R.choice(ANY_DT)
    rank = R.int(1, 3)
    pshape = gen_shape(R, rank, 0, 3)
    params = gen_values(R, pdt, pshape)
    bd = 1 if R.bool(0.12) else 0
    depth = R.int(0, rank - bd + (1 if R.bool(0.07) else 0))
    lead = gen_shape(R, R.int(0, 2), 0, 3)
    if bd:
        lead = (pshape[0],) + lead if R.bool(0.85) else (R.int(0, 3),) + lead
    ishape = lead + (depth,)
    if R.bool(0.05):
        ishape = ()
    params = p.add("P", mkarr(R, params, pdt, python=False, broadcast=True)).values
    limits = pshape[bd:bd + depth]
    n = math.prod(ishape)
    lo_hi = min(limits) if limits else 1
    idx = gen_index(R, ishape, 0, max(lo_hi, 0), bad=0.2)
    # valid values per column
    if idx.values.dtype.kind in "iu" and ishape and depth:
        v = idx.values.reshape(-1, depth)
        for j in range(depth):
            if j < len(limits) and limits[j] > lo_hi and R.bool(0.5):
                v[:, j] = [R.int(0, limits[j] - 1) for _ in range(v.shape[0])]
    p.add("I", idx)
    p.feed("I")
    call = "sf.gather_nd({P}, {I}" + (f", batch_dims={bd}" if bd else "") + ")"

    def ref(ctx):
        idt, iv = p.seen(ctx, "I")
        check_index_dtype(ctx, "indices", idt, values=iv)
        iv = _as_i64(iv)
        if iv.ndim == 0:
            ctx.error("0-d indices")
        d = iv.shape[-1]
        if d > rank - bd:
            ctx.error("index depth exceeds params rank")
        if bd:
            if iv.ndim < 2:
                ctx.error("batch_dims needs indices of rank >= 2")
            if iv.shape[0] != pshape[0]:
                ctx.error("batch dims differ")
        lim = np.asarray(pshape[bd:bd + d], np.int64)
        if iv.size and d and np.any((iv < 0) | (iv >= lim)):
            ctx.error("index out of range")

        def one(pr, ix):
            flat = ix.reshape((math.prod(ix.shape[:-1]), d))
            if d:
                got = pr[tuple(flat.T)] if flat.shape[0] else np.zeros((0,) + pr.shape[d:], pr.dtype)
            else:
                got = np.broadcast_to(pr, (flat.shape[0],) + pr.shape)
            return np.asarray(got).reshape(ix.shape[:-1] + pr.shape[d:])
        if bd:
            outs = [one(params[k], iv[k]) for k in range(pshape[0])]
            out = np.stack(outs) if outs else np.zeros((0,) + iv.shape[1:-1] + pshape[1 + d:], params.dtype)
        else:
            out = one(params, iv)
        return out, None
    exp, ctx = reference(ref)
    return p, p.simple(call), exp, ctx


SCATTER_KINDS = ["update", "add", "sub", "mul", "div", "min", "max"]


def _trunc_div(a, b):
    """C-style integer division (toward zero), elementwise, wrapping on INT_MIN / -1."""
    a64, b64 = a.astype(object), b.astype(object)
    q = np.empty(a.shape, dtype=object)
    for i in np.ndindex(a.shape):
        x, y = int(a64[i]), int(b64[i])
        r = abs(x) // abs(y)
        q[i] = r if (x >= 0) == (y > 0) else -r
    info = np.iinfo(a.dtype)
    span = 1 << (8 * a.dtype.itemsize)
    return np.array([((int(v) - info.min) % span) + info.min for v in q.reshape(-1)], a.dtype).reshape(a.shape) \
        if a.size else a.copy()


def _apply_rows(table, rows, upd, how):
    """Sequential table[rows[i]] (how)= upd[i] in the table's dtype (TF's CPU semantics)."""
    t = table.copy()
    with np.errstate(all="ignore"):
        for i, r in enumerate(rows):
            u = upd[i]
            cur = t[r]
            if how == "update":
                t[r] = u
            elif how == "add":
                t[r] = cur + u
            elif how == "sub":
                t[r] = cur - u
            elif how == "mul":
                t[r] = cur * u
            elif how == "div":
                if t.dtype.kind in "iu":
                    t[r] = _trunc_div(np.asarray(cur), np.asarray(u))
                else:
                    t[r] = cur / u
            elif how == "min":
                t[r] = np.where(u < cur, u, cur)          # std::min(cur, u): NaN updates ignored
            elif how == "max":
                t[r] = np.where(u > cur, u, cur)
    return t


def fam_scatter_var(R, mode):
    how = R.choice(SCATTER_KINDS)
    api = R.weighted([("sf", 40), ("method", 35), ("state_ops", 10), ("batch", 5 if how == "update" else 0)])
    p = Plan(R, mode, f"scatter_{how}(Variable)")
    vdt = R.choice(["float32", "float64", "float16", "int32", "int64"])
    rows = R.int(0, 5)
    tail = gen_shape(R, R.choice([0, 1, 1, 2]), 0, 3)
    vshape = (rows,) + tail
    if R.bool(0.02):
        vshape = ()
    small = how in ("mul", "div")
    table = gen_values(R, vdt, vshape, small=small)
    ishape = gen_shape(R, R.choice([0, 1, 1, 1, 2]), 0, 4)
    idx = gen_index(R, ishape, 0, rows, floats=not R.safe)
    if native(idx.seen()[0]).kind in "fb" or native(idx.seen()[0]).name not in IDX_OK:
        p.dangerous = True
    ushape = ishape + tail
    if R.bool(0.06):
        ushape = ()
    elif R.bool(0.04):
        ushape = ishape + tail + (1,)
    upd = gen_values(R, vdt, ushape, small=small)
    if how == "div" and np.dtype(vdt).kind in "iu":
        # integer division: truncation toward zero; x / 0 and INT_MIN / -1 trap in C (SIGFPE)
        if R.bool(0.3):
            table = (table * 7).astype(vdt)
        if R.safe or R.bool(0.8):
            upd = np.where(upd == 0, 1, upd).astype(vdt)
        if not R.safe and R.bool(0.2) and table.size:
            table.reshape(-1)[0] = np.iinfo(vdt).min
            upd = np.full_like(upd, -1)
        if np.any(upd == 0) or np.any(table == np.iinfo(vdt).min):
            p.dangerous = True
    table = p.add("V", mkarr(R, table, vdt, python=False, broadcast=True)).values
    p.add("I", idx)
    upd = p.add("U", mkarr(R, upd, vdt, python=False, tensor=mode == "eager")).values
    p.feed("I")
    nm = p.names()
    if api == "sf":
        call = f"sf.scatter_{how}(v, {nm['I']}, {nm['U']})"
    elif api == "state_ops":
        call = f"sf.state_ops.scatter_{how}(v, {nm['I']}, {nm['U']})"
    elif api == "batch":
        call = f"v.batch_scatter_update(sf.IndexedSlices({nm['U']}, {nm['I']}))"
    else:
        call = f"v.scatter_{how}(sf.IndexedSlices({nm['U']}, {nm['I']}))"
    code = _stateful_code(p, call)

    def ref(ctx):
        idt, iv = p.seen(ctx, "I")
        check_index_dtype(ctx, "indices", idt, values=iv)
        iv = _as_i64(iv)
        if table.ndim == 0:
            ctx.error("scalar variable")
        if iv.size and (iv.min() < 0 or iv.max() >= rows):
            ctx.error("index out of range")
        want = iv.shape + tail
        u = upd
        if u.shape != want:
            if u.ndim != 0:
                ctx.error("updates shape mismatch")
            u = np.broadcast_to(u, want)
        u = u.reshape((iv.size,) + tail)
        if how == "div" and np.dtype(vdt).kind in "iu":
            if np.any(u == 0):
                ctx.error("integer division by zero")
            info = np.iinfo(vdt)
            if np.any(u == -1) and np.any(table == info.min):
                ctx.either("INT_MIN / -1 overflows")
        out = _apply_rows(table, iv.reshape(-1), u, how)
        tol = tol_for(vdt) if how in ("add", "sub", "mul", "div") else None
        return [out], tol
    exp, ctx = reference(ref, stateful=True)
    return p, code, exp, ctx


def _stateful_code(p, call):
    if p.mode == "eager":
        return (f"v = sf.Variable(V)\n__state = lambda: [v.numpy()]\n__before = __state()\n"
                f"_r = {call}\nresult = _np([v])\n")
    lines = ["_g = sf.Graph()", "with _g.as_default():", "    v = sf.Variable(V)"] + p.ph_lines() + [
        f"    upd = {call}", "    _init = sf.global_variables_initializer()",
        "    _reads = [v.read_value()]",
        "    _s = sf.Session(graph=_g)", "    _s.run(_init)", "    __state = lambda: _s.run(_reads)",
        "    __before = __state()",
        f"    _s.run(upd, {p.feed_dict()})", "    result = _np(__state())"]
    return "\n".join(lines) + "\n"


def _nd_index(R, shape_, depth, lead, bad=0.2, floats=True):
    limits = shape_[:depth]
    idx = gen_index(R, lead + (depth,), 0, max(min(limits), 0) if limits else 1, bad=bad, floats=floats)
    if idx.values.dtype.kind in "iu" and depth and idx.values.size:
        v = idx.values.reshape(-1, depth)
        for j in range(depth):
            if limits[j] > 0 and R.bool(0.6):
                top = min(limits[j] - 1, np.iinfo(v.dtype).max)
                for r in range(v.shape[0]):
                    if R.bool(0.8):
                        v[r, j] = R.int(0, top)
    return idx


def _nd_flat(ctx, shape_, iv, name="indices"):
    if iv.ndim == 0:
        ctx.error(f"0-d {name}")
    d = iv.shape[-1]
    if d > len(shape_):
        ctx.error("index depth exceeds rank")
    flat = iv.reshape((math.prod(iv.shape[:-1]), d))
    lim = np.asarray(shape_[:d], np.int64)
    if flat.size and np.any((flat < 0) | (flat >= lim)):
        ctx.error("index out of range")
    if d == 0:
        return np.zeros(flat.shape[0], np.int64), d
    if not flat.shape[0]:
        return np.zeros(0, np.int64), d
    if math.prod(shape_[:d]) >= 2**62:        # row-major offsets with Python ints
        strides = [math.prod(shape_[j + 1:d]) for j in range(d)]
        return np.array([sum(int(x) * st for x, st in zip(r, strides)) for r in flat], dtype=object), d
    return np.ravel_multi_index(tuple(flat.T), tuple(shape_[:d])), d


def fam_scatter_nd_var(R, mode):
    how = R.choice(["update", "add", "sub"])
    api = R.choice(["sf", "method"])
    p = Plan(R, mode, f"scatter_nd_{how}(Variable)")
    vdt = R.choice(["float32", "float64", "float16", "int32", "int64"])
    vshape = gen_shape(R, R.int(1, 3), 0, 3)
    table = gen_values(R, vdt, vshape)
    depth = R.int(1, len(vshape)) if R.bool(0.95) else len(vshape) + 1
    lead = gen_shape(R, R.int(0, 2), 0, 3)
    idx = _nd_index(R, vshape, min(depth, len(vshape)), lead, floats=not R.safe) if depth <= len(vshape) else \
        gen_index(R, lead + (depth,), 0, 1, floats=False)
    if R.bool(0.03):
        idx = gen_index(R, (), 0, max(vshape[0], 1), floats=False)
    if native(idx.seen()[0]).kind in "fb" or native(idx.seen()[0]).name not in IDX_OK:
        p.dangerous = True
    ushape = idx.shape[:-1] + vshape[idx.shape[-1]:] if idx.values.ndim else ()
    if R.bool(0.04):
        ushape = ushape + (1,)
    upd = gen_values(R, vdt, ushape)
    p.add("V", mkarr(R, table, vdt, python=False))
    p.add("I", idx)
    p.add("U", mkarr(R, upd, vdt, python=False))
    p.feed("I")
    nm = p.names()
    call = f"sf.scatter_nd_{how}(v, {nm['I']}, {nm['U']})" if api == "sf" else \
        f"v.scatter_nd_{how}({nm['I']}, {nm['U']})"
    code = _stateful_code(p, call)

    def ref(ctx):
        idt, iv = p.seen(ctx, "I")
        check_index_dtype(ctx, "indices", idt, values=iv)
        iv = _as_i64(iv)
        rows, d = _nd_flat(ctx, vshape, iv)
        tailv = vshape[d:]
        want = iv.shape[:-1] + tailv
        if upd.shape != want:
            ctx.error("updates shape mismatch")
        lead_n = math.prod(vshape[:d])
        t = table.reshape((lead_n,) + tailv)
        out = _apply_rows(t, rows, upd.reshape((rows.size,) + tailv), how).reshape(vshape)
        return [out], tol_for(vdt) if how != "update" else None
    exp, ctx = reference(ref, stateful=True)
    return p, code, exp, ctx


def fam_tensor_scatter(R, mode):
    how = R.choice(["update", "add", "sub", "scatter_nd"])
    p = Plan(R, mode, "scatter_nd" if how == "scatter_nd" else f"tensor_scatter_nd_{how}")
    dt = R.choice(["float32", "float64", "float16", "int32", "int64"])
    tshape = gen_shape(R, R.int(1, 3), 0, 3)
    huge = how == "scatter_nd" and not R.safe and R.bool(0.08)
    if huge:
        tshape = (R.choice(HUGE),) + tshape[1:]
        if R.bool(0.6):
            tshape = tshape + (0,)
        p.dangerous = True
    if how == "scatter_nd" and R.bool(0.04):
        tshape = tshape[:-1] + (-1,)
    depth = R.int(1, len(tshape)) if R.bool(0.95) else len(tshape) + 1
    lead = gen_shape(R, R.int(0, 2), 0, 3)
    idx = _nd_index(R, tuple(max(d, 0) for d in tshape), min(depth, len(tshape)), lead) \
        if depth <= len(tshape) else gen_index(R, lead + (depth,), 0, 1)
    if R.bool(0.03):
        idx = gen_index(R, (), 0, 1)
    ushape = idx.shape[:-1] + tuple(max(d, 0) for d in tshape[idx.shape[-1]:]) if idx.values.ndim else ()
    if R.bool(0.04):
        ushape = ushape + (1,)
    if math.prod(ushape) > 4096:
        ushape = ushape[:-1] + (0,)
    upd = gen_values(R, dt, ushape)
    p.add("I", idx)
    p.add("U", mkarr(R, upd, dt, python=False))
    if how == "scatter_nd":
        s_style = R.choice(["list", "list", "arr"])
        sh_dt = native(idx.seen()[0]) if native(idx.seen()[0]).name in IDX_OK else np.dtype("int32")
        if s_style == "arr" and R.bool(0.2):
            sh_dt = np.dtype("int64") if sh_dt.name == "int32" else np.dtype("int32")
        p.add("S", Arr(np.array(tshape, np.int64), "int64", "L") if s_style == "list" else
              Arr(np.array(tshape, np.int64).astype(sh_dt) if all(_fits(d, sh_dt) for d in tshape)
                  else np.array(tshape, np.int64), sh_dt if all(_fits(d, sh_dt) for d in tshape) else "int64", "C"))
        call = "sf.scatter_nd({I}, {U}, {S})"
    else:
        tensor = gen_values(R, dt, tshape)
        p.add("T", mkarr(R, tensor, dt, python=False, broadcast=True))
        call = f"sf.tensor_scatter_nd_{how}({{T}}, {{I}}, {{U}})"
    p.feed("I")

    def ref(ctx):
        idt, iv = p.seen(ctx, "I")
        check_index_dtype(ctx, "indices", idt, values=iv)
        iv = _as_i64(iv)
        if how == "scatter_nd":
            sdt, sv = p.seen(ctx, "S")
            check_index_dtype(ctx, "shape", sdt, values=sv)
            if sdt != idt:
                ctx.either("shape dtype differs from indices dtype")
            if any(d < 0 for d in tshape):
                ctx.error("negative dim in shape")
        rows, d = _nd_flat(ctx, tshape, iv)
        tailv = tuple(tshape[d:])
        if upd.shape != iv.shape[:-1] + tailv:
            ctx.error("updates shape mismatch")
        if how == "scatter_nd":
            if not size_check(ctx, tshape, np.dtype(dt).itemsize):
                return None, None
            if math.prod(tshape) == 0:
                return filled(tshape, dt), None
            wide = np.float64 if is_float(dt) else np.int64
            out = np.zeros((math.prod(tshape[:d]),) + tailv, wide)
            if rows.size:
                np.add.at(out, rows, upd.reshape((rows.size,) + tailv).astype(wide))
            return out.reshape(tshape).astype(dt), tol_for(dt)
        t = p.inputs["T"].values
        out = _apply_rows(t.reshape((math.prod(tshape[:d]),) + tailv), rows,
                          upd.reshape((rows.size,) + tailv), how).reshape(tshape)
        return out, tol_for(dt) if how != "update" else None
    exp, ctx = reference(ref)
    return p, p.simple(call), exp, ctx


def _unique_ref(x):
    y, idx, counts, pos = [], [], [], {}
    for v in x.tolist():
        key = ("nan", len(y)) if isinstance(v, float) and v != v else v
        if key not in pos:
            pos[key] = len(y)
            y.append(v)
            counts.append(0)
        idx.append(pos[key])
        counts[pos[key]] += 1
    return y, idx, counts


def fam_unique(R, mode):
    counts = R.bool(0.4)
    p = Plan(R, mode, "unique_with_counts" if counts else "unique")
    dt = R.choice(["int32", "int64", "float32", "float64", "float16", ">i4", ">f4", ">f8", "uint8", "int16"])
    rank = 1 if R.bool(0.93) else R.choice([0, 2])
    n = R.int(0, 8)
    shape = (n,) if rank == 1 else ((n, 2) if rank == 2 else ())
    x = gen_values(R, dt, shape, special=0.25)
    if native(dt).kind in "iu" and x.size and R.bool(0.2):
        x.reshape(-1)[0] = np.iinfo(native(dt)).max
    with np.errstate(all="ignore"):          # few distinct values: duplicates
        if native(dt).kind in "iu":
            x = (x % 3).astype(native(dt))
        else:
            x = np.where(np.isfinite(x), np.round(x) % 3, x).astype(native(dt))
    x = p.add("X", mkarr(R, x, dt, python=dt in ("int32", "float32"), broadcast=True)).values
    out_idx = R.weighted([("int32", 45), ("int64", 45), ("float32", 4), ("int16", 3), ("uint8", 3)])
    p.feed("X", intended=(native(dt).name,), p=0.6)
    call = ("sf.unique_with_counts({X}" if counts else "sf.unique({X}") + \
        ("" if out_idx == "int32" and R.bool(0.5) else f", out_idx=sf.{out_idx}") + ")"

    def ref(ctx):
        xdt, xv = p.seen(ctx, "X")
        if p.inputs["X"].layout == "L" and not xv.size and "X" not in p.feeds:
            xdt = np.dtype(np.float32)          # [] is a float32 tensor
        if xv.ndim != 1:
            ctx.error("x is not 1-D")
        if out_idx not in IDX_OK:
            ctx.error("out_idx must be int32 or int64")
        y, idx, cnt = _unique_ref(np.asarray(xv, native(xdt)))
        out = [np.array(y, native(xdt)), np.array(idx, out_idx)]
        if counts:
            out.append(np.array(cnt, out_idx))
        return out, None
    exp, ctx = reference(ref)
    return p, p.simple(call), exp, ctx


def fam_dynamic_stitch(R, mode):
    p = Plan(R, mode, "dynamic_stitch" if R.bool(0.8) else "parallel_dynamic_stitch")
    k = R.int(1, 3)
    dt = R.choice(ANY_DT)
    tail = gen_shape(R, R.int(0, 2), 0, 3)
    huge = not R.safe and R.bool(0.05)
    if huge:      # rows up to 2**31: an empty inner shape, or one too big for memory
        tail = tail + (0,) if R.bool(0.6) else tail + (64,)
    idxs, datas = [], []
    for i in range(k):
        ishape = gen_shape(R, R.choice([0, 1, 1, 2]), 0, 3)
        a = gen_index(R, ishape, 0, 6, bad=0.1, bad_pool=[-1, -2, I32MIN, I64MIN] + ([I32MAX] if huge else []),
                      dtypes=[("int32", 70), (">i4", 8), ("int64", 10), ("float32", 3), ("float64", 3),
                              ("int16", 2)], floats=not R.safe)
        if huge:
            p.dangerous = True
        d_shape = a.shape + tail
        if R.bool(0.03):
            d_shape = d_shape + (1,)
        d = gen_values(R, dt, d_shape)
        idxs.append(a)
        datas.append(d)
        p.add(f"I{i}", a)
        p.add(f"D{i}", mkarr(R, d, dt, python=False))
        p.feed(f"I{i}", intended=("int32",), p=0.5)
    call = ("sf.dynamic_stitch([" if p.op == "dynamic_stitch" else "sf.parallel_dynamic_stitch([") + \
        ", ".join(f"{{I{i}}}" for i in range(k)) + "], [" + ", ".join(f"{{D{i}}}" for i in range(k)) + "])"

    def ref(ctx):
        seen = [p.seen(ctx, f"I{i}") for i in range(k)]
        for i, (idt, _) in enumerate(seen):
            check_index_dtype(ctx, f"indices[{i}]", idt, allowed=("int32",), maybe=("int64",) + IDX_MAYBE,
                              values=seen[i][1])
        vals = [_as_i64(v) for _, v in seen]
        for i in range(k):
            if datas[i].shape[:vals[i].ndim] != vals[i].shape:
                ctx.error("data shape does not start with indices shape")
            if datas[i].shape[vals[i].ndim:] != datas[0].shape[vals[0].ndim:]:
                ctx.error("inner shapes differ")
            if vals[i].size and vals[i].min() < 0:
                ctx.error("negative index")
        inner = datas[0].shape[vals[0].ndim:]
        flat = np.concatenate([v.reshape(-1) for v in vals])
        rows = int(flat.max()) + 1 if flat.size else 0
        if not size_check(ctx, (rows,) + inner, np.dtype(dt).itemsize):
            return None, None
        if math.prod(inner) == 0:
            return filled((rows,) + inner, native(dt)), None
        out = np.zeros((rows,) + inner, native(dt))
        for v, d in zip(vals, datas):
            dd = d.reshape((v.size,) + inner)
            for j, r in enumerate(v.reshape(-1)):
                out[r] = dd[j]
        return out, None
    exp, ctx = reference(ref)
    return p, p.simple(call), exp, ctx


def fam_dynamic_partition(R, mode):
    p = Plan(R, mode, "dynamic_partition")
    dt = R.choice(ANY_DT)
    pshape = gen_shape(R, R.choice([0, 1, 1, 2]), 0, 4)
    tail = gen_shape(R, R.int(0, 2), 0, 3)
    dshape = pshape + tail
    if pshape and R.bool(0.04):
        dshape = (pshape[0] + 1,) + dshape[1:]
    data = gen_values(R, dt, dshape)
    nump = R.int(1, 4)
    np_style = "int"
    r = R.int(0, 99)
    if r < 4:
        nump = R.choice([0, -1])
    elif r < 7:
        np_style = "float"
    elif r < 10:
        np_style = "np"
    elif r < 12 and not R.safe:
        nump = R.choice([2**31, 2**40, 2**62])
        p.dangerous = True
    parts = gen_index(R, pshape, 0, max(min(nump, 8), 0), bad=0.15,
                      dtypes=[("int32", 70), (">i4", 8), ("int64", 10), ("float32", 3), ("float64", 3), ("uint8", 2)])
    data = p.add("D", mkarr(R, data, dt, python=False, broadcast=True)).values
    p.add("Q", parts)
    p.feed("Q", intended=("int32",))
    if mode == "graph" and R.bool(0.3):
        p.feeds["D"] = (native(dt).name, "None")
    lit = {"int": repr(nump), "float": f"{nump}.5", "np": f"np.int64({nump})"}[np_style]
    call = f"sf.dynamic_partition({{D}}, {{Q}}, {lit})"

    def ref(ctx):
        qdt, qv = p.seen(ctx, "Q")
        check_index_dtype(ctx, "partitions", qdt, allowed=("int32",), maybe=("int64",) + IDX_MAYBE, values=qv)
        if np_style == "float":
            ctx.error("num_partitions is a float")
        if nump < 1:
            ctx.error("num_partitions < 1")
        if nump >= 2**31:
            ctx.error("huge num_partitions")
        qv = _as_i64(qv)
        if dshape[:len(pshape)] != pshape:
            ctx.error("partitions shape is not a prefix of data's")
        if qv.size and (qv.min() < 0 or qv.max() >= nump):
            ctx.error("partition out of range")
        flat = data.reshape((qv.size,) + tail)
        q = qv.reshape(-1)
        return [flat[q == i] for i in range(nump)], None
    exp, ctx = reference(ref)
    return p, p.simple(call), exp, ctx


def fam_one_hot(R, mode):
    p = Plan(R, mode, "one_hot")
    ishape = gen_shape(R, R.choice([0, 1, 1, 2]), 0, 4)
    depth = R.int(0, 5)
    d_style = "int"
    r = R.int(0, 99)
    if r < 4:
        depth = -R.int(1, 2)
    elif r < 8:
        d_style = "float"
    elif r < 15 and not R.safe:
        depth = R.choice(HUGE)
        p.dangerous = True
        if R.bool(0.5):
            ishape = ishape[:-1] + (0,) if ishape else (0,)
    idx = gen_index(R, ishape, -2, depth + 2 if depth < 2**20 else 6, bad=0.1,
                    dtypes=IDX_DT + [("uint8", 6), ("int8", 2)])
    p.add("I", idx)
    if d_style == "float":
        p.add("N", scalar_arr(R, float(depth) + R.choice([0.0, 0.5])))
    else:
        p.add("N", scalar_arr(R, depth))
    axis = None if R.bool(0.6) else R.choice([-1, 0, len(ishape), len(ishape) + 1, -2])
    odt = R.choice([None, None, "float32", "int32", "float64", "int64"])
    vals = None
    if R.bool(0.3):
        vals = (5, -1) if (odt or "float32").startswith("int") or (odt is None and R.bool(0.5)) else (2.5, -0.5)
    args = ["{I}", "{N}"]
    if vals:
        args += [f"on_value={vals[0]!r}", f"off_value={vals[1]!r}"]
    if axis is not None:
        args.append(f"axis={axis}")
    if odt:
        args.append(f"dtype=sf.{odt}")
    p.feed("I", intended=("int32", "int64", "uint8"))
    p.feed("N", intended=("int32", "int64"), p=0.4)

    def ref(ctx):
        idt, iv = p.seen(ctx, "I")
        check_index_dtype(ctx, "indices", idt, allowed=("int32", "int64", "uint8"), maybe=("int8", "int16", "uint32"),
                          values=iv)
        ndt, nv = p.seen(ctx, "N")
        n = check_count(ctx, "depth", ndt, nv)
        if n > I32MAX:
            ctx.either("depth does not fit int32")
        r_ = iv.ndim
        ax = -1 if axis is None else axis
        if not -1 <= ax <= r_:
            ctx.error("axis out of range")
        out_dt = odt or ("int32" if vals and isinstance(vals[0], int) else "float32")
        if vals and np.dtype(out_dt).kind in "iu" and isinstance(vals[0], float):
            ctx.either("float on_value for an integer dtype")
        oshape = list(iv.shape)
        oshape.insert(r_ if ax == -1 else ax, n)
        if not size_check(ctx, oshape, np.dtype(out_dt).itemsize):
            return None, None
        if math.prod(oshape) == 0:
            return filled(oshape, out_dt), None
        on, off = vals if vals else (1, 0)
        iv = _as_i64(iv)
        out = np.where(iv[..., None] == np.arange(n), on, off).astype(out_dt)
        if ax != -1:
            out = np.moveaxis(out, -1, ax)
        return out, None
    exp, ctx = reference(ref)
    return p, p.simple("sf.one_hot(" + ", ".join(args) + ")"), exp, ctx


def fam_tile(R, mode):
    p = Plan(R, mode, "tile")
    dt = R.choice(ANY_DT)
    rank = R.int(0, 3)
    shape = gen_shape(R, rank, 0, 3)
    x = gen_values(R, dt, shape)
    mult = R.ints(rank, 0, 3)
    m_style = "ok"
    r = R.int(0, 99)
    if r < 4 and rank:
        mult[R.int(0, rank - 1)] = -1
    elif r < 8:
        m_style = "float"
    elif r < 11:
        mult = mult + [1]
    elif r < 22 and rank and not R.safe:
        p.dangerous = True
        mult[R.int(0, rank - 1)] = R.choice(HUGE[:5] + [2**16])
        if R.bool(0.3):
            mult = [2**16] * rank          # each fits int32, the product does not
        out = [d * k for d, k in zip(shape, mult)]
        if 0 < math.prod(out) and math.prod(out) * np.dtype(native(dt)).itemsize < OVER_MEMORY:
            mult[max(range(rank), key=lambda i: mult[i])] = 2**40
    x = p.add("X", mkarr(R, x, dt, python=False, broadcast=True)).values
    if m_style == "float":
        m = Arr(np.array([float(v) + R.choice([0.0, 0.5]) for v in mult], np.float64),
                R.choice(["float32", "float64"]), R.choice(["L", "C"]))
    else:
        mdt = R.weighted([("int32", 50), ("int64", 30), (">i4", 5), (">i8", 5), ("int16", 3)])
        mdt = mdt if all(_fits(v, mdt) for v in mult) else "int64"
        m = mkarr(R, np.array(mult, native(mdt)).reshape(len(mult)), mdt)
    p.add("M", m)
    p.feed("M")

    def ref(ctx):
        mdt_, mv = p.seen(ctx, "M")
        check_index_dtype(ctx, "multiples", mdt_, values=mv)
        mv = _as_i64(mv)
        if mv.ndim != 1 or mv.size != rank:
            ctx.error("multiples length differs from rank")
        if np.any(mv < 0):
            ctx.error("negative multiple")
        oshape = [d * int(k) for d, k in zip(shape, mv.tolist())]
        if any(d > I64MAX for d in oshape):
            ctx.error("output dim overflows int64")
        if not size_check(ctx, oshape, np.dtype(native(dt)).itemsize):
            return None, None
        if math.prod(oshape) == 0:
            return filled(oshape, native(dt)), None
        return np.tile(x, tuple(mv.tolist())) if rank else x.copy(), None
    exp, ctx = reference(ref)
    return p, p.simple("sf.tile({X}, {M})"), exp, ctx


def fam_reshape(R, mode):
    p = Plan(R, mode, "reshape")
    dt = R.choice(ANY_DT)
    shape = gen_shape(R, R.int(0, 3), 0, 4)
    x = gen_values(R, dt, shape)
    n = x.size
    # a target shape: a factorisation of n, maybe with -1, maybe wrong
    target = []
    rem = n
    for _ in range(R.int(0, 3)):
        if rem == 0:
            target.append(R.int(0, 3))
            continue
        divs = [d for d in range(1, rem + 1) if rem % d == 0]
        d = R.choice(divs)
        target.append(d)
        rem //= d
    if rem != 1 or not target:
        target.append(rem)
    if R.bool(0.35):
        target[R.int(0, len(target) - 1)] = -1
    s_style = "ok"
    r = R.int(0, 99)
    if r < 5:
        target[R.int(0, len(target) - 1)] += 1
    elif r < 8:
        target = target + [-1, -1]
    elif r < 11:
        target[R.int(0, len(target) - 1)] = -2
    elif r < 16:
        s_style = "float"
    elif r < 26 and not R.safe and n == 0:
        p.dangerous = True
        target = [R.choice(HUGE)] + [0] + ([R.choice(HUGE)] if R.bool(0.3) else [])
    x = p.add("X", mkarr(R, x, dt, python=False, broadcast=True)).values
    if s_style == "float":
        s = Arr(np.array([float(v) + R.choice([0.0, 0.0, 0.5]) for v in target], np.float64),
                R.choice(["float32", "float64"]), R.choice(["L", "C"]))
    else:
        sdt = R.weighted([("int32", 50), ("int64", 30), (">i4", 5), (">i8", 5)])
        sdt = sdt if all(_fits(v, sdt) for v in target) else "int64"
        s = mkarr(R, np.array(target, native(sdt)).reshape(len(target)), sdt)
    p.add("S", s)
    p.feed("S")

    def ref(ctx):
        sdt_, sv = p.seen(ctx, "S")
        check_index_dtype(ctx, "shape", sdt_, values=sv)
        sv = _as_i64(sv)
        if sv.ndim != 1:
            ctx.error("shape is not a vector")
        t = sv.tolist()
        if t.count(-1) > 1:
            ctx.error("more than one -1")
        if any(d < -1 for d in t):
            ctx.error("negative dim")
        known = 1
        for d in t:
            if d != -1:
                known *= d
        if -1 in t:
            if known == 0:
                if n != 0:
                    ctx.error("cannot infer -1")
                # TF: the -1 is what the input's non-zero dims leave after the target's non-zero sizes
                have = int(np.prod([d for d in x.shape if d], dtype=np.int64))
                want = int(np.prod([d for d in t if d not in (0, -1)], dtype=np.int64))
                t = [have // want if d == -1 else d for d in t]
            elif n % known:
                ctx.error("size does not divide")
            else:
                t = [n // known if d == -1 else d for d in t]
        elif known != n:
            ctx.error("element count differs")
        size_check(ctx, t, np.dtype(native(dt)).itemsize, "shape")
        if n == 0:
            return filled(t, native(dt)), None
        return x.reshape(t), None
    exp, ctx = reference(ref)
    return p, p.simple("sf.reshape({X}, {S})"), exp, ctx


def fam_sizes(R, mode):
    """zeros / ones / fill with huge, negative, float or empty sizes."""
    fn = R.choice(["zeros", "ones", "fill"])
    p = Plan(R, mode, fn)
    rank = R.int(0, 3)
    dims = gen_shape(R, rank, 0, 3)
    d_style = "ok"
    r = R.int(0, 99)
    if r < 6 and rank:
        dims = dims[:-1] + (-1,)
    elif r < 12:
        d_style = "float"
    elif r < 40 and not R.safe:
        p.dangerous = True
        dims = tuple(R.choice(HUGE) if R.bool(0.6) else dd for dd in dims) or (R.choice(HUGE),)
        if R.bool(0.5):
            dims = dims + (0,)
    odt = R.choice(["float32", "int32", "float64", "int64", "bool"])
    if p.dangerous:
        dims = tuple(more_than_memory(dims, np.dtype(odt).itemsize))
    if d_style == "float":
        s = Arr(np.array([float(v) + R.choice([0.0, 0.5]) for v in dims], np.float64).reshape(len(dims)),
                R.choice(["float32", "float64"]), R.choice(["L", "C"]))
    else:
        sdt = R.weighted([("int32", 50), ("int64", 30), (">i4", 5), (">i8", 5)])
        sdt = sdt if all(_fits(v, sdt) for v in dims) else "int64"
        s = mkarr(R, np.array(dims, native(sdt)).reshape(len(dims)), sdt)
    p.add("S", s)
    p.feed("S")
    if fn == "fill":
        val = {"float32": "2.5", "float64": "np.float64(2.5)", "int32": "3", "int64": "np.int64(3)",
               "bool": "True"}[odt]
        call = f"sf.fill({{S}}, {val})"
    else:
        call = f"sf.{fn}({{S}}, dtype=sf.{odt})"

    def ref(ctx):
        sdt_, sv = p.seen(ctx, "S")
        check_index_dtype(ctx, "shape", sdt_, values=sv)
        sv = _as_i64(sv)
        if sv.ndim != 1:
            ctx.error("shape is not a vector")
        t = sv.tolist()
        if any(d < 0 for d in t):
            ctx.error("negative dim")
        if not size_check(ctx, t, np.dtype(odt).itemsize):
            return None, None
        fillv = {"zeros": 0, "ones": 1}.get(fn, {"float32": 2.5, "float64": 2.5, "int32": 3, "int64": 3,
                                                 "bool": True}[odt])
        return filled(t, odt, fillv), None
    exp, ctx = reference(ref)
    return p, p.simple(call), exp, ctx


# -- optimizers


OPTIMIZERS = ["GradientDescent", "Momentum", "Adagrad", "RMSProp", "Adam", "LazyAdam", "Nadam", "LazyNadam", "Ftrl"]


def _opt_ctor(name, R):
    """(constructor source, hyper-parameters) for an optimizer."""
    if name == "GradientDescent":
        return "sf.train.GradientDescentOptimizer(0.1)", {"lr": 0.1}
    if name == "Momentum":
        nest = R.bool(0.5)
        return f"sf.train.MomentumOptimizer(0.1, 0.9, use_nesterov={nest})", {"lr": 0.1, "mu": 0.9, "nesterov": nest}
    if name == "Adagrad":
        return "sf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.5)", {"lr": 0.1, "init": 0.5}
    if name == "RMSProp":
        centered, mom = R.bool(0.5), R.choice([0.0, 0.5])
        return (f"sf.train.RMSPropOptimizer(0.1, decay=0.9, momentum={mom}, epsilon=1e-6, centered={centered})",
                {"lr": 0.1, "rho": 0.9, "mu": mom, "eps": 1e-6, "centered": centered})
    if name in ("Adam", "LazyAdam", "Nadam", "LazyNadam"):
        return (f"sf.train.{name}Optimizer(0.1, beta1=0.9, beta2=0.99, epsilon=1e-6)",
                {"lr": 0.1, "b1": 0.9, "b2": 0.99, "eps": 1e-6})
    if name == "Ftrl":
        l1, l2 = R.choice([0.0, 0.1]), R.choice([0.0, 0.2])
        power = R.choice([-0.5, -0.25])
        return (f"sf.train.FtrlOptimizer(0.1, learning_rate_power={power}, initial_accumulator_value=0.5, "
                f"l1_regularization_strength={l1}, l2_regularization_strength={l2})",
                {"lr": 0.1, "power": power, "init": 0.5, "l1": l1, "l2": l2})
    raise ValueError(name)


def _opt_init_state(name, h, var):
    """[var, *optimizer variables in opt.variables() order] before any step."""
    z = np.zeros_like(var)
    f32 = np.float32
    if name == "GradientDescent":
        return [var]
    if name == "Momentum":
        return [var, z]
    if name == "Adagrad":
        return [var, np.full_like(var, h["init"])]
    if name == "RMSProp":
        return [var] + ([z] if h["centered"] else []) + [z, np.ones_like(var)]   # mg, momentum, rms
    if name in ("Adam", "LazyAdam", "Nadam", "LazyNadam"):
        return [var, np.array(f32(h["b1"])), np.array(f32(h["b2"])), z, z]
    if name == "Ftrl":
        return [var, np.full_like(var, h["init"]), z]


def _c(x, dt):
    """A Python hyper-parameter as segflow sees it: a float32 constant cast to the variable's dtype."""
    return np.asarray(np.float32(x)).astype(dt)


def _opt_step(name, h, state, g, idx):
    """One sparse step (IndexedSlices g at idx) from `state`; returns the new state. Arithmetic in
    the variable's dtype, in segflow's (TF's) order."""
    var = state[0]
    dt = var.dtype
    one = dt.type(1)
    st = [s.copy() for s in state]
    with np.errstate(all="ignore"):
        if name == "GradientDescent":
            lr = _c(h["lr"], dt)
            upd = lr * g
            for i, r in enumerate(idx):
                st[0][r] = st[0][r] - upd[i]
            return st
        # duplicates summed, first-appearance order
        uniq, pos = [], {}
        for r in idx.tolist():
            if r not in pos:
                pos[r] = len(uniq)
                uniq.append(r)
        gs = np.zeros((len(uniq),) + var.shape[1:], np.float64 if dt == np.float64 else np.float64)
        np.add.at(gs, [pos[r] for r in idx.tolist()], g.astype(np.float64))
        gs = gs.astype(dt)
        u = np.array(uniq, np.int64)
        if name == "Momentum":
            lr, mu = _c(h["lr"], dt), _c(h["mu"], dt)
            acc = st[1]
            rows = mu * acc[u] + gs
            step = lr * gs + lr * mu * rows if h["nesterov"] else lr * rows
            acc[u] = rows
            st[0][u] = st[0][u] - step
            return st
        if name == "Adagrad":
            lr = _c(h["lr"], dt)
            acc = st[1]
            rows = acc[u] + gs * gs
            acc[u] = rows
            st[0][u] = st[0][u] - lr * gs / np.sqrt(rows)
            return st
        if name == "RMSProp":
            lr, rho, mu, eps = (_c(h[k], dt) for k in ("lr", "rho", "mu", "eps"))
            if h["centered"]:
                mg, mom, ms = st[1], st[2], st[3]
            else:
                mg, mom, ms = None, st[1], st[2]
            ms_rows = rho * ms[u] + (one - rho) * gs * gs
            ms[u] = ms_rows
            if mg is not None:
                mg_rows = rho * mg[u] + (one - rho) * gs
                mg[u] = mg_rows
                den = ms_rows - mg_rows * mg_rows + eps
            else:
                den = ms_rows + eps
            mom_rows = mu * mom[u] + lr * gs / np.sqrt(den)
            mom[u] = mom_rows
            st[0][u] = st[0][u] - mom_rows
            return st
        if name in ("Adam", "LazyAdam", "Nadam", "LazyNadam"):
            b1p32, b2p32 = np.float32(st[1]), np.float32(st[2])
            b1p, b2p = _c(b1p32, dt), _c(b2p32, dt)
            lr0, b1, b2, eps = (_c(h[k], dt) for k in ("lr", "b1", "b2", "eps"))
            lr = lr0 * np.sqrt(one - b2p) / (one - b1p)
            m, v = st[3], st[4]
            if name in ("Adam", "Nadam"):
                m *= b1
                m[u] += gs * (one - b1)
                v *= b2
                v[u] += gs * gs * (one - b2)
                if name == "Adam":
                    st[0] -= lr * m / (np.sqrt(v) + eps)
                else:
                    st[0] -= lr * b1 * m / (np.sqrt(v) + eps)
                    st[0][u] -= lr * (one - b1) * gs / (np.sqrt(v[u]) + eps)
            else:
                m_rows = b1 * m[u] + (one - b1) * gs
                v_rows = b2 * v[u] + (one - b2) * gs * gs
                m[u] = m_rows
                v[u] = v_rows
                if name == "LazyAdam":
                    st[0][u] -= lr * m_rows / (np.sqrt(v_rows) + eps)
                else:
                    m_bar = b1 * m_rows + (one - b1) * gs
                    st[0][u] -= lr * m_bar / (np.sqrt(v_rows) + eps)
            st[1] = np.array(np.float32(b1p32 * np.float32(h["b1"])))
            st[2] = np.array(np.float32(b2p32 * np.float32(h["b2"])))
            return st
        if name == "Ftrl":
            lr, pw, l1, l2 = (_c(h[k], dt) for k in ("lr", "power", "l1", "l2"))
            accum, linear = st[1], st[2]
            a_old, lin, w = accum[u], linear[u], st[0][u]
            a_new = a_old + gs * gs
            if h["power"] == -0.5:
                new_pow, old_pow = np.sqrt(a_new), np.sqrt(a_old)
            else:
                new_pow, old_pow = np.power(a_new, -pw), np.power(a_old, -pw)
            lin_new = lin + gs - (new_pow - old_pow) / lr * w
            quad = new_pow / lr + 2 * l2
            shrunk = (np.sign(lin_new) * l1 - lin_new) / quad
            w_new = np.where(np.abs(lin_new) > l1, shrunk, np.zeros_like(shrunk))
            accum[u] = a_new
            linear[u] = lin_new
            st[0][u] = w_new
            return st
    raise ValueError(name)


def fam_optimizer(R, mode):
    name = R.choice(OPTIMIZERS)
    p = Plan(R, mode, f"{name}Optimizer.apply_gradients(IndexedSlices)")
    vdt = R.choice(["float32", "float64"])
    rows = R.int(1, 5)
    tail = gen_shape(R, R.choice([0, 1, 1]), 1, 3)
    var = gen_values(R, vdt, (rows,) + tail, special=0)
    ctor, h = _opt_ctor(name, R)
    warm_k = R.int(1, 3)
    warm_idx = np.array(R.ints(warm_k, 0, rows - 1), np.int64)
    warm_g = gen_values(R, vdt, (warm_k,) + tail, special=0)
    k = R.int(0, 5)
    idx = gen_index(R, (k,) if R.bool(0.96) else (k, 1), 0, rows, floats=not R.safe)
    if native(idx.seen()[0]).kind in "fb" or native(idx.seen()[0]).name not in IDX_OK:
        p.dangerous = True
    gshape = idx.shape + tail if R.bool(0.95) else idx.shape + tail + (1,)
    g = gen_values(R, vdt, gshape, special=0.05)
    p.add("V", mkarr(R, var, vdt, python=False))
    p.add("G0", Arr(warm_g, vdt))
    p.add("I0", Arr(warm_idx, "int64"))
    p.add("G", mkarr(R, g, vdt, python=False))
    p.add("I", idx)
    ds = R.choice(["sf.constant(%r)" % list((rows,) + tail), "None"])
    p.feed("I")
    nm = p.names()
    wrap = (lambda s: f"sf.constant({s})") if mode == "eager" and R.bool(0.7) else (lambda s: s)
    grad = f"sf.IndexedSlices({wrap(nm['G'])}, {wrap(nm['I']) if nm['I'] == 'I' else nm['I']}, {ds})"
    warm = f"sf.IndexedSlices(sf.constant(G0), sf.constant(I0), {ds})"
    state = "lambda: [x.numpy() for x in [v] + opt.variables()]"
    if mode == "eager":
        code = "\n".join([
            "v = sf.Variable(V)", f"opt = {ctor}", f"opt.apply_gradients([({warm}, v)])",
            f"__state = {state}", "__before = __state()",
            f"opt.apply_gradients([({grad}, v)])", "result = _np(__state())"]) + "\n"
    else:
        code = "\n".join(["_g = sf.Graph()", "with _g.as_default():", "    v = sf.Variable(V)", f"    opt = {ctor}",
                          f"    warm = opt.apply_gradients([({warm}, v)])"] + p.ph_lines() + [
            f"    step = opt.apply_gradients([({grad}, v)])", "    _init = sf.global_variables_initializer()",
            "    _reads = [x.read_value() for x in [v] + opt.variables()]",
            "    _s = sf.Session(graph=_g)", "    _s.run(_init)", "    _s.run(warm)",
            "    __state = lambda: _s.run(_reads)", "    __before = __state()",
            f"    _s.run(step, {p.feed_dict()})", "    result = _np(__state())"]) + "\n"

    def ref(ctx):
        idt, iv = p.seen(ctx, "I")
        check_index_dtype(ctx, "indices", idt, values=iv)
        iv = _as_i64(iv)
        if iv.ndim != 1:
            if name == "GradientDescent":
                ctx.either("indices of IndexedSlices are not a vector")
            else:
                ctx.error("indices of IndexedSlices are not a vector")
        if iv.size and (iv.min() < 0 or iv.max() >= rows):
            ctx.error("index out of range")
        if g.shape != iv.shape + tail:
            ctx.error("values shape differs from indices.shape + var.shape[1:]")
        st0 = _opt_init_state(name, h, var.copy())
        st1 = _opt_step(name, h, st0, warm_g, warm_idx)
        st2 = _opt_step(name, h, st1, g.reshape((iv.size,) + tail), iv.reshape(-1))
        tol = (1e-4, 1e-5) if vdt == "float32" else (1e-9, 1e-11)
        return st2, tol
    exp, ctx = reference(ref, stateful=True)
    return p, code, exp, ctx


# ------------------------------------------------------------------------------------------------
# The registry, building and running


FAMILIES = {   # name -> (generator, weight, graph mode supported)
    "unsorted_segment": (fam_unsorted_segment, 14, True),
    "segment": (fam_segment, 8, True),
    "sparse_segment": (fam_sparse_segment, 8, True),
    "bincount": (fam_bincount, 5, True),
    "gather": (fam_gather, 9, True),
    "variable_read": (fam_variable_read, 9, True),
    "gather_nd": (fam_gather_nd, 6, True),
    "scatter_var": (fam_scatter_var, 12, True),
    "scatter_nd_var": (fam_scatter_nd_var, 5, True),
    "tensor_scatter": (fam_tensor_scatter, 6, True),
    "unique": (fam_unique, 5, True),
    "dynamic_stitch": (fam_dynamic_stitch, 4, True),
    "dynamic_partition": (fam_dynamic_partition, 4, True),
    "one_hot": (fam_one_hot, 6, True),
    "tile": (fam_tile, 4, True),
    "reshape": (fam_reshape, 4, True),
    "sizes": (fam_sizes, 3, True),
    "optimizer": (fam_optimizer, 12, True),
}
GRAPH_SHARE = 0.2


HEADER = """import numpy as np
import segflow as sf
nan, inf = float('nan'), float('inf')


def _np(x):
    if isinstance(x, (list, tuple)):
        return [_np(i) for i in x]
    return x.numpy() if hasattr(x, 'numpy') else np.asarray(x)

"""


class Case:
    def __init__(self, seed, family, plan, code, expect, ctx):
        self.seed = seed
        self.family = family
        self.op = plan.op
        self.mode = plan.mode
        self.plan = plan
        self.code = code
        self.expect = expect
        self.dangerous = plan.dangerous or ctx.dangerous
        self.features = sorted(plan.tags | ctx.features)

    def inputs_source(self):
        return "".join(f"{n} = {a.render() if isinstance(a, Arr) else a}\n" for n, a in self.plan.inputs.items())

    def source(self, header=True):
        return (HEADER if header else "") + self.inputs_source() + self.code

    def reproducer(self):
        e = self.expect
        want = {"value": "the NumPy reference value", "error": f"a segflow OpError ({e.why})",
                "either": f"a segflow OpError or the reference value ({e.why})"}[e.kind]
        return f"# fuzz seed {self.seed}: {self.op} [{self.mode}]; expected {want}\n" + self.source() + \
            "print(result)\n"


class _SourcePlan:
    """The plan of an explicit case: inputs written as source text (no mutation check)."""

    def __init__(self, op, mode, inputs):
        self.op, self.mode, self.inputs = op, mode, inputs
        self.dangerous, self.tags = True, set()


_VAR = "v = sf.Variable(V)\n__state = lambda: [v.numpy()]\n__before = __state()\n"
_OPT = ("v = sf.Variable(V)\nopt = {ctor}\n"
        "opt.apply_gradients([(sf.IndexedSlices(sf.constant(np.ones((1, 2), np.float32)), sf.constant([1]), "
        "sf.constant([4, 2])), v)])\n"
        "__state = lambda: [x.numpy() for x in [v] + opt.variables()]\n__before = __state()\n"
        "opt.apply_gradients([(sf.IndexedSlices(sf.constant(np.ones((2, 2), np.float32)), "
        "sf.constant(np.array([1.0, np.nan], np.float32)), sf.constant([4, 2])), v)])\nresult = _np(__state())\n")
_V42 = {"V": "np.arange(8, dtype=np.float32).reshape(4, 2)"}

# Inputs that once crashed the process, hang it, or ask for huge sizes: test_fuzz.py runs each in
# its own subprocess. name -> (inputs, code, expected kind, why, value)
KNOWN_DANGEROUS = {
    "scatter_add_nan_index": (dict(_V42, I="np.array([np.nan, 1.0])", U="np.ones((2, 2), np.float32)"),
                              _VAR + "v.scatter_add(sf.IndexedSlices(U, I))\nresult = _np([v])\n", "error",
                              "NaN index", None),
    "scatter_sub_float_extremes": (
        {"V": "np.zeros((0, 2), np.int64)", "I": "np.array([[2.0**31 - 1, np.nan], [2.0**31, 1e30]])",
         "U": "np.ones((2, 2, 2), np.int64)"},
        _VAR + "v.scatter_sub(sf.IndexedSlices(U, I))\nresult = _np([v])\n", "error", "float indices", None),
    "scatter_update_inf_index": (dict(_V42, I="np.array([np.inf])", U="np.ones((1, 2), np.float32)"),
                                 _VAR + "sf.scatter_update(v, I, U)\nresult = _np([v])\n", "error", "inf index", None),
    "scatter_nd_update_nan_index": (dict(_V42, I="np.array([[np.nan]])", U="np.ones((1, 2), np.float32)"),
                                    _VAR + "v.scatter_nd_update(I, U)\nresult = _np([v])\n", "error", "NaN index",
                                    None),
    "sparse_read_nan_index": (dict(_V42, I="np.array([np.nan])"),
                              _VAR + "result = _np([v.sparse_read(I), v])\n", "error", "NaN index", None),
    "gather_variable_nan_index": (dict(_V42, I="np.array([np.nan, 1e30])"),
                                  _VAR + "result = _np([sf.gather(v, I), v])\n", "error", "NaN index", None),
    "embedding_lookup_variable_nan_id": (dict(_V42, I="np.array([np.nan])"),
                                         _VAR + "result = _np([sf.compat.v1.nn.embedding_lookup(v, I), v])\n", "error",
                                         "NaN id", None),
    "lazy_adam_nan_index": (_V42, _OPT.format(ctor="sf.train.LazyAdamOptimizer(0.1)"), "error", "NaN index", None),
    "adam_nan_index": (_V42, _OPT.format(ctor="sf.train.AdamOptimizer(0.1)"), "error", "NaN index", None),
    "gradient_descent_nan_index": (_V42, _OPT.format(ctor="sf.train.GradientDescentOptimizer(0.1)"), "error",
                                   "NaN index", None),
    "ftrl_nan_index": (_V42, _OPT.format(ctor="sf.train.FtrlOptimizer(0.1)"), "error", "NaN index", None),
    "graph_scatter_add_nan_feed": (
        dict(_V42, I="np.array([np.nan])", U="np.ones((1, 2), np.float32)"),
        "_g = sf.Graph()\nwith _g.as_default():\n    v = sf.Variable(V)\n    pI = sf.placeholder(sf.int64, [None])\n"
        "    upd = sf.scatter_add(v, pI, U)\n    _init = sf.global_variables_initializer()\n"
        "    _reads = [v.read_value()]\n    _s = sf.Session(graph=_g)\n    _s.run(_init)\n"
        "    __state = lambda: _s.run(_reads)\n    __before = __state()\n    _s.run(upd, {pI: I})\n"
        "    result = _np(__state())\n", "error", "NaN fed to an int64 placeholder", None),
    "scatter_div_int_min_by_minus_one": ({"V": f"np.array([{I64MIN}, 5])", "I": "np.array([0])", "U": "np.array([-1])"},
                                         _VAR + "sf.scatter_div(v, I, U)\nresult = _np([v])\n", "either",
                                         "INT64_MIN / -1 overflows", [np.array([I64MIN, 5])]),
    "scatter_div_int_by_zero": ({"V": "np.array([7, 5])", "I": "np.array([0])", "U": "np.array([0])"},
                                _VAR + "sf.scatter_div(v, I, U)\nresult = _np([v])\n", "error",
                                "integer division by zero", None),
    "one_hot_huge_depth": ({}, "result = _np(sf.one_hot([0], 2**40))\n", "error", "huge output", None),
    "one_hot_huge_depth_empty": ({}, "result = _np(sf.one_hot(np.zeros(0, np.int32), 2**31 - 1))\n", "value", "valid",
                                 np.zeros((0, 2**31 - 1), np.float32)),
    "zeros_huge": ({}, "result = _np(sf.zeros([2**40]))\n", "error", "huge output", None),
    "zeros_empty_dims_overflow": ({}, "result = _np(sf.zeros([2**62, 0, 2**40]))\n", "either",
                                  "empty output whose other dims overflow int64",
                                  Shaped((2**62, 0, 2**40), np.float32)),
    "tile_int32_overflow": ({}, "result = _np(sf.tile(np.ones((1, 1), np.int8), np.array([2**16, 2**16], np.int32)))\n",
                            "either", "big output (2**32 elements)", Shaped((2**16, 2**16), np.int8)),
    "tile_huge": ({}, "result = _np(sf.tile(np.ones(2), [2**40]))\n", "error", "huge output", None),
    "reshape_huge_empty": ({}, "result = _np(sf.reshape(np.zeros(0), [2**40, 0]))\n", "value", "valid",
                           np.zeros((2**40, 0))),
    "unsorted_segment_sum_huge": ({}, "result = _np(sf.math.unsorted_segment_sum(np.ones((2, 3), np.float32), [0, 1], "
                                  "2**40))\n", "error", "huge output", None),
    "unsorted_segment_sum_huge_empty": ({}, "result = _np(sf.math.unsorted_segment_sum(np.ones((2, 0), np.float32), "
                                        "[0, 1], 2**31))\n", "value", "valid", np.zeros((2**31, 0), np.float32)),
    "segment_sum_huge_last_id": ({}, "result = _np(sf.math.segment_sum(np.ones((2, 3), np.float32), "
                                 "np.array([0, 2**40])))\n", "error", "huge output", None),
    "dynamic_partition_huge_num_partitions": ({}, "result = _np(sf.dynamic_partition(np.ones(3), "
                                              "np.array([0, 0, 0], np.int32), 2**62))\n", "error",
                                              "huge num_partitions", None),
    "bincount_int32_max": ({}, "result = _np(sf.math.bincount(np.array([2**31 - 1], np.int32)))\n", "either",
                           "big output (2**31 bins)", Shaped((2**31,), np.int32)),
}


_F = "np.float16"
# Bugs seen once, as fixed cases (each also a fuzz family's territory): test_fuzz.py runs them in
# process. name -> (inputs, code, expected kind, why, value)
KNOWN_CASES = {
    "scatter_div_int_truncates": ({"V": "np.array([-7, 7, 7, -7])", "I": "np.array([0, 1, 2, 3])",
                                   "U": "np.array([2, -2, 2, -2])"},
                                  _VAR + "sf.scatter_div(v, I, U)\nresult = _np([v])\n", "value", "valid",
                                  [np.array([-3, -3, 3, 3])]),
    "scatter_div_int32_truncates_method": ({"V": "np.array([[-9, 9]], np.int32)", "I": "np.array([0])",
                                            "U": "np.array([[4, -4]], np.int32)"},
                                           _VAR + "v.scatter_div(sf.IndexedSlices(U, I))\nresult = _np([v])\n",
                                           "value", "valid", [np.array([[-2, -2]], np.int32)]),
    "scatter_max_float16_nan_update": ({"V": f"np.ones(3, {_F})", "I": "np.array([0, 1])",
                                        "U": f"np.array([np.nan, 2], {_F})"},
                                       _VAR + "sf.scatter_max(v, I, U)\nresult = _np([v])\n", "value",
                                       "valid (TF: std::max(ref, update), a NaN update is ignored)",
                                       [np.array([1, 2, 1], np.float16)]),
    "scatter_min_float16_nan_update": ({"V": f"np.ones(3, {_F})", "I": "np.array([0, 1])",
                                        "U": f"np.array([np.nan, 0], {_F})"},
                                       _VAR + "sf.scatter_min(v, I, U)\nresult = _np([v])\n", "value",
                                       "valid (TF: std::min(ref, update), a NaN update is ignored)",
                                       [np.array([1, 0, 1], np.float16)]),
    "scatter_max_float16_like_float32": ({"V": f"np.array([np.nan, 1, 1], {_F})", "I": "np.array([0, 1, 2])",
                                          "U": f"np.array([3, np.nan, 5], {_F})"},
                                         _VAR + "sf.scatter_max(v, I, U)\nresult = _np([v])\n", "value",
                                         "valid (a NaN in the variable stays)", [np.array([np.nan, 1, 5], np.float16)]),
    "unique_nans_distinct": ({}, "result = _np(list(sf.unique(np.array([np.nan, np.nan, 1.0, np.nan]))))\n", "value",
                             "valid", [np.array([np.nan, np.nan, 1.0, np.nan]), np.array([0, 1, 2, 3], np.int32)]),
    "unique_with_counts_nans_distinct": ({}, "result = _np(list(sf.unique_with_counts(np.array([np.nan, 2.0, np.nan, "
                                         "2.0], np.float32))))\n", "value", "valid",
                                         [np.array([np.nan, 2, np.nan], np.float32), np.array([0, 1, 2, 1], np.int32),
                                          np.array([1, 2, 1], np.int32)]),
    "gather_big_endian": ({}, "result = _np(sf.gather(np.arange(4, dtype='>f4'), np.array([1, 2], dtype='>i4')))\n",
                          "value", "valid", np.array([1, 2], np.float32)),
    "unsorted_segment_sum_big_endian": ({}, "result = _np(sf.math.unsorted_segment_sum(np.arange(3, dtype='>f8'), "
                                        "np.array([1, 0, 1], dtype='>i8'), np.int64(2)))\n", "value", "valid",
                                        np.array([1.0, 2.0])),
    "bincount_big_endian": ({}, "result = _np(sf.math.bincount(np.array([1, 1, 3], dtype='>i4')))\n", "value", "valid",
                            np.array([0, 2, 0, 1], np.int32)),
    "bincount_negative": ({}, "result = _np(sf.math.bincount(np.array([1, -1], np.int32)))\n", "error",
                          "negative value", None),
    "bincount_nan_float_arr": ({}, "result = _np(sf.math.bincount(np.array([1.0, np.nan])))\n", "error",
                               "float arr", None),
    "gather_axis_list": ({}, "result = _np(sf.gather(np.ones((2, 3)), [0], axis=[1]))\n", "error",
                         "axis is not a scalar", None),
    "gather_variable_axis_list": (dict(_V42), _VAR + "result = _np([sf.gather(v, [0], axis=[1]), v])\n", "error",
                                  "axis is not a scalar", None),
    "gather_nd_0d_indices": ({}, "result = _np(sf.gather_nd(np.ones((2, 3)), np.array(1)))\n", "error",
                             "0-d indices", None),
    "gather_nd_0d_indices_graph": ({}, "_g = sf.Graph()\nwith _g.as_default():\n"
                                   "    out = sf.gather_nd(np.ones((2, 3)), np.array(1))\n"
                                   "    result = _np(sf.Session(graph=_g).run(out))\n", "error", "0-d indices", None),
    "gather_axis_list_graph": ({}, "_g = sf.Graph()\nwith _g.as_default():\n"
                               "    out = sf.gather(np.ones((2, 3)), [0], axis=[1])\n"
                               "    result = _np(sf.Session(graph=_g).run(out))\n", "error", "axis is not a scalar",
                               None),
    "gather_axis_list_fed_graph": ({}, "_g = sf.Graph()\nwith _g.as_default():\n"
                                   "    pA = sf.placeholder(sf.int32, None)\n"
                                   "    out = sf.gather(np.ones((2, 3)), [0], axis=pA)\n"
                                   "    result = _np(sf.Session(graph=_g).run(out, {pA: [1]}))\n", "error",
                                   "axis is not a scalar", None),
    "one_hot_float_depth": ({}, "result = _np(sf.one_hot([0, 1], 2.5))\n", "error", "float depth", None),
    "tile_float_multiples": ({}, "result = _np(sf.tile(np.ones(2), [2.5]))\n", "error", "float multiples", None),
    "tile_integral_float_multiples": ({}, "result = _np(sf.tile(np.ones(2), np.array([2.0])))\n", "error",
                                      "float multiples", None),
    "reshape_float_shape": ({}, "result = _np(sf.reshape(np.ones(4), [2.0, 2.0]))\n", "error", "float shape", None),
    "reshape_minus_two": ({}, "result = _np(sf.reshape(np.ones(4), [-2]))\n", "error", "negative dim other than -1",
                          None),
    "dynamic_partition_zero_partitions_graph": (
        {}, "_g = sf.Graph()\nwith _g.as_default():\n    pQ = sf.placeholder(sf.int32, [None])\n"
        "    out = sf.dynamic_partition(np.ones(2), pQ, 0)\n    _s = sf.Session(graph=_g)\n"
        "    result = _np(_s.run(out, {pQ: np.array([0, 0], np.int32)}))\n", "error", "num_partitions < 1", None),
    "dynamic_partition_negative_partitions": ({}, "result = _np(sf.dynamic_partition(np.ones(2), np.array([0, 0], "
                                              "np.int32), -1))\n", "error", "num_partitions < 1", None),
    "dynamic_partition_float_partitions": ({}, "result = _np(sf.dynamic_partition(np.ones(2), np.array([0, 0], "
                                           "np.int32), 2.5))\n", "error", "num_partitions is a float", None),
    "dynamic_stitch_float_indices": ({}, "result = _np(sf.dynamic_stitch([np.array([0.0, 1.0])], [np.ones(2)]))\n",
                                     "error", "float indices", None),
    "dynamic_stitch_empty_inner": ({}, "result = _np(sf.dynamic_stitch([np.array([1, 0], np.int32)], "
                                   "[np.zeros((2, 0))]))\n", "value", "valid", np.zeros((2, 0))),
    "scatter_nd_add_variable_empty_inner": ({"V": "np.zeros((3, 0))", "I": "np.array([[1]])", "U": "np.zeros((1, 0))"},
                                            _VAR + "sf.scatter_nd_add(v, I, U)\nresult = _np([v])\n", "value",
                                            "valid", [np.zeros((3, 0))]),
    "unique_float_out_idx": ({}, "result = _np(list(sf.unique(np.array([1, 1]), out_idx=sf.float32)))\n", "error",
                             "out_idx must be int32 or int64", None),
    "embedding_lookup_div_extreme_negative_id": (
        {}, "result = _np(sf.compat.v1.nn.embedding_lookup([np.array([1.0, 2.0]), np.array([3.0])], "
        "np.array([-2**63 + 1]), partition_strategy='div'))\n", "error", "id out of range", None),
    "nadam_out_of_range_index_unchanged": (
        _V42, _OPT.replace("np.array([1.0, np.nan], np.float32)", "np.array([1, 9])").format(
            ctor="sf.train.NadamOptimizer(0.1)"), "error", "index out of range", None),
    "segment_max_neg_inf_rows": ({}, "result = _np(sf.math.segment_max(np.array([-np.inf, -np.inf], np.float32), "
                                 "np.array([0, 0])))\n", "value", "valid",
                                 np.array([-np.inf], np.float32)),
}


def explicit_case(name):
    """A Case for an entry of KNOWN_DANGEROUS or KNOWN_CASES."""
    inputs, code, kind, why, value = KNOWN_DANGEROUS[name] if name in KNOWN_DANGEROUS else KNOWN_CASES[name]
    c = Case.__new__(Case)
    c.seed, c.family, c.op, c.mode = name, "known-dangerous", name, "eager" if "_g = " not in code else "graph"
    c.plan = _SourcePlan(name, c.mode, dict(inputs))
    c.code = code
    c.expect = Expect(kind, value, None, why, stateful="__state" in code)
    c.dangerous = True
    c.features = []
    return c


def make_case(seed, family=None, mode=None, safe=False, source=None):
    R = source or NpSource(seed, safe=safe)
    if family is None:
        family = R.weighted([(k, v[1]) for k, v in FAMILIES.items()])
    gen, _, graph_ok = FAMILIES[family]
    if mode is None:
        mode = "graph" if graph_ok and R.bool(GRAPH_SHARE) else "eager"
    plan, code, expect, ctx = gen(R, mode)
    return Case(seed, family, plan, code, expect, ctx)


_SF = None


def _segflow():
    global _SF
    if _SF is None:
        import segflow
        from segflow.framework import errors
        _SF = (segflow, errors)
    return _SF


def _np_result(x):
    if isinstance(x, (list, tuple)):
        return [_np_result(i) for i in x]
    return x.numpy() if hasattr(x, "numpy") else np.asarray(x)


def _same_arrays(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind in "fc" or a.dtype.name == "bfloat16":
        return np.array_equal(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64),
                              b.astype(np.complex128 if b.dtype.kind == "c" else np.float64), equal_nan=True)
    return np.array_equal(a, b)


def _compare(got, want, tol, path="result"):
    """None when `got` matches `want`, else a short description of the first difference."""
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return f"{path}: expected a list of {len(want)}, got {_summary(got)}"
        for i, (g, w) in enumerate(zip(got, want)):
            d = _compare(g, w, tol, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(got, list):
        return f"{path}: expected an array, got a list of {len(got)}"
    g = np.asarray(got)
    if isinstance(want, Shaped):
        if g.shape != want.shape or native(g.dtype) != native(want.dtype):
            return f"{path}: {g.shape} {g.dtype}, expected {want.shape} {want.dtype}"
        return None
    w = np.asarray(want)
    if g.shape != w.shape:
        return f"{path}: shape {g.shape}, expected {w.shape}"
    if native(g.dtype) != native(w.dtype):
        return f"{path}: dtype {g.dtype}, expected {w.dtype}"
    if w.size == 0:
        return None
    if tol is None or native(w.dtype).kind in "iub":
        ok = _same_arrays(g, w)
    else:
        wide = np.complex128 if w.dtype.kind == "c" else np.float64
        gg, ww = g.astype(wide), w.astype(wide)
        ok = bool(np.all(np.isclose(gg, ww, rtol=tol[0], atol=tol[1], equal_nan=True)))
    if ok:
        return None
    bad = np.argwhere(~_elementwise_eq(g, w, tol))
    pos = tuple(int(i) for i in bad[0]) if bad.size else ()
    return (f"{path}: values differ at {len(bad)} of {w.size} positions, first {pos}: got "
            f"{g[pos]!r}, expected {w[pos]!r}")


def _elementwise_eq(g, w, tol):
    if native(w.dtype).kind in "iub":
        return g == w
    wide = np.complex128 if w.dtype.kind == "c" else np.float64
    gg, ww = g.astype(wide), w.astype(wide)
    if tol is None:
        return (gg == ww) | (np.isnan(gg) & np.isnan(ww))
    return np.isclose(gg, ww, rtol=tol[0], atol=tol[1], equal_nan=True)


def _summary(x):
    if isinstance(x, list):
        return "[" + ", ".join(_summary(i) for i in x[:4]) + (", ..." if len(x) > 4 else "") + "]"
    a = np.asarray(x)
    return f"array(shape={a.shape}, dtype={a.dtype})"


def _msg(e):
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:300] if text else ''}"


def _where(e):
    """The innermost frame of a traceback inside segflow (file:line function)."""
    tb = traceback.extract_tb(e.__traceback__)
    inner = [f for f in tb if "/segflow/" in f.filename.replace("\\", "/")]
    f = (inner or tb or [None])[-1]
    if f is None:
        return ""
    return f"{f.filename.split('/segflow/')[-1]}:{f.lineno} {f.name}"


def execute(case):
    """Runs a case in this process; returns the outcome dict."""
    sf, errors = _segflow()
    ns = {"np": np, "sf": sf, "nan": NAN, "inf": INF, "_np": _np_result}
    out = {"seed": case.seed, "family": case.family, "op": case.op, "mode": case.mode, "expect": case.expect.kind,
           "why": case.expect.why, "features": case.features, "dangerous": case.dangerous}
    try:
        exec(compile(case.inputs_source(), "<fuzz-inputs>", "exec"), ns)
    except Exception as e:   # the case itself is broken
        out.update(status="fail", kind="bad-case", detail=_msg(e))
        return out
    originals = {n: np.array(ns[n], copy=True) for n, a in case.plan.inputs.items()
                 if isinstance(a, Arr) and a.is_view_of_numpy()}
    raised = None
    try:
        exec(compile(case.code, f"<fuzz-case {case.seed}>", "exec"), ns)
    except Exception as e:
        raised = e
    exp = case.expect
    if raised is not None:
        if not isinstance(raised, errors.OpError):
            out.update(status="fail", kind="non-segflow-exception", detail=_msg(raised), exc=type(raised).__name__,
                       where=_where(raised))
        elif exp.kind == "value":
            out.update(status="fail", kind="rejected-valid", detail=_msg(raised), exc=type(raised).__name__,
                       where=_where(raised))
        else:
            out.update(status="raised", exc=type(raised).__name__)
            if "__state" in ns and "__before" in ns:
                try:
                    after = _np_result(ns["__state"]())
                except Exception as e:
                    out.update(status="fail", kind="state-changed", detail="reading the state after the failed call "
                               f"raised {_msg(e)}")
                else:
                    diff = _compare(after, _np_result(ns["__before"]), None, "state")
                    if diff:
                        out.update(status="fail", kind="state-changed", detail=f"{_msg(raised)} but {diff}")
    else:
        got = ns.get("result")
        if exp.kind == "error":
            out.update(status="fail", kind="accepted-invalid", detail=f"returned {_summary(got)}; expected an error: "
                       f"{exp.why}")
        elif exp.value is None:
            out.update(status="pass")
        else:
            diff = _compare(got, exp.value, exp.tol)
            if diff and exp.alt is not None and _compare(got, exp.alt, exp.tol) is None:
                diff = None
            if diff:
                out.update(status="fail", kind="wrong-value", detail=diff)
            else:
                out.update(status="pass")
    if out["status"] != "fail":
        for n, orig in originals.items():
            if not _same_arrays(ns[n], orig):
                out.update(status="fail", kind="mutated-input", detail=f"input {n} was written to")
                break
    return out


def run_case(seed, family=None, mode=None, safe=False):
    try:
        case = make_case(seed, family, mode, safe)
    except Exception as e:
        return {"seed": seed, "family": family, "op": family, "mode": mode, "status": "fail", "kind": "bad-case",
                "detail": "generator: " + _msg(e) + " at " + traceback.format_exc().splitlines()[-3].strip(),
                "features": [], "expect": "", "why": "", "dangerous": False}
    return execute(case)


def main(argv=None):
    import argparse
    import json
    ap = argparse.ArgumentParser(description="Print and run one fuzz case (a reproducer).")
    ap.add_argument("--seed", type=int)
    ap.add_argument("--explicit", choices=sorted(KNOWN_DANGEROUS) + sorted(KNOWN_CASES),
                    help="a known case (KNOWN_DANGEROUS, KNOWN_CASES) instead")
    ap.add_argument("--family", choices=sorted(FAMILIES))
    ap.add_argument("--mode", choices=["eager", "graph"])
    ap.add_argument("--safe", action="store_true")
    ap.add_argument("--no-run", action="store_true", help="only print the reproducer")
    args = ap.parse_args(argv)
    if args.explicit:
        case = explicit_case(args.explicit)
    elif args.seed is None:
        ap.error("give --seed or --explicit")
    else:
        case = make_case(args.seed, args.family, args.mode, args.safe)
    print(case.reproducer())
    if not args.no_run:
        sys.stdout.flush()
        print("# outcome:", json.dumps(execute(case)))


if __name__ == "__main__":
    main()

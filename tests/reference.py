"""Plain NumPy references, one function per op, with TensorFlow's semantics (like JAX's
lax_reference.py). Written independently of segflow: nothing here imports or calls it, and the
loops are spelled out where a NumPy shortcut would hide a convention (empty segments, dropped ids,
later-wins stitching, first-appearance order of unique).

Each function takes NumPy arrays (and Python attributes) and returns the array TensorFlow returns,
with TensorFlow's output dtype. tests/test_op_spec.py drives them, one spec row per op."""
import builtins
import math

import ml_dtypes
import numpy as np

# ----------------------------------------------------------------------------------------------
# dtype helpers


def _is_int(a):
    return np.asarray(a).dtype.kind in "iu"


def _is_float(a):
    return np.asarray(a).dtype.kind == "f"


def lowest(dtype):
    """std::numeric_limits<T>::lowest(): the most negative finite value (not -inf for floats).
    ml_dtypes.finfo is np.finfo for NumPy's floats and also knows bfloat16."""
    dtype = np.dtype(dtype)
    return np.iinfo(dtype).min if dtype.kind in "iu" else ml_dtypes.finfo(dtype).min


def highest(dtype):
    dtype = np.dtype(dtype)
    return np.iinfo(dtype).max if dtype.kind in "iu" else ml_dtypes.finfo(dtype).max


def wide(dtype):
    """The wide accumulator for `dtype`: complex128, int64, uint64, or float64 for every real float
    (float16 and bfloat16 included)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return np.dtype(np.complex128)
    if dtype.kind == "i":
        return np.dtype(np.int64)
    if dtype.kind == "u":
        return np.dtype(np.uint64)
    return np.dtype(np.float64)


def _axes(axis, ndim):
    """TF axis argument (None, int, list; negatives allowed) -> sorted tuple of positive axes."""
    if axis is None:
        return tuple(range(ndim))
    axis = [axis] if np.ndim(axis) == 0 else list(np.asarray(axis).reshape(-1))
    return tuple(sorted({int(a) % ndim for a in axis})) if ndim else ()


# ----------------------------------------------------------------------------------------------
# Elementwise unary


def neg(x):
    return np.negative(x)


def abs(x):  # noqa: A001 - the op's name
    return np.abs(x)


def square(x):
    return x * x


def sqrt(x):
    return np.sqrt(x)


def rsqrt(x):
    return (1 / np.sqrt(x)).astype(x.dtype)


def exp(x):
    return np.exp(x)


def expm1(x):
    return np.expm1(x)


def log(x):
    return np.log(x)


def log1p(x):
    return np.log1p(x)


def sin(x):
    return np.sin(x)


def cos(x):
    return np.cos(x)


def tan(x):
    return np.tan(x)


def tanh(x):
    return np.tanh(x)


def sinh(x):
    return np.sinh(x)


def cosh(x):
    return np.cosh(x)


def asin(x):
    return np.arcsin(x)


def acos(x):
    return np.arccos(x)


def atan(x):
    return np.arctan(x)


def erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x.astype(np.float64)).astype(x.dtype)


def sigmoid(x):
    w = x.astype(np.float64)
    out = np.where(w >= 0, 1 / (1 + np.exp(-np.abs(w))), np.exp(-np.abs(w)) / (1 + np.exp(-np.abs(w))))
    return out.astype(x.dtype)


def softplus(x):
    """log(1 + exp(x)), computed stably: max(x, 0) + log1p(exp(-|x|))."""
    w = x.astype(np.float64)
    return (np.maximum(w, 0) + np.log1p(np.exp(-np.abs(w)))).astype(x.dtype)


def reciprocal(x):
    return (1 / x).astype(x.dtype)


def sign(x):
    return np.sign(x)


def floor(x):
    return np.floor(x)


def ceil(x):
    return np.ceil(x)


def round(x):  # noqa: A001
    """Banker's rounding: halves go to the even neighbour (TF's Round)."""
    if _is_int(x):
        return x.copy()
    out = np.empty_like(x)
    for i, v in np.ndenumerate(x):
        f = math.floor(v)
        d = v - f
        if d > 0.5 or (d == 0.5 and f % 2 == 1):
            f += 1
        out[i] = f
    return out


def cast(x, dtype):
    """Float -> int truncates toward zero; -> bool is x != 0."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return x != 0
    if dtype.kind in "iu" and _is_float(x):
        return np.trunc(x).astype(dtype)
    return x.astype(dtype)


# ----------------------------------------------------------------------------------------------
# Elementwise binary (NumPy broadcasting is TF's broadcasting)


def add(x, y):
    return x + y


def sub(x, y):
    return x - y


def mul(x, y):
    return x * y


def truediv(x, y):
    """Integers are cast first: 8- and 16-bit to float32, 32- and 64-bit to float64."""
    if _is_int(x):
        out = np.float32 if x.dtype.itemsize <= 2 else np.float64
        return x.astype(out) / y.astype(out)
    return x / y


def realdiv(x, y):
    return x / y


def floordiv(x, y):
    """floor(x / y) for floats (so 1.0 // 0.1 is 10); Python's floor division for integers."""
    if _is_int(x):
        xb, yb = np.broadcast_arrays(x, y)
        q = np.empty(xb.shape, x.dtype)
        for idx in np.ndindex(q.shape):
            q[idx] = int(xb[idx]) // int(yb[idx])
        return q
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.floor(x / y)


def floormod(x, y):
    """x - floor(x / y) * y with the sign of y: fmod, then add y where the signs disagree."""
    if _is_int(x):
        xb, yb = np.broadcast_arrays(x, y)
        out = np.empty(xb.shape, x.dtype)
        for idx in np.ndindex(out.shape):
            out[idx] = int(xb[idx]) % int(yb[idx])
        return out
    with np.errstate(invalid="ignore"):
        r = np.fmod(x, y)
    return np.where((r != 0) & ((y < 0) != (r < 0)), r + y, r).astype(x.dtype)


def truncatediv(x, y):
    """C division: the quotient truncated toward zero."""
    if _is_int(x):
        xb, yb = np.broadcast_arrays(x, y)
        out = np.empty(xb.shape, x.dtype)
        for idx in np.ndindex(out.shape):
            a, b = int(xb[idx]), int(yb[idx])
            q = abs_int(a) // abs_int(b)
            out[idx] = q if (a >= 0) == (b >= 0) else -q
        return out
    return np.trunc(x / y)


def abs_int(a):
    return a if a >= 0 else -a


def div(x, y):
    """tf.compat.v1.div: Python 2 semantics, floor division for integers, true division otherwise."""
    return floordiv(x, y) if _is_int(x) else x / y


def div_no_nan(x, y):
    """0 where y == 0, x / y elsewhere."""
    safe = np.where(y == 0, np.ones_like(y), y)
    return np.where(y == 0, np.zeros_like(x / safe), x / safe).astype(np.result_type(x, y))


def pow(x, y):  # noqa: A001
    if _is_int(x):
        xb, yb = np.broadcast_arrays(x, y)
        out = np.empty(xb.shape, x.dtype)
        for idx in np.ndindex(out.shape):
            out[idx] = int(xb[idx]) ** int(yb[idx])
        return out
    return np.power(x, y)


def maximum(x, y):
    return np.where(x >= y, x, y).astype(np.result_type(x, y))


def minimum(x, y):
    return np.where(x <= y, x, y).astype(np.result_type(x, y))


def squared_difference(x, y):
    d = x - y
    return d * np.conj(d) if d.dtype.kind == "c" else d * d


def equal(x, y):
    return x == y


def not_equal(x, y):
    return x != y


def less(x, y):
    return x < y


def less_equal(x, y):
    return x <= y


def greater(x, y):
    return x > y


def greater_equal(x, y):
    return x >= y


def logical_and(x, y):
    return x & y


def logical_or(x, y):
    return x | y


def logical_xor(x, y):
    return x ^ y


def logical_not(x):
    return ~x


def add_n(*xs):
    out = np.zeros_like(xs[0])
    for x in xs:
        out = out + x
    return out


def select(cond, x, y):
    """where_v2 / select with broadcasting."""
    c, a, b = np.broadcast_arrays(cond, x, y)
    out = np.empty(c.shape, np.result_type(x, y))
    for idx in np.ndindex(c.shape):
        out[idx] = a[idx] if c[idx] else b[idx]
    return out


def where_coords(cond):
    """tf.where(cond): the coordinates of the true elements, int64, row-major order."""
    coords = [list(idx) for idx in np.ndindex(cond.shape) if cond[idx]]
    return np.array(coords, np.int64).reshape(len(coords), cond.ndim)


# ----------------------------------------------------------------------------------------------
# Reductions


def _reduce(x, axis, keepdims, combine, init):
    """Fold `combine` over the reduced axes in row-major order, starting from `init`."""
    axes = _axes(axis, x.ndim)
    kept = [d for d in range(x.ndim) if d not in axes]
    out_shape = tuple(x.shape[d] for d in kept)
    out = np.full(out_shape, init, dtype=x.dtype)
    for idx in np.ndindex(x.shape):
        o = tuple(idx[d] for d in kept)
        out[o] = combine(out[o], x[idx])
    if keepdims:
        out = out.reshape(tuple(1 if d in axes else x.shape[d] for d in range(x.ndim)))
    return out


def reduce_sum(x, axis=None, keepdims=False):
    with np.errstate(over="ignore"):
        return _reduce(x, axis, keepdims, lambda a, b: a + b, 0)


def reduce_prod(x, axis=None, keepdims=False):
    """Integer products wrap around as in C."""
    with np.errstate(over="ignore"):
        return _reduce(x, axis, keepdims, lambda a, b: a * b, 1)


def reduce_max(x, axis=None, keepdims=False):
    """Empty reductions give -inf for floats and the lowest value for integers."""
    init = -np.inf if _is_float(x) else lowest(x.dtype)
    return _reduce(x, axis, keepdims, lambda a, b: b if b > a else a, init)


def reduce_min(x, axis=None, keepdims=False):
    init = np.inf if _is_float(x) else highest(x.dtype)
    return _reduce(x, axis, keepdims, lambda a, b: b if b < a else a, init)


def reduce_mean(x, axis=None, keepdims=False):
    """sum / count; for integers the division truncates toward zero (C semantics)."""
    axes = _axes(axis, x.ndim)
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    s = reduce_sum(x, axis, keepdims)
    if _is_int(x):
        out = np.empty_like(s)
        for idx in np.ndindex(s.shape):
            v = int(s[idx])
            out[idx] = abs_int(v) // n * (1 if v >= 0 else -1)
        return out
    with np.errstate(invalid="ignore", divide="ignore"):
        return (s / x.dtype.type(n) if n else s * np.nan).astype(x.dtype)


def reduce_logsumexp(x, axis=None, keepdims=False):
    m = reduce_max(x, axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    s = reduce_sum(np.exp(x - m), axis, keepdims=True)
    out = np.log(s) + m
    if not keepdims:
        out = out.reshape([x.shape[d] for d in range(x.ndim) if d not in _axes(axis, x.ndim)])
    return out.astype(x.dtype)


def reduce_any(x, axis=None, keepdims=False):
    return _reduce(x, axis, keepdims, lambda a, b: a or b, False)


def reduce_all(x, axis=None, keepdims=False):
    return _reduce(x, axis, keepdims, lambda a, b: a and b, True)


def count_nonzero(x, axis=None, keepdims=False):
    return reduce_sum((x != 0).astype(np.int64), axis, keepdims)


def _arg(x, axis, better):
    axis = int(axis) % x.ndim
    moved = np.moveaxis(x, axis, -1)
    out = np.zeros(moved.shape[:-1], np.int64)
    for idx in np.ndindex(out.shape):
        row = moved[idx]
        best = 0
        for j in range(1, len(row)):
            if better(row[j], row[best]):
                best = j
        out[idx] = best
    return out


def argmax(x, axis=0):
    """int64 index of the first maximum."""
    return _arg(x, axis, lambda a, b: a > b)


def argmin(x, axis=0):
    return _arg(x, axis, lambda a, b: a < b)


def cumsum(x, axis=0, exclusive=False, reverse=False):
    axis = int(axis) % x.ndim
    moved = np.moveaxis(x, axis, -1)
    out = np.zeros_like(moved)
    n = moved.shape[-1]
    order = range(n - 1, -1, -1) if reverse else range(n)
    for idx in np.ndindex(moved.shape[:-1]):
        acc = x.dtype.type(0)
        for j in order:
            if exclusive:
                out[idx + (j,)] = acc
                acc = acc + moved[idx + (j,)]
            else:
                acc = acc + moved[idx + (j,)]
                out[idx + (j,)] = acc
    return np.moveaxis(out, -1, axis)


def l2_loss(x):
    return (reduce_sum(x * x) / 2).astype(x.dtype)


# ----------------------------------------------------------------------------------------------
# Segment reductions


_COMBINE = {
    "sum": lambda a, b: a + b,
    "prod": lambda a, b: a * b,
    "max": lambda a, b: b if b > a else a,
    "min": lambda a, b: b if b < a else a,
}


def _segment(kind, data, ids, num_segments, empty, acc_dtype=None):
    """out[s] = combine over the rows r with ids[r] == s (ids may be N-D: the leading ids.ndim dims of
    data are indexed by position); ids < 0 are dropped; empty segments take `empty`.
    kind 'mean' divides the sum by the count, 'sqrt_n' by its square root.
    The rows are combined (and divided) in acc_dtype, data's dtype unless given, and each segment is
    cast once to data's dtype at the end (integers wrap)."""
    data, ids = np.asarray(data), np.asarray(ids)
    acc_dtype = data.dtype if acc_dtype is None else np.dtype(acc_dtype)
    tail = data.shape[ids.ndim:]
    base = "sum" if kind in ("mean", "sqrt_n") else kind
    combine = np.vectorize(_COMBINE[base], otypes=[acc_dtype])
    acc = [None] * num_segments
    count = [0] * num_segments
    for pos in np.ndindex(ids.shape):
        s = int(ids[pos])
        if s < 0:
            continue
        row = data[pos].astype(acc_dtype)
        acc[s] = row.copy() if acc[s] is None else combine(acc[s], row)
        count[s] += 1
    out = np.empty((num_segments,) + tail, data.dtype)
    for s in range(num_segments):
        if acc[s] is None:
            out[s] = empty
        elif kind == "mean":
            out[s] = np.asarray(acc[s] / acc_dtype.type(count[s])).astype(data.dtype)
        elif kind == "sqrt_n":
            out[s] = np.asarray(acc[s] / np.sqrt(acc_dtype.type(count[s]))).astype(data.dtype)
        else:
            out[s] = np.asarray(acc[s]).astype(data.dtype)
    return out


def _sorted_n(ids):
    ids = np.asarray(ids)
    return int(ids[-1]) + 1 if ids.size else 0


# Sorted segment ops: as many rows as the last id + 1; gaps hold 0 (1 for prod), also for max/min.
def segment_sum(data, ids):
    return _segment("sum", data, ids, _sorted_n(ids), 0)


def segment_prod(data, ids):
    return _segment("prod", data, ids, _sorted_n(ids), 1)


def segment_max(data, ids):
    return _segment("max", data, ids, _sorted_n(ids), 0)


def segment_min(data, ids):
    return _segment("min", data, ids, _sorted_n(ids), 0)


def segment_mean(data, ids):
    return _segment("mean", data, ids, _sorted_n(ids), 0)


# Unsorted segment ops: num_segments rows; negative ids dropped; empty segments hold the identity
# of the reduction: 0 for sum, 1 for prod, lowest() for max, highest() for min; 0 for mean/sqrt_n.
def unsorted_segment_sum(data, ids, num_segments):
    return _segment("sum", data, ids, num_segments, 0)


def unsorted_segment_prod(data, ids, num_segments):
    return _segment("prod", data, ids, num_segments, 1)


def unsorted_segment_max(data, ids, num_segments):
    return _segment("max", data, ids, num_segments, lowest(data.dtype))


def unsorted_segment_min(data, ids, num_segments):
    return _segment("min", data, ids, num_segments, highest(data.dtype))


def unsorted_segment_mean(data, ids, num_segments):
    return _segment("mean", data, ids, num_segments, 0)


def unsorted_segment_sqrt_n(data, ids, num_segments):
    return _segment("sqrt_n", data, ids, num_segments, 0)


# Sparse segment ops: segment ids[j] gathers data[indices[j]]; rows = last id + 1 unless given.
def _sparse(kind, data, indices, ids, num_segments, acc_dtype=None):
    n = _sorted_n(ids) if num_segments is None else num_segments
    rows = np.stack([data[int(i)] for i in indices]) if len(indices) else np.zeros((0,) + data.shape[1:], data.dtype)
    return _segment(kind, rows, ids, n, 0, acc_dtype)


def sparse_segment_sum(data, indices, ids, num_segments=None):
    return _sparse("sum", data, indices, ids, num_segments)


def sparse_segment_mean(data, indices, ids, num_segments=None):
    return _sparse("mean", data, indices, ids, num_segments)


def sparse_segment_sqrt_n(data, indices, ids, num_segments=None):
    return _sparse("sqrt_n", data, indices, ids, num_segments)


# The whole family by kind, with an optional accumulator: acc_dtype=wide(data.dtype) models kernels
# that accumulate wide and round once (float16/bfloat16/float32 sums and means, wrapping integers).
# Empty segments hold the same values as above, in data's dtype.
_UNSORTED_EMPTY = {"prod": lambda dt: 1, "max": lowest, "min": highest}


def unsorted_segment_reduce(kind, data, ids, num_segments, acc_dtype=None):
    """unsorted_segment_<kind>, kind one of sum, prod, max, min, mean, sqrt_n."""
    data = np.asarray(data)
    empty = _UNSORTED_EMPTY.get(kind, lambda dt: 0)(data.dtype)
    return _segment(kind, data, ids, num_segments, empty, acc_dtype)


def segment_reduce(kind, data, ids, acc_dtype=None):
    """segment_<kind>, kind one of sum, prod, max, min, mean; gaps hold 0 (1 for prod)."""
    return _segment(kind, data, ids, _sorted_n(ids), 1 if kind == "prod" else 0, acc_dtype)


def sparse_segment_reduce(kind, data, indices, ids, num_segments=None, acc_dtype=None):
    """sparse_segment_<kind>, kind one of sum, mean, sqrt_n."""
    return _sparse(kind, np.asarray(data), indices, ids, num_segments, acc_dtype)


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=np.int32):
    """Counts (or summed weights, in the weights' dtype) per value; length max(arr) + 1 clipped by
    minlength/maxlength; values >= the length are dropped."""
    arr = np.asarray(arr).reshape(-1)
    n = int(arr.max()) + 1 if arr.size else 0
    if minlength is not None:
        n = max(n, minlength)
    if maxlength is not None:
        n = min(n, maxlength)
    out_dtype = np.dtype(dtype) if weights is None else np.asarray(weights).dtype
    out = np.zeros(n, out_dtype)
    w = None if weights is None else np.asarray(weights).reshape(-1)
    for j, v in enumerate(arr):
        if v < n:
            out[v] += 1 if w is None else w[j]
    return out


# ----------------------------------------------------------------------------------------------
# Gather and scatter


def gather(params, indices, axis=0, batch_dims=0):
    """out[b..., i..., rest...] = params[b..., indices[b..., i...], rest...] (the batch dims shared)."""
    params, indices = np.asarray(params), np.asarray(indices)
    axis = int(axis) % params.ndim
    batch_dims = int(batch_dims) % (indices.ndim + 1) if batch_dims < 0 else batch_dims
    if batch_dims:
        return np.stack([gather(params[b], indices[b], axis - 1, batch_dims - 1) for b in range(params.shape[0])])
    out_shape = params.shape[:axis] + indices.shape + params.shape[axis + 1:]
    out = np.empty(out_shape, params.dtype)
    for pre in np.ndindex(params.shape[:axis]):
        for i in np.ndindex(indices.shape):
            out[pre + i] = params[pre + (int(indices[i]),)]
    return out


def batch_gather(params, indices):
    return gather(params, indices, axis=indices.ndim - 1, batch_dims=indices.ndim - 1)


def embedding_lookup(params, ids):
    return gather(params, ids, axis=0)


def gather_nd(params, indices, batch_dims=0):
    params, indices = np.asarray(params), np.asarray(indices)
    if batch_dims:
        return np.stack([gather_nd(params[b], indices[b], batch_dims - 1) for b in range(params.shape[0])])
    depth = indices.shape[-1]
    out = np.empty(indices.shape[:-1] + params.shape[depth:], params.dtype)
    for i in np.ndindex(indices.shape[:-1]):
        out[i] = params[tuple(int(k) for k in indices[i])]
    return out


def scatter_nd(indices, updates, shape):
    """Zeros of `shape` with updates added at indices (duplicates sum)."""
    out = np.zeros(shape, updates.dtype)
    return tensor_scatter_nd_add(out, indices, updates)


def _scatter_nd(tensor, indices, updates, how):
    out = np.array(tensor, copy=True)
    for i in np.ndindex(indices.shape[:-1]):
        where = tuple(int(k) for k in indices[i])
        if how == "update":
            out[where] = updates[i]
        elif how == "add":
            out[where] = out[where] + updates[i]
        else:
            out[where] = out[where] - updates[i]
    return out


def tensor_scatter_nd_update(tensor, indices, updates):
    return _scatter_nd(tensor, indices, updates, "update")


def tensor_scatter_nd_add(tensor, indices, updates):
    return _scatter_nd(tensor, indices, updates, "add")


def tensor_scatter_nd_sub(tensor, indices, updates):
    return _scatter_nd(tensor, indices, updates, "sub")


def dynamic_stitch(indices, data):
    """merged[indices[m][i]] = data[m][i], in order, so a later (m, i) wins; rows = max index + 1."""
    tail = np.asarray(data[0]).shape[np.asarray(indices[0]).ndim:]
    n = max((int(np.max(i)) + 1 for i in indices if np.size(i)), default=0)
    out = np.zeros((n,) + tail, np.asarray(data[0]).dtype)
    for ind, d in zip(indices, data):
        ind, d = np.asarray(ind), np.asarray(d)
        for pos in np.ndindex(ind.shape):
            out[int(ind[pos])] = d[pos]
    return out


def dynamic_partition(data, partitions, num_partitions):
    """Output p holds the rows of data whose partition is p, in order."""
    tail = data.shape[partitions.ndim:]
    outs = [[] for _ in range(num_partitions)]
    for pos in np.ndindex(partitions.shape):
        outs[int(partitions[pos])].append(data[pos])
    return tuple(np.array(o, data.dtype).reshape((len(o),) + tail) for o in outs)


def unique(x):
    """(y, idx): y in order of first appearance, idx int32 with y[idx] == x."""
    y, idx, where = [], [], {}  # where[v]: v's position in y (a dict, so long inputs stay linear)
    for v in x.tolist():
        if v not in where:
            where[v] = len(y)
            y.append(v)
        idx.append(where[v])
    return np.array(y, x.dtype), np.array(idx, np.int32)


def unique_with_counts(x):
    y, idx = unique(x)
    counts = np.array([int(np.sum(idx == k)) for k in range(len(y))], np.int32)
    return y, idx, counts


def invert_permutation(x):
    out = np.empty_like(x)
    for i, p in enumerate(x):
        out[p] = i
    return out


def boolean_mask(tensor, mask, axis=0):
    axis = int(axis)
    lead = tensor.shape[:axis]
    rows = []
    flat_mask = mask.reshape(-1)
    moved = tensor.reshape(lead + (-1,) + tensor.shape[axis + mask.ndim:])
    for j, keep in enumerate(flat_mask):
        if keep:
            rows.append(moved[(builtins.slice(None),) * axis + (j,)])
    if not rows:
        return np.zeros(lead + (0,) + tensor.shape[axis + mask.ndim:], tensor.dtype)
    return np.stack(rows, axis=axis)


# ----------------------------------------------------------------------------------------------
# Sorting


def top_k(x, k):
    """(values, int32 indices) of the k largest along the last axis, descending; ties keep the lower
    index first."""
    vals = np.empty(x.shape[:-1] + (k,), x.dtype)
    idxs = np.empty(x.shape[:-1] + (k,), np.int32)
    for pre in np.ndindex(x.shape[:-1]):
        row = list(x[pre])
        order = sorted(range(len(row)), key=lambda j: (-row[j], j))[:k]
        vals[pre] = [row[j] for j in order]
        idxs[pre] = order
    return vals, idxs


def argsort(x, axis=-1, direction="ASCENDING"):
    """int32 indices that sort along axis (stable)."""
    axis = int(axis) % x.ndim
    moved = np.moveaxis(x, axis, -1)
    out = np.empty(moved.shape, np.int32)
    for pre in np.ndindex(moved.shape[:-1]):
        row = list(moved[pre])
        if direction == "ASCENDING":
            out[pre] = sorted(range(len(row)), key=lambda j: (row[j], j))
        else:
            out[pre] = sorted(range(len(row)), key=lambda j: (-row[j], j))
    return np.moveaxis(out, -1, axis)


def sort(x, axis=-1, direction="ASCENDING"):
    idx = argsort(x, axis, direction)
    return np.take_along_axis(x, idx.astype(np.int64), axis)


# ----------------------------------------------------------------------------------------------
# Shapes, joins and slices


def identity(x):
    return x.copy()


def reshape(x, shape):
    shape = list(shape)
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1]))
        shape[shape.index(-1)] = x.size // known
    out = np.empty(shape, x.dtype)
    out.reshape(-1)[:] = [x[i] for i in np.ndindex(x.shape)] if x.size else []
    return out


def transpose(x, perm=None):
    perm = list(range(x.ndim))[::-1] if perm is None else list(perm)
    out = np.empty(tuple(x.shape[p] for p in perm), x.dtype)
    for idx in np.ndindex(x.shape):
        out[tuple(idx[p] for p in perm)] = x[idx]
    return out


def expand_dims(x, axis):
    axis = axis % (x.ndim + 1)
    return x.reshape(x.shape[:axis] + (1,) + x.shape[axis:])


def squeeze(x, axis=None):
    axes = [d for d in range(x.ndim) if x.shape[d] == 1] if axis is None else [a % x.ndim for a in np.atleast_1d(axis)]
    return x.reshape(tuple(s for d, s in enumerate(x.shape) if d not in axes))


def concat(values, axis):
    axis = int(axis) % values[0].ndim
    return np.concatenate(values, axis)


def stack(values, axis=0):
    axis = axis % (values[0].ndim + 1)
    return np.concatenate([np.expand_dims(v, axis) for v in values], axis)


def unstack(x, axis=0):
    axis = axis % x.ndim
    return tuple(np.take(x, i, axis) for i in range(x.shape[axis]))


def split(x, num_or_size_splits, axis=0):
    """An int splits evenly; a list gives the sizes (one may be -1: the rest)."""
    axis = axis % x.ndim
    if np.ndim(num_or_size_splits) == 0:
        sizes = [x.shape[axis] // num_or_size_splits] * num_or_size_splits
    else:
        sizes = list(num_or_size_splits)
        if -1 in sizes:
            sizes[sizes.index(-1)] = x.shape[axis] - (sum(sizes) + 1)
    out, start = [], 0
    for s in sizes:
        out.append(np.take(x, range(start, start + s), axis))
        start += s
    return tuple(out)


def tile(x, multiples):
    out = np.empty(tuple(s * m for s, m in zip(x.shape, multiples)), x.dtype)
    for idx in np.ndindex(out.shape):
        out[idx] = x[tuple(i % s for i, s in zip(idx, x.shape))]
    return out


def slice(x, begin, size):  # noqa: A001
    """size -1 takes everything from begin to the end of that dim."""
    index = tuple(builtins.slice(b, x.shape[d] if s == -1 else b + s) for d, (b, s) in enumerate(zip(begin, size)))
    return x[index].copy()


def strided_slice(x, begin, end, strides=None, begin_mask=0, end_mask=0, new_axis_mask=0, shrink_axis_mask=0):
    """TF's sparse slice spec (no ellipsis): bit i of a mask refers to spec entry i; begin_mask/end_mask
    ignore begin[i]/end[i]; shrink_axis takes the single index begin[i]; new_axis inserts a dim."""
    strides = [1] * len(begin) if strides is None else strides
    index = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        if new_axis_mask >> i & 1:
            index.append(None)
        elif shrink_axis_mask >> i & 1:
            index.append(int(b))
        else:
            index.append(builtins.slice(None if begin_mask >> i & 1 else b, None if end_mask >> i & 1 else e, s))
    return np.array(x[tuple(index)], copy=True)


def reverse(x, axis):
    index = tuple(builtins.slice(None, None, -1) if d in _axes(axis, x.ndim) else builtins.slice(None)
                  for d in range(x.ndim))
    return x[index].copy()


def pad(x, paddings, mode="CONSTANT", constant_values=0):
    """CONSTANT fills; REFLECT mirrors without the edge; SYMMETRIC mirrors with it."""
    paddings = np.asarray(paddings)
    out_shape = tuple(int(s + p[0] + p[1]) for s, p in zip(x.shape, paddings))
    out = np.full(out_shape, constant_values, x.dtype)
    for idx in np.ndindex(out_shape):
        src = []
        for d, i in enumerate(idx):
            j, n = i - int(paddings[d][0]), x.shape[d]
            if mode == "CONSTANT":
                src.append(j if 0 <= j < n else None)
            elif mode == "REFLECT":
                src.append(-j if j < 0 else (2 * (n - 1) - j if j >= n else j))
            else:  # SYMMETRIC
                src.append(-j - 1 if j < 0 else (2 * n - 1 - j if j >= n else j))
        if None not in src:
            out[idx] = x[tuple(src)]
    return out


def broadcast_to(x, shape):
    out = np.empty(tuple(shape), x.dtype)
    pad_dims = len(shape) - x.ndim
    for idx in np.ndindex(out.shape):
        out[idx] = x[tuple(0 if x.shape[d] == 1 else idx[d + pad_dims] for d in range(x.ndim))]
    return out


def one_hot(indices, depth, on_value=1.0, off_value=0.0, axis=-1, dtype=np.float32):
    """Indices outside [0, depth) give all-off rows; the new axis goes at `axis`."""
    out = np.full(indices.shape + (depth,), off_value, dtype)
    for idx in np.ndindex(indices.shape):
        if 0 <= indices[idx] < depth:
            out[idx + (int(indices[idx]),)] = on_value
    return np.moveaxis(out, -1, axis) if axis != -1 else out


def range_(start, limit, delta, dtype):
    start, limit, delta = (np.asarray(a).item() for a in (start, limit, delta))
    out = []
    v = start
    while (delta > 0 and v < limit) or (delta < 0 and v > limit):
        out.append(v)
        v += delta
    return np.array(out, dtype)


def fill(dims, value):
    return np.full(tuple(dims), value, np.asarray(value).dtype)


# ----------------------------------------------------------------------------------------------
# Linear algebra


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False):
    """Batch matmul with broadcast batch dims; op(x) is x, its transpose or its adjoint."""
    def op(x, t, h):
        x = np.swapaxes(x, -1, -2) if (t or h) else x
        return np.conj(x) if h else x
    a, b = op(a, transpose_a, adjoint_a), op(b, transpose_b, adjoint_b)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    out = np.zeros(batch + (a.shape[-2], b.shape[-1]), np.result_type(a, b))
    for bi in np.ndindex(batch):
        for i in range(a.shape[-2]):
            for j in range(b.shape[-1]):
                acc = out.dtype.type(0)
                for k in range(a.shape[-1]):
                    acc = acc + a[bi + (i, k)] * b[bi + (k, j)]
                out[bi + (i, j)] = acc
    return out


# ----------------------------------------------------------------------------------------------
# nn


def relu(x):
    return np.where(x > 0, x, np.zeros_like(x))


def relu6(x):
    return np.minimum(np.maximum(x, x.dtype.type(0)), x.dtype.type(6))


def leaky_relu(x, alpha=0.2):
    return np.where(x > 0, x, (x * alpha).astype(x.dtype))


def bias_add(value, bias):
    """bias along the last dim (NHWC)."""
    return value + bias.reshape((1,) * (value.ndim - 1) + (-1,))


def softmax(x, axis=-1):
    w = x.astype(np.float64)
    e = np.exp(w - w.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype)


def log_softmax(x, axis=-1):
    w = x.astype(np.float64)
    s = w - w.max(axis=axis, keepdims=True)
    return (s - np.log(np.exp(s).sum(axis=axis, keepdims=True))).astype(x.dtype)


def l2_normalize(x, axis=None, epsilon=1e-12):
    """x / sqrt(max(sum(x**2, axis), epsilon))."""
    s = np.sum(x.astype(np.float64) ** 2, axis=axis, keepdims=True)
    return (x / np.sqrt(np.maximum(s, epsilon))).astype(x.dtype)


def sigmoid_cross_entropy_with_logits(labels, logits):
    """max(x, 0) - x * z + log(1 + exp(-|x|))."""
    x, z = logits.astype(np.float64), labels.astype(np.float64)
    return (np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))).astype(logits.dtype)


def softmax_cross_entropy_with_logits(labels, logits, axis=-1):
    return (-np.sum(labels.astype(np.float64) * log_softmax(logits.astype(np.float64), axis), axis=axis)
            ).astype(logits.dtype)


def sparse_softmax_cross_entropy_with_logits(labels, logits):
    ls = log_softmax(logits.astype(np.float64), -1)
    out = np.empty(labels.shape, logits.dtype)
    for idx in np.ndindex(labels.shape):
        out[idx] = -ls[idx + (int(labels[idx]),)]
    return out


# ----------------------------------------------------------------------------------------------
# TF's gradient conventions where the op is not differentiable (ties, kinks); `dy` is the incoming
# gradient. Numerical Jacobians cannot decide these, so they are written out here.


def maximum_grad(x, y, dz):
    """Ties go to x (TF masks with x >= y); broadcast dims summed back."""
    mask = np.broadcast_to(x >= y, dz.shape)
    return _unbroadcast(np.where(mask, dz, 0), x.shape), _unbroadcast(np.where(mask, 0, dz), y.shape)


def minimum_grad(x, y, dz):
    """Ties go to x (x <= y)."""
    mask = np.broadcast_to(x <= y, dz.shape)
    return _unbroadcast(np.where(mask, dz, 0), x.shape), _unbroadcast(np.where(mask, 0, dz), y.shape)


def _unbroadcast(g, shape):
    while g.ndim > len(shape):
        g = g.sum(0)
    for d, s in enumerate(shape):
        if s == 1 and g.shape[d] != 1:
            g = g.sum(d, keepdims=True)
    return g


def reduce_max_grad(x, axis, dy):
    """dy split evenly among the elements equal to the maximum (TF's _MinOrMaxGrad)."""
    y = reduce_max(x, axis, keepdims=True)
    hit = (x == y).astype(dy.dtype)
    count = reduce_sum(hit, axis, keepdims=True)
    return hit / count * dy.reshape(y.shape)


def reduce_min_grad(x, axis, dy):
    y = reduce_min(x, axis, keepdims=True)
    hit = (x == y).astype(dy.dtype)
    count = reduce_sum(hit, axis, keepdims=True)
    return hit / count * dy.reshape(y.shape)


def _segment_extreme_grad(data, ids, out, dy):
    """Each segment's dy split evenly among its rows' elements equal to the segment's extreme;
    dropped rows (ids < 0) get 0."""
    g = np.zeros(data.shape, dy.dtype)
    count = np.zeros(out.shape, dy.dtype)
    for pos in np.ndindex(ids.shape):
        s = int(ids[pos])
        if s >= 0:
            count[s] += data[pos] == out[s]
    for pos in np.ndindex(ids.shape):
        s = int(ids[pos])
        if s >= 0:
            g[pos] = np.where(data[pos] == out[s], dy[s] / np.maximum(count[s], 1), 0)
    return g


def unsorted_segment_max_grad(data, ids, num_segments, dy):
    return _segment_extreme_grad(data, ids, unsorted_segment_max(data, ids, num_segments), dy)


def unsorted_segment_min_grad(data, ids, num_segments, dy):
    return _segment_extreme_grad(data, ids, unsorted_segment_min(data, ids, num_segments), dy)


def segment_max_grad(data, ids, dy):
    return _segment_extreme_grad(data, ids, segment_max(data, ids), dy)


def relu_grad(x, dy):
    """0 at 0 (features > 0)."""
    return np.where(x > 0, dy, 0)


def relu6_grad(x, dy):
    """Passes only on the open interval (0, 6)."""
    return np.where((x > 0) & (x < 6), dy, 0)


def leaky_relu_grad(x, dy, alpha=0.2):
    """alpha at 0 (features > 0 ? 1 : alpha)."""
    return np.where(x > 0, dy, alpha * dy)


def abs_grad(x, dy):
    """dy * sign(x): 0 at 0."""
    return dy * np.sign(x)


def pow_grad(x, y, dz):
    """dz/dx = y x^(y-1); dz/dy = z log(x) where x > 0 and 0 elsewhere (no NaN at x <= 0)."""
    z = np.power(x, y)
    gx = dz * y * np.power(x, y - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        gy = dz * np.where(x > 0, z * np.log(np.where(x > 0, x, 1)), 0)
    return _unbroadcast(gx, x.shape), _unbroadcast(gy, y.shape)


def div_no_nan_grad(x, y, dz):
    """Both gradients 0 where y == 0."""
    safe = np.where(y == 0, 1, y)
    gx = np.where(y == 0, 0, dz / safe)
    gy = np.where(y == 0, 0, -dz * x / (safe * safe))
    return _unbroadcast(gx, x.shape), _unbroadcast(gy, y.shape)


def top_k_grad(x, k, dvalues):
    """dvalues scattered back to the selected positions (ties: the lower index was selected)."""
    _, idx = top_k(x, k)
    g = np.zeros(x.shape, dvalues.dtype)
    for pre in np.ndindex(x.shape[:-1]):
        for j in range(k):
            g[pre + (int(idx[pre + (j,)]),)] += dvalues[pre + (j,)]
    return g

"""The stages that reshape a stream without user functions: batch, padded_batch, unbatch, shuffle,
repeat, take, skip, shard, cache, enumerate, concatenate, zip. Each works on chunks where it can, so a
pipeline over in-memory arrays runs as NumPy slicing and gathers."""
import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.tensor_spec import TensorSpec
from segflow._data import structure
from segflow._data.instance import scalar_value
from segflow._data.node import INFINITE, UNKNOWN, Node, chunk_len, concat_chunks, rows

__all__ = ["Batch", "PaddedBatch", "Unbatch", "Shuffle", "Repeat", "Take", "Skip", "Shard", "Cache", "Enumerate",
           "Concatenate", "Zip", "static_int"]

_BLOCK = 4096     # a shuffle handles at most this many input rows per step


def static_int(x):
    """A scalar argument's value when known now, else None (a graph tensor read at run time)."""
    if isinstance(x, (int, np.integer)):
        return int(x)
    return None


class _Unary(Node):
    def __init__(self, child, spec=None):
        self.child = child
        self.inputs = (child,)
        self.spec = child.spec if spec is None else spec
        super().__init__()


def _batch_error(what, k, first, other, i):
    return errors.InvalidArgumentError(None, None, f"{what}: Cannot batch tensors with different shapes in "
                                       f"component {k}. First element had shape {list(first)} and element "
                                       f"{i} had shape {list(other)}.")


class Batch(_Unary):
    def __init__(self, child, size, drop_remainder):
        self.size, self.drop = size, bool(drop_remainder)
        n = static_int(size)
        if n is not None and n <= 0:
            raise errors.InvalidArgumentError(None, None, "batch: batch_size must be greater than zero.")
        self.symbolic = () if n is not None else (size,)
        super().__init__(child, structure.batched_spec(child.spec, n if self.drop else None))

    def cardinality(self, ctx):
        n = static_int(self.size) if ctx is None else scalar_value(self.size, ctx, "batch", "batch_size")
        c = self.child.cardinality(ctx)
        if c < 0 or n is None:
            return c if c < 0 else UNKNOWN
        return c // n if self.drop else -(-c // n)

    def elements(self, ctx):
        b = scalar_value(self.size, ctx, "batch", "batch_size")
        if b <= 0:
            raise errors.InvalidArgumentError(None, None, "batch: batch_size must be greater than zero.")
        width = len(self.flat)
        pieces, have = [], 0
        for chunk in self.child.chunks(ctx):
            n, lo = chunk_len(chunk), 0
            while lo < n:
                take = min(b - have, n - lo)
                pieces.append(rows(chunk, lo, lo + take))
                have += take
                lo += take
                if have == b:
                    yield self._join(pieces, width)
                    pieces, have = [], 0
        if have and not self.drop:
            yield self._join(pieces, width)

    def _join(self, pieces, width):
        try:
            return concat_chunks(pieces, width)
        except ValueError:
            for k in range(width):
                first = pieces[0][k].shape[1:]
                i = 0
                for p in pieces:
                    for r in range(len(p[k])):
                        if p[k].shape[1:] != first:
                            raise _batch_error("batch", k, first, p[k].shape[1:], i) from None
                        i += 1
            raise


class PaddedBatch(_Unary):
    def __init__(self, child, size, padded_shapes, padding_values, drop_remainder):
        self.size, self.drop = int(size), bool(drop_remainder)
        if self.size <= 0:
            raise errors.InvalidArgumentError(None, None, "padded_batch: batch_size must be greater than zero.")
        specs = child.flat
        if padded_shapes is None:
            shapes = [s.shape for s in specs]
        else:
            shapes = [tensor_shape.as_shape(p) if p is not None else tensor_shape.unknown_shape()
                      for p in _flat_like(child.spec, padded_shapes, "padded_shapes")]
            shapes = [tensor_shape.TensorShape([None if d == -1 else d for d in s.as_list()])
                      if s.rank is not None else s for s in shapes]
        for s, p in zip(specs, shapes):
            if s.shape.rank is None or p.rank is None:
                raise ValueError("padded_batch: every component needs a known rank to be padded")
            if not p.is_compatible_with(tensor_shape.TensorShape([None] * s.shape.rank)) or \
                    any(a is not None and b is not None and b < a for a, b in zip(s.shape.as_list(), p.as_list())):
                raise ValueError(f"padded_batch: padded shape {p} does not fit the component shape {s.shape}")
        self.shapes = shapes
        if padding_values is None:
            values = [b"" if s.dtype == dtypes.string else 0 for s in specs]
        else:
            values = _flat_like(child.spec, padding_values, "padding_values")
        self.values = [np.asarray(v._value if hasattr(v, "_value") else v).astype(
            object if s.dtype == dtypes.string else s.dtype.as_numpy_dtype) for v, s in zip(values, specs)]
        n = self.size if self.drop else None
        spec = structure.pack(child.spec, [TensorSpec(tensor_shape.TensorShape([n]).concatenate(p), s.dtype)
                                           for s, p in zip(specs, shapes)])
        super().__init__(child, spec)

    def cardinality(self, ctx):
        c = self.child.cardinality(ctx)
        return c if c < 0 else (c // self.size if self.drop else -(-c // self.size))

    def elements(self, ctx):
        group = []
        for e in self.child.elements(ctx):
            group.append(e)
            if len(group) == self.size:
                yield self._pad(group)
                group = []
        if group and not self.drop:
            yield self._pad(group)

    def _pad(self, group):
        out = []
        for k, (shape, fill) in enumerate(zip(self.shapes, self.values)):
            parts = [np.asarray(e[k]) for e in group]
            dims = [d if d is not None else max(p.shape[j] for p in parts) for j, d in enumerate(shape.as_list())]
            batch = np.full([len(parts)] + dims, fill, dtype=parts[0].dtype)
            for i, p in enumerate(parts):
                if any(a > b for a, b in zip(p.shape, dims)):
                    raise errors.InvalidArgumentError(None, None, f"padded_batch: component {k} of shape "
                                                      f"{list(p.shape)} is larger than the padded shape {dims}")
                batch[(i,) + tuple(slice(0, a) for a in p.shape)] = p
            out.append(batch)
        return out


def _flat_like(spec, value, what):
    try:
        return structure.flatten_up_to(spec, value)
    except structure.Mismatch as e:
        raise ValueError(f"padded_batch: {what} must have the structure of the element {spec}: {e}") from None


class Unbatch(_Unary):
    def __init__(self, child):
        super().__init__(child, structure.unbatched_spec(child.spec, "unbatch"))

    def cardinality(self, ctx):
        c = self.child.cardinality(ctx)
        dims = {tensor_shape.dimension_value(s.shape[0]) if s.shape.rank else None for s in self.child.flat}
        if c < 0 or len(dims) != 1 or None in dims:
            return UNKNOWN if c != INFINITE or None in dims else INFINITE
        return c * dims.pop()

    def chunks(self, ctx):
        for e in self.child.elements(ctx):
            n = {np.shape(a)[0] for a in e}
            if len(n) != 1:
                raise errors.InvalidArgumentError(None, None, "unbatch: the components of an element have "
                                                  f"different first dimensions {sorted(n)}")
            if n.pop():
                yield [np.asarray(a) for a in e]


class _ShuffleState:
    def __init__(self, seeds, reshuffle):
        self.seeds = seeds if seeds is not None else tuple(np.random.default_rng().integers(0, 2**62, 2))
        self.rng = np.random.default_rng(self.seeds) if reshuffle else None

    def epoch(self):
        return self.rng if self.rng is not None else np.random.default_rng(self.seeds)


class Shuffle(_Unary):
    """TF's buffer: the first `buffer_size` elements fill it; each output is a uniformly chosen
    element of the buffer, whose place the next input element takes; at the end the buffer is
    emptied in random order. A buffer as large as the data gives a uniform permutation."""

    def __init__(self, child, buffer_size, seeds, reshuffle):
        n = static_int(buffer_size)
        if n is not None and n <= 0:
            raise errors.InvalidArgumentError(None, None, "shuffle: buffer_size must be greater than zero.")
        self.size, self.seeds, self.reshuffle = buffer_size, seeds, bool(reshuffle)
        self.symbolic = () if n is not None else (buffer_size,)
        super().__init__(child)

    def cardinality(self, ctx):
        return self.child.cardinality(ctx)

    def chunks(self, ctx):
        size = scalar_value(self.size, ctx, "shuffle", "buffer_size")
        if size <= 0:
            raise errors.InvalidArgumentError(None, None, "shuffle: buffer_size must be greater than zero.")
        rng = ctx.state_for(self, lambda: _ShuffleState(self.seeds, self.reshuffle)).epoch()
        width = len(self.flat)
        source = self.child.chunks(ctx)
        pieces, have, rest = [], 0, None
        for chunk in source:                       # fill the buffer
            n = chunk_len(chunk)
            take = min(size - have, n)
            pieces.append(rows(chunk, 0, take))
            have += take
            if take < n:
                rest = rows(chunk, take, n)
                break
            if have == size:
                break
        if not have:
            return
        # A buffer of one source piece stays a view until the steady state writes into it.
        buf, owned = (pieces[0], False) if len(pieces) == 1 else (concat_chunks(pieces, width), True)
        if have == size:
            for chunk in _then(rest, source):
                if not owned:
                    buf, owned = [np.array(a) for a in buf], True
                n, lo = chunk_len(chunk), 0
                while lo < n:
                    hi = min(n, lo + _BLOCK)
                    yield self._steps(buf, rows(chunk, lo, hi), size, rng)
                    lo = hi
        order = rng.permutation(have)
        yield [a[order] for a in buf]

    @staticmethod
    def _steps(buf, block, size, rng):
        """Outputs for len(block) steps of a full buffer, and the buffer after them."""
        k = chunk_len(block)
        slots = rng.integers(0, size, k)
        order = np.argsort(slots, kind="stable")
        ss = slots[order]
        repeat = np.zeros(k, bool)
        repeat[1:] = ss[1:] == ss[:-1]
        prev = np.full(k, -1)
        prev[order[repeat]] = order[np.flatnonzero(repeat) - 1]    # the step that last refilled the slot
        last = np.ones(k, bool)
        last[:-1] = ~repeat[1:]
        fresh = prev < 0
        out = []
        for b, c in zip(buf, block):
            o = np.empty_like(c)
            o[fresh] = b[slots[fresh]]
            o[~fresh] = c[prev[~fresh]]
            b[ss[last]] = c[order[last]]
            out.append(o)
        return out


def _then(first, rest):
    if first is not None:
        yield first
    yield from rest


class Repeat(_Unary):
    def __init__(self, child, count):
        self.count = count
        self.symbolic = () if static_int(count) is not None else (count,)
        super().__init__(child)

    def cardinality(self, ctx):
        n = static_int(self.count) if ctx is None else scalar_value(self.count, ctx, "repeat", "count")
        c = self.child.cardinality(ctx)
        if n is None:
            return UNKNOWN
        if n == 0 or c == 0:
            return 0
        if n < 0:
            return INFINITE if c != UNKNOWN else UNKNOWN
        return c * n if c >= 0 else c

    def _run(self, ctx, method):
        n = scalar_value(self.count, ctx, "repeat", "count")
        epoch = 0
        while n < 0 or epoch < n:
            got = False
            for x in getattr(self.child, method)(ctx):
                got = True
                yield x
            epoch += 1
            if not got:          # an empty dataset repeated forever is empty
                return

    def chunks(self, ctx):
        return self._run(ctx, "chunks")

    def elements(self, ctx):
        return self._run(ctx, "elements")


class Take(_Unary):
    def __init__(self, child, count):
        self.count = count
        self.symbolic = () if static_int(count) is not None else (count,)
        super().__init__(child)

    def cardinality(self, ctx):
        n = static_int(self.count) if ctx is None else scalar_value(self.count, ctx, "take", "count")
        c = self.child.cardinality(ctx)
        if n is None:
            return UNKNOWN
        if n < 0:
            return c
        if c == INFINITE:
            return n
        return UNKNOWN if c == UNKNOWN else min(c, n)

    def chunks(self, ctx):
        left = scalar_value(self.count, ctx, "take", "count")
        if left == 0:
            return
        for chunk in self.child.chunks(ctx):
            n = chunk_len(chunk)
            if 0 <= left <= n:
                yield rows(chunk, 0, left) if left < n else chunk
                return
            yield chunk
            left -= n if left > 0 else 0

    def elements(self, ctx):
        left = scalar_value(self.count, ctx, "take", "count")
        if left == 0:
            return
        for e in self.child.elements(ctx):
            yield e
            left -= 1
            if left == 0:
                return


class Skip(_Unary):
    def __init__(self, child, count):
        self.count = count
        self.symbolic = () if static_int(count) is not None else (count,)
        super().__init__(child)

    def cardinality(self, ctx):
        n = static_int(self.count) if ctx is None else scalar_value(self.count, ctx, "skip", "count")
        c = self.child.cardinality(ctx)
        if n is None:
            return UNKNOWN
        if n < 0:
            return 0
        return c if c < 0 else max(0, c - n)

    def chunks(self, ctx):
        left = scalar_value(self.count, ctx, "skip", "count")
        for chunk in self.child.chunks(ctx):
            if left < 0:
                continue
            n = chunk_len(chunk)
            if left >= n:
                left -= n
                continue
            yield rows(chunk, left, n) if left else chunk
            left = 0

    def elements(self, ctx):
        left = scalar_value(self.count, ctx, "skip", "count")
        for e in self.child.elements(ctx):
            if left < 0:
                continue
            if left:
                left -= 1
                continue
            yield e


class Shard(_Unary):
    """Every `num_shards`-th element, from element `index`."""

    def __init__(self, child, num_shards, index):
        self.num, self.index = int(num_shards), int(index)
        if self.num <= 0:
            raise errors.InvalidArgumentError(None, None, "shard: num_shards must be greater than zero.")
        if not 0 <= self.index < self.num:
            raise errors.InvalidArgumentError(None, None, f"shard: index must be in [0, num_shards = {self.num}), "
                                              f"got {self.index}")
        super().__init__(child)

    def cardinality(self, ctx):
        c = self.child.cardinality(ctx)
        return c if c < 0 else c // self.num + (1 if self.index < c % self.num else 0)

    def chunks(self, ctx):
        pos = 0
        for chunk in self.child.chunks(ctx):
            n = chunk_len(chunk)
            first = (self.index - pos) % self.num
            if first < n:
                yield [a[first::self.num] for a in chunk]
            pos += n


class _CacheState:
    def __init__(self):
        self.chunks = None


class Cache(_Unary):
    """In memory: the first complete pass fills it; later passes replay it."""

    def cardinality(self, ctx):
        return self.child.cardinality(ctx)

    def chunks(self, ctx):
        st = ctx.state_for(self, _CacheState)
        if st.chunks is not None:
            yield from st.chunks
            return
        fill = []
        for chunk in self.child.chunks(ctx):
            fill.append(chunk)
            yield chunk
        st.chunks = fill


class Enumerate(_Unary):
    def __init__(self, child, start):
        self.start = int(start)
        super().__init__(child, (TensorSpec([], dtypes.int64), child.spec))

    def cardinality(self, ctx):
        return self.child.cardinality(ctx)

    def chunks(self, ctx):
        i = self.start
        for chunk in self.child.chunks(ctx):
            n = chunk_len(chunk)
            yield [np.arange(i, i + n, dtype=np.int64)] + list(chunk)
            i += n


def _common_spec(a, b):
    if a.dtype != b.dtype:
        return None
    return TensorSpec(a.shape.most_specific_compatible_shape(b.shape)
                      if hasattr(a.shape, "most_specific_compatible_shape") else
                      _common_shape(a.shape, b.shape), a.dtype)


def _common_shape(a, b):
    if a.rank is None or b.rank is None or a.rank != b.rank:
        return tensor_shape.unknown_shape()
    return tensor_shape.TensorShape([x if x == y else None for x, y in zip(a.as_list(), b.as_list())])


class Concatenate(Node):
    def __init__(self, first, second):
        if not structure.same_structure(first.spec, second.spec):
            raise TypeError(f"concatenate: Incompatible dataset elements: {first.spec} and {second.spec}")
        common = [_common_spec(a, b) for a, b in zip(first.flat, second.flat)]
        if any(c is None for c in common):
            raise TypeError(f"concatenate: Incompatible dataset elements (dtypes differ): {first.spec} and "
                            f"{second.spec}")
        self.first, self.second = first, second
        self.inputs = (first, second)
        self.spec = structure.pack(first.spec, common)
        super().__init__()

    def cardinality(self, ctx):
        a, b = self.first.cardinality(ctx), self.second.cardinality(ctx)
        if INFINITE in (a, b):
            return INFINITE
        return UNKNOWN if UNKNOWN in (a, b) else a + b

    def chunks(self, ctx):
        yield from self.first.chunks(ctx)
        yield from self.second.chunks(ctx)

    def elements(self, ctx):
        yield from self.first.elements(ctx)
        yield from self.second.elements(ctx)


class Zip(Node):
    """`nodes`: the flat stages, `shape`: the structure they came in (their specs nest in it)."""

    def __init__(self, nodes, spec):
        self.nodes = list(nodes)
        self.inputs = tuple(self.nodes)
        self.spec = spec
        super().__init__()

    def cardinality(self, ctx):
        cs = [n.cardinality(ctx) for n in self.nodes]
        finite = [c for c in cs if c >= 0]
        if finite and min(finite) == 0:
            return 0
        if UNKNOWN in cs:
            return UNKNOWN
        return min(finite) if finite else INFINITE

    def elements(self, ctx):
        for parts in zip(*(n.elements(ctx) for n in self.nodes)):
            yield [a for p in parts for a in p]

    def chunks(self, ctx):
        streams = [n.chunks(ctx) for n in self.nodes]
        current = [None] * len(streams)
        while True:
            for i, s in enumerate(streams):
                if current[i] is None or chunk_len(current[i]) == 0:
                    current[i] = next(s, None)
                    if current[i] is None:
                        return
            k = min(chunk_len(c) for c in current)
            yield [a for c in current for a in rows(c, 0, k)]
            current = [rows(c, k, chunk_len(c)) for c in current]

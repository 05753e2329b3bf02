"""A pipeline stage: what a `Dataset` wraps. Each stage knows its element spec, its cardinality and
how to produce its elements in one run (`Instance`), either one at a time (`elements`: flat lists of
arrays) or in chunks (`chunks`: flat lists of arrays sharing a leading dimension of one or more
elements). Stages over in-memory arrays produce chunks (slices, no per-element Python work), so a
`batch` after them is NumPy slicing; stages that run user functions produce elements.
"""
import numpy as np

from segflow._data import structure
from segflow._data.instance import INFINITE, UNKNOWN

__all__ = ["Node", "INFINITE", "UNKNOWN", "chunk_len", "row", "rows", "concat_chunks"]


class Node:
    """Subclasses set `spec` and `inputs`, and override `elements` or `chunks` (or both)."""

    spec = None
    inputs = ()
    symbolic = ()        # the graph tensors this stage itself reads (sources, scalar arguments)

    def __init__(self):
        self.flat = structure.flat_specs(self.spec)
        self.pack = structure.packer(self.spec)

    def leaves(self):
        """Every symbolic tensor the pipeline up to this stage reads, each once, in a fixed order."""
        out, seen = [], set()
        stack = [self]
        while stack:
            node = stack.pop()
            for t in node.symbolic:
                if id(t) not in seen:
                    seen.add(id(t))
                    out.append(t)
            stack.extend(reversed(node.inputs))
        return out

    def cardinality(self, ctx):
        """The number of elements (INFINITE, UNKNOWN), statically when ctx is None."""
        return UNKNOWN

    def elements(self, ctx):
        for chunk in self.chunks(ctx):
            n = chunk_len(chunk)
            for i in range(n):
                yield [row(a, i) for a in chunk]

    def chunks(self, ctx):
        for e in self.elements(ctx):
            yield [a[None] if isinstance(a, (np.ndarray, np.generic)) else np.asarray([a], object) for a in e]


def chunk_len(chunk):
    return chunk[0].shape[0] if chunk else 1


def row(a, i):
    v = a[i]
    if a.dtype == object and not isinstance(v, np.ndarray):
        return np.array(v, dtype=object)
    return v


def rows(chunk, lo, hi):
    return [a[lo:hi] for a in chunk]


def concat_chunks(pieces, width):
    """One chunk from a list of chunks (copies; a single piece is copied too, so no batch a caller
    gets shares memory with a source)."""
    if len(pieces) == 1:
        return [np.array(a) for a in pieces[0]]
    return [np.concatenate([p[k] for p in pieces]) for k in range(width)]

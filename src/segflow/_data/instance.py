"""One run of a dataset pipeline: the values of its symbolic sources and the state its stages keep
between epochs (a shuffle's generator, a cache's contents).

Eagerly the state belongs to the dataset objects themselves (`EAGER`), so a reshuffling dataset
gives a new order each time it is iterated and a cache fills once; in graph mode each run of an
iterator's initializer makes a fresh `Instance` in the Session, so re-running it restarts the data.
"""
import weakref

import numpy as np

from segflow._core import errors

__all__ = ["Instance", "EAGER", "INFINITE", "UNKNOWN", "scalar_value"]

INFINITE = -1
UNKNOWN = -2


class Instance:
    """values: {id(symbolic tensor): array} for the sources of one run (None eagerly)."""

    def __init__(self, values=None, keep=()):
        self.values = values
        self._keep = keep             # the tensors whose ids key `values` (so the ids stay theirs)
        self.state = weakref.WeakKeyDictionary()

    def value(self, leaf, what="dataset"):
        """The array of a source leaf: the array itself, or the value of a symbolic tensor."""
        if isinstance(leaf, np.ndarray):
            return leaf
        if self.values is None or id(leaf) not in self.values:
            raise RuntimeError(f"{what}: this dataset reads the graph tensor {leaf.name}; iterate it through "
                               "an iterator in a Session (sf.compat.v1.data.make_initializable_iterator)")
        return self.values[id(leaf)]

    def state_for(self, node, make):
        found = self.state.get(node)
        if found is None:
            found = self.state[node] = make()
        return found


EAGER = Instance()


def scalar_value(x, ctx, what, arg):
    """A scalar argument (a Python int, or a tensor evaluated in this run) as an int."""
    if isinstance(x, (int, np.integer)):
        return int(x)
    v = np.asarray(x if ctx is None else ctx.value(x, what))
    if v.ndim != 0 or v.dtype.kind not in "iu":
        raise errors.InvalidArgumentError(None, None, f"{what}: {arg} must be an integer scalar, got "
                                          f"{v.dtype.name} of shape {list(v.shape)}")
    return int(v)

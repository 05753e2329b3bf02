"""Shared fixtures. `mode` runs a test eagerly and again while building a graph:

    def test_x(mode):
        got = mode.evaluate(sf.math.unsorted_segment_sum(data, ids, 4))

`mode.evaluate(t)` returns NumPy values in both modes (a Session runs the graph)."""
import os

# Under pytest-xdist (`make test` runs `-n auto`) each worker keeps its own Numba cache: two
# processes that compile the same kernel into one cache directory can give two signatures the same
# data file (Numba numbers its cache files without a lock). Set before anything imports Numba.
if os.environ.get("PYTEST_XDIST_WORKER") and "NUMBA_CACHE_DIR" not in os.environ:
    os.environ["NUMBA_CACHE_DIR"] = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                 ".numba_cache", os.environ["PYTEST_XDIST_WORKER"])

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import segflow as sf  # noqa: E402
from segflow.client.session import Session
from segflow.framework import ops
from segflow.util import nest


class _Eager:
    name = "eager"
    eager = True

    def evaluate(self, x):
        return nest.map_structure(_value, x)


def _value(t):
    if isinstance(t, ops.IndexedSlices):
        return ops.IndexedSlicesValue(t.values.numpy(), t.indices.numpy(),
                                      None if t.dense_shape is None else t.dense_shape.numpy())
    if isinstance(t, ops.Tensor):
        return t.numpy()
    if hasattr(t, "numpy"):
        return t.numpy()
    return t


class _Graph:
    name = "graph"
    eager = False

    def __init__(self, graph):
        self.graph = graph
        self.session = Session(graph=graph)

    def evaluate(self, x):
        return self.session.run(x)


@pytest.fixture(params=["eager", "graph"])
def mode(request):
    if request.param == "eager":
        yield _Eager()
        return
    graph = ops.Graph()
    with graph.as_default():
        m = _Graph(graph)
        with m.session.as_default():
            yield m
        m.session.close()

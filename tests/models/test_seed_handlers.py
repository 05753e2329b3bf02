"""The seed's TF contrib split-handler snippets run unchanged but for their imports
(tensorflow... -> segflow...), on small hand-checked data, eagerly and in a graph."""
import pathlib
import textwrap

import numpy as np
import pytest

import segflow as sf
from segflow.contrib.boosted_trees.python.ops import quantile_ops
from segflow.framework import dtypes
from segflow.ops import array_ops, math_ops

SEED = pathlib.Path("/work/shared/seeds/unsorted_segment_sum_examples.txt")


def _snippets(name):
    """Source of every `def <name>():` block in the seed, dedented."""
    lines = SEED.read_text().splitlines()
    out = []
    for i, line in enumerate(lines):
        if line.strip() == f"def {name}():":
            indent = len(line) - len(line.lstrip())
            body = [line]
            for nxt in lines[i + 1:]:
                if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                    break
                body.append(nxt)
            out.append(textwrap.dedent("\n".join(body)))
    return out


pytestmark = pytest.mark.skipif(not SEED.exists(), reason="seed file not available")

PARTITIONS = np.array([7, 2, 7, 2], np.int32)
GRADS = np.array([1.0, 2.0, 4.0, 8.0], np.float32)
HESS = np.array([0.5, 0.25, 1.0, 2.0], np.float32)


def _run(source, env, mode):
    namespace = dict(quantile_ops=quantile_ops, math_ops=math_ops, array_ops=array_ops, dtypes=dtypes,
                     _BIAS_FEATURE_ID=-1, gradients=GRADS, hessians=HESS, example_partition_ids=PARTITIONS)
    namespace.update(env)
    exec(compile(source, str(SEED), "exec"), namespace)
    fn = namespace.get("quantiles_ready") or namespace["active_inputs"]
    return mode.evaluate(fn())


def test_dense_quantiles_ready(mode):
    src = [s for s in _snippets("quantiles_ready") if "[sparse_column_values], []" in s][0]
    values = np.array([0.1, 5.0, 2.0, 2.5], np.float32)  # one value per example
    indices = np.array([[0, 0], [1, 0], [2, 0], [3, 0]], np.int64)
    p, b, g, h = _run(src, dict(sparse_column_values=values, sparse_column_indices=indices,
                                quantile_buckets=np.array([1.0, 2.0, 3.0], np.float32)), mode)
    # buckets by hand: 0.1->0, 5.0->2 (clamped), 2.0->1, 2.5->2; bias rows first (7 then 2)
    np.testing.assert_array_equal(p, [7, 2, 7, 2, 7, 2])
    np.testing.assert_array_equal(b, [-1, -1, 0, 2, 1, 2])
    np.testing.assert_allclose(g, [5.0, 10.0, 1.0, 2.0, 4.0, 8.0])
    np.testing.assert_allclose(h, [1.5, 2.25, 0.5, 0.25, 1.0, 2.0])


def test_multivalent_sparse_quantiles_ready(mode):
    src = [s for s in _snippets("quantiles_ready") if "[sparse_column_indices]" in s][0]
    values = np.array([0.5, 3.5, 1.5, 9.0], np.float32)
    indices = np.array([[0, 0], [0, 1], [2, 1], [3, 0]], np.int64)  # example 0 twice, example 1 none
    p, b, g, h = _run(src, dict(sparse_column_values=values, sparse_column_indices=indices,
                                quantile_buckets=np.array([1.0, 2.0], np.float32)), mode)
    np.testing.assert_array_equal(p, [7, 2, 7, 7, 7, 2])
    np.testing.assert_array_equal(b, [[-1, 0], [-1, 0], [0, 0], [1, 1], [1, 1], [1, 0]])
    np.testing.assert_allclose(g, [5.0, 10.0, 1.0, 1.0, 4.0, 8.0])  # bias counts example 0 once
    np.testing.assert_allclose(h, [1.5, 2.25, 0.5, 0.5, 1.0, 2.0])


def test_categorical_active_inputs(mode):
    src = _snippets("active_inputs")[0]

    class Handler:
        _sparse_int_column = sf.SparseTensor(np.array([[0, 0], [1, 0], [1, 1], [3, 0]], np.int64),
                                             np.array([4, 0, 9, 4], np.int64), [4, 2])

    p, b, g, h = _run(src, dict(self=Handler()), mode)  # `self` is the handler the method closes over
    np.testing.assert_array_equal(p, [7, 2, 7, 2, 2, 2])
    np.testing.assert_array_equal(b, [[-1, 0], [-1, 0], [4, 0], [0, 0], [9, 0], [4, 0]])
    np.testing.assert_allclose(g, [5.0, 10.0, 1.0, 2.0, 2.0, 8.0])
    np.testing.assert_allclose(h, [1.5, 2.25, 0.5, 0.25, 0.25, 2.0])

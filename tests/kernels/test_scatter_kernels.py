"""kernels.scatter: the compiled row scatter against a plain loop and the NumPy fallback."""
import numpy as np
import pytest

from segflow.kernels import scatter


def ref(table, rows, updates, how):
    out = table.copy()
    for i, r in enumerate(rows):
        a, b = out[r], updates[i]
        out[r] = {"update": b, "add": a + b, "sub": a - b, "mul": a * b,
                  "div": a // b if out.dtype.kind in "iu" else a / b,
                  "min": np.minimum(a, b), "max": np.maximum(a, b)}[how]
    return out


@pytest.mark.parametrize("how", sorted(scatter.HOWS))
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int32, np.int64])
def test_scatter_rows_matches_loop_and_fallback(how, dtype):
    rng = np.random.default_rng(scatter.HOWS[how])
    table = rng.integers(1, 9, size=(6, 3)).astype(dtype)
    rows = rng.integers(0, 6, size=40)                 # many duplicates
    updates = rng.integers(1, 4, size=(40, 3)).astype(dtype)
    want = ref(table, rows, updates, how)
    got = table.copy()
    scatter.scatter_rows(got, rows, updates, how)
    fallback = table.copy()
    scatter._numpy_scatter(fallback, rows, updates, scatter.HOWS[how])
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-3)
    np.testing.assert_allclose(fallback.astype(np.float64), want.astype(np.float64), rtol=1e-3)


def test_scatter_rows_empty_and_float_division_by_zero():
    table = np.ones((2, 2))
    scatter.scatter_rows(table, np.zeros(0, np.int64), np.zeros((0, 2)), "add")
    np.testing.assert_array_equal(table, np.ones((2, 2)))
    scatter.scatter_rows(table, np.array([1]), np.array([[0.0, -0.0]]), "div")
    assert np.isinf(table[1]).all() and table[1, 0] > 0 > table[1, 1]

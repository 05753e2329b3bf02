"""The row gather kernel equals np.take(table, rows, axis=0) for every dtype, shape and size."""
import numpy as np
import pytest

from segflow.kernels import gather as gk

try:
    import ml_dtypes
    BF16 = [ml_dtypes.bfloat16]
except ImportError:  # pragma: no cover
    BF16 = []


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.int32, np.int64, np.uint16,
                                   np.bool_, np.complex64, np.complex128] + BF16)
@pytest.mark.parametrize("inner", [(), (1,), (3,), (64,), (5, 3)])
@pytest.mark.parametrize("n", [0, 7, 40_000])
@pytest.mark.parametrize("always_compiled", [False, True])
def test_matches_np_take(dtype, inner, n, always_compiled, monkeypatch):
    if always_compiled:   # every size through the compiled loop (odd row widths copy uint8/uint32 words)
        monkeypatch.setattr(gk, "_PARALLEL_MIN_BYTES", 0)
    rng = np.random.default_rng(0)
    table = (rng.standard_normal((1000,) + inner) * 50).astype(dtype)
    rows = rng.integers(0, 1000, n)
    got = gk.take_rows(table, rows)
    want = np.take(table, rows, axis=0)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_int32_rows_and_non_contiguous_table():
    rng = np.random.default_rng(1)
    table = rng.standard_normal((5000, 64)).astype(np.float32)
    rows = rng.integers(0, 5000, 30_000).astype(np.int32)
    np.testing.assert_array_equal(gk.take_rows(table, rows), table[rows])
    strided = table[:, ::2]
    np.testing.assert_array_equal(gk.take_rows(strided, rows), strided[rows])


def test_object_dtype_falls_back():
    table = np.array([["a"], ["bb"], ["c"]], dtype=object)
    np.testing.assert_array_equal(gk.take_rows(table, np.array([2, 0, 2])), table[[2, 0, 2]])

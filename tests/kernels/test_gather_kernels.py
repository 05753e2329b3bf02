"""The row gather kernel equals np.take(table, rows, axis=0) for every dtype, shape and size."""
import numpy as np
import pytest

from segflow.kernels import _common, gather as gk

try:
    import ml_dtypes
    BF16 = [ml_dtypes.bfloat16]
except ImportError:  # pragma: no cover
    BF16 = []


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8, np.int32, np.int64, np.uint16,
                                   np.bool_, np.complex64, np.complex128] + BF16)
@pytest.mark.parametrize("inner", [(), (1,), (3,), (8,), (16,), (64,), (5, 3), (4, 2)])
@pytest.mark.parametrize("n", [0, 7, 40_000])
@pytest.mark.parametrize("always_compiled", [False, True, "streaming"])
def test_matches_np_take(dtype, inner, n, always_compiled, monkeypatch):
    if always_compiled:   # every size through the compiled loop (odd row widths copy uint8/uint32 words)
        monkeypatch.setattr(gk, "_PARALLEL_MIN_BYTES", 0)
    if always_compiled == "streaming":   # and written with streaming stores, as outputs past the cache are
        monkeypatch.setattr(gk, "streaming_pays", lambda nbytes: True)
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
    np.testing.assert_array_equal(gk.take_rows(table, rows[::2]), table[rows[::2]])   # strided rows


def test_int32_rows_reach_the_loop_without_a_widening_copy(monkeypatch):
    seen = []
    loop = gk._take_rows_nb
    monkeypatch.setattr(gk, "_take_rows_nb", lambda table, rows, *rest: seen.append(rows) or loop(table, rows, *rest))
    rng = np.random.default_rng(2)
    table = rng.standard_normal((5000, 64)).astype(np.float32)
    for dtype in (np.int32, np.int64):
        rows = rng.integers(0, 5000, 30_000).astype(dtype)
        np.testing.assert_array_equal(gk.take_rows(table, rows), table[rows])
        assert seen[-1] is rows
    rows = rng.integers(0, 5000, 30_000).astype(np.int16)       # other widths are widened
    np.testing.assert_array_equal(gk.take_rows(table, rows), table[rows])
    assert seen[-1].dtype == np.int64


def test_object_dtype_falls_back():
    table = np.array([["a"], ["bb"], ["c"]], dtype=object)
    np.testing.assert_array_equal(gk.take_rows(table, np.array([2, 0, 2])), table[[2, 0, 2]])


def test_the_last_level_cache_size_is_read_in_bytes():
    # sysfs writes sizes as "32768K"; a misread suffix would give kilobytes (or the default)
    llc = _common.last_level_cache_bytes()
    assert 1 << 20 <= llc <= 1 << 33


def test_a_gather_larger_than_the_cache_streams_and_matches(monkeypatch):
    seen = []
    monkeypatch.setattr(gk, "streaming_pays", lambda nbytes: seen.append(nbytes) or True)
    rng = np.random.default_rng(2)
    table = rng.standard_normal((20_000, 64)).astype(np.float32)
    rows = rng.integers(0, 20_000, 50_000)
    np.testing.assert_array_equal(gk.take_rows(table, rows), table[rows])
    assert seen == [50_000 * 256]


def test_rows_of_64_bytes_take_their_own_loop(monkeypatch):
    """Rows of one cache line (16 float32, 8 float64, 4 complex128, 64 int8) go to the fixed-width
    loop, others to the general one; both give np.take's bytes."""
    monkeypatch.setattr(gk, "_PARALLEL_MIN_BYTES", 0)
    seen = []
    for name in ("_take_rows_nb", "_take_rows_64b_nb"):
        loop = getattr(gk, name)
        monkeypatch.setattr(gk, name, lambda *a, _loop=loop, _name=name: seen.append(_name) or _loop(*a))
    rng = np.random.default_rng(5)
    for dtype, inner, want in ((np.float32, (16,), "_take_rows_64b_nb"), (np.float64, (8,), "_take_rows_64b_nb"),
                               (np.complex128, (2, 2), "_take_rows_64b_nb"), (np.int8, (64,), "_take_rows_64b_nb"),
                               (np.float32, (12,), "_take_rows_nb"), (np.float64, (16,), "_take_rows_nb")):
        table = (rng.standard_normal((3000,) + inner) * 100).astype(dtype)
        rows = rng.integers(0, 3000, 5000)
        assert gk.take_rows(table, rows).tobytes() == np.take(table, rows, axis=0).tobytes()
        assert seen[-1] == want, (dtype, inner)

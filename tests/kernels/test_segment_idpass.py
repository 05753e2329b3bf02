"""The compiled pass over segment ids (kernels/segment/idpass.py) against its NumPy twin: counts of
out-of-range ids and descents and the max, for both id dtypes, bounds at and past the dtype's
limits, spans that start inside the array, and the parallel chunked pass."""
import numpy as np
import pytest

from segflow.kernels.segment import checks
from segflow.kernels.segment.idpass import check_ids, check_span

pytest.importorskip("numba")

I32 = np.iinfo(np.int32)
BOUNDS = [(0, 10), (checks.NO_LOWER, 10), (0, 0), (3, 7), (0, 1 << 40), (-5, I32.max),
          (0, (1 << 63) - 1), (checks.NO_LOWER, 1)]


def _ids(dtype, n, seed):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    x = rng.integers(-3, 13, n).astype(dtype)
    x[rng.integers(0, n, 4)] = [info.min, info.max, info.min + 1, info.max - 1]
    x[: n // 3].sort()                       # a sorted run, so descents are not everywhere
    return x


def _expected(x, lo, hi):
    x = x.astype(object)                     # Python ints: no overflow at the bounds
    bad = sum(1 for v in x if v < lo or v >= hi)
    desc = sum(1 for a, b in zip(x[:-1], x[1:]) if b < a)
    return bad, desc, (max(x) if len(x) else -(1 << 62))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("lo, hi", BOUNDS)
def test_span_counts_match_python_ints(dtype, lo, hi):
    x = _ids(dtype, 997, 7)
    a_lo, top_ok = checks.bounds(x.dtype, lo, hi)
    assert type(a_lo) is x.dtype.type and type(top_ok) is x.dtype.type
    for a, b in [(0, x.size), (0, 1), (1, x.size), (500, 501), (333, 334), (400, 997), (5, 5)]:
        got = check_span(x, a_lo, top_ok, a, b)
        want = list(_expected(x[a:b], lo, hi))
        if 0 < a < b:                        # the first id of a span is compared with the one before
            want[1] += int(x[a] < x[a - 1])
        assert tuple(map(int, got)) == tuple(want), (a, b)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("lo, hi", BOUNDS[:4])
def test_parallel_chunks_add_up_to_the_whole(dtype, lo, hi):
    x = _ids(dtype, 10_001, 3)
    want = checks._numpy_check_ids(x, lo, hi)
    a_lo, top_ok = checks.bounds(x.dtype, lo, hi)
    for nchunks, workers in [(1, 1), (3, 2), (7, 2), (16, 1)]:
        found = check_ids(x, a_lo, top_ok, nchunks, workers)
        got = (int(found[:, 0].sum()), int(found[:, 1].sum()), int(found[:, 2].max()))
        assert got == want, (nchunks, workers)
    assert tuple(map(int, checks.stats(x, lo, hi, 2))) == want


def test_descents_at_chunk_boundaries_are_counted_once():
    x = np.arange(12, dtype=np.int32)
    x[[4, 8]] = [0, 1]                       # descents exactly where 3 chunks of 4 begin
    found = check_ids(x, np.int32(0), np.int32(11), 3, 2)
    assert int(found[:, 1].sum()) == checks._numpy_check_ids(x, 0, 12)[1] == 2

"""The hashing unique kernel against tests/reference.py's unique_with_counts: order of first appearance,
idx, counts."""
import numpy as np
import pytest

import reference as R
from segflow.kernels import unique as uk

pytestmark = pytest.mark.skipif(not uk.HAVE_NUMBA, reason="the hashing kernel needs Numba")


CASES = {
    "repeats": lambda rng: rng.integers(0, 50, 1000),
    "wide": lambda rng: rng.integers(0, 10**6, 20000),
    "negative": lambda rng: rng.integers(-7, 7, 300),
    "extremes": lambda rng: np.array([np.iinfo(np.int64).min, 0, -1, np.iinfo(np.int64).max, 0, -1,
                                      np.iinfo(np.int64).min]),
    "strided": lambda rng: np.arange(0, 4 << 12, 4)[rng.permutation(1 << 12)],
    "single": lambda rng: np.array([5]),
    "all_same": lambda rng: np.full(777, 3),
    # past 131,072 keys the table passes L2: slots are prefetched and repeats of the key before
    # skip the probe (sorted and grouped ids, and random ones, take that loop)
    "large_sorted": lambda rng: np.sort(rng.integers(-3, 30000, 200000)),
    "large_grouped": lambda rng: np.repeat(rng.integers(0, 10**6, 50000), rng.integers(1, 6, 50000)),
    "large_random": lambda rng: rng.integers(-10**9, 10**9, 150000),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("out_idx", [np.int32, np.int64])
def test_matches_reference(case, dtype, out_idx):
    x = CASES[case](np.random.default_rng(0))
    if dtype == np.int32:
        x = np.clip(x, np.iinfo(np.int32).min, np.iinfo(np.int32).max)
    x = x.astype(dtype)
    got = uk.unique_int(x, out_idx)
    y, idx, count = R.unique_with_counts(x)
    want = y, idx.astype(out_idx), count.astype(out_idx)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    assert np.array_equal(got[0][got[1]], x)


def test_non_contiguous_input():
    x = np.arange(20, dtype=np.int64)[::2] % 3
    y, idx, count = uk.unique_int(x)
    np.testing.assert_array_equal(y, [0, 2, 1])
    np.testing.assert_array_equal(y[idx], x)
    np.testing.assert_array_equal(count, [4, 3, 3])

"""Segment-reduction kernels against the NumPy references in tests/reference.py (never against their
own output)."""
import ml_dtypes
import numba
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reference as R
from segflow.kernels import segment as seg
from segflow.kernels._common import BadInput

BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64)]
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64,
                              np.uint8, np.uint16, np.uint32, np.uint64)]
COMPLEX = [np.dtype(np.complex64), np.dtype(np.complex128)]
ALL = FLOATS + INTS + COMPLEX
UNSORTED_KINDS = ["sum", "prod", "max", "min", "mean", "sqrt_n"]
SORTED_KINDS = ["sum", "prod", "max", "min", "mean"]
SPARSE_KINDS = ["sum", "mean", "sqrt_n"]
SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ----------------------------------------------------------------------------- references

def kinds_for(dtype, kinds):
    """The kinds a dtype supports: no max/min for complex, mean/sqrt_n only for inexact types."""
    out = []
    for kind in kinds:
        if kind in ("max", "min") and dtype.kind == "c":
            continue
        if kind in ("mean", "sqrt_n") and dtype.kind in "iu":
            continue
        out.append(kind)
    return out


def ref_unsorted(kind, data, ids, n):
    """tests/reference.py's unsorted segment ops, accumulating wide (integers wrap like TF's)."""
    data = np.asarray(data)
    return R.unsorted_segment_reduce(kind, data, ids, n, acc_dtype=R.wide(data.dtype))


def ref_sorted(kind, data, ids):
    """tests/reference.py's sorted segment ops, accumulating wide; gaps hold 0 (1 for prod)."""
    data = np.asarray(data)
    return R.segment_reduce(kind, data, ids, acc_dtype=R.wide(data.dtype))


def ref_sparse(kind, data, indices, ids, n):
    data = np.asarray(data)
    return R.sparse_segment_reduce(kind, data, indices, ids, n, acc_dtype=R.wide(data.dtype))


def ref_sparse_grad(kind, grad, indices, ids, dim0):
    out = np.zeros((dim0,) + grad.shape[1:], R.wide(grad.dtype))
    counts = np.bincount(ids, minlength=grad.shape[0])
    for i, s in zip(indices, ids):
        scale = {"sum": 1.0, "mean": 1.0 / counts[s], "sqrt_n": 1.0 / np.sqrt(counts[s])}[kind]
        out[i] += grad[s].astype(out.dtype) * scale
    return out.astype(grad.dtype)


def assert_matches(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape,
                                                                 want.dtype, want.shape)
    if want.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want)
        return
    tol = {2: 4e-3 if want.dtype == BF16 else 2e-3, 4: 2e-6, 8: 1e-12, 16: 1e-12}
    rtol = tol[want.dtype.itemsize if want.dtype.kind != "c" else want.dtype.itemsize // 2]
    g = got.astype(np.complex128 if want.dtype.kind == "c" else np.float64)
    w = want.astype(g.dtype)
    np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * 4)


def make_data(rng, shape, dtype):
    """Values near 1 (products stay finite), small integers for integer types, some negative."""
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else -3
        return rng.integers(lo, 4, size=shape).astype(dtype)
    values = rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1, 1], size=shape)
    if dtype.kind == "c":
        values = values + 1j * rng.uniform(-1, 1, size=shape)
    return values.astype(dtype)


IDS = np.array([3, 0, -1, 3, 1, 0, 5, 3, -2, 1])   # segments 2 and 4 stay empty; 6 segments


# ----------------------------------------------------------------------------- unsorted

@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_unsorted_every_dtype_and_kind(dtype):
    rng = np.random.default_rng(1)
    for shape in [(10,), (10, 3)]:
        data = make_data(rng, shape, dtype)
        for kind in kinds_for(dtype, UNSORTED_KINDS):
            got = seg.unsorted_segment_reduce(kind, data, IDS, 6)
            assert_matches(got, ref_unsorted(kind, data, IDS, 6))
    for kind in kinds_for(dtype, UNSORTED_KINDS):  # sorted ids take the run-length loop
        ids = np.sort(IDS)
        assert_matches(seg.unsorted_segment_reduce(kind, data, ids, 7),
                       ref_unsorted(kind, data, ids, 7))


def test_named_wrappers():
    data = np.arange(20.0).reshape(10, 2)
    for name in UNSORTED_KINDS:
        got = getattr(seg, f"unsorted_{name}")(data, IDS, 6)
        assert_matches(got, ref_unsorted(name, data, IDS, 6))
    ids = np.sort(np.abs(IDS))
    for name in SORTED_KINDS:
        assert_matches(getattr(seg, f"sorted_{name}")(data, ids), ref_sorted(name, data, ids))


def test_unsorted_nd_ids_and_int32_ids():
    rng = np.random.default_rng(2)
    data = rng.normal(size=(4, 5, 3)).astype(np.float32)
    ids = rng.integers(-1, 7, size=(4, 5))
    for id_dtype in (np.int32, np.int64):
        for kind in ("sum", "max", "mean"):
            got = seg.unsorted_segment_reduce(kind, data, ids.astype(id_dtype), 7)
            assert_matches(got, ref_unsorted(kind, data, ids, 7))
    # ids covering all dimensions: scalar rows
    got = seg.unsorted_sum(data, rng.integers(0, 3, size=(4, 5, 3)), 3)
    assert got.shape == (3,)


def test_unsorted_empty_segments_and_extremes():
    data = np.array([1.0, -np.inf, 2.0], np.float32)
    ids = np.array([0, 1, 0])
    low, high = np.finfo(np.float32).min, np.finfo(np.float32).max
    np.testing.assert_array_equal(seg.unsorted_max(data, ids, 3), [2.0, low, low])
    np.testing.assert_array_equal(seg.unsorted_min(data, ids, 3), [1.0, -np.inf, high])
    np.testing.assert_array_equal(seg.unsorted_prod(data, ids, 3), [2.0, -np.inf, 1.0])
    np.testing.assert_array_equal(seg.unsorted_mean(data, ids, 3), [1.5, -np.inf, 0.0])
    np.testing.assert_array_equal(seg.unsorted_sqrt_n(data, ids, 3), np.float32([3 / np.sqrt(2), -np.inf, 0]))
    ints = seg.unsorted_max(np.array([5], np.uint64), np.array([1]), 2)
    np.testing.assert_array_equal(ints, np.array([0, 5], np.uint64))
    ints = seg.unsorted_min(np.array([5], np.int8), np.array([1]), 2)
    np.testing.assert_array_equal(ints, np.array([127, 5], np.int8))


def test_unsorted_ties_nan_and_big_integers():
    data = np.array([2.0, 2.0, np.nan, 1.0, -0.5])
    ids = np.array([0, 0, 1, 1, 2])
    np.testing.assert_array_equal(seg.unsorted_max(data, ids, 3), [2.0, np.nan, -0.5])
    np.testing.assert_array_equal(seg.unsorted_min(data, ids[::-1].copy(), 3),
                                  [2.0, np.nan, -0.5][::-1])
    big = np.array([2**62 + 1, 2**62 + 3, -(2**63)], np.int64)  # exact beyond float64
    np.testing.assert_array_equal(seg.unsorted_sum(big[:2], [0, 0], 1), [-(2**63) + 4])
    np.testing.assert_array_equal(seg.unsorted_max(big, [0, 0, 0], 1), [2**62 + 3])
    u = np.array([2**64 - 1, 2**63, 1], np.uint64)
    np.testing.assert_array_equal(seg.unsorted_max(u, [0, 0, 1], 2), np.array([2**64 - 1, 1],
                                                                               np.uint64))
    np.testing.assert_array_equal(seg.unsorted_min(u, [0, 0, 1], 2), np.array([2**63, 1],
                                                                               np.uint64))
    np.testing.assert_array_equal(seg.unsorted_sum(u, [0, 0, 0], 1), np.array([2**63], np.uint64))


def test_unsorted_integer_wraparound_matches_modular_sum():
    data = np.full(300, 100, np.int8)
    ids = np.zeros(300, np.int64)
    np.testing.assert_array_equal(seg.unsorted_sum(data, ids, 1), np.array([300 * 100]).astype(np.int8))
    np.testing.assert_array_equal(seg.unsorted_prod(np.full(9, 3, np.uint8), np.zeros(9, int), 1),
                                  [np.uint8(3**9 % 256)])


def test_unsorted_empty_inputs():
    for tail in [(), (3,), (0,)]:
        data = np.zeros((0,) + tail, np.float32)
        got = seg.unsorted_max(data, np.zeros(0, np.int64), 4)
        assert got.shape == (4,) + tail and got.dtype == np.float32
        assert (got == np.finfo(np.float32).min).all()
        assert seg.unsorted_sum(data, np.zeros(0, np.int32), 0).shape == (0,) + tail
    # num_segments = 0 with every row dropped
    assert seg.unsorted_sum(np.ones((3, 2)), np.array([-1, -1, -1]), 0).shape == (0, 2)
    # empty trailing dimension still checks the ids
    with pytest.raises(BadInput, match=r"segment_ids\[1\] = 9"):
        seg.unsorted_sum(np.ones((2, 0)), np.array([0, 9]), 3)


def test_float32_sums_accumulate_wide():
    data = np.array([2.0**24] + [1.0] * 8, np.float32)
    ids = np.zeros(9, np.int64)
    assert seg.unsorted_sum(data, ids, 1)[0] == 2.0**24 + 8
    assert seg.sorted_sum(data, ids)[0] == 2.0**24 + 8
    native = seg.unsorted_sum(data, ids, 1, accumulate="native")
    assert native.dtype == np.float32 and native[0] in (2.0**24, 2.0**24 + 8)


# ----------------------------------------------------------------------------- strategies

@pytest.fixture
def small_thresholds(monkeypatch):
    """Sends small inputs through the multi-chunk, multi-thread code paths."""
    monkeypatch.setattr(seg.plan, "_SMALL", 1)
    monkeypatch.setattr(seg.plan, "_PARALLEL_WORK", 1)
    monkeypatch.setattr(seg.plan, "_CHECK_SERIAL_BYTES", 0)


@pytest.mark.parametrize("strategy", ["private", "bucketed", "runs"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64], ids=str)
def test_strategies_against_reference(strategy, dtype, small_thresholds, monkeypatch):
    if strategy == "bucketed":
        monkeypatch.setattr(seg.plan, "_PRIVATE_MAX_BYTES", 0)
        monkeypatch.setattr(seg.plan, "_BUCKET_BYTES", 64)
    rng = np.random.default_rng(3)
    dtype = np.dtype(dtype)
    for n, tail, nseg in [(400, (), 7), (600, (5,), 20), (50, (2, 3), 200), (1, (), 3)]:
        ids = rng.integers(-2, nseg, size=n)
        if strategy == "runs":
            ids = np.sort(ids)
        data = make_data(rng, (n,) + tail, dtype)
        for kind in kinds_for(dtype, UNSORTED_KINDS):
            for threads in (1, 2, 3):
                got = seg.unsorted_segment_reduce(kind, data, ids, nseg, num_threads=threads)
                assert_matches(got, ref_unsorted(kind, data, ids, nseg))


def test_long_runs_and_short_runs(small_thresholds):
    rng = np.random.default_rng(4)
    for nseg in (3, 5000):  # few long runs (4-way sums, galloping) and many short ones
        ids = np.sort(rng.integers(0, nseg, size=3000))
        data = rng.normal(size=3000)
        for kind in SORTED_KINDS:
            assert_matches(seg.sorted_segment_reduce(kind, data, ids), ref_sorted(kind, data, ids))
            assert_matches(seg.sorted_segment_reduce(kind, data[:, None], ids),
                           ref_sorted(kind, data[:, None], ids))


def bits(a):
    return np.ascontiguousarray(a).tobytes()


@pytest.mark.parametrize("layout", ["short", "long run over the middle", "one run", "negatives first",
                                    "one row", "two rows", "gaps", "huge negatives", "random runs",
                                    "ids past 2**24"])
@pytest.mark.parametrize("accumulate,id_dtype", [("wide", np.int64), ("native", np.int64), ("wide", np.int32)])
def test_short_runs_two_chains_match_one_row_order(layout, accumulate, id_dtype):
    """Sorted D=1 ids with short runs take a loop that runs the two halves of each block as two
    chains, cut at a run start: every segment must still be the row-order result (checked bit
    for bit against a plain Python loop in float64, or in float32 for native accumulation),
    wherever the cut falls."""
    rng = np.random.default_rng(21)
    n, nseg = 5001, 5000
    ids = {"short": np.sort(rng.integers(0, nseg, n)),
           "long run over the middle": np.concatenate([np.arange(2000), np.full(1001, 2000),
                                                       np.arange(2001, 4001)[:2000]]),
           "one run": np.full(n, 7),
           "negatives first": np.sort(rng.integers(-50, nseg, n)),
           "one row": np.array([3]),
           "two rows": np.array([1, 2]),
           "gaps": np.sort(rng.choice(nseg, n // 3)).repeat(3),
           # new runs are told by comparing ids as float64: ids this far apart from 0 collide there
           # (dropped rows only), and runs of random length end on every kind of boundary
           "huge negatives": np.concatenate([[-2**62, -2**62 + 1, -2**60 - 1, -2**60, -1],
                                             np.sort(rng.integers(0, nseg, n - 5))]),
           "random runs": np.cumsum(rng.random(n) < 0.6) - 1,
           # neighbours there are equal as float32: the compare must stay exact
           "ids past 2**24": 2**24 + 1 + np.cumsum(rng.random(n) < 0.6)}[layout]
    if layout == "ids past 2**24":
        nseg = 2**24 + n + 2
    if id_dtype == np.int32:
        if ids.min() < -2**31:
            pytest.skip("ids of this layout do not fit in int32")
        ids = ids.astype(np.int32)
    data = (rng.standard_normal(ids.size) * 10.0 ** rng.integers(-5, 6, ids.size)).astype(np.float32)
    acc = np.float32 if accumulate == "native" else np.float64
    values = [acc(x) for x in data.tolist()]
    for kind, combine, start in (("sum", lambda a, b: a + b, 0.0), ("max", max, -np.inf),
                                 ("min", min, np.inf), ("prod", lambda a, b: a * b, 1.0)):
        want = {}
        for s, x in zip(ids.tolist(), values):
            if s >= 0:
                want[s] = combine(want.get(s, acc(start)), x)
        got = seg.unsorted_segment_reduce(kind, data, ids, nseg, num_threads=1, accumulate=accumulate)
        keys = sorted(want)
        np.testing.assert_array_equal(got[keys], np.array([want[k] for k in keys]).astype(np.float32))


@pytest.mark.parametrize("strategy", ["private", "bucketed", "runs"])
def test_results_do_not_depend_on_thread_count(strategy, small_thresholds, monkeypatch):
    if strategy == "bucketed":
        monkeypatch.setattr(seg.plan, "_PRIVATE_MAX_BYTES", 0)
        monkeypatch.setattr(seg.plan, "_BUCKET_BYTES", 256)
    rng = np.random.default_rng(5)
    for tail, nseg in [((), 50), ((4,), 300)]:
        ids = rng.integers(-1, nseg, size=5000)
        if strategy == "runs":
            ids = np.sort(ids)
        data = (rng.normal(size=(5000,) + tail) * 10.0 ** rng.integers(-6, 7, size=(5000,) + tail)
                ).astype(np.float32)
        for kind in ("sum", "mean", "max"):
            outs = [seg.unsorted_segment_reduce(kind, data, ids, nseg, num_threads=t)
                    for t in (1, 2, 3, 4)]
            assert all(bits(o) == bits(outs[0]) for o in outs)
            old = numba.get_num_threads()
            try:
                by_setting = []
                for t in (1, numba.config.NUMBA_NUM_THREADS):
                    numba.set_num_threads(t)
                    by_setting.append(seg.unsorted_segment_reduce(kind, data, ids, nseg))
            finally:
                numba.set_num_threads(old)
            assert all(bits(o) == bits(outs[0]) for o in by_setting)
    ids = np.sort(rng.integers(0, 300, size=5000))
    data = rng.normal(size=(5000, 3))
    indices = rng.permutation(5000)
    outs = [seg.sparse_segment_reduce("mean", data, indices, ids, num_threads=t)
            for t in (1, 2, 4)]
    assert all(bits(o) == bits(outs[0]) for o in outs)


def test_accumulators_that_fit_in_l3_match_reference_for_any_thread_count():
    """Random ids into 2-8 MB of accumulators take a serial scatter (rows up to 16) or two
    private chunks (wider rows), never the bucket partition; the results are the reference's and
    the same bits for every thread count (real sizes: no threshold is patched)."""
    rng = np.random.default_rng(12)
    for n, D, nseg, loop in [(70_000, 16, 20_000, "serial"), (150_000, 32, 10_000, "private")]:
        plan = seg.plan.plan_for("sum", "unsorted", np.dtype(np.float32))
        assert seg.plan.reduce_strategy(plan, n, D, nseg, 2, False)[0] == loop
        ids = rng.integers(-1, nseg, size=n)
        data = rng.normal(size=(n, D)).astype(np.float32)
        for kind in ("sum", "max"):
            outs = [seg.unsorted_segment_reduce(kind, data, ids, nseg, num_threads=t) for t in (1, 2, 3)]
            assert_matches(outs[0], ref_unsorted(kind, data, ids, nseg))
            assert all(bits(o) == bits(outs[0]) for o in outs)


# ----------------------------------------------------------------------------- sorted

@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_sorted_every_dtype_and_kind(dtype):
    rng = np.random.default_rng(6)
    ids = np.array([0, 0, 2, 2, 2, 3, 6, 6])  # gaps at 1, 4, 5
    for shape in [(8,), (8, 2)]:
        data = make_data(rng, shape, dtype)
        for kind in kinds_for(dtype, SORTED_KINDS):
            assert_matches(seg.sorted_segment_reduce(kind, data, ids), ref_sorted(kind, data, ids))


def test_sorted_gaps_and_empty():
    ids = np.array([1, 1, 3])
    data = np.array([-5.0, -7.0, -1.0])
    np.testing.assert_array_equal(seg.sorted_max(data, ids), [0, -5, 0, -1])
    np.testing.assert_array_equal(seg.sorted_min(-data, ids), [0, 5, 0, 1])
    np.testing.assert_array_equal(seg.sorted_prod(data, ids), [1, 35, 1, -1])
    np.testing.assert_array_equal(seg.sorted_mean(data, ids), [0, -6, 0, -1])
    np.testing.assert_array_equal(seg.sorted_max(np.array([-np.inf]), [0]), [-np.inf])
    empty = seg.sorted_sum(np.zeros((0, 3), np.float16), np.zeros(0, np.int32))
    assert empty.shape == (0, 3) and empty.dtype == np.float16


# ----------------------------------------------------------------------------- sparse

@pytest.mark.parametrize("dtype", FLOATS + COMPLEX + [np.dtype(np.int32)], ids=str)
def test_sparse_every_dtype_and_kind(dtype):
    rng = np.random.default_rng(7)
    data = make_data(rng, (6, 3), dtype)
    indices = np.array([5, 0, 0, 3, 1, 5, 2])
    ids = np.array([0, 0, 1, 1, 1, 3, 3])  # segment 2 empty
    for kind in kinds_for(dtype, SPARSE_KINDS):
        assert_matches(seg.sparse_segment_reduce(kind, data, indices, ids),
                       ref_sparse(kind, data, indices, ids, 4))
        assert_matches(seg.sparse_segment_reduce(kind, data, indices, ids, num_segments=6),
                       ref_sparse(kind, data, indices, ids, 6))
        assert_matches(seg.sparse_segment_reduce(kind, data[:, 0], indices, ids),
                       ref_sparse(kind, data[:, 0], indices, ids, 4))


def test_sparse_empty_and_long(small_thresholds):
    data = np.arange(6.0).reshape(3, 2)
    got = seg.sparse_segment_reduce("sum", data, np.zeros(0, np.int64), np.zeros(0, np.int64),
                                    num_segments=2)
    np.testing.assert_array_equal(got, np.zeros((2, 2)))
    assert seg.sparse_segment_reduce("mean", data, [], []).shape == (0, 2)
    rng = np.random.default_rng(8)
    big = rng.normal(size=(100, 3))
    indices = rng.integers(0, 100, size=2000)
    ids = np.sort(rng.integers(0, 30, size=2000))
    for kind in SPARSE_KINDS:
        for d in (big, big[:, 0]):
            assert_matches(seg.sparse_segment_reduce(kind, d, indices, ids),
                           ref_sparse(kind, d, indices, ids, 30))


@pytest.mark.parametrize("kind", SPARSE_KINDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64], ids=str)
def test_sparse_grad(kind, dtype):
    rng = np.random.default_rng(9)
    dtype = np.dtype(dtype)
    grad = make_data(rng, (4, 3), dtype)
    indices = np.array([5, 0, 0, 3, 1, 5, 2])
    ids = np.array([0, 0, 1, 1, 1, 3, 3])
    assert_matches(seg.sparse_segment_grad(kind, grad, indices, ids, 7),
                   ref_sparse_grad(kind, grad, indices, ids, 7))


# ----------------------------------------------------------------------------- counts, bincount

def test_unsorted_segment_counts():
    np.testing.assert_array_equal(seg.unsorted_segment_counts(IDS, 6), [2, 2, 0, 3, 0, 1])
    got = seg.unsorted_segment_counts(np.array([[1, -1], [1, 0]], np.int32), 3)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, [1, 2, 0])
    np.testing.assert_array_equal(seg.unsorted_segment_counts([], 2), [0, 0])


def test_bincount():
    arr = np.array([[1, 1], [4, 0]], np.int32)
    got = seg.bincount(arr)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [1, 2, 0, 0, 1])
    np.testing.assert_array_equal(seg.bincount(arr, minlength=7), [1, 2, 0, 0, 1, 0, 0])
    np.testing.assert_array_equal(seg.bincount(arr, maxlength=2), [1, 2])
    np.testing.assert_array_equal(seg.bincount(arr, minlength=7, maxlength=3), [1, 2, 0])
    assert seg.bincount(arr, dtype=np.int64).dtype == np.int64
    w = np.array([[0.5, 0.25], [2.0, 1.0]], np.float32)
    got = seg.bincount(arr, weights=w)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, [1.0, 0.75, 0, 0, 2.0])
    np.testing.assert_array_equal(seg.bincount(arr, weights=w, maxlength=4), [1.0, 0.75, 0, 0])
    assert seg.bincount(np.zeros(0, np.int32)).shape == (0,)
    assert seg.bincount(np.zeros(0, np.int32), minlength=3).tolist() == [0, 0, 0]


# ----------------------------------------------------------------------------- errors

def test_unsorted_errors():
    data = np.ones((4, 2))
    with pytest.raises(BadInput, match=r"segment_ids\[2\] = 4 is out of range \[0, 4\)"):
        seg.unsorted_sum(data, np.array([0, 1, 4, 9]), 4)
    with pytest.raises(BadInput, match=r"segment_ids\[1,0\] = 5 is out of range \[0, 3\)"):
        seg.unsorted_max(np.ones((2, 2)), np.array([[0, 1], [5, 0]]), 3)
    with pytest.raises(BadInput, match="num_segments = -1"):
        seg.unsorted_sum(data, np.zeros(4, int), -1)
    with pytest.raises(BadInput, match=r"shape \(3,\) is not a prefix of data shape \(4, 2\)"):
        seg.unsorted_sum(data, np.zeros(3, int), 2)
    with pytest.raises(BadInput, match="complex"):
        seg.unsorted_max(np.ones(4, np.complex64), np.zeros(4, int), 2)
    with pytest.raises(BadInput, match="sqrt_n needs a floating or complex"):
        seg.unsorted_sqrt_n(np.ones(4, np.int32), np.zeros(4, int), 2)
    with pytest.raises(BadInput, match="int32 or int64"):
        seg.unsorted_sum(data, np.zeros(4), 2)
    with pytest.raises(BadInput, match="not supported"):
        seg.unsorted_sum(np.ones(4, bool), np.zeros(4, int), 2)
    with pytest.raises(BadInput) as info:
        seg.unsorted_sum(data, np.array([0, 1, 4, 9]), 4)
    assert info.value.input_name == "segment_ids"
    with pytest.raises(ValueError, match="kind"):
        seg.unsorted_segment_reduce("median", data, np.zeros(4, int), 2)


def test_sorted_errors():
    with pytest.raises(BadInput, match=r"not increasing: segment_ids\[2\] = 1 follows 3"):
        seg.sorted_sum(np.ones(4), np.array([0, 3, 1, 4]))
    with pytest.raises(BadInput, match=r"segment_ids\[0\] = -1 is negative"):
        seg.sorted_sum(np.ones(3), np.array([-1, 0, 0]))
    with pytest.raises(BadInput, match=r"shape \(3,\) must be 1-D .*data shape \(4,\)"):
        seg.sorted_sum(np.ones(4), np.array([0, 0, 1]))
    with pytest.raises(BadInput, match=r"shape \(2, 2\) must be 1-D"):
        seg.sorted_max(np.ones((2, 2)), np.zeros((2, 2), int))
    with pytest.raises(BadInput, match="complex"):
        seg.sorted_min(np.ones(2, np.complex128), np.zeros(2, int))


def test_sparse_errors():
    data = np.ones((3, 2))
    with pytest.raises(BadInput, match=r"indices\[1\] = 3 is out of range \[0, 3\)"):
        seg.sparse_segment_reduce("sum", data, [0, 3], [0, 0])
    with pytest.raises(BadInput, match=r"indices\[0\] = -1 is out of range"):
        seg.sparse_segment_reduce("sum", data, [-1, 0], [0, 0])
    with pytest.raises(BadInput, match=r"not increasing: segment_ids\[1\] = 0 follows 1"):
        seg.sparse_segment_reduce("mean", data, [0, 1], [1, 0])
    with pytest.raises(BadInput, match=r"segment_ids\[1\] = 2 is out of range \[0, 2\)"):
        seg.sparse_segment_reduce("sum", data, [0, 1], [0, 2], num_segments=2)
    with pytest.raises(BadInput, match=r"segment_ids\[0\] = -1 is negative"):
        seg.sparse_segment_reduce("sum", data, [0, 1], [-1, 0])
    with pytest.raises(BadInput, match=r"shape \(3,\) must equal indices shape \(2,\)"):
        seg.sparse_segment_reduce("sum", data, [0, 1], [0, 0, 0])
    with pytest.raises(ValueError, match="kind"):
        seg.sparse_segment_reduce("max", data, [0, 1], [0, 0])
    with pytest.raises(BadInput, match=r"indices\[0\] = 7 is out of range \[0, 5\)"):
        seg.sparse_segment_grad("sum", data, [7], [0], 5)
    with pytest.raises(BadInput, match=r"segment_ids\[0\] = 3 is out of range \[0, 3\)"):
        seg.sparse_segment_grad("mean", data, [0], [3], 5)


def test_count_and_bincount_errors():
    with pytest.raises(BadInput, match=r"segment_ids\[0\] = 2 is out of range \[0, 2\)"):
        seg.unsorted_segment_counts([2], 2)
    with pytest.raises(BadInput, match=r"arr\[1\] = -3 is negative"):
        seg.bincount(np.array([1, -3]))
    with pytest.raises(BadInput, match="weights"):
        seg.bincount(np.array([1, 3]), weights=np.ones(3))
    with pytest.raises(BadInput, match="maxlength = -1"):
        seg.bincount(np.array([1, 3]), maxlength=-1)


HUGE = 2**40


def test_huge_ids_are_refused_by_every_kernel(small_thresholds):
    data = np.ones((6, 2), np.float32)
    ids = np.array([0, 1, HUGE, 1, 0, 2], np.int64)
    for kind in UNSORTED_KINDS:
        with pytest.raises(BadInput, match=rf"segment_ids\[2\] = {HUGE} is out of range"):
            seg.unsorted_segment_reduce(kind, data, ids, 3)
        with pytest.raises(BadInput, match=rf"segment_ids\[5\] = {HUGE}"):
            seg.unsorted_segment_reduce(kind, data, np.sort(ids), 3)
    with pytest.raises(BadInput, match=rf"segment_ids\[5\] = {HUGE}"):
        seg.unsorted_segment_counts(np.sort(ids), 3)
    for kind in SORTED_KINDS:
        with pytest.raises(BadInput, match=rf"follows {HUGE}"):
            seg.sorted_segment_reduce(kind, data, ids)
    for kind in SPARSE_KINDS:
        with pytest.raises(BadInput, match=rf"indices\[2\] = {HUGE}"):
            seg.sparse_segment_reduce(kind, data, ids, np.zeros(6, np.int64))
        with pytest.raises(BadInput, match=rf"segment_ids\[5\] = {HUGE}"):
            seg.sparse_segment_reduce(kind, data, np.zeros(6, np.int64), np.sort(ids),
                                      num_segments=3)
        with pytest.raises(BadInput, match=rf"indices\[2\] = {HUGE}"):
            seg.sparse_segment_grad(kind, data, ids, np.zeros(6, np.int64), 6)
        with pytest.raises(BadInput, match=rf"segment_ids\[2\] = {HUGE}"):
            seg.sparse_segment_grad(kind, data, np.zeros(6, np.int64), ids, 6)
    # bincount ignores values at or above maxlength, however large
    np.testing.assert_array_equal(seg.bincount(ids, maxlength=3), [2, 2, 1])


# ----------------------------------------------------------------------------- fallback

@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.int8)])
def test_small_inputs_take_the_numpy_path_on_flat_elements(dtype):
    """Inputs below _TINY elements run `_numpy_reduce`, which feeds ufunc.at flat elements (index
    id * width + column) in the accumulator's dtype: rows of 2 x 3, negative ids dropped, empty
    segments filled, for every kind, unsorted and sorted, against the reference."""
    rng = np.random.default_rng(12)
    data = make_data(rng, (40, 2, 3), dtype)
    assert data.size < seg.plan._TINY
    ids = rng.integers(-2, 9, size=40)
    ids[ids == 4] = 5                       # segment 4 stays empty
    for kind in kinds_for(dtype, UNSORTED_KINDS):
        assert_matches(seg.unsorted_segment_reduce(kind, data, ids, 11), ref_unsorted(kind, data, ids, 11))
    sids = np.sort(np.abs(ids))             # gaps at 4, and the sorted rule's fill
    for kind in kinds_for(dtype, SORTED_KINDS):
        assert_matches(seg.sorted_segment_reduce(kind, data, sids), ref_sorted(kind, data, sids))


def test_numpy_fallback_matches_reference(monkeypatch):
    """Without Numba every public function runs on `_numpy_reduce` and `_numpy_check_ids`."""
    rng = np.random.default_rng(10)
    data = rng.normal(size=(10, 3))
    ints = rng.integers(-5, 5, size=(10, 3)).astype(np.uint16)
    keep = IDS >= 0
    for kind in UNSORTED_KINDS:
        plan = seg.plan.Plan(kind, "unsorted", data.dtype)
        init, fill = plan.start_and_fill(sorted_rule=False)
        out = seg.api._numpy_reduce(plan.op, plan.scale, data[keep], IDS[keep], 6, init, fill,
                                    np.float64)
        assert_matches(out, ref_unsorted(kind, data, IDS, 6))
    monkeypatch.setattr(seg.plan, "HAVE_NUMBA", False)
    for kind in UNSORTED_KINDS:
        assert_matches(seg.unsorted_segment_reduce(kind, data, IDS, 6),
                       ref_unsorted(kind, data, IDS, 6))
    for kind in ("sum", "max", "min", "prod"):
        assert_matches(seg.unsorted_segment_reduce(kind, ints, IDS, 6),
                       ref_unsorted(kind, ints, IDS, 6))
    ids = np.sort(np.abs(IDS))
    for kind in SORTED_KINDS:
        assert_matches(seg.sorted_segment_reduce(kind, data, ids), ref_sorted(kind, data, ids))
    indices = np.array([5, 0, 0, 3, 1, 5, 2])
    sids = np.array([0, 0, 1, 1, 1, 3, 3])
    for kind in SPARSE_KINDS:
        assert_matches(seg.sparse_segment_reduce(kind, data, indices, sids),
                       ref_sparse(kind, data, indices, sids, 4))
    np.testing.assert_array_equal(seg.unsorted_segment_counts(IDS, 6), [2, 2, 0, 3, 0, 1])
    with pytest.raises(BadInput, match=r"segment_ids\[2\] = 4 is out of range \[0, 4\)"):
        seg.unsorted_sum(data[:4], np.array([0, 1, 4, 9]), 4)
    with pytest.raises(BadInput, match="not increasing"):
        seg.sorted_sum(np.ones(3), np.array([0, 3, 1]))


# ----------------------------------------------------------------------------- properties

@st.composite
def unsorted_cases(draw):
    n = draw(st.integers(0, 60))
    tail = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    nseg = draw(st.integers(0, 12))
    ids = draw(st.lists(st.integers(-2, max(nseg - 1, -1)), min_size=n, max_size=n))
    seed = draw(st.integers(0, 2**31))
    return np.array(ids, np.int64), tail, nseg, seed


@SETTINGS
@given(case=unsorted_cases(), kind=st.sampled_from(UNSORTED_KINDS),
       dtype=st.sampled_from([np.float64, np.float32, np.int64]), presorted=st.booleans())
def test_property_unsorted(case, kind, dtype, presorted):
    ids, tail, nseg, seed = case
    dtype = np.dtype(dtype)
    if kind in ("mean", "sqrt_n") and dtype.kind == "i":
        kind = "sum"
    if presorted:
        ids = np.sort(ids)
    data = make_data(np.random.default_rng(seed), ids.shape + tail, dtype)
    assert_matches(seg.unsorted_segment_reduce(kind, data, ids, nseg),
                   ref_unsorted(kind, data, ids, nseg))


@SETTINGS
@given(ids=st.lists(st.integers(0, 15), max_size=60).map(sorted),
       kind=st.sampled_from(SORTED_KINDS), width=st.integers(1, 3), seed=st.integers(0, 99))
def test_property_sorted(ids, kind, width, seed):
    ids = np.array(ids, np.int64)
    data = make_data(np.random.default_rng(seed), (len(ids), width), np.dtype(np.float64))
    assert_matches(seg.sorted_segment_reduce(kind, data, ids), ref_sorted(kind, data, ids))


@SETTINGS
@given(ids=st.lists(st.integers(0, 9), max_size=40).map(sorted),
       kind=st.sampled_from(SPARSE_KINDS), rows=st.integers(1, 8), seed=st.integers(0, 99))
def test_property_sparse(ids, kind, rows, seed):
    rng = np.random.default_rng(seed)
    ids = np.array(ids, np.int64)
    indices = rng.integers(0, rows, size=len(ids))
    data = make_data(rng, (rows, 2), np.dtype(np.float64))
    assert_matches(seg.sparse_segment_reduce(kind, data, indices, ids, num_segments=10),
                   ref_sparse(kind, data, indices, ids, 10))
    assert_matches(seg.sparse_segment_grad(kind, data[:1].repeat(10, 0), indices, ids, rows),
                   ref_sparse_grad(kind, data[:1].repeat(10, 0), indices, ids, rows))


@pytest.mark.parametrize("strategy", ["private", "bucketed", "runs", "serial"])
@pytest.mark.parametrize("D", [1, 16])
def test_max_and_min_propagate_nan_on_every_path(strategy, D, small_thresholds, monkeypatch):
    """max / min combine through np.maximum / np.minimum (branch-free): a NaN anywhere in a
    segment makes it NaN, on every strategy, as TF's CPU kernels do."""
    if strategy == "bucketed":
        monkeypatch.setattr(seg.plan, "_PRIVATE_MAX_BYTES", 0)
        monkeypatch.setattr(seg.plan, "_BUCKET_BYTES", 64)
        monkeypatch.setattr(seg.plan, "_BUCKET_MIN", 0)
        monkeypatch.setattr(seg.plan, "_BUCKET_MIN_THREADS_1D", 1)
        monkeypatch.setattr(seg.plan, "_BAND_MAX_BYTES", 0)
    if strategy == "serial":
        monkeypatch.setattr(seg.plan, "_BUCKET_MIN", 1 << 40)
        monkeypatch.setattr(seg.plan, "_MAX_PARTS", 1)
    rng = np.random.default_rng(8)
    n, nseg = 6000, 300
    ids = rng.integers(-1, nseg, n)
    if strategy == "runs":
        ids = np.sort(ids)
    data = rng.standard_normal((n, D)).astype(np.float32)
    data[rng.random((n, D)) < 0.002] = np.nan
    for kind, ufunc, start in (("max", np.maximum, np.finfo(np.float32).min),
                               ("min", np.minimum, np.finfo(np.float32).max)):
        want = np.full((nseg, D), start, np.float32)
        keep = ids >= 0
        ufunc.at(want, ids[keep], data[keep])
        loop = seg.plan.reduce_strategy(seg.plan.plan_for(kind, "unsorted", data.dtype), n, D, nseg, 2,
                                        strategy == "runs")[0]
        assert loop == strategy
        got = seg.unsorted_segment_reduce(kind, data[:, 0] if D == 1 else data, ids, nseg, num_threads=2)
        np.testing.assert_array_equal(got.reshape(nseg, D), want)
        assert np.isnan(want).any() and not np.isnan(want).all()

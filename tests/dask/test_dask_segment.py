"""segflow.dask's segment reductions and bincount on a real LocalCluster (conftest.py), checked
against the in-memory ops (sf.math) and NumPy."""
import subprocess
import sys

import dask
import dask.array as da
import numpy as np
import pytest

import segflow as sf
import segflow.dask as sfd
from segflow.dask import _threads

KINDS = ("sum", "prod", "max", "min", "mean", "sqrt_n")
N, NSEG = 240, 11
RNG = np.random.default_rng(7)
IDS = RNG.integers(-2, NSEG, size=N)            # negative ids: rows dropped, as in TF
IDS[IDS == 5] = 6                                # segment 5 stays empty: the fill values show
CHUNKINGS = {"uneven, with an empty chunk": (50, 0, 101, 89), "one chunk": (N,), "many": (20,) * 11 + (13, 7)}


def _data(dtype, tail=(3,)):
    if np.dtype(dtype).kind == "f":
        return RNG.normal(size=(N,) + tail).astype(dtype)
    return RNG.integers(-9, 10, size=(N,) + tail).astype(dtype)


def _dtypes(kind):
    return (np.float32, np.float64) if kind == "sqrt_n" else (np.float32, np.float64, np.int32, np.int8)


def _check(got, want, dtype):
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype, got.shape, want.shape)
    if np.dtype(dtype).kind in "iu":
        np.testing.assert_allclose(got, want, rtol=1e-12)
    else:
        np.testing.assert_allclose(got, want, rtol=2e-6 if np.dtype(dtype) == np.float32 else 1e-12, atol=1e-6)


def test_every_reduction_matches_the_in_memory_op(client):
    # every kind and dtype on uneven chunks (one empty), whole or partitioned output; every
    # chunking for two of them (kept few: each graph costs the loaded test machine seconds)
    cases, lazy = [], []
    for kind in KINDS:
        for n, dtype in enumerate(_dtypes(kind)):
            x = _data(dtype)
            want = getattr(sf.math, f"unsorted_segment_{kind}")(x, IDS, NSEG).numpy()
            chunkings = CHUNKINGS if kind in ("sum", "max") and dtype == np.float32 else ["uneven, with an empty chunk"]
            for name in chunkings:
                X = da.from_array(x, chunks=(CHUNKINGS[name], 3))
                ids = da.from_array(IDS, chunks=(CHUNKINGS[name],))
                output_chunks = (None, 4)[(n + len(name)) % 2]
                lazy.append(getattr(sfd, f"unsorted_segment_{kind}")(X, ids, NSEG, output_chunks=output_chunks,
                                                                     split_every=3))
                cases.append((kind, dtype, name, output_chunks, want))
    assert {c[3] for c in cases} == {None, 4}
    got = dask.compute(*lazy)
    for (kind, dtype, name, oc, want), g in zip(cases, got):
        try:
            _check(g, want, dtype)
        except AssertionError as e:
            raise AssertionError(f"{kind} {np.dtype(dtype).name} {name} output_chunks={oc}: {e}") from None
    # the fill values of the empty segment are the in-memory op's (TF's): lowest / highest finite
    assert got[[c[0] for c in cases].index("max")][5, 0] == np.finfo(np.float32).min
    assert got[[c[0] for c in cases].index("min")][5, 0] == np.finfo(np.float32).max


def test_numpy_ids_ids_chunked_otherwise_and_multi_dim_ids(client):
    x = _data(np.float64, (2, 3))
    ids2 = RNG.integers(-1, NSEG, size=(N, 2))
    X = da.from_array(x, chunks=(60, 1, 3))                  # chunked along a non-row axis too
    want = sf.math.unsorted_segment_sum(x, ids2, NSEG).numpy()
    a = sfd.unsorted_segment_sum(X, ids2, NSEG)                               # NumPy ids
    b = sfd.unsorted_segment_max(X, da.from_array(ids2, chunks=(37, 1)), NSEG)  # rechunked to data's rows
    c = sfd.unsorted_segment_mean(x, da.from_array(ids2, chunks=(100, 2)), NSEG)  # NumPy data
    ga, gb, gc = dask.compute(a, b, c)
    np.testing.assert_allclose(ga, want, rtol=1e-12)
    np.testing.assert_array_equal(gb, sf.math.unsorted_segment_max(x, ids2, NSEG).numpy())
    np.testing.assert_allclose(gc, sf.math.unsorted_segment_mean(x, ids2, NSEG).numpy(), rtol=1e-12)
    assert a.shape == (NSEG, 3)


def test_output_partitioned_by_segment_range(client):
    x = _data(np.float64)
    X = da.from_array(x, chunks=(60, 3))
    got = sfd.unsorted_segment_sum(X, IDS, NSEG, output_chunks=3)
    assert got.chunks[0] == (3, 3, 3, 2)
    # one partial task per (row chunk, output block): each holds only its block's rows
    partials = [layer for name, layer in got.dask.layers.items() if name.startswith("segflow-sum-partials")]
    assert len(partials) == 1 and len(partials[0]) == 4 * 4
    assert {k[1:] for k in partials[0].keys()} == {(i, j, 0) for i in range(4) for j in range(4)}
    np.testing.assert_allclose(got.compute(), sf.math.unsorted_segment_sum(x, IDS, NSEG).numpy(), rtol=1e-12)
    # automatically, once the output exceeds Dask's array.chunk-size
    with dask.config.set({"array.chunk-size": "100B"}):
        auto = sfd.unsorted_segment_min(X, IDS, NSEG)
    assert len(auto.chunks[0]) > 1 and max(auto.chunks[0]) * 3 * 8 <= 100
    np.testing.assert_array_equal(auto.compute(), sf.math.unsorted_segment_min(x, IDS, NSEG).numpy())


def test_empty_inputs(client):
    x = np.zeros((0, 2), np.float32)
    got = sfd.unsorted_segment_max(da.from_array(x), np.zeros(0, np.int64), 3).compute()
    np.testing.assert_array_equal(got, sf.math.unsorted_segment_max(x, np.zeros(0, np.int64), 3).numpy())
    assert sfd.unsorted_segment_sum(da.ones((5, 2), chunks=2), -np.ones(5, np.int32), 0).compute().shape == (0, 2)


def test_bad_ids_raise_from_the_task_that_read_them(client):
    bad = IDS.copy()
    bad[130] = NSEG + 4
    X = da.from_array(_data(np.float64), chunks=(60, 3))
    message = rf"UnsortedSegmentSum: input 'segment_ids': segment_ids\[130\] = {NSEG + 4} is out of range \[0, {NSEG}\)"
    with pytest.raises(sf.errors.InvalidArgumentError, match=message):
        sf.math.unsorted_segment_sum(_data(np.float64), bad, NSEG)   # the in-memory op says the same
    for oc in (None, 4):
        with pytest.raises(sf.errors.InvalidArgumentError, match=message):
            sfd.unsorted_segment_sum(X, bad, NSEG, output_chunks=oc).compute()
    with pytest.raises(sf.errors.InvalidArgumentError, match=r"UnsortedSegmentMean: input 'segment_ids': segment_ids\[130\]"):
        sfd.unsorted_segment_mean(X, da.from_array(bad, chunks=50), NSEG).compute()


def test_bad_arguments_raise_when_the_graph_is_built():
    X = da.ones((6, 2), chunks=3)
    with pytest.raises(sf.errors.InvalidArgumentError, match="UnsortedSegmentSum: input 'num_segments': Cannot specify "
                                                             "a negative value"):
        sfd.unsorted_segment_sum(X, np.zeros(6, np.int64), -1)
    with pytest.raises(sf.errors.InvalidArgumentError, match="input 'num_segments': must be a Python or NumPy int"):
        sfd.unsorted_segment_sum(X, np.zeros(6, np.int64), da.from_array(np.int64(3)))
    with pytest.raises(sf.errors.InvalidArgumentError, match="UnsortedSegmentMax: input 'segment_ids': must be int16"):
        sfd.unsorted_segment_max(X, np.zeros(6, np.float32), 2)
    with pytest.raises(sf.errors.InvalidArgumentError, match=r"shape \[5\] is not a prefix of data's shape \[6, 2\]"):
        sfd.unsorted_segment_min(X, np.zeros(5, np.int64), 2)
    with pytest.raises(sf.errors.InvalidArgumentError, match="UnsortedSegmentSqrtN: input 'data': dtype int64"):
        sfd.unsorted_segment_sqrt_n(X.astype(np.int64), np.zeros(6, np.int64), 2)


def test_bincount(client):
    a = RNG.integers(0, 40, size=(N, 2)).astype(np.int32)
    w = RNG.normal(size=(N, 2))
    A = da.from_array(a, chunks=(CHUNKINGS["uneven, with an empty chunk"], 2))
    W = da.from_array(w, chunks=(60, 1))
    cases = [({}, sf.math.bincount(a)), ({"weights": W}, sf.math.bincount(a, weights=w)),
             ({"minlength": 50}, sf.math.bincount(a, minlength=50)),
             ({"maxlength": 7, "dtype": np.int64}, sf.math.bincount(a, maxlength=7, dtype=sf.int64)),
             ({"minlength": 9, "maxlength": 9}, sf.math.bincount(a, minlength=9, maxlength=9))]
    lazy = [sfd.bincount(A, split_every=2, **kw) for kw, _ in cases]
    assert lazy[-1].shape == (9,)
    for got, (kw, want) in zip(dask.compute(*lazy), cases):
        assert got.dtype == want.numpy().dtype, kw
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-12, err_msg=str(kw))
    neg = a.copy()
    neg[150, 1] = -3
    with pytest.raises(sf.errors.InvalidArgumentError, match=r"Bincount: input 'arr': arr\[150,1\] = -3 is negative"):
        sfd.bincount(da.from_array(neg, chunks=(70, 2))).compute()
    with pytest.raises(sf.errors.InvalidArgumentError, match="Bincount: input 'arr': dtype float64"):
        sfd.bincount(da.ones(3, chunks=2))


def _numba_threads():
    import numba
    return numba.get_num_threads(), _threads.worker_threads()


def test_tasks_use_the_workers_threads(client):
    # each single-thread worker runs its kernels on one thread (Numba's count is per thread)
    got = dask.compute(*[dask.delayed(_threads.run_task, pure=False)(_numba_threads) for _ in range(4)])
    assert all(g == (1, 1) for g in got), got
    # outside a worker: the process's planned threads, shared by the tasks running at once
    assert _threads.task_threads() == _threads.worker_threads()


def test_import_segflow_does_not_import_dask():
    code = ("import sys, segflow, segflow.dask, segflow.dask._segment, segflow.dask._bincount; "
            "assert 'dask' not in sys.modules and 'distributed' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)

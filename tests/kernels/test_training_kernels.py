"""lazy_adam_rows against the unfused NumPy expressions, bit for bit: unique rows (compiled pass) and
rows with duplicates (last scatter_update wins for m and v; every duplicate's step applies to var)."""
import numpy as np
import pytest

from segflow.kernels import training as tk

HYPER = dict(lr=0.01, beta1=0.9, beta2=0.999, epsilon=1e-7)


def reference(W, M, V, rows, g, lr, beta1, beta2, epsilon):
    t = W.dtype.type
    lr, b1, b2, eps = t(lr), t(beta1), t(beta2), t(epsilon)
    m_rows = b1 * M[rows] + (t(1) - b1) * g
    v_rows = b2 * V[rows] + (t(1) - b2) * g * g
    step = lr * m_rows / (np.sqrt(v_rows) + eps)
    M[rows] = m_rows                        # fancy assignment: the last duplicate wins
    V[rows] = v_rows
    np.subtract.at(W, rows, step)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("duplicates", [False, True])
@pytest.mark.parametrize("R,n", [(500, 300), (300000, 200000)])
def test_matches_reference(dtype, duplicates, R, n):
    # 300 x 7 is one chunk (the loop runs on the calling thread), 200000 x 7 several (parallel)
    rng = np.random.default_rng(0)
    D = 7
    assert (n * D >= tk._PARALLEL_ELEMENTS and tk._chunks(n, D) > 1) == (n == 200000)
    W = rng.standard_normal((R, D)).astype(dtype)
    M = (rng.standard_normal((R, D)) * 0.1).astype(dtype)
    V = rng.random((R, D)).astype(dtype)
    rows = rng.integers(0, R, n) if duplicates else rng.permutation(R)[:n]
    g = rng.standard_normal((n, D)).astype(dtype)
    want = [a.copy() for a in (W, M, V)]
    reference(*want, rows, g, **HYPER)
    tk.lazy_adam_rows(W, M, V, rows, g, **HYPER)
    for got, w in zip((W, M, V), want):
        np.testing.assert_array_equal(got, w)


def test_empty_rows_change_nothing():
    W = np.ones((4, 2), np.float32)
    M, V = W.copy(), W.copy()
    tk.lazy_adam_rows(W, M, V, np.zeros(0, np.int64), np.zeros((0, 2), np.float32), **HYPER)
    assert (W == 1).all() and (M == 1).all() and (V == 1).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("R", [300, 30000])
def test_adam_decay_and_step_match_numpy(dtype, R):
    # 300 x 5 takes the NumPy blocks; 30000 x 5 float32/float64 the parallel loops (2 chunks)
    rng = np.random.default_rng(1)
    W, M = (rng.standard_normal((R, 5)).astype(dtype) for _ in range(2))
    V = rng.random((R, 5)).astype(dtype)
    assert (tk._compiled_chunks(W, M, V) > 1) == (R == 30000 and dtype != np.float16)
    V[0] = 0                                   # sqrt(0) + eps: as NumPy, whatever it gives
    t = np.dtype(dtype).type
    want_m, want_v = M * t(0.9), V * t(0.999)
    with np.errstate(all="ignore"):
        want_w = W - t(0.01) * want_m / (np.sqrt(want_v) + t(1e-7))
    tk.adam_decay(M, V, 0.9, 0.999)
    tk.adam_step(W, M, V, 0.01, 1e-7)
    np.testing.assert_array_equal(M, want_m)
    np.testing.assert_array_equal(V, want_v)
    np.testing.assert_array_equal(W, want_w)


def adagrad_reference(W, A, rows, g, lr):
    lr = W.dtype.type(lr)
    a_rows = A[rows] + g * g
    step = lr * g / np.sqrt(a_rows)
    A[rows] = a_rows                        # the last duplicate wins, as scatter_update
    np.subtract.at(W, rows, step)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("duplicates", [False, True])
@pytest.mark.parametrize("R,n", [(5000, 3000), (120000, 80000)])
def test_adagrad_rows_match_the_unfused_expressions(dtype, duplicates, R, n):
    # unique rows take the compiled loop: on the calling thread for 3000 x 16 (one chunk),
    # parallel over chunks for 80000 x 16
    rng = np.random.default_rng(1)
    D = 16
    assert (n * D >= tk._PARALLEL_ELEMENTS and tk._chunks(n, D) > 1) == (n == 80000)
    W = rng.standard_normal((R, D)).astype(dtype)
    A = (rng.random((R, D)) + 0.1).astype(dtype)
    rows = rng.integers(0, R, n) if duplicates else rng.permutation(R)[:n]
    g = rng.standard_normal((n, D)).astype(dtype)
    want = [W.copy(), A.copy()]
    adagrad_reference(*want, rows, g, 0.05)
    tk.adagrad_rows(W, A, rows, g, 0.05)
    np.testing.assert_array_equal(W, want[0])
    np.testing.assert_array_equal(A, want[1])

"""Accuracy of float32 segment sums on many rows with cancellation (issue: wide accumulation).

1e7 float32 rows into 1e3 segments: large values of both signs that cancel, plus a small signal.
Each implementation's result is compared with a float64 reference computed with math.fsum-exact
partial sums (np.add.at on float64, whose error is far below float32's). Prints the max relative
error (|got - ref| / max|ref|) per implementation, and a rough time (with torch/TF loaded in the
same process Numba's parallel kernels lose their second core: time speed with segment.py). Never part of the tests; `make bench` runs it.
"""
import time

import numpy as np


def make_data(n=10_000_000, segments=1000, seed=0):
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, segments, n).astype(np.int64)
    big = rng.choice([-1.0, 1.0], n) * rng.uniform(1e3, 1e4, n)   # cancels on average
    small = rng.normal(size=n)
    data = (big + small).astype(np.float32)
    return data, ids, segments


def reference(data, ids, segments):
    out = np.zeros(segments, np.float64)
    np.add.at(out, ids, data.astype(np.float64))
    return out


def implementations():
    import segflow as sf
    from segflow.kernels import segment
    impls = {
        "segflow (wide accumulator, default)": lambda d, i, s: sf.math.unsorted_segment_sum(d, i, s).numpy(),
        "segflow accumulate='native' (float32)": lambda d, i, s: segment.unsorted_segment_reduce(
            "sum", d, i, s, accumulate="native"),
        "numpy np.add.at (float32)": lambda d, i, s: _add_at(d, i, s),
        "numpy np.bincount (float64 inside)": lambda d, i, s: np.bincount(i, weights=d, minlength=s).astype(np.float32),
    }
    try:
        import torch
        impls["torch index_add_ (float32)"] = lambda d, i, s: torch.zeros(s, dtype=torch.float32).index_add_(
            0, torch.from_numpy(i), torch.from_numpy(d)).numpy()
    except ImportError:
        pass
    try:
        import tensorflow as tf
        impls["tensorflow unsorted_segment_sum (float32)"] = lambda d, i, s: tf.math.unsorted_segment_sum(
            d, i, s).numpy()
    except ImportError:
        pass
    return impls


def _add_at(d, i, s):
    out = np.zeros(s, np.float32)
    np.add.at(out, i, d)
    return out


def main():
    data, ids, segments = make_data()
    ref = reference(data, ids, segments)
    scale = np.max(np.abs(ref))
    print(f"{data.size:.0e} float32 rows into {segments} segments; max |reference| = {scale:.3e}")
    print(f"{'implementation':45s} {'max rel. error':>15s} {'time ms':>9s}")
    for name, fn in implementations().items():
        fn(data[:1000], ids[:1000], segments)    # warm-up: compile / load kernels outside the timing
        t = time.perf_counter()
        got = np.asarray(fn(data, ids, segments), dtype=np.float64)
        ms = (time.perf_counter() - t) * 1e3
        err = np.max(np.abs(got - ref)) / scale
        print(f"{name:45s} {err:15.3e} {ms:9.1f}")


if __name__ == "__main__":
    main()

"""segflow.dask: what a chunk costs against the in-memory kernel, and 1 vs 2 workers on this machine.

Not a test. Run `python benchmarks/scale.py` (`--quick`: smaller data, fewer repeats). Prints:

1. per chunk, one thread: the in-memory kernel (kernels/segment) on one chunk; the eager public op
   (sf.math.unsorted_segment_sum) on it; segflow.dask's per-chunk task (the kernel inside the
   thread-budget wrapper, with the id handling of the partitioned path when asked); and the whole
   dask pipeline on Dask's synchronous scheduler (chunks, partial stack, tree reduction) over 8
   chunks against the kernel over the same rows at once. Target: <= 1.3x the kernel.
2. a LocalCluster with 1 worker and with 2 workers (1 thread each, processes), reducing data
   generated on the workers (the same graph): the speed-up of the second worker, and the k-means
   Lloyd iteration time. On a 2-core machine with nothing else running, 2 single-thread workers
   should be close to 2x; a machine shared with other jobs gives less (say so with the numbers).
`segflow bench` (`make bench`) runs it as a script.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))


def _best(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times)


def per_chunk(rows, d, nseg, repeat):
    import dask
    import dask.array as da
    import numba

    import segflow as sf
    import segflow.dask as sfd
    from segflow.dask import _segment
    from segflow.dask._threads import run_task
    from segflow.kernels import segment

    numba.set_num_threads(1)
    rng = np.random.default_rng(0)
    x = rng.random((rows, d), dtype=np.float32)
    ids = rng.integers(-1, nseg, rows)
    blocks = {0: nseg}
    cells = {
        "kernel (in memory)": lambda: segment.unsorted_segment_reduce("sum", x, ids, nseg, num_threads=1),
        "eager op sf.math": lambda: sf.math.unsorted_segment_sum(x, ids, nseg).numpy(),
        "dask chunk task": lambda: run_task(_segment._chunk_reduce, x, ids, 0, 0, kind="sum",
                                            op="UnsortedSegmentSum", num_segments=nseg, blocks_of=blocks),
        "dask chunk task, 1 of 4 segment ranges": lambda: run_task(
            _segment._chunk_reduce, x, ids, 0, 0, kind="sum", op="UnsortedSegmentSum", num_segments=nseg,
            blocks_of={0: nseg // 4}),
    }
    base = None
    print(f"per chunk: [{rows} x {d}] float32, {nseg} segments, one thread (best / median of {repeat}, ms)")
    for name, fn in cells.items():
        best, med = _best(fn, repeat)
        base = base or best
        print(f"  {name:42s} {best * 1e3:8.2f} {med * 1e3:8.2f}   {best / base:5.2f}x")
    X = da.from_array(np.concatenate([x] * 8), chunks=(rows, d))
    I = da.from_array(np.concatenate([ids] * 8), chunks=rows)
    xs, idss = np.concatenate([x] * 8), np.concatenate([ids] * 8)
    with dask.config.set(scheduler="sync"):
        whole, _ = _best(lambda: segment.unsorted_segment_reduce("sum", xs, idss, nseg, num_threads=1), repeat)
        piped, med = _best(lambda: sfd.unsorted_segment_sum(X, I, nseg).compute(), repeat)
    print(f"  8 chunks, kernel over all rows at once     {whole * 1e3:8.2f}")
    print(f"  8 chunks, segflow.dask pipeline (sync)     {piped * 1e3:8.2f} {med * 1e3:8.2f}   "
          f"{piped / whole:5.2f}x")
    return base, whole, piped


def workers(n_workers, rows, d, nseg, chunks, repeat):
    import dask
    import dask.array as da
    from distributed import Client, LocalCluster

    import segflow.dask as sfd
    from segflow.dask import _kmeans as dk

    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, memory_limit="1.5GB",
                      dashboard_address=None, host="127.0.0.1", silence_logs=40) as cluster, Client(cluster):
        g = da.random.default_rng(1)
        X = g.random((rows, d), dtype=np.float32, chunks=(rows // chunks, d)).persist()
        ids = g.integers(-1, nseg, size=rows, chunks=rows // chunks).persist()
        dask.compute(X.sum(), ids.sum())
        red, red_med = _best(lambda: dask.compute(sfd.unsorted_segment_sum(X, ids, nseg),
                                                  sfd.unsorted_segment_max(X, ids, nseg)), repeat)
        # one Lloyd iteration on the persisted X: the chunks' steps on the workers, their sums
        # added in a tree, the total fetched (what KMeans.fit on a dask array does per iteration)
        blocks = list(X.to_delayed().ravel())
        centers = np.asarray(X[:8].compute(), np.float32)
        none = [None] * len(blocks)
        step = lambda: dk._stats_of(dk._run_steps(blocks, none, centers, none, 8, False, True, dask), dask)  # noqa: E731
        per_iter, _ = _best(step, repeat)
    print(f"  {n_workers} worker(s): sum + max {red * 1e3:8.1f} ms (median {red_med * 1e3:.1f}), "
          f"k-means (k=8) {per_iter * 1e3:8.1f} ms per Lloyd iteration")
    return red, per_iter


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    # this folder's sparse.py would shadow pydata's `sparse`, which dask tries to import
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]
    try:
        _run(args)
    finally:
        sys.path[:] = saved


def _run(args):
    repeat = 3 if args.quick else 7
    rows = 1 << (18 if args.quick else 20)
    per_chunk(rows, 8, 1000, repeat)
    print(f"\nLocalCluster, data generated on the workers: [{8 * rows} x 8] float32 in 16 chunks, 1000 segments")
    one = workers(1, 8 * rows, 8, 1000, 16, repeat)
    two = workers(2, 8 * rows, 8, 1000, 16, repeat)
    print(f"  speed-up of the second worker: reduction {one[0] / two[0]:.2f}x, k-means {one[1] / two[1]:.2f}x")
    print(f"  (os.cpu_count() = {os.cpu_count()}, load average {os.getloadavg()[0]:.1f} at the end)")


if __name__ == "__main__":
    main()

"""The thread budget of a segflow task on a Dask worker: `run_task(fn, *args)` calls fn with this
thread's Numba kernels (and BLAS, when threadpoolctl is installed) limited to its share of the
worker's threads, so a worker never runs more kernel threads than it has `nthreads`.

A worker with `nthreads` threads runs up to `nthreads` tasks at once; each running segflow task
gets `max(1, nthreads // tasks running now)` threads (a single task on a 4-thread worker gets 4,
four tasks get one each). Outside a distributed worker (Dask's local schedulers) the budget is
the CPUs this process may use (`planned_workers` before any kernel ran). Numba's
`set_num_threads` is per calling thread, so the limit is set inside each task and restored
after it. Results never depend on the thread count (the kernels' rule).
"""
import contextlib
import sys
import threading

from segflow.kernels._common import HAVE_NUMBA, planned_workers, worker_count

__all__ = ["run_task", "task_threads", "worker_threads"]

_lock = threading.Lock()
_running = [0]      # segflow tasks running in this process now


def worker_threads():
    """The threads of the Dask worker this runs on (its `nthreads`), else planned_workers()."""
    distributed = sys.modules.get("distributed")   # a worker has imported it; never import it here
    if distributed is not None:
        try:
            return max(1, int(distributed.get_worker().state.nthreads))
        except (ValueError, AttributeError):
            pass
    return planned_workers()


def task_threads():
    """The kernel threads a task starting now gets: its share of worker_threads()."""
    with _lock:
        running = max(1, _running[0])
    return max(1, worker_threads() // running)


_controller = []   # one threadpoolctl ThreadpoolController per process (it scans the libraries)


def _blas_limit(n):
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return contextlib.nullcontext()
    if not _controller:
        _controller.append(ThreadpoolController())
    return _controller[0].limit(limits=n, user_api="blas")


@contextlib.contextmanager
def _limited(n, blas):
    saved = None
    if HAVE_NUMBA:
        import numba
        worker_count()                    # starts the pool with segflow's wait policy
        saved = numba.get_num_threads()
        numba.set_num_threads(max(1, min(n, numba.config.NUMBA_NUM_THREADS)))
    try:
        with _blas_limit(n) if blas else contextlib.nullcontext():
            yield
    finally:
        if saved is not None:
            import numba
            numba.set_num_threads(saved)


def run_task(fn, *args, blas=False, **kwargs):
    """fn(*args, **kwargs) with this thread's kernels (and BLAS, with `blas`) on task_threads()
    threads."""
    with _lock:
        _running[0] += 1
    try:
        with _limited(task_threads(), blas):
            return fn(*args, **kwargs)
    finally:
        with _lock:
            _running[0] -= 1

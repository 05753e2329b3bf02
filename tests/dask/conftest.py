"""One real distributed.LocalCluster for the dask tests: 2 worker processes with 1 thread each and
a memory limit, on loopback, started once per test session. Workers import segflow from the
inherited PYTHONPATH (or the editable install)."""
import pytest

MEMORY_LIMIT = 600 * 2**20   # bytes per worker (a worker process holds ~200 MiB before any data)


@pytest.fixture(scope="session")
def client():
    import dask
    from distributed import Client, LocalCluster

    # forkserver: the workers fork from one fresh process (safe beside threads, faster than spawn)
    with dask.config.set({"distributed.worker.daemon": False, "distributed.worker.multiprocessing-method": "forkserver"}):
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=MEMORY_LIMIT,
                               dashboard_address=None, host="127.0.0.1", silence_logs=40)
    c = Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()

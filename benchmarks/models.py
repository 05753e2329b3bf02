"""k-means benchmark: segflow.models.KMeans next to scikit-learn's KMeans.

Not a test. Run `python benchmarks/models.py` (`--quick` for fewer rounds and a smaller blob set).
For each data set (scikit-learn's digits, 1797 x 64, 10 clusters; make_blobs 2e5 x 32 with 16
centers) it fits both estimators with the same settings, taking turns, each run after a wait for
an idle machine, and prints a Markdown table: median fit time (3x the rounds for digits), time
ratio (segflow / scikit-learn) and inertia ratio. Two seedings:

- "same init": both start from one array of centers (scikit-learn's k-means++ seeding), n_init=1,
  max_iter=300: the Lloyd iterations alone, which should reach the same inertia.
- "own k-means++": each seeds itself (init="k-means++", n_init=1, random_state=seed), the same
  seeds for both: time includes the seeding, inertia is the mean over the seeds.

A last table times one Lloyd step of the 2e5 x 32 blobs three ways: the estimator's blocked eager
step (1 and 2 threads) and clustering_ops.KMeans's training_op in a Session. `segflow bench`
(`make bench`) runs it as a script.
"""
import argparse
import os
import time

import numpy as np

from segment import wait_for_quiet   # the same idle wait as the segment benchmark (this folder)


def take_turns(fns, repeat, quiet_s):
    """{name: (median seconds, last result)} of each callable, timed round-robin after a warm-up."""
    times = {name: [] for name in fns}
    results = {}
    for fn in fns.values():
        fn()
    for _ in range(repeat):
        for name, fn in fns.items():
            wait_for_quiet(quiet_s)
            t = time.perf_counter()
            results[name] = fn()
            times[name].append(time.perf_counter() - t)
    return {name: (float(np.median(ts)), results[name]) for name, ts in times.items()}


def data_sets(quick):
    from sklearn.datasets import load_digits, make_blobs
    digits = load_digits().data
    rows = 50_000 if quick else 200_000
    blobs, _ = make_blobs(rows, 32, centers=16, random_state=0)
    return [("digits 1797x64, k=10", digits, 10), (f"blobs {rows:.0e}x32, k=16", blobs, 16)]


def compare(label, X, k, repeat, quiet_s, seeds):
    from sklearn.cluster import KMeans as SkKMeans, kmeans_plusplus
    from segflow.models import KMeans

    rows = []
    if X.shape[0] < 10_000:
        repeat *= 3  # fits of a few ms: more rounds against the noise of a shared machine
    init, _ = kmeans_plusplus(X, k, random_state=0)
    res = take_turns({
        "scikit-learn": lambda: SkKMeans(k, init=init, n_init=1, max_iter=300).fit(X),
        "segflow": lambda: KMeans(k, init=init, n_init=1, max_iter=300).fit(X),
    }, repeat, quiet_s)
    (t_sk, sk), (t_sf, sf_) = res["scikit-learn"], res["segflow"]
    rows.append((label, "same init", t_sk, t_sf, sf_.inertia_ / sk.inertia_, f"{sk.n_iter_} / {sf_.n_iter_}"))

    t_sk, t_sf, in_sk, in_sf = [], [], [], []
    for seed in seeds:
        res = take_turns({
            "scikit-learn": lambda: SkKMeans(k, init="k-means++", n_init=1, random_state=seed).fit(X),
            "segflow": lambda: KMeans(k, init="k-means++", n_init=1, random_state=seed).fit(X),
        }, max(1, repeat // 2), quiet_s)
        t_sk.append(res["scikit-learn"][0])
        t_sf.append(res["segflow"][0])
        in_sk.append(res["scikit-learn"][1].inertia_)
        in_sf.append(res["segflow"][1].inertia_)
    rows.append((label, f"own k-means++ ({len(seeds)} seeds)", float(np.median(t_sk)), float(np.median(t_sf)),
                 float(np.mean(in_sf) / np.mean(in_sk)), "-"))
    return rows


def lloyd_step_table(X, k, repeat, quiet_s):
    import segflow as sf
    from segflow.compat import v1
    from segflow.models import _kmeans_steps as steps
    from segflow.ops import clustering_ops

    centers = X[np.random.default_rng(0).choice(len(X), k, replace=False)].copy()
    fns = {}
    for threads in (1, 2):
        step = steps.ChunkedStep(X, k, None, threads)

        def run(step=step):
            with steps.single_threaded():
                return step(centers)
        fns[f"estimator step, {threads} thread(s)"] = run
    graph = sf.Graph()
    with graph.as_default():
        km = clustering_ops.KMeans(sf.constant(X), k, initial_clusters=centers)
        *_, initialized, init_op, train = km.training_graph()
        sess = v1.Session(graph=graph)
        sess.run(v1.global_variables_initializer())
        sess.run(init_op)
        var = [v for v in v1.global_variables() if v.name.startswith("clusters")][0]
        reset = v1.assign(var, centers)

    def graph_step():
        sess.run(reset)
        return sess.run(train)
    fns["clustering_ops training_op (Session)"] = graph_step
    res = take_turns(fns, repeat, quiet_s)
    sess.close()
    return {name: t for name, (t, _) in res.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, 5e4 blob rows")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--quiet-wait", type=float, default=3.0,
                        help="seconds to wait, before each timed run, for other processes to idle")
    args = parser.parse_args(argv)
    try:
        import sklearn
    except ImportError:
        print("scikit-learn is not installed: nothing to compare with")
        return
    import numba
    repeat = 3 if args.quick else args.repeat
    seeds = range(2) if args.quick else range(5)
    print(f"{os.cpu_count()} CPUs; scikit-learn {sklearn.__version__}, numba threads {numba.get_num_threads()}")
    print()
    print("| data | seeding | scikit-learn ms | segflow ms | time ratio | inertia ratio | n_iter sk / sf |")
    print("|---|---|---|---|---|---|---|")
    sets = data_sets(args.quick)
    for label, X, k in sets:
        for row in compare(label, X, k, repeat, args.quiet_wait, seeds):
            name, seeding, t_sk, t_sf, ratio, iters = row
            print(f"| {name} | {seeding} | {t_sk * 1e3:.1f} | {t_sf * 1e3:.1f} | {t_sf / t_sk:.2f} | {ratio:.5f} |"
                  f" {iters} |", flush=True)
    label, X, k = sets[-1]
    print()
    print(f"One Lloyd step on {label}:")
    print()
    print("| implementation | median ms |")
    print("|---|---|")
    for name, t in lloyd_step_table(X, k, repeat, args.quiet_wait).items():
        print(f"| {name} | {t * 1e3:.1f} |")
    with open("/proc/loadavg") as f:
        print(f"\nload average at the end (1, 5, 15 min): {' '.join(f.read().split()[:3])}")


if __name__ == "__main__":
    main()

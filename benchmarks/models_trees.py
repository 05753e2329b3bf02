"""Gradient-boosted-trees benchmark: segflow's GradientBoostedTrees* next to LightGBM and
scikit-learn's HistGradientBoosting*, at equal settings (trees, depth, learning rate, bins).

Not a test. Run `python benchmarks/models_trees.py` (`--quick` for one timing round). It prints,
per data set, the held-out quality (accuracy, or RMSE for regression) and the fit time (the best
of the rounds, the implementations taking turns) of each library with the ratio to LightGBM, then
the histogram step through the fused kernel and through the generic segment sum. LightGBM and
scikit-learn are optional: a missing one's column is skipped with a message. `main()` is the
entry point.
"""
import argparse
import os
import platform
import time

import numpy as np

from segflow.kernels import histogram as hk
from segflow.models import GradientBoostedTreesClassifier, GradientBoostedTreesRegressor

N_ESTIMATORS, MAX_DEPTH, LEARNING_RATE, MAX_BINS, MIN_LEAF = 100, 6, 0.1, 255, 20


def optional(name):
    try:
        return __import__(name)
    except Exception:  # ImportError, or a broken install: the column is skipped either way
        return None


def datasets(quick):
    from sklearn.datasets import load_breast_cancer, load_diabetes, make_classification
    from sklearn.model_selection import train_test_split
    out = []
    for name, kind, (X, y) in [
            ("breast_cancer", "clf", load_breast_cancer(return_X_y=True)),
            ("diabetes", "reg", load_diabetes(return_X_y=True)),
            ("make_classification 2e5x20", "clf",
             make_classification(n_samples=200_000, n_features=20, n_informative=10, random_state=0))]:
        out.append((name, kind) + tuple(train_test_split(X, y, test_size=0.25, random_state=0)))
    return out


def makers(kind):
    """name -> () -> unfitted estimator, at equal settings (depth-wise trees of depth 6)."""
    out = {}
    seg = GradientBoostedTreesClassifier if kind == "clf" else GradientBoostedTreesRegressor
    out["segflow"] = lambda: seg(n_estimators=N_ESTIMATORS, max_depth=MAX_DEPTH, max_leaf_nodes=None,
                                 learning_rate=LEARNING_RATE, max_bins=MAX_BINS, min_samples_leaf=MIN_LEAF,
                                 early_stopping=False, random_state=0)
    out["segflow/1t"] = lambda: _OneThread(out["segflow"]())
    lgb = optional("lightgbm")
    if lgb is not None:
        cls = lgb.LGBMClassifier if kind == "clf" else lgb.LGBMRegressor
        for label, jobs in (("lightgbm", os.cpu_count()), ("lightgbm/1t", 1)):
            # LightGBM's OpenMP threads spin while they wait: on a machine shared with other jobs
            # one thread can beat all cores, so both are timed and the faster is the reference.
            out[label] = lambda cls=cls, jobs=jobs: cls(
                n_estimators=N_ESTIMATORS, max_depth=MAX_DEPTH, num_leaves=2 ** MAX_DEPTH,
                learning_rate=LEARNING_RATE, max_bin=MAX_BINS, min_child_samples=MIN_LEAF,
                min_child_weight=1e-3, reg_lambda=0.0, n_jobs=jobs, random_state=0, verbose=-1)
    else:
        print("(lightgbm not importable: its column is skipped)")
    ens = optional("sklearn.ensemble")
    if ens is not None:
        from sklearn import ensemble
        cls = ensemble.HistGradientBoostingClassifier if kind == "clf" else ensemble.HistGradientBoostingRegressor
        out["sklearn"] = lambda cls=cls: cls(max_iter=N_ESTIMATORS, max_depth=MAX_DEPTH, max_leaf_nodes=None,
                                     learning_rate=LEARNING_RATE, max_bins=MAX_BINS, min_samples_leaf=MIN_LEAF,
                                     early_stopping=False, random_state=0)
    return out


class _OneThread:
    """Fits the wrapped segflow model with one Numba thread (no thread pool)."""

    def __init__(self, model):
        self.model = model

    def fit(self, X, y):
        import numba
        before = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            self.model.fit(X, y)
        finally:
            numba.set_num_threads(before)
        return self

    def predict(self, X):
        return self.model.predict(X)


def quality(kind, model, X, y):
    pred = model.predict(X)
    if kind == "clf":
        return float(np.mean(pred == y))
    return float(np.sqrt(np.mean((pred - y) ** 2)))


def warm_up():
    """Compiles (or loads from Numba's cache) every kernel the fits use, serial and parallel."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40_000, 4))
    X[::9, 1] = np.nan
    y = (X[:, 0] > 0).astype(int)
    GradientBoostedTreesClassifier(n_estimators=2, max_depth=3, max_leaf_nodes=None, early_stopping=False).fit(X, y)
    GradientBoostedTreesClassifier(n_estimators=2, subsample=0.5, early_stopping=False).fit(X, y).predict(X)


def bench_models(rounds):
    rows = []
    for name, kind, Xtr, Xte, ytr, yte in datasets(rounds == 1):
        fns = makers(kind)
        times = {k: [] for k in fns}
        scores = {}
        for _ in range(rounds if len(ytr) < 10_000 else max(1, rounds // 3)):
            for lib, make in fns.items():
                model = make()
                t0 = time.perf_counter()
                model.fit(Xtr, ytr)
                times[lib].append(time.perf_counter() - t0)
                scores[lib] = quality(kind, model, Xte, yte)
        rows.append((name, kind, {k: (scores[k], min(v)) for k, v in times.items()}))
    return rows


def print_models(rows):
    libs = ["segflow", "segflow/1t", "lightgbm", "lightgbm/1t", "sklearn"]
    print(f"\nfit at n_estimators={N_ESTIMATORS}, max_depth={MAX_DEPTH} (depth-wise), learning_rate={LEARNING_RATE}, "
          f"max_bins={MAX_BINS}, min_samples_leaf={MIN_LEAF}; quality on a held-out 25%")
    head = f"{'data set':28s} {'metric':8s}" + "".join(f" {lib + ' q':>12s} {lib + ' s':>11s}" for lib in libs)
    print(head + f" {'q seg/lgb':>10s} {'t seg/lgb':>10s}")
    print("(s: fit seconds, best of the rounds; t seg/lgb: the faster segflow over the faster LightGBM; "
          "for RMSE a q ratio above 1 is worse)")
    for name, kind, res in rows:
        line = f"{name:28s} {'accuracy' if kind == 'clf' else 'RMSE':8s}"
        res = dict(res)
        for lib in libs:
            if lib in res:
                line += f" {res[lib][0]:12.4f} {res[lib][1]:11.3f}"
            else:
                line += f" {'-':>12s} {'-':>11s}"
        if "lightgbm" in res:
            lgb_t = min(res["lightgbm"][1], res["lightgbm/1t"][1])
            seg_t = min(res["segflow"][1], res["segflow/1t"][1])
            line += f" {res['segflow'][0] / res['lightgbm'][0]:10.4f} {seg_t / lgb_t:10.2f}"
        print(line)


def bench_histogram(rounds):
    rng = np.random.default_rng(0)
    n, f = 150_000, 20
    binned = rng.integers(0, 255, (n, f)).astype(np.uint8)
    rows = np.arange(n, dtype=np.int64)
    gh = np.stack([rng.normal(size=n), rng.uniform(size=n)], axis=1)
    out = {}
    for label, fn in (("fused kernel", hk.node_histogram), ("segment sum", hk.segment_histogram)):
        fn(binned, rows, gh, 256)
        ts = []
        for _ in range(max(3, rounds)):
            t0 = time.perf_counter()
            fn(binned, rows, gh, 256)
            ts.append(time.perf_counter() - t0)
        out[label] = min(ts)
    print(f"\nroot histogram, {n} rows x {f} features x 256 bins: "
          + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in out.items())
          + f" (segment sum / fused = {out['segment sum'] / out['fused kernel']:.1f}x)")
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one timing round")
    args = parser.parse_args(argv)
    rounds = 1 if args.quick else 3
    lgb = optional("lightgbm")
    sk = optional("sklearn")
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, numpy {np.__version__}, lightgbm "
          f"{getattr(lgb, '__version__', 'missing')}, scikit-learn {getattr(sk, '__version__', 'missing')}; "
          f"load average {os.getloadavg()[0]:.1f}")
    warm_up()
    print_models(bench_models(rounds))
    bench_histogram(rounds)


if __name__ == "__main__":
    main()

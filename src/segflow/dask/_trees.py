"""GradientBoostedTrees{Regressor,Classifier}.fit on dask arrays: the per-(node, bin) gradient
statistics computed per row chunk on the workers; only sketches, histograms and splits travel.

    model = GradientBoostedTreesRegressor(grow_policy="depthwise", max_depth=6).fit(X, y)  # dask X, y

Binning: each row chunk sends one WeightedQuantileSketch per feature (eps 1 / (8 max_bins)); the
client merges them (a tree of tasks) into one BinMapper (`BinMapper.fit_sketches`) and the chunks
are binned on the workers and persisted as uint8. Growing: per chunk the workers keep the raw
scores, the gradients/hessians and, per tree, each row's node id (persisted, one block per chunk).
The client runs the in-memory grower's rules (grower.find_split on each histogram, the same
expansion order, the smaller child's histogram computed and the larger one the parent's minus it);
one Dask pass applies the splits decided so far to the node ids and returns, per chunk, the
histograms (kernels/histogram over each wanted node's rows), added in a tree of tasks. With
grow_policy="depthwise" a pass serves a whole level; with "lossguide" (the default) it serves one
split, so a tree costs up to max_leaf_nodes passes: prefer depthwise on a cluster. After the K trees
of an iteration one pass adds the leaf values to the raw scores and computes the next gradients
(and the loss, for early stopping).

The bin edges are the in-memory fit's while the merged sketch is exact (at most 32 * max_bins
distinct values per feature) and n <= 200,000 (the in-memory fit sketches a sample of a larger set);
with the same edges the trees are the in-memory fit's (feature, threshold) and the predictions agree
within float tolerance (histograms are added in another order, so a near-tie between two splits'
gains could go the other way). Deliberate differences: the thresholds come from
all rows, through the merged sketches (rank error <= eps * n); early_stopping="auto" is off, early_stopping=True needs validation_fraction=None (it scores the training loss), since a
validation split would need a shuffle; subsample < 1 raises ValueError (max_features is supported).
predict / predict_proba / decision_function of a dask array are lazy (map_blocks).
"""
import functools
import heapq

import numpy as np

from segflow.dask._threads import run_task
from segflow.kernels import histogram as hk
from segflow.kernels.quantiles import WeightedQuantileSketch
from segflow.models._trees.binning import BinMapper
from segflow.models._trees.grower import NODE_DTYPES, TreeParams, find_split, leaf_value, splittable
from segflow.models._trees.losses import Logistic, Softmax, SquaredError

try:  # scikit-learn is optional (as for the estimators)
    from sklearn.utils.multiclass import check_classification_targets
    HAVE_SKLEARN = True
except ImportError:  # pragma: no cover
    HAVE_SKLEARN = False

__all__ = ["is_dask", "fit", "predict"]

SPLIT_EVERY = 8


def is_dask(x):
    """True for a dask array (duck-typed: dask is never imported here)."""
    return hasattr(x, "dask") and hasattr(x, "chunks") and hasattr(x, "to_delayed")


def _tree_sum(parts, combine, dask, first=None):
    """combine()s the delayed parts in a tree of tasks (`first` at the bottom level, default
    combine); returns the delayed total."""
    level, fn = list(parts), first or combine
    while len(level) > 1 or fn is first:
        level = [dask.delayed(fn, pure=True)(*level[i:i + SPLIT_EVERY]) for i in range(0, len(level), SPLIT_EVERY)]
        fn = combine
    return level[0]


# ----------------------------------------------------------------------------------- chunk tasks

def _sketch_chunk(x, eps):
    x = np.asarray(x, np.float64)
    if np.isinf(x).any():
        raise ValueError("Input X contains infinity or a value too large for dtype('float64').")
    return [WeightedQuantileSketch(eps).add(x[:, f]).to_arrays() for f in range(x.shape[1])]


def _merge_sketches(*parts, eps):
    out = [WeightedQuantileSketch.from_arrays(a, eps) for a in parts[0]]
    for part in parts[1:]:
        for s, a in zip(out, part):
            s.merge(WeightedQuantileSketch.from_arrays(a, eps))
    return [s.to_arrays() for s in out]


def _bin_chunk(x, mapper):
    return mapper.transform(np.asarray(x, np.float64))


def _apply_splits(binned, ids, splits, missing_bin):
    """Node ids after the splits (node, feature, bin t, missing_left, left, right)."""
    if ids is None:
        ids = np.zeros(binned.shape[0], np.int32)
    if not splits:
        return ids
    new = ids.copy()
    for node, f, t, missing_left, left, right in splits:
        rows = np.flatnonzero(ids == node)
        b = binned[rows, f]
        go_left = (b <= t) | ((b == missing_bin) & bool(missing_left))
        new[rows] = np.where(go_left, left, right)
    return new


def _level_chunk(binned, state, c, prev, splits, wanted, missing_bin):
    """(node ids after `splits`, [len(wanted), F, bins, 3] histograms of the wanted nodes' rows);
    state: the chunk's _round_chunk result, prev: its last _level_chunk result for this tree (None:
    every row at the root)."""
    gh = state[1]
    ids = _apply_splits(binned, None if prev is None else prev[0], splits, missing_bin)
    hists = np.zeros((len(wanted), binned.shape[1], missing_bin + 1, 3), np.float64)
    if wanted and ids.size:
        order = np.argsort(ids, kind="stable")
        sorted_ids = ids[order]
        ghc = np.ascontiguousarray(gh[c])
        for j, node in enumerate(wanted):
            lo, hi = np.searchsorted(sorted_ids, [node, node + 1])
            if hi > lo:
                hists[j] = hk.node_histogram(binned, order[lo:hi], ghc, missing_bin + 1)
    return ids, hists


def _round_chunk(binned, y, w, state, trees, loss, baseline, missing_bin, score):
    """Adds the round's trees (last _level_chunk result, pending splits, leaf values) to the raw
    scores ([K, n]: state[0]; state None: the baseline), then the next (gradients, hessians)
    [K, n, 2] and (loss sum, weight sum)."""
    if state is None:
        raw = np.repeat(np.asarray(baseline, np.float64)[:, None], binned.shape[0], axis=1)
    else:
        raw = state[0].copy()
        for c, (prev, splits, values) in enumerate(trees):
            raw[c] += values[_apply_splits(binned, prev[0], splits, missing_bin)]
    g, h = loss.grad_hess(y, raw)
    if w is not None:
        g, h = g * w[None, :], h * w[None, :]
    gh = np.ascontiguousarray(np.stack([g, h], axis=2))
    parts = (0.0, 0.0)
    if score and y.size:
        total = float(y.size if w is None else w.sum())
        parts = (loss.loss(y, raw, w) * total, total)
    return raw, gh, parts


def _add(*parts):
    return sum(parts[1:], parts[0])


def _add_hists(*results):
    return _add(*[r[1] for r in results])


def _add_scores(*results):
    return _add_pairs(*[r[2] for r in results])


def _add_pairs(*parts):
    return (sum(p[0] for p in parts), sum(p[1] for p in parts))


def _target_stats(y, w, k, multiclass):
    """(sum w y, sum w), or the weighted class counts; raises for NaN / infinite targets."""
    if not np.isfinite(y).all():
        raise ValueError("Input y contains NaN or infinity.")
    if multiclass:
        return np.bincount(y.astype(np.int64), weights=w, minlength=k).astype(np.float64)
    return np.array([float(y.sum() if w is None else y @ w), float(y.size if w is None else w.sum())])


# ----------------------------------------------------------------------------------- the client

class _Chunks:
    """The persisted per-chunk blocks (delayed) and the passes over them."""

    def __init__(self, binned, y, w, missing_bin, dask):
        self.binned, self.y, self.w = binned, y, w
        self.missing_bin, self.dask = missing_bin, dask
        self.state = [None] * len(binned)    # per chunk: (raw scores, gradients/hessians, _)

    def level(self, c, prev, splits, wanted):
        """One pass: (the chunks' results, holding the new node ids; the summed histograms of `wanted`).
        The results stay on the workers (persisted); only the total travels."""
        d = self.dask
        tasks = [d.delayed(run_task, pure=True)(_level_chunk, b, s, c, r, splits, wanted, self.missing_bin)
                 for b, s, r in zip(self.binned, self.state, prev)]
        out = d.persist(*tasks, _tree_sum(tasks, _add, d, first=_add_hists))
        return list(out[:-1]), out[-1].compute()

    def round(self, trees, loss, baseline, score):
        """One pass: adds the trees to the raw scores, new gradients; returns the mean loss."""
        d = self.dask
        tasks = []
        for j, (b, y, w, s) in enumerate(zip(self.binned, self.y, self.w, self.state)):
            chunk_trees = [(prev[j], splits, values) for prev, splits, values in trees]
            tasks.append(d.delayed(run_task, pure=True)(_round_chunk, b, y, w, s, chunk_trees, loss,
                                                        baseline, self.missing_bin, score))
        out = d.persist(*tasks, _tree_sum(tasks, _add_pairs, d, first=_add_scores))
        self.state = list(out[:-1])
        loss_sum, weight = out[-1].compute()
        return loss_sum / weight if weight > 0 else np.nan


def _grow(chunks, c, mapper, p, rng):
    """One tree on gradient column c: (node arrays, node ids per chunk, splits not yet applied to them).
    The in-memory grower's rules and order: nodes are numbered as made, each node's split (and its
    max_features draw) is found as it is made, in that order, and the queue is the same."""
    nodes = {k: [] for k in NODE_DTYPES}
    meta = []   # per node: (totals, depth, split)
    n_bins, missing_bin, thresholds = mapper.n_bins_, mapper.missing_bin, mapper.thresholds_

    def reserve():
        for k, v in (("feature", -1), ("threshold", np.nan), ("bin_threshold", 0), ("missing_left", 0),
                     ("left", -1), ("right", -1), ("gain", 0.0), ("value", 0.0), ("count", 0), ("hessian", 0.0)):
            nodes[k].append(v)
        meta.append(None)
        return len(meta) - 1

    def make(i, totals, depth, hist):
        nodes["value"][i] = leaf_value(totals[0], totals[1], p) * p.learning_rate
        nodes["count"][i] = int(round(totals[2]))
        nodes["hessian"][i] = float(totals[1])
        meta[i] = (totals, depth, find_split(hist, totals, depth, n_bins, missing_bin, p, rng))

    heap, order, node_hist = [], 0, {}     # the in-memory grower's queue: (key, push order, node)

    def push(i, hist):
        nonlocal order
        totals, depth, split = meta[i]
        if split is not None:
            heapq.heappush(heap, (-split[0] if p.grow_policy == "lossguide" else depth, order, i))
            order += 1
            node_hist[i] = hist

    ids, hists = chunks.level(c, [None] * len(chunks.binned), [], [0])
    make(reserve(), hists[0][0].sum(axis=0), 0, hists[0])
    push(0, hists[0])
    pending, n_leaves, budget = [], 1, p.max_leaf_nodes
    while heap and (budget is None or n_leaves < budget):
        # the nodes one pass serves: one (lossguide) or the queued nodes of one depth (depthwise)
        batch = [heapq.heappop(heap)[2]]
        while (p.grow_policy == "depthwise" and heap and heap[0][0] == meta[batch[0]][1]
               and (budget is None or n_leaves + len(batch) < budget)):
            batch.append(heapq.heappop(heap)[2])
        wanted, made = [], []
        for i in batch:
            totals, depth, (gain, f, t, missing_left, left_totals) = meta[i]
            n_left, n_right = left_totals[2], totals[2] - left_totals[2]
            last = budget is not None and n_leaves + 1 >= budget
            need = not last and (splittable(p, depth + 1, n_left) or splittable(p, depth + 1, n_right))
            left, right = reserve(), reserve()
            nodes["feature"][i], nodes["bin_threshold"][i], nodes["gain"][i] = f, t, gain
            nodes["threshold"][i] = thresholds[f][t] if t < len(thresholds[f]) else np.inf
            nodes["missing_left"][i] = int(missing_left)
            nodes["left"][i], nodes["right"][i] = left, right
            pending.append((i, f, t, missing_left, left, right))
            if need:   # the smaller child's histogram; the larger one is the parent's minus it
                wanted.append(left if n_left <= n_right else right)
            made.append((i, left, right, need, left_totals, totals - left_totals, depth + 1))
            n_leaves += 1
        if wanted:
            ids, hists = chunks.level(c, ids, pending, wanted)
            pending = []
        small = dict(zip(wanted, hists if wanted else []))
        for i, left, right, need, left_totals, right_totals, depth in made:
            parent = node_hist.pop(i)
            hl = hr = None
            if need:
                if left in small:
                    hl, hr = small[left], parent - small[left]
                else:
                    hl, hr = parent - small[right], small[right]
            make(left, left_totals, depth, hl)
            make(right, right_totals, depth, hr)
            push(left, hl)
            push(right, hr)
    return {k: np.asarray(v, NODE_DTYPES[k]) for k, v in nodes.items()}, ids, pending


# ----------------------------------------------------------------------------------- fit

def _rows(X, y, sample_weight, est):
    import dask.array as da

    if not is_dask(X):
        X = da.from_array(np.asarray(X, np.float64), chunks=(y.chunks[0], -1) if is_dask(y) else "auto")
    if X.ndim != 2:
        raise ValueError(f"Expected 2D array, got array of shape {X.shape}")
    if any(np.isnan(c) for c in X.shape):
        raise ValueError("X has unknown chunk sizes; call compute_chunk_sizes() first")
    X = X.astype(np.float64)
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    y = y if is_dask(y) else da.from_array(np.asarray(y), chunks=(X.chunks[0],))
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: [{X.shape[0]}, {y.shape[0]}]")
    y = y.rechunk((X.chunks[0],))
    w = None
    if sample_weight is not None:
        w = sample_weight if is_dask(sample_weight) else da.from_array(
            np.broadcast_to(np.asarray(sample_weight, np.float64), (X.shape[0],)), chunks=(X.chunks[0],))
        if w.shape != (X.shape[0],):
            raise ValueError(f"sample_weight.shape == {w.shape}, expected {(X.shape[0],)}!")
        w = w.astype(np.float64).rechunk((X.chunks[0],))
    if X.shape[0] < 1:
        raise ValueError(f"Found array with 0 sample(s) (shape={X.shape}) while a minimum of 1 is required.")
    return X, y, w


def _check_supported(est):
    if est.subsample < 1.0:
        raise ValueError(f"subsample={est.subsample} is not supported for dask arrays (it would draw rows across "
                         f"all chunks); use subsample=1.0")
    if est.early_stopping is True and est.validation_fraction is not None:
        raise ValueError("early_stopping=True on dask arrays needs validation_fraction=None (the training loss is "
                         "scored; a validation split would need a shuffle)")


def _classes(est, y, da):
    classes = np.unique(da.unique(y).compute())
    if HAVE_SKLEARN:
        check_classification_targets(classes)     # the type of the targets shows in their distinct values
    if len(classes) == 1:
        raise ValueError("y contains only one class; a classifier needs at least two")
    est.classes_, est.n_classes_ = classes, len(classes)
    return classes


def fit(est, X, y, sample_weight, seed, stop_rule):
    """est.fit for dask X [n, F] / y [n] (est: the estimator, seed: its _seed(), stop_rule: the
    early-stopping rule (scores) -> bool); returns est."""
    import dask
    import dask.array as da

    est._check_params()
    _check_supported(est)
    X, y, w = _rows(X, y, sample_weight, est)
    if est._is_classifier:
        classes = _classes(est, y, da)
        k = 1 if len(classes) == 2 else len(classes)
        loss = Logistic if len(classes) == 2 else Softmax
        y = y.map_blocks(lambda b: np.searchsorted(classes, b).astype(np.float64), dtype=np.float64)
    else:
        k, loss = 1, SquaredError
        y = y.astype(np.float64)
    est.n_features_in_ = int(X.shape[1])
    rng = np.random.default_rng(seed)
    use_es = est.early_stopping is True
    mapper = BinMapper(est.max_bins, random_state=rng.integers(2**31))   # as in memory (rng stays in step)
    xb = X.to_delayed().ravel()
    sketches = _tree_sum([dask.delayed(run_task, pure=True)(_sketch_chunk, b, mapper.eps) for b in xb],
                         functools.partial(_merge_sketches, eps=mapper.eps), dask)
    mapper.fit_sketches([WeightedQuantileSketch.from_arrays(a, mapper.eps) for a in dask.compute(sketches)[0]])
    binned = [dask.delayed(run_task, pure=True)(_bin_chunk, b, mapper) for b in xb]
    yb = list(y.to_delayed().ravel())
    wb = [None] * len(yb) if w is None else list(w.to_delayed().ravel())
    stats = _tree_sum([dask.delayed(_target_stats, pure=True)(a, b, k, loss is Softmax) for a, b in zip(yb, wb)],
                      _add, dask)
    binned, yb, wb, stats = _persist(dask, binned, yb, wb, stats)
    stats = stats.compute()
    if loss is Softmax:
        baseline = loss.baseline(np.arange(k, dtype=np.float64), stats, k)
    else:
        baseline = loss.baseline(np.array([stats[0] / stats[1]]), None, k)
    est._loss, est._baseline = loss, baseline.astype(np.float64)
    params = TreeParams(est.max_depth, est.max_leaf_nodes, est.min_samples_leaf, est.min_child_weight,
                        est.min_split_gain, est.l1_regularization, est.l2_regularization, est.learning_rate,
                        est.max_features, est.grow_policy)
    chunks = _Chunks(binned, yb, wb, mapper.missing_bin, dask)
    first = chunks.round([], loss, est._baseline, use_es)
    train, trees, tree_class = ([-first] if use_es else []), [], []
    for it in range(est.n_estimators):
        grown = [_grow(chunks, c, mapper, params, rng) for c in range(k)]
        score = chunks.round([(ids, pending, tree["value"]) for tree, ids, pending in grown], loss, est._baseline,
                             use_es)
        trees.extend(t for t, _, _ in grown)
        tree_class.extend(range(k))
        if use_es:
            train.append(-score)
            if est.verbose:
                print(f"[{it + 1}] validation score {train[-1]:.6f}")
            if stop_rule(train, est.n_iter_no_change, est.tol):
                break
    est._set_trees(trees, tree_class)
    est.n_trees_per_iteration_ = k
    est.n_iter_ = len(trees) // k
    est.train_score_ = np.asarray(train)
    est.validation_score_ = np.asarray(train) if use_es else np.asarray([])
    est.do_early_stopping_ = use_es
    est.bin_thresholds_ = mapper.thresholds_
    return est


def _persist(dask, binned, yb, wb, stats):
    n = len(binned)
    has_w = wb[0] is not None
    out = dask.persist(*binned, *yb, *(wb if has_w else []), stats)
    binned, yb = list(out[:n]), list(out[n:2 * n])
    wb = list(out[2 * n:3 * n]) if has_w else wb
    return binned, yb, wb, out[-1]


# ----------------------------------------------------------------------------------- predict

def _predict_block(b, est, method):
    if b.shape[0] == 0:
        return getattr(est, method)(np.zeros((1, b.shape[1]), np.float64))[:0]
    return run_task(getattr(est, method), b)


def predict(est, X, method):
    """est.<method>(X) of a dask array X, lazy: each row chunk by the in-memory method."""
    if X.ndim != 2 or X.shape[1] != est.n_features_in_:
        raise ValueError(f"X has {X.shape[-1]} features, but {type(est).__name__} is expecting "
                         f"{est.n_features_in_} features as input.")
    X = X.astype(np.float64)
    if len(X.chunks[1]) > 1:
        X = X.rechunk({1: -1})
    sample = getattr(est, method)(np.zeros((1, X.shape[1]), np.float64))
    meta = np.empty((0,) + sample.shape[1:], sample.dtype)
    if sample.ndim == 1:
        return X.map_blocks(_predict_block, est, method, drop_axis=1, meta=meta)
    return X.map_blocks(_predict_block, est, method, chunks=(X.chunks[0], sample.shape[1:]), meta=meta)

"""`GradientBoostedTreesRegressor` and `GradientBoostedTreesClassifier`: histogram gradient boosting
with scikit-learn's API (parameter names as in sklearn's HistGradientBoosting*, plus
`n_estimators`, `subsample`, `max_features`, `min_child_weight`, `min_split_gain`, L1/L2).

Saved model format (`model.save(path)`, `GradientBoostedTrees*.load(path)` or `segflow.models.
load_trees(path)`): one NumPy `.npz` file (no pickles; `np.load(path, allow_pickle=False)` reads it):

    metadata       uint8 bytes of a UTF-8 JSON object: {"format": "segflow.gbt", "version": 1,
                   "estimator": class name, "params": get_params(), "n_features_in": F,
                   "n_trees_per_iteration": K, "n_iter": iterations kept, "loss": loss name,
                   "feature_names_in": list or null}
    baseline       float64 [K]   raw score before the first tree
    tree_starts    int64 [T + 1] tree t's nodes are rows tree_starts[t]:tree_starts[t+1] of:
    tree_class     int64 [T]     which of the K raw scores tree t adds to
    feature        int64 [nodes] split feature (-1 at leaves)
    threshold      float64       go left when x <= threshold (inf: only missing values go right)
    missing_left   uint8         1: NaN goes left
    left, right    int64         child node index within the tree (-1 at leaves)
    value          float64       leaf value (learning rate applied)
    gain, count, hessian         split gain, training rows and hessian sum per node
    classes        (classifier)  the class labels, as a NumPy array of numbers or strings
"""
import json
import numbers

import numpy as np

from segflow.dask import _trees as dask_trees  # dask arrays (scale-out); imports dask only when used
from segflow.kernels import histogram as hk
from segflow.models._trees.binning import BinMapper
from segflow.models._trees.grower import TreeParams, grow_tree
from segflow.models._trees.losses import Logistic, Softmax, SquaredError

try:  # scikit-learn is optional: without it the estimators keep the API, minus sklearn's checks
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
    from sklearn.utils import check_random_state
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import check_is_fitted, validate_data, _check_sample_weight
    HAVE_SKLEARN = True
except ImportError:  # pragma: no cover - exercised only without scikit-learn
    HAVE_SKLEARN = False
    BaseEstimator = object
    ClassifierMixin = RegressorMixin = object

__all__ = ["GradientBoostedTreesRegressor", "GradientBoostedTreesClassifier", "load_trees"]

_NODE_ARRAYS = ("feature", "threshold", "missing_left", "left", "right", "value", "gain", "count", "hessian")
_PARAMS = ("n_estimators", "learning_rate", "max_depth", "max_leaf_nodes", "min_samples_leaf",
           "min_child_weight", "min_split_gain", "l1_regularization", "l2_regularization", "max_bins",
           "subsample", "max_features", "grow_policy", "early_stopping", "validation_fraction",
           "n_iter_no_change", "tol", "random_state", "verbose")


class _BaseGBT(BaseEstimator):
    def __init__(self, n_estimators=100, learning_rate=0.1, max_depth=None, max_leaf_nodes=31,
                 min_samples_leaf=20, min_child_weight=1e-3, min_split_gain=0.0, l1_regularization=0.0,
                 l2_regularization=0.0, max_bins=255, subsample=1.0, max_features=1.0,
                 grow_policy="lossguide", early_stopping="auto", validation_fraction=0.1,
                 n_iter_no_change=10, tol=1e-7, random_state=None, verbose=0):
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_leaf = min_samples_leaf
        self.min_child_weight = min_child_weight
        self.min_split_gain = min_split_gain
        self.l1_regularization = l1_regularization
        self.l2_regularization = l2_regularization
        self.max_bins = max_bins
        self.subsample = subsample
        self.max_features = max_features
        self.grow_policy = grow_policy
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    if not HAVE_SKLEARN:  # pragma: no cover
        def get_params(self, deep=True):
            return {k: getattr(self, k) for k in _PARAMS}

        def set_params(self, **params):
            for k, v in params.items():
                if k not in _PARAMS:
                    raise ValueError(f"invalid parameter {k!r}")
                setattr(self, k, v)
            return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    # -- checks ----------------------------------------------------------------------------------
    def _check_params(self):
        def need(ok, name, what):
            if not ok:
                raise ValueError(f"{name} must be {what}, got {getattr(self, name)!r}")
        need(isinstance(self.n_estimators, numbers.Integral) and self.n_estimators >= 1, "n_estimators", "an int >= 1")
        need(isinstance(self.learning_rate, numbers.Real) and self.learning_rate > 0, "learning_rate", "> 0")
        need(self.max_depth is None or (isinstance(self.max_depth, numbers.Integral) and self.max_depth >= 1),
             "max_depth", "None or an int >= 1")
        need(self.max_leaf_nodes is None or (isinstance(self.max_leaf_nodes, numbers.Integral)
                                             and self.max_leaf_nodes >= 2), "max_leaf_nodes", "None or an int >= 2")
        need(isinstance(self.min_samples_leaf, numbers.Integral) and self.min_samples_leaf >= 1,
             "min_samples_leaf", "an int >= 1")
        for name in ("min_child_weight", "min_split_gain", "l1_regularization", "l2_regularization", "tol"):
            need(isinstance(getattr(self, name), numbers.Real) and getattr(self, name) >= 0, name, ">= 0")
        need(isinstance(self.max_bins, numbers.Integral) and 2 <= self.max_bins <= 255, "max_bins", "an int in [2, 255]")
        need(isinstance(self.subsample, numbers.Real) and 0 < self.subsample <= 1, "subsample", "in (0, 1]")
        need(isinstance(self.max_features, numbers.Real) and 0 < self.max_features <= 1, "max_features", "in (0, 1]")
        need(self.grow_policy in ("lossguide", "depthwise"), "grow_policy", "'lossguide' or 'depthwise'")
        need(self.early_stopping in ("auto", True, False), "early_stopping", "'auto', True or False")
        need(self.validation_fraction is None or (isinstance(self.validation_fraction, numbers.Real)
                                                  and 0 < self.validation_fraction < 1),
             "validation_fraction", "None or in (0, 1)")
        need(isinstance(self.n_iter_no_change, numbers.Integral) and self.n_iter_no_change >= 1,
             "n_iter_no_change", "an int >= 1")

    def _validate_fit(self, X, y, sample_weight):
        if HAVE_SKLEARN:
            X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite="allow-nan",
                                 y_numeric=not self._is_classifier)
            if sample_weight is not None:
                sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        else:  # pragma: no cover
            X = np.asarray(X, np.float64)
            y = np.asarray(y)
            if X.ndim != 2 or len(y) != len(X):
                raise ValueError("X must be 2-D with one row per target")
            self.n_features_in_ = X.shape[1]
            if sample_weight is not None:
                sample_weight = np.asarray(sample_weight, np.float64)
        if np.isinf(X).any():
            raise ValueError("Input X contains infinity or a value too large for dtype('float64').")
        return X, y, sample_weight

    def _validate_predict(self, X):
        if HAVE_SKLEARN:
            check_is_fitted(self, "_starts")
            return validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=False)
        X = np.asarray(X, np.float64)  # pragma: no cover
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:  # pragma: no cover
            raise ValueError(f"X has {X.shape[-1]} features, but the model expects {self.n_features_in_}")
        return X  # pragma: no cover

    # -- fitting ---------------------------------------------------------------------------------
    def _seed(self):
        if HAVE_SKLEARN:
            return int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        return self.random_state  # pragma: no cover

    def _fit(self, X, y, sample_weight, loss, k):
        self._check_params()
        rng = np.random.default_rng(self._seed())
        n = X.shape[0]
        use_es = self.early_stopping is True or (self.early_stopping == "auto" and n > 10_000)
        val = None
        if use_es and self.validation_fraction is not None:
            n_val = max(1, int(round(self.validation_fraction * n)))
            perm = _stratified_permutation(y, rng) if self._is_classifier else rng.permutation(n)
            val_idx, train_idx = np.sort(perm[:n_val]), np.sort(perm[n_val:])
            val = (X[val_idx], y[val_idx], None if sample_weight is None else sample_weight[val_idx])
            X, y = X[train_idx], y[train_idx]
            sample_weight = None if sample_weight is None else sample_weight[train_idx]
            n = X.shape[0]
        self._loss = loss
        mapper = BinMapper(self.max_bins, random_state=rng.integers(2**31)).fit(X)
        binned = mapper.transform(X)
        params = TreeParams(self.max_depth, self.max_leaf_nodes, self.min_samples_leaf, self.min_child_weight,
                            self.min_split_gain, self.l1_regularization, self.l2_regularization,
                            self.learning_rate, self.max_features, self.grow_policy)
        self._baseline = loss.baseline(y, sample_weight, k).astype(np.float64)
        raw = np.repeat(self._baseline[:, None], n, axis=1)
        trees, tree_class = [], []
        val_raw = None if val is None else np.repeat(self._baseline[None, :], len(val[0]), axis=0)
        scores = [] if use_es else None
        if use_es:
            scores.append(-loss.loss(val[1], val_raw.T, val[2]) if val is not None
                          else -loss.loss(y, raw, sample_weight))
        self.train_score_ = [-loss.loss(y, raw, sample_weight)] if use_es else []
        all_rows = np.arange(n, dtype=np.int64)
        for it in range(self.n_estimators):
            g, h = loss.grad_hess(y, raw)
            if sample_weight is not None:
                g, h = g * sample_weight[None, :], h * sample_weight[None, :]
            rows = all_rows
            if self.subsample < 1.0:
                rows = np.sort(rng.choice(n, max(1, int(round(self.subsample * n))), replace=False))
            new = []
            for c in range(k):
                tree = grow_tree(binned, rows, np.ascontiguousarray(g[c]), np.ascontiguousarray(h[c]),
                                 mapper.n_bins_, mapper.thresholds_, mapper.missing_bin, params, rng)
                new.append(tree)
            for c, tree in enumerate(new):  # scores change only after all K trees of the round
                if rows is all_rows:  # every row sits in one leaf's row list
                    for leaf, leaf_rows in tree.pop("leaf_rows"):
                        raw[c, leaf_rows] += tree["value"][leaf]
                else:
                    tree.pop("leaf_rows")
                    hk.predict_binned(binned, tree, mapper.missing_bin, raw[c])
            trees.extend(new)
            tree_class.extend(range(k))
            if use_es:
                self.train_score_.append(-loss.loss(y, raw, sample_weight))
                if val is not None:
                    _add_trees(new, list(range(k)), val[0], val_raw)
                    scores.append(-loss.loss(val[1], val_raw.T, val[2]))
                else:
                    scores.append(self.train_score_[-1])
                if self.verbose:
                    print(f"[{it + 1}] validation score {scores[-1]:.6f}")
                if _should_stop(scores, self.n_iter_no_change, self.tol):
                    break
        self._set_trees(trees, tree_class)
        self.n_trees_per_iteration_ = k
        self.n_iter_ = len(trees) // k
        self.validation_score_ = np.asarray(scores) if use_es else np.asarray([])
        self.train_score_ = np.asarray(self.train_score_)
        self.do_early_stopping_ = bool(use_es)
        self.bin_thresholds_ = mapper.thresholds_
        return self

    def _set_trees(self, trees, tree_class):
        sizes = [len(t["value"]) for t in trees]
        self._starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self._tree_class = np.asarray(tree_class, np.int64)
        for name in _NODE_ARRAYS:
            dt = np.uint8 if name == "missing_left" else (np.int64 if name in ("feature", "left", "right", "count")
                                                          else np.float64)
            arr = [t[name] for t in trees]
            setattr(self, "_" + name, np.concatenate(arr).astype(dt) if arr else np.zeros(0, dt))

    def _raw_predict(self, X):
        X = self._validate_predict(X)
        out = np.repeat(self._baseline[None, :], X.shape[0], axis=0)
        hk.predict_raw(X, self._starts, self._tree_class, self._feature, self._threshold, self._missing_left,
                       self._left, self._right, self._value, out)
        return out.T  # [K, N]

    def get_tree(self, i):
        """Tree i (in fit order) as a dict of node arrays: feature, threshold, missing_left, left,
        right, value, gain, count, hessian (node 0 is the root; children -1 at leaves)."""
        if HAVE_SKLEARN:
            check_is_fitted(self, "_starts")
        a, b = self._starts[i], self._starts[i + 1]
        return {name: getattr(self, "_" + name)[a:b].copy() for name in _NODE_ARRAYS}

    # -- importances -----------------------------------------------------------------------------
    def feature_importances(self, importance_type="gain"):
        """Per feature: total split gain ("gain") or number of splits ("split") over all trees."""
        if HAVE_SKLEARN:
            check_is_fitted(self, "_starts")
        split = self._feature >= 0
        if importance_type == "gain":
            weights = self._gain[split]
        elif importance_type == "split":
            weights = np.ones(int(split.sum()))
        else:
            raise ValueError(f"importance_type must be 'gain' or 'split', got {importance_type!r}")
        return np.bincount(self._feature[split], weights=weights, minlength=self.n_features_in_).astype(np.float64)

    @property
    def feature_importances_(self):
        """Total split gain per feature, normalised to sum to 1 (all zeros without any split)."""
        imp = self.feature_importances("gain")
        total = imp.sum()
        return imp / total if total > 0 else imp

    # -- saving ----------------------------------------------------------------------------------
    def save(self, path):
        """Writes the fitted model to `path` (.npz; format in the module docstring)."""
        if HAVE_SKLEARN:
            check_is_fitted(self, "_starts")
        params = self.get_params()
        if not isinstance(params["random_state"], (numbers.Integral, type(None))):
            params["random_state"] = None
        names = getattr(self, "feature_names_in_", None)
        meta = {"format": "segflow.gbt", "version": 1, "estimator": type(self).__name__, "params": params,
                "n_features_in": int(self.n_features_in_), "n_trees_per_iteration": int(self.n_trees_per_iteration_),
                "n_iter": int(self.n_iter_), "loss": self._loss.__name__,
                "feature_names_in": None if names is None else [str(s) for s in names]}
        arrays = {name: getattr(self, "_" + name) for name in _NODE_ARRAYS}
        arrays.update(baseline=self._baseline, tree_starts=self._starts, tree_class=self._tree_class,
                      metadata=np.frombuffer(json.dumps(meta, default=_json_default).encode(), np.uint8))
        if self._is_classifier:
            arrays["classes"] = _plain_array(self.classes_)
        with open(path, "wb") as f:
            np.savez(f, **arrays)

    @classmethod
    def load(cls, path):
        """The model saved at `path`, as an instance of the class it was saved from."""
        model = load_trees(path)
        if not isinstance(model, cls):
            raise TypeError(f"{path} holds a {type(model).__name__}, not a {cls.__name__}")
        return model


def load_trees(path):
    """Reads a model written by `save` (either estimator)."""
    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(bytes(data["metadata"]).decode())
        if meta.get("format") != "segflow.gbt" or meta.get("version") != 1:
            raise ValueError(f"{path} is not a segflow gradient-boosted-trees file (version 1)")
        cls = {"GradientBoostedTreesRegressor": GradientBoostedTreesRegressor,
               "GradientBoostedTreesClassifier": GradientBoostedTreesClassifier}[meta["estimator"]]
        model = cls(**meta["params"])
        for name in _NODE_ARRAYS:
            setattr(model, "_" + name, data[name])
        model._baseline, model._starts, model._tree_class = data["baseline"], data["tree_starts"], data["tree_class"]
        if "classes" in data:
            model.classes_ = data["classes"]
            model.n_classes_ = len(model.classes_)
    model.n_features_in_ = meta["n_features_in"]
    if meta["feature_names_in"] is not None:
        model.feature_names_in_ = np.asarray(meta["feature_names_in"], object)
    model.n_trees_per_iteration_ = meta["n_trees_per_iteration"]
    model.n_iter_ = meta["n_iter"]
    model._loss = {"SquaredError": SquaredError, "Logistic": Logistic, "Softmax": Softmax}[meta["loss"]]
    return model


def _json_default(v):
    if isinstance(v, np.generic):
        return v.item()
    raise TypeError(f"cannot store {type(v).__name__} in the model's metadata")


def _plain_array(a):
    a = np.asarray(a)
    if a.dtype == object:
        a = a.astype(str)
    return a


def _add_trees(trees, classes, X, out):
    sizes = [len(t["value"]) for t in trees]
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    cat = {k: np.concatenate([t[k] for t in trees]) for k in ("feature", "threshold", "missing_left", "left",
                                                                "right", "value")}
    hk.predict_raw(X, starts, np.asarray(classes, np.int64), cat["feature"], cat["threshold"],
                   cat["missing_left"], cat["left"], cat["right"], cat["value"], out)


def _should_stop(scores, n_iter_no_change, tol):
    # scikit-learn's rule: stop when none of the last n_iter_no_change scores beats the one before
    # them by more than tol (scores: higher is better).
    if len(scores) <= n_iter_no_change:
        return False
    reference = scores[-n_iter_no_change - 1]
    return not any(s > reference + tol for s in scores[-n_iter_no_change:])


def _stratified_permutation(y, rng):
    """A permutation of the rows whose every prefix holds the classes in proportion (about)."""
    keys = np.empty(len(y))
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        keys[idx] = (rng.permutation(len(idx)) + rng.random(len(idx))) / len(idx)
    return np.argsort(keys, kind="stable")


class GradientBoostedTreesRegressor(RegressorMixin, _BaseGBT):
    """Histogram gradient-boosted regression trees (squared error).

    Parameters as scikit-learn's HistGradientBoostingRegressor where they exist (`max_iter` is
    `n_estimators`); `subsample` samples rows per iteration without replacement, `max_features`
    the features each split considers; NaN values go to a learned default direction.
    `fit` also takes dask arrays (X chunked along rows, y alike): segflow.dask._trees (both
    grow policies; depthwise needs one Dask pass per level, lossguide one per split; subsample < 1
    raises ValueError); predict of a dask array is lazy.
    """
    _is_classifier = False

    def fit(self, X, y, sample_weight=None):
        if dask_trees.is_dask(X) or dask_trees.is_dask(y):  # scale-out: segflow.dask._trees
            return dask_trees.fit(self, X, y, sample_weight, self._seed(), _should_stop)
        X, y, sample_weight = self._validate_fit(X, y, sample_weight)
        return self._fit(X, np.asarray(y, np.float64), sample_weight, SquaredError, 1)

    def predict(self, X):
        if dask_trees.is_dask(X):
            return dask_trees.predict(self, X, "predict")
        return self._raw_predict(X)[0]


class GradientBoostedTreesClassifier(ClassifierMixin, _BaseGBT):
    """Histogram gradient-boosted classification trees (log-loss; softmax with one tree per class
    and iteration for more than two classes). Parameters as GradientBoostedTreesRegressor."""
    _is_classifier = True

    def fit(self, X, y, sample_weight=None):
        if dask_trees.is_dask(X) or dask_trees.is_dask(y):  # scale-out: segflow.dask._trees
            return dask_trees.fit(self, X, y, sample_weight, self._seed(), _should_stop)
        X, y, sample_weight = self._validate_fit(X, y, sample_weight)
        if HAVE_SKLEARN:
            check_classification_targets(y)
        self.classes_, encoded = np.unique(y, return_inverse=True)
        self.n_classes_ = len(self.classes_)
        encoded = encoded.astype(np.float64)
        if self.n_classes_ == 1:
            raise ValueError("y contains only one class; a classifier needs at least two")
        if self.n_classes_ == 2:
            return self._fit(X, encoded, sample_weight, Logistic, 1)
        return self._fit(X, encoded, sample_weight, Softmax, self.n_classes_)

    def decision_function(self, X):
        if dask_trees.is_dask(X):
            return dask_trees.predict(self, X, "decision_function")
        raw = self._raw_predict(X)
        return raw[0] if raw.shape[0] == 1 else raw.T

    def predict_proba(self, X):
        if dask_trees.is_dask(X):
            return dask_trees.predict(self, X, "predict_proba")
        raw = self._raw_predict(X)  # checks that the model is fitted
        return self._loss.proba(raw)

    def predict(self, X):
        if dask_trees.is_dask(X):
            return dask_trees.predict(self, X, "predict")
        # From the raw scores (as decision_function), not the rounded probabilities: ties agree.
        raw = self._raw_predict(X)
        best = (raw[0] > 0).astype(np.int64) if raw.shape[0] == 1 else np.argmax(raw, axis=0)
        return self.classes_[best]

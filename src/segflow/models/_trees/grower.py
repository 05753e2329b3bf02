"""Growing one regression tree on gradient histograms (second-order boosting, XGBoost's gain).

For a node with gradient sum G and hessian sum H, with L1 (alpha) and L2 (lambda) penalties,

    T(G) = sign(G) * max(|G| - alpha, 0),   score(G, H) = T(G)^2 / (H + lambda),
    leaf value = -T(G) / (H + lambda),      gain = (score(L) + score(R) - score(parent)) / 2.

A split is a (feature, bin threshold t, missing direction): bins <= t go left, the missing bin goes
left or right, whichever gains more (when the node has no missing values, they go to the child with
more rows). It needs at least `min_samples_leaf` rows and `min_child_weight` hessian in each child
and gain > `min_split_gain`. Nodes are expanded best gain first ("lossguide") or breadth first
("depthwise") until `max_leaf_nodes` leaves; with no leaf limit both grow the same tree. A child's
histogram is computed for the smaller child only; the larger one is the parent's minus it; none is
computed when neither child can be split (depth, size or leaf budget).
"""
import heapq

import numpy as np

from segflow.kernels import histogram as hk

__all__ = ["TreeParams", "grow_tree", "leaf_value", "splittable", "find_split", "NODE_DTYPES"]

_NODE_FIELDS = ("feature", "threshold", "bin_threshold", "missing_left", "left", "right", "value",
                "gain", "count", "hessian")
NODE_DTYPES = {"feature": np.int64, "threshold": np.float64, "bin_threshold": np.uint8, "missing_left": np.uint8,
               "left": np.int64, "right": np.int64, "value": np.float64, "gain": np.float64,
               "count": np.int64, "hessian": np.float64}


class TreeParams:
    """The split and growth settings of one tree."""

    def __init__(self, max_depth=None, max_leaf_nodes=31, min_samples_leaf=20, min_child_weight=1e-3,
                 min_split_gain=0.0, l1_regularization=0.0, l2_regularization=0.0, learning_rate=0.1,
                 max_features=1.0, grow_policy="lossguide"):
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_leaf = min_samples_leaf
        self.min_child_weight = min_child_weight
        self.min_split_gain = min_split_gain
        self.l1 = l1_regularization
        self.l2 = l2_regularization
        self.learning_rate = learning_rate
        self.max_features = max_features
        self.grow_policy = grow_policy


def leaf_value(g, h, p):
    """-T(G) / (H + lambda), the Newton step of a leaf (0 where H + lambda is 0)."""
    d = h + p.l2
    t = np.sign(g) * max(abs(g) - p.l1, 0.0)
    return float(-t / d) if d > 0 else 0.0


def _best_split(hist, totals, n_bins, missing_bin, p, feature_mask):
    """(gain, feature, t, missing_left, left_totals) of the best valid split, or None."""
    gain, f, t, opt, lg, lh, lc = hk.best_split(hist, totals, n_bins, missing_bin, feature_mask,
                                                float(p.min_samples_leaf), float(p.min_child_weight),
                                                float(p.l1), float(p.l2))
    if f < 0 or not gain > p.min_split_gain:
        return None
    left = np.array([lg, lh, lc])
    if hist[f, missing_bin, 2] > 0:
        missing_left = bool(opt == 1)
    else:  # no missing values seen here: they will go to the child with more rows
        missing_left = bool(lc >= totals[2] - lc)
    return float(gain), int(f), int(t), missing_left, left


def splittable(p, depth, count):
    """Whether a node at `depth` with `count` rows may be split (depth and size limits)."""
    return (p.max_depth is None or depth < p.max_depth) and count >= 2 * p.min_samples_leaf


def find_split(hist, totals, depth, n_bins, missing_bin, p, rng):
    """The split of a node from its histogram (None: a leaf); draws the node's `max_features`
    sample from rng when the node may be split (the one place a tree consumes rng)."""
    if hist is None or not splittable(p, depth, totals[2]):
        return None
    n_features = hist.shape[0]
    mask = np.ones(n_features, np.bool_)
    if p.max_features < 1.0:
        k = max(1, int(np.ceil(p.max_features * n_features)))
        mask = np.zeros(n_features, bool)
        mask[rng.choice(n_features, k, replace=False)] = True
    return _best_split(hist, totals, n_bins, missing_bin, p, mask)


class _Node:
    __slots__ = ("index", "span", "hist", "totals", "depth", "split")


def grow_tree(binned, rows, gradients, hessians, n_bins, thresholds, missing_bin, p, rng=None):
    """One tree on the rows `rows` of `binned` ([N, F] uint8). `gradients`/`hessians`: float64 [N]
    (all rows; only `rows` are read). Returns a dict of node arrays (fields `_NODE_FIELDS`; children
    are node indices, -1 at leaves; leaf values include the learning rate) and "leaf_rows", a list of
    (leaf index, its rows among `rows`)."""
    nodes = {k: [] for k in _NODE_FIELDS}

    def new_node(span, hist, totals, depth):
        node = _Node()
        node.index = len(nodes["value"])
        node.span, node.hist, node.totals, node.depth, node.split = span, hist, totals, depth, None
        for k, v in (("feature", -1), ("threshold", np.nan), ("bin_threshold", 0), ("missing_left", 0),
                     ("left", -1), ("right", -1), ("gain", 0.0)):
            nodes[k].append(v)
        nodes["value"].append(leaf_value(totals[0], totals[1], p) * p.learning_rate)
        nodes["count"].append(int(round(totals[2])))
        nodes["hessian"].append(float(totals[1]))
        node.split = find_split(hist, totals, depth, n_bins, missing_bin, p, rng)
        return node

    # The sampled rows' bins, gradients and ids, copied once; every split partitions its node's
    # block in place, so each node's rows stay contiguous and histograms read memory in order.
    idx = np.ascontiguousarray(rows, np.int64).copy()
    work = binned[idx]
    gh = np.stack([gradients[idx], hessians[idx]], axis=1)
    scratch = (np.empty_like(work), np.empty_like(gh), np.empty_like(idx))
    root_hist = hk.block_histogram(work, gh, 0, len(idx), missing_bin + 1)
    root_totals = root_hist[0].sum(axis=0)
    heap, order, leaf_spans = [], 0, []

    def push(node):
        nonlocal order
        if node.split is not None:
            key = -node.split[0] if p.grow_policy == "lossguide" else node.depth
            heapq.heappush(heap, (key, order, node))
            order += 1
        else:
            leaf_spans.append((node.index, node.span))
            node.hist = None

    push(new_node((0, len(idx)), root_hist, root_totals, 0))
    n_leaves = 1
    while heap and (p.max_leaf_nodes is None or n_leaves < p.max_leaf_nodes):
        _, _, node = heapq.heappop(heap)
        gain, f, t, missing_left, left_totals = node.split
        start, stop = node.span
        mid = hk.partition_block(work, gh, idx, start, stop, f, t, missing_bin, missing_left, scratch)
        left_rows, right_rows = (start, mid), (mid, stop)
        n_left, n_right = mid - start, stop - mid
        last = p.max_leaf_nodes is not None and n_leaves + 1 >= p.max_leaf_nodes
        if not last and (splittable(p, node.depth + 1, n_left) or splittable(p, node.depth + 1, n_right)):
            small = left_rows if n_left <= n_right else right_rows
            small_hist = hk.block_histogram(work, gh, small[0], small[1], missing_bin + 1)
            large_hist = node.hist - small_hist
            hists = (small_hist, large_hist) if small is left_rows else (large_hist, small_hist)
        else:  # neither child will be split: no histogram needed
            hists = (None, None)
        totals = (left_totals, node.totals - left_totals)
        i = node.index
        nodes["feature"][i], nodes["bin_threshold"][i], nodes["gain"][i] = f, t, gain
        nodes["threshold"][i] = thresholds[f][t] if t < len(thresholds[f]) else np.inf
        nodes["missing_left"][i] = int(missing_left)
        node.hist = None
        children = [new_node(r, hh, tt, node.depth + 1) for r, hh, tt in zip((left_rows, right_rows), hists, totals)]
        nodes["left"][i], nodes["right"][i] = children[0].index, children[1].index
        for c in children:
            push(c)
        n_leaves += 1
    leaf_spans.extend((node.index, node.span) for _, _, node in heap)  # left when the leaf budget ran out
    tree = {k: np.asarray(v, NODE_DTYPES[k]) for k, v in nodes.items()}
    tree["leaf_rows"] = [(leaf, idx[a:b]) for leaf, (a, b) in leaf_spans]
    return tree

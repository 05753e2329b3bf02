"""A layered (Sugiyama-style) layout of a directed graph, in plain Python, so that a picture needs
nothing installed.

Steps: edges against the nodes' order are reversed (the graph becomes acyclic; ops come in creation
order, so only scope groups can form cycles); longest-path layering, with nodes that have no inputs
moved down next to their first consumer; a dummy node wherever an edge spans several layers; a few
barycenter sweeps down and up to reduce crossings (keeping the order with the fewest); then x
coordinates that pull each node towards the mean of its neighbours, solved exactly per layer under
the constraint that neighbours in a layer keep their order and never overlap (pool-adjacent-violators).
"""

__all__ = ["Layout", "layout"]

_DUMMY_WIDTH = 8.0


class Layout:
    """`x[i], y[i]`: the centre of node i; `width`, `height`: the drawing's size; `routes[k]`: the
    points edge k passes through, from its source's bottom to its destination's top."""

    def __init__(self, x, y, width, height, routes, layers):
        self.x, self.y, self.width, self.height, self.routes, self.layers = x, y, width, height, routes, layers


def layout(sizes, edges, order=None, node_gap=28.0, layer_gap=56.0, margin=24.0, sweeps=6,
           max_dummies=3000):
    """Lays out nodes of `sizes[i] = (w, h)` joined by `edges[k] = (src, dst)`.

    `order[i]` sorts the nodes (default: their index); an edge from a later to an earlier node is
    drawn reversed. Long edges get a dummy node per layer they cross, shortest edges first, up to
    `max_dummies` in all (this bounds the time a large graph takes); longer ones are drawn straight
    from source to destination. Returns a `Layout`.
    """
    n = len(sizes)
    order = list(range(n)) if order is None else list(order)
    rank = {v: r for r, v in enumerate(sorted(range(n), key=lambda v: order[v]))}
    pairs = []                          # (upper, lower, edge index, reversed)
    for k, (s, d) in enumerate(edges):
        if s == d:
            continue
        if rank[s] < rank[d]:
            pairs.append((s, d, k, False))
        else:
            pairs.append((d, s, k, True))
    preds = [[] for _ in range(n)]
    succs = [[] for _ in range(n)]
    for u, v, _, _ in pairs:
        preds[v].append(u)
        succs[u].append(v)
    topo = sorted(range(n), key=lambda v: rank[v])

    # longest-path layering, then sources moved down to just above their nearest consumer
    layer = [0] * n
    for v in topo:
        if preds[v]:
            layer[v] = max(layer[u] for u in preds[v]) + 1
    for v in reversed(topo):
        if not preds[v] and succs[v]:
            layer[v] = min(layer[w] for w in succs[v]) - 1
    if n:
        low = min(layer)
        layer = [v - low for v in layer]

    # dummy nodes for long edges
    widths = [float(w) for w, _ in sizes]
    heights = [float(h) for _, h in sizes]
    lay = list(layer)
    chains = {}                         # edge index -> the nodes it passes through, top to bottom
    up = [list() for _ in range(n)]     # adjacency with dummies: up[v] = nodes above joined to v
    down = [list() for _ in range(n)]
    allowance = max_dummies
    for u, v, k, rev in sorted(pairs, key=lambda p: (lay[p[1]] - lay[p[0]], p[2])):
        chain = [u]
        need = lay[v] - lay[u] - 1
        levels = range(lay[u] + 1, lay[v]) if need <= allowance else ()
        allowance -= len(levels)
        for level in levels:
            d = len(widths)
            widths.append(_DUMMY_WIDTH)
            heights.append(0.0)
            lay.append(level)
            up.append([])
            down.append([])
            chain.append(d)
        chain.append(v)
        for a, b in zip(chain, chain[1:]):
            down[a].append(b)
            up[b].append(a)
        chains[k] = (chain, rev)
    total = len(widths)
    depth = max(lay) + 1 if total else 0
    rows = [[] for _ in range(depth)]
    for v in sorted(range(total), key=lambda v: (rank.get(v, v), v)):
        rows[lay[v]].append(v)

    rows = _reduce_crossings(rows, up, down, sweeps)

    # y: each layer as tall as its tallest node
    tall = [max((heights[v] for v in row), default=0.0) for row in rows]
    y = [0.0] * total
    top = margin
    for i, row in enumerate(rows):
        for v in row:
            y[v] = top + tall[i] / 2
        top += tall[i] + layer_gap
    height = top - layer_gap + margin if rows else 2 * margin

    x = _coordinates(rows, up, down, widths, node_gap)
    left = min((x[v] - widths[v] / 2 for v in range(total)), default=0.0)
    x = [c - left + margin for c in x]
    width = max((x[v] + widths[v] / 2 for v in range(total)), default=0.0) + margin

    routes = []
    for k, (s, d) in enumerate(edges):
        if k not in chains:
            routes.append([])
            continue
        chain, rev = chains[k]
        pts = [(x[chain[0]], y[chain[0]] + heights[chain[0]] / 2)]
        pts += [(x[c], y[c]) for c in chain[1:-1]]
        pts.append((x[chain[-1]], y[chain[-1]] - heights[chain[-1]] / 2))
        routes.append(pts[::-1] if rev else pts)
    return Layout(x[:n], y[:n], max(width, 2 * margin), height, routes, lay[:n])


def _crossings(rows, down):
    """The number of edge crossings between consecutive rows (inversions, by merge sort)."""
    total = 0
    for upper, lower in zip(rows, rows[1:]):
        pos = {v: i for i, v in enumerate(lower)}
        seq = []
        for v in upper:
            seq.extend(sorted(pos[w] for w in down[v] if w in pos))
        total += _inversions(seq)
    return total


def _inversions(seq):
    if len(seq) < 2:
        return 0
    mid = len(seq) // 2
    a, b = seq[:mid], seq[mid:]
    count = _inversions(a) + _inversions(b)
    a.sort()
    b.sort()
    j = 0
    for v in a:
        while j < len(b) and b[j] < v:
            j += 1
        count += j
    return count


def _reduce_crossings(rows, up, down, sweeps):
    best = [list(r) for r in rows]
    best_count = _crossings(best, down)
    current = [list(r) for r in rows]
    for s in range(sweeps):
        if best_count == 0:
            break
        if s % 2 == 0:   # down: order each row by its nodes' neighbours in the row above
            for i in range(1, len(current)):
                _barycenter_sort(current[i], current[i - 1], up)
        else:
            for i in range(len(current) - 2, -1, -1):
                _barycenter_sort(current[i], current[i + 1], down)
        count = _crossings(current, down)
        if count < best_count:
            best, best_count = [list(r) for r in current], count
    return best


def _barycenter_sort(row, fixed, adjacent):
    pos = {v: i for i, v in enumerate(fixed)}
    keys = {}
    for i, v in enumerate(row):
        near = [pos[w] for w in adjacent[v] if w in pos]
        keys[v] = (sum(near) / len(near)) if near else float(i)   # no neighbour: stays in place
    row.sort(key=lambda v: keys[v])


def _coordinates(rows, up, down, widths, gap):
    total = len(widths)
    x = [0.0] * total
    for row in rows:                       # start packed left to right
        at = 0.0
        for v in row:
            x[v] = at + widths[v] / 2
            at += widths[v] + gap
    for it in range(8):
        sweep = range(1, len(rows)) if it % 2 == 0 else range(len(rows) - 2, -1, -1)
        adjacent = up if it % 2 == 0 else down
        for i in sweep:
            row = rows[i]
            want = []
            for v in row:
                near = adjacent[v] or (down[v] if adjacent is up else up[v])
                want.append(sum(x[w] for w in near) / len(near) if near else x[v])
            for v, c in zip(row, _place(row, want, widths, gap)):
                x[v] = c
    return x


def _place(row, want, widths, gap):
    """x for the nodes of `row` (in order) closest (least squares) to `want`, with each node at
    least half the widths plus `gap` right of the one before: isotonic regression on shifted
    targets, by pool-adjacent-violators."""
    offset = [0.0]
    for a, b in zip(row, row[1:]):
        offset.append(offset[-1] + (widths[a] + widths[b]) / 2 + gap)
    blocks = []                           # [mean, count]
    for target, off in zip(want, offset):
        blocks.append([target - off, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            m2, c2 = blocks.pop()
            m1, c1 = blocks.pop()
            blocks.append([(m1 * c1 + m2 * c2) / (c1 + c2), c1 + c2])
    out = []
    for mean, count in blocks:
        out.extend([mean] * count)
    return [v + off for v, off in zip(out, offset)]

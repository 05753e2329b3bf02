"""sf.viz: DOT and HTML name every node and op type, backward ops are coloured apart, IndexedSlices
edges are marked, traced functions are pictured, scopes collapse, and the layout never overlaps."""
import random
import shutil

import numpy as np
import pytest

import segflow as sf
from segflow.viz import layout as layout_lib
from segflow.viz.style import COLORS

from vizhelp import build_model, parse_dot, parse_page

v1 = sf.compat.v1


def _shown_name(node):
    """The name a node's label shows: its scope line (possibly cut on the left) and name line."""
    return node["texts"].get("scope", "") + node["texts"]["name"]


def _assert_names_shown(page, ops):
    by_name = {n["data-name"]: n for n in page.nodes}
    for op in ops:
        node = by_name[op.name]
        assert node["data-type"] == op.type
        assert node["texts"]["type"] == op.type
        shown = _shown_name(node)
        assert shown == op.name or (shown.startswith("\u2026") and op.name.endswith(shown[1:])), (shown, op.name)
        assert op.name.rsplit("/", 1)[-1] == node["texts"]["name"]


# ----------------------------------------------------------------------------------------------
# DOT


def test_dot_names_every_op_and_type(model):
    g, _, _ = model
    nodes, edges = parse_dot(sf.viz.to_dot(g))
    labels = {a["label"] for a in nodes.values()}
    ops = g.get_operations()
    for op in ops:
        assert f"{op.name}\n{op.type}" in labels
    # every data input of every op is an edge (one per producer/consumer pair)
    label_of = {nid: a["label"].split("\n")[0] for nid, a in nodes.items()}
    pairs = {(label_of[s], label_of[d]) for s, d, _ in edges}
    for op in ops:
        for t in op.inputs:
            assert (t.op.name, op.name) in pairs


def test_dot_backward_ops_coloured_apart(model):
    g, _, _ = model
    nodes, _ = parse_dot(sf.viz.to_dot(g))
    by_name = {a["label"].split("\n")[0]: a for a in nodes.values()}
    backward = [op for op in g.get_operations() if op.name.startswith("gradients/")]
    forward = [op for op in g.get_operations() if not op.name.startswith("gradients/")]
    assert len(backward) > 10 and len(forward) > 10
    for op in backward:
        assert by_name[op.name]["fillcolor"] == COLORS["backward"][0], op.name
        assert by_name[op.name]["class"] == "backward"
    for op in forward:
        assert by_name[op.name]["fillcolor"] == COLORS["forward"][0], op.name
    assert COLORS["backward"][0] != COLORS["forward"][0]


def test_backward_marker_is_not_the_name(model):
    # A forward op named like a gradient stays forward; gradients() under another name is backward.
    g = sf.Graph()
    with g.as_default():
        x = v1.placeholder(sf.float32, [3], name="x")
        with sf.name_scope("gradients"):
            y = sf.sin(x, name="looks_like_grad")
        (dx,) = sf.gradients(sf.reduce_sum(y * y), [x], name="d")
    nodes, _ = parse_dot(sf.viz.to_dot(g))
    kind = {a["label"].split("\n")[0]: a["class"] for a in nodes.values()}
    assert kind["gradients/looks_like_grad"] == "forward"
    assert kind[dx.op.name] == "backward" and dx.op.name.startswith("d/")
    assert kind["d/grad_ys_0"] == "backward"     # the seed gradients() made


def test_dot_marks_indexed_slices_edges(model):
    g, _, grads = model
    assert isinstance(grads[0], sf.IndexedSlices)
    nodes, edges = parse_dot(sf.viz.to_dot(g))
    label_of = {nid: a["label"].split("\n")[0] for nid, a in nodes.items()}
    sliced = [(label_of[s], label_of[d], a) for s, d, a in edges if a.get("class") == "slices"]
    got = {a["label"]: src for src, _, a in sliced}
    assert got == {"values": grads[0].values.op.name, "indices": grads[0].indices.op.name,
                   "dense_shape": grads[0].dense_shape.op.name}
    assert all(a["style"] == "dashed" for _, _, a in sliced)
    # they end at the IndexedSlices node (the gradient handed back)
    assert {d for _, d, _ in sliced} == {grads[0].values.name}
    target = [a for a in nodes.values() if a["label"].split("\n")[0] == grads[0].values.name][0]
    assert target["label"].endswith("\nIndexedSlices") and target["class"] == "slices"
    # the dense gradient of w travels on plain edges
    dense = [a for s, d, a in edges if label_of[s] == grads[1].op.name]
    assert all(a.get("class") != "slices" for a in dense)


def test_indexed_slices_consumed_by_an_optimizer():
    g, loss, _ = build_model()
    with g.as_default():
        emb = [v for v in v1.global_variables() if v.name.startswith("emb")][0]
        train = v1.train.GradientDescentOptimizer(0.1).minimize(loss, var_list=[emb])
    nodes, edges = parse_dot(sf.viz.to_dot(train))
    label_of = {nid: a["label"].split("\n") for nid, a in nodes.items()}
    sliced = [(label_of[s], label_of[d], a["label"]) for s, d, a in edges if a.get("class") == "slices"]
    # the sparse update reads the gradient's values and indices on marked edges
    into_update = {lab for _, d, lab in sliced if "Scatter" in d[1] or "Sparse" in d[1]}
    assert {"values", "indices"} <= {part for lab in into_update for part in lab.split(", ")}, sliced


def test_dot_of_fetches_draws_only_their_ancestors(model):
    g, loss, grads = model
    nodes, _ = parse_dot(sf.viz.to_dot(loss))
    names = {a["label"].split("\n")[0] for a in nodes.values()}
    assert "model/loss" in names and not any(n.startswith("gradients/") for n in names)
    assert "w/Assign" not in names          # not an ancestor of the loss


def test_dot_quotes_names():
    g = sf.Graph()
    with g.as_default():
        sf.constant(1.0, name="a")
    text = sf.viz.to_dot(g, title='say "hi" \\ there')
    assert 'label="say \\"hi\\" \\\\ there"' in text


def test_traced_function_is_pictured():
    def step(x, w):
        with sf.GradientTape() as tape:
            tape.watch(w)
            loss = sf.reduce_sum(sf.tanh(sf.matmul(x, w)))
        return loss, tape.gradient(loss, w)

    x = np.ones((2, 3), np.float32)
    w = np.ones((3, 1), np.float32)
    graph = sf.function(step).get_concrete_function(x, w).graph
    ops = graph.get_operations()
    nodes, _ = parse_dot(sf.viz.to_dot(step, x, w))
    by_name = {a["label"].split("\n")[0]: a for a in nodes.values()}
    assert len(by_name) == len(ops)
    for op in ops:
        assert by_name[op.name]["label"] == f"{op.name}\n{op.type}"
    # the tape's gradient ops in the trace are backward, the forward matmul is not
    kinds = {n: a["class"] for n, a in by_name.items()}
    assert kinds[[op.name for op in ops if op.type == "Tanh"][0]] == "forward"
    assert "backward" in {kinds[op.name] for op in ops if op.name.startswith("gradient_tape/")}
    assert {kinds[op.name] for op in ops if op.name.startswith("gradient_tape/")} == {"backward"}
    # the outputs are drawn bold
    assert sum(1 for a in nodes.values() if a.get("penwidth")) >= 2
    # an sf.function object and a ConcreteFunction picture the same graph
    assert sf.viz.to_dot(sf.function(step), x, w).count("->") == sf.viz.to_dot(step, x, w).count("->")


def test_bad_targets_raise():
    with pytest.raises(TypeError, match="eager tensor"):
        sf.viz.to_dot(sf.constant([1.0]))
    with pytest.raises(TypeError, match="example arguments"):
        sf.viz.to_dot(sf.Graph(), 1.0)
    with pytest.raises(TypeError, match="cannot draw a int"):
        sf.viz.to_dot([3])
    with pytest.raises(ValueError, match="group_scopes"):
        g = sf.Graph()
        with g.as_default():
            sf.constant(1.0)
        sf.viz.to_dot(g, group_scopes=-1)


def test_group_scopes_collapses_name_scopes(model):
    g, _, grads = model
    pic = sf.viz.picture(g, group_scopes=True)
    ops = g.get_operations()
    members = [op for n in pic.nodes for op in n.members]
    assert sorted(op.name for op in members) == sorted(op.name for op in ops)   # each op in one node
    by_name = {n.name: n for n in pic.nodes}
    assert by_name["gradients/"].kind == "backward" and by_name["model/"].kind == "scope"
    assert by_name["model/"].type == f"{sum(op.name.startswith('model/') for op in ops)} ops"
    assert len(pic.nodes) < 12
    assert all(e.src != e.dst for e in pic.edges)
    sliced = {e.label for e in pic.edges if e.kind == "slices"}
    assert sliced == {"values, indices, dense_shape"}      # one edge from the gradients/ group
    nodes, _ = parse_dot(sf.viz.to_dot(g, group_scopes=True))
    assert {"gradients/\n" + by_name["gradients/"].type, "model/\n" + by_name["model/"].type} <= \
        {a["label"] for a in nodes.values()}


# ----------------------------------------------------------------------------------------------
# SVG through Graphviz


def test_to_svg_without_dot_names_what_to_install(monkeypatch, tmp_path):
    g, _, _ = build_model()
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError, match=r"Graphviz's `dot`.*apt-get install graphviz.*to_html"):
        sf.viz.to_svg(g)


def test_to_svg_with_dot_or_the_error():
    g, _, _ = build_model()
    if shutil.which("dot") is None:
        with pytest.raises(RuntimeError, match="install Graphviz"):
            sf.viz.to_svg(g)
        return
    svg = sf.viz.to_svg(g)
    assert "<svg" in svg
    for op in g.get_operations():
        assert op.type in svg and op.name.rsplit("/", 1)[-1] in svg


# ----------------------------------------------------------------------------------------------
# HTML


def test_html_names_every_node_and_is_self_contained(model):
    g, _, grads = model
    text = sf.viz.to_html(g)
    page = parse_page(text)
    assert page.external == [] and "http://" not in text.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in text and page.scripts >= 1
    ops = g.get_operations()
    assert len(page.nodes) == len(ops) + 1                 # + the IndexedSlices handed back
    _assert_names_shown(page, ops)
    kinds = {n["data-name"]: n["data-kind"] for n in page.nodes}
    for op in ops:
        assert kinds[op.name] == ("backward" if op.name.startswith("gradients/") else "forward")
    fills = {n["data-kind"]: n for n in page.nodes}
    assert COLORS["backward"][0] in text and COLORS["forward"][0] in text and fills["slices"]
    sliced = [e for e in page.edges if e["data-kind"] == "slices"]
    assert len(sliced) == 3 and all("slices" in e["class"].split() for e in sliced)
    assert sorted(lab["text"] for lab in page.labels) == ["dense_shape", "indices", "values"]
    # edges join drawn nodes
    ids = {n["id"] for n in page.nodes}
    assert all(e["data-src"] in ids and e["data-dst"] in ids for e in page.edges)


def test_html_layout_has_no_overlapping_nodes(model):
    g, _, _ = model
    for group in (False, True):
        page = parse_page(sf.viz.to_html(g, group_scopes=group))
        boxes = [tuple(float(n[k]) for k in ("data-x", "data-y", "data-w", "data-h")) for n in page.nodes]
        for i, (x1, y1, w1, h1) in enumerate(boxes):
            assert w1 > 0 and h1 > 0 and x1 >= 0 and y1 >= 0
            for x2, y2, w2, h2 in boxes[i + 1:]:
                apart = x1 + w1 <= x2 or x2 + w2 <= x1 or y1 + h1 <= y2 or y2 + h2 <= y1
                assert apart, ((x1, y1, w1, h1), (x2, y2, w2, h2))


def test_save_html_and_repr_html(model, tmp_path):
    g, _, _ = model
    path = sf.viz.save_html(str(tmp_path / "g.html"), g)
    text = open(path, encoding="utf-8").read()
    assert text.startswith("<!DOCTYPE html>") and len(parse_page(text).nodes) == len(g.get_operations()) + 1
    inline = g._repr_html_()
    page = parse_page(inline)
    assert "<svg" in inline and "<script" not in inline
    _assert_names_shown(page, g.get_operations())
    concrete = sf.function(lambda a: sf.sin(a) * 2.0).get_concrete_function(np.ones(2, np.float32))
    page = parse_page(concrete._repr_html_())
    _assert_names_shown(page, concrete.graph.get_operations())


def test_html_of_traced_function(tmp_path):
    def f(x):
        return sf.reduce_sum(sf.nn.relu(x) * 3.0)
    x = np.ones(4, np.float32)
    page = parse_page(sf.viz.to_html(f, x))
    _assert_names_shown(page, sf.function(f).get_concrete_function(x).graph.get_operations())


# ----------------------------------------------------------------------------------------------
# the layout itself


def _crossings(lay, edges):
    segs = [(lay.x[s], lay.x[d], lay.layers[s]) for s, d in edges if lay.layers[d] == lay.layers[s] + 1]
    count = 0
    for i, (a1, b1, l1) in enumerate(segs):
        for a2, b2, l2 in segs[i + 1:]:
            if l1 == l2 and (a1 - a2) * (b1 - b2) < 0:
                count += 1
    return count


def test_layout_removes_an_avoidable_crossing():
    # a, b on top; c, d below; a -> d and b -> c cross in the given order
    sizes = [(40, 20)] * 4
    edges = [(0, 3), (1, 2)]
    lay = layout_lib.layout(sizes, edges)
    assert lay.layers == [0, 0, 1, 1]
    assert _crossings(lay, edges) == 0


def test_layout_random_dags_no_overlap_and_routes_join_nodes():
    rng = random.Random(4)
    for _ in range(5):
        n = rng.randint(5, 40)
        sizes = [(rng.uniform(30, 160), rng.choice([30.0, 44.0])) for _ in range(n)]
        edges = [(rng.randrange(v), v) for v in range(1, n) for _ in range(rng.randint(0, 2))]
        edges.append((n - 1, 0))            # against the order: drawn reversed
        lay = layout_lib.layout(sizes, edges)
        for s, d in edges[:-1]:
            assert lay.layers[d] > lay.layers[s]       # layering respects every edge
        for i in range(n):
            for j in range(i + 1, n):
                if lay.layers[i] == lay.layers[j]:
                    assert abs(lay.x[i] - lay.x[j]) >= (sizes[i][0] + sizes[j][0]) / 2 - 1e-6
                else:
                    assert abs(lay.y[i] - lay.y[j]) >= (sizes[i][1] + sizes[j][1]) / 2
        for k, (s, d) in enumerate(edges):
            pts = lay.routes[k]
            assert pts[0] == pytest.approx((lay.x[s], lay.y[s] + sizes[s][1] / 2) if k < len(edges) - 1
                                           else (lay.x[s], lay.y[s] - sizes[s][1] / 2))
            assert pts[-1][0] == pytest.approx(lay.x[d])
        assert lay.width >= max(lay.x[i] + sizes[i][0] / 2 for i in range(n))


def test_place_is_least_squares_under_spacing():
    # two nodes wanting the same spot end up symmetric around it, exactly `gap` + half-widths apart
    xs = layout_lib._place([0, 1], [100.0, 100.0], [40.0, 60.0], 10.0)
    assert xs == pytest.approx([70.0, 130.0])
    xs = layout_lib._place([0, 1, 2], [0.0, 500.0, 1000.0], [10.0, 10.0, 10.0], 5.0)
    assert xs == pytest.approx([0.0, 500.0, 1000.0])



def test_control_edges_and_empty_graph():
    g = sf.Graph()
    assert parse_dot(sf.viz.to_dot(g)) == ({}, [])
    assert parse_page(sf.viz.to_html(g)).nodes == []
    with g.as_default():
        a = sf.constant(1.0, name="a")
        with sf.control_dependencies([a.op]):
            b = sf.constant(2.0, name="b")
    nodes, edges = parse_dot(sf.viz.to_dot(g))
    assert [(nodes[s]["label"], nodes[d]["label"], e["style"]) for s, d, e in edges] == \
        [("a\nConst", "b\nConst", "dotted")]
    assert [e["data-kind"] for e in parse_page(sf.viz.to_html(b)).edges] == ["control"]


def test_notebook_picture_of_a_large_graph_collapses_scopes(model, monkeypatch):
    from segflow.viz import html as html_lib
    g, _, _ = model
    monkeypatch.setattr(html_lib, "_NOTEBOOK_MAX_OPS", 10)
    page = parse_page(g._repr_html_())
    assert {"gradients/", "model/"} <= {n["data-name"] for n in page.nodes}
    assert "name scopes collapsed" in g._repr_html_()

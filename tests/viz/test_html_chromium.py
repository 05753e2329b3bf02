"""The HTML page in headless Chromium: it loads without console errors, its script runs, and every
node is in the DOM with a drawn box showing its name and op type.

Chromium is found on PATH (or $SEGFLOW_CHROMIUM); where it is missing, the set-up installs
Debian's `chromium` package when it can (root and apt-get; about 75 s), and skips, saying why, only
where it cannot."""
import re

import numpy as np
import pytest

import segflow as sf

from chromium import find_or_install, run
from vizhelp import build_model, parse_page


@pytest.fixture(scope="module")
def chromium():
    exe, note = find_or_install()
    if exe is None:
        pytest.skip(note)
    print(note)
    return exe


def _loaded(chromium, tmp_path, text):
    path = tmp_path / "page.html"
    path.write_text(text, encoding="utf-8")
    dom, console, _ = run(chromium, path, "--dump-dom")
    return dom, console


def _body(dom):
    m = re.search(r"<body([^>]*)>", dom)
    assert m, dom[:500]
    return dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(1)))


def test_console_errors_are_caught(chromium, tmp_path):
    # the check itself: a page that throws is seen to
    dom, console = _loaded(chromium, tmp_path, "<!DOCTYPE html><html><body><p id=x>x</p>"
                                               "<script>null.boom();</script></body></html>")
    assert 'id="x"' in dom
    assert any("Uncaught TypeError" in line for line in console), console


def test_model_page_loads_and_shows_every_node(chromium, tmp_path):
    g, _, grads = build_model()
    dom, console = _loaded(chromium, tmp_path, sf.viz.to_html(g))
    assert console == []
    body = _body(dom)
    n = len(g.get_operations()) + 1            # + the IndexedSlices gradient handed back
    assert body.get("data-ready") == "1", "the page's script did not finish"
    assert body["data-nodes"] == body["data-drawn"] == str(n)
    page = parse_page(dom)
    names = {node["data-name"] for node in page.nodes}
    assert names == {op.name for op in g.get_operations()} | {grads[0].values.name}
    # the script set a pan/zoom transform on the drawing
    assert re.search(r'class="viewport" transform="translate\([-\d.e]+,[-\d.e]+\) scale\([\d.e-]+\)"', dom)


def test_traced_function_page_grouped(chromium, tmp_path):
    def step(x, w):
        with sf.GradientTape() as tape:
            tape.watch(w)
            with sf.name_scope("layer"):
                loss = sf.reduce_sum(sf.tanh(sf.matmul(x, w)))
        return tape.gradient(loss, w)

    x, w = np.ones((2, 3), np.float32), np.ones((3, 1), np.float32)
    pic = sf.viz.picture(step, (x, w), group_scopes=True)
    dom, console = _loaded(chromium, tmp_path, sf.viz.to_html(step, x, w, group_scopes=True))
    assert console == []
    body = _body(dom)
    assert body.get("data-ready") == "1"
    assert body["data-nodes"] == body["data-drawn"] == str(len(pic.nodes))
    assert {node["data-name"] for node in parse_page(dom).nodes} == {n.name for n in pic.nodes}

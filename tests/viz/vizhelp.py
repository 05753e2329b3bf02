"""Helpers of the viz tests: the model they picture, and parsers of the DOT and HTML outputs."""
import html.parser
import re

import numpy as np

import segflow as sf

v1 = sf.compat.v1


def build_model():
    """(graph, loss, gradients of [emb, w]) for loss = sum((embedding_lookup(emb, ids) @ w) ** 2)."""
    g = sf.Graph()
    with g.as_default():
        emb = v1.get_variable("emb", initializer=sf.constant(np.arange(12.0, dtype=np.float32).reshape(6, 2)))
        w = v1.Variable([[1.0], [-2.0]], name="w")
        ids = v1.placeholder(sf.int32, [None], name="ids")
        with sf.name_scope("model"):
            e = sf.nn.embedding_lookup(emb, ids)
            y = sf.matmul(e, w)
            loss = sf.reduce_sum(y * y, name="loss")
        grads = sf.gradients(loss, [emb, w])
    return g, loss, grads


# ----------------------------------------------------------------------------------------------
# parsers of the two outputs

_ATTR = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def _unquote(s):
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), s)


def parse_dot(text):
    """({node id: attrs}, [(src, dst, attrs)]) of `to_dot`'s output."""
    assert text.startswith("digraph ") and text.rstrip().endswith("}")
    nodes, edges = {}, []
    for line in text.splitlines():
        m = re.match(r"\s*(n\d+) -> (n\d+) \[(.*)\];$", line)
        if m:
            edges.append((m.group(1), m.group(2), {k: _unquote(v) for k, v in _ATTR.findall(m.group(3))}))
            continue
        m = re.match(r"\s*(n\d+) \[(.*)\];$", line)
        if m:
            nodes[m.group(1)] = {k: _unquote(v) for k, v in _ATTR.findall(m.group(2))}
    return nodes, edges


class _Page(html.parser.HTMLParser):
    """Collects the node groups (their data-* attrs and texts) and edges of a page's SVG."""

    def __init__(self):
        super().__init__()
        self.nodes, self.edges, self.labels, self.scripts = [], [], [], 0
        self._node = None
        self._text = None
        self.external = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("src", "href"):
            if key in a and not a[key].startswith("#") and not a[key].startswith("url(#"):
                self.external.append(a[key])
        if tag == "g" and "node" in a.get("class", "").split():
            self._node = dict(a, texts={})
            self.nodes.append(self._node)
        elif tag == "text" and self._node is not None:
            self._text = a.get("class")
            self._node["texts"][self._text] = ""
        elif tag == "text" and "edge-label" in a.get("class", ""):
            self._text = "edge-label"
            self.labels.append(dict(a, text=""))
        elif tag == "path" and "edge" in a.get("class", "").split():
            self.edges.append(a)
        elif tag == "script":
            self.scripts += 1

    def handle_endtag(self, tag):
        if tag == "text":
            self._text = None
        elif tag == "g" and self._node is not None and self._text is None:
            # a node group holds no nested <g>: its end closes the node
            self._node = None

    def handle_data(self, data):
        if self._text == "edge-label":
            self.labels[-1]["text"] += data
        elif self._text is not None and self._node is not None:
            self._node["texts"][self._text] += data


def parse_page(text):
    p = _Page()
    p.feed(text)
    return p

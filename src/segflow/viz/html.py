"""A graph's picture as one self-contained HTML page: inline SVG laid out in Python (layout.py) and a
little inline JavaScript (pan, zoom, hover, search, details); no external resources.

Also installs `hooks.graph_html`, through which `Graph._repr_html_` (and a ConcreteFunction's) show
the picture inline in a notebook.
"""
import html

from segflow._core.registry import hooks
from segflow.viz.layout import layout
from segflow.viz.model import picture
from segflow.viz.style import COLORS

__all__ = ["to_html", "save_html", "to_inline_svg"]

_CHAR = 6.7          # px per character of the 11px monospace labels
_LINE = 14.0
_SCOPE_CHARS = 36


def _lines(node):
    """(scope line or "", name line, type line) of a node's label."""
    name = node.name
    if node.kind == "slices" or name.endswith("/") or "/" not in name:   # a scope group: its name whole
        scope, base = "", name
    else:
        scope, base = name.rsplit("/", 1)
        scope += "/"
    if len(scope) > _SCOPE_CHARS:
        scope = "\u2026" + scope[-(_SCOPE_CHARS - 1):]
    return scope, base, node.type


def _size(node):
    scope, base, kind = _lines(node)
    chars = max(len(scope) * 0.85, len(base) * 1.05, len(kind))
    rows = 3 if scope else 2
    return max(64.0, chars * _CHAR + 18.0), rows * _LINE + 12.0


def _path(points):
    """An SVG path through `points`: vertical-tangent cubic segments."""
    (x0, y0), rest = points[0], points[1:]
    d = [f"M{x0:.1f},{y0:.1f}"]
    for x1, y1 in rest:
        my = (y0 + y1) / 2
        d.append(f"C{x0:.1f},{my:.1f} {x1:.1f},{my:.1f} {x1:.1f},{y1:.1f}")
        x0, y0 = x1, y1
    return " ".join(d)


def to_inline_svg(target, *args, group_scopes=False, title=None):
    """The `<svg>` element of the page `to_html` makes (for embedding, e.g. in a notebook)."""
    return _svg(picture(target, args, group_scopes=group_scopes, title=title))[0]


def _svg(pic):
    nodes = pic.nodes
    sizes = [_size(n) for n in nodes]
    lay = layout(sizes, [(e.src, e.dst) for e in pic.edges], order=[n.order for n in nodes])
    esc = html.escape
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="sfviz" width="{lay.width:.0f}" '
           f'height="{lay.height:.0f}" viewBox="0 0 {lay.width:.1f} {lay.height:.1f}" '
           f'font-family="ui-monospace, Menlo, Consolas, monospace" font-size="11">',
           "<defs>"]
    for kind, color in (("data", "#555"), ("control", "#999"), ("slices", COLORS["slices"][1])):
        out.append(f'<marker id="sfviz-arrow-{kind}" viewBox="0 0 10 10" refX="9" refY="5" '
                   f'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
                   f'<path d="M0,0 L10,5 L0,10 z" fill="{color}"/></marker>')
    out.append("</defs>")
    out.append('<g class="viewport">')
    out.append('<g class="edges">')
    labels = []
    for k, e in enumerate(pic.edges):
        pts = lay.routes[k]
        if len(pts) < 2:
            continue
        tip = e.label or ", ".join(e.tensors) or e.kind
        out.append(f'<path class="edge {e.kind}" id="e{k}" data-src="n{e.src}" data-dst="n{e.dst}" '
                   f'data-kind="{e.kind}" d="{_path(pts)}" marker-end="url(#sfviz-arrow-{e.kind})">'
                   f'<title>{esc(nodes[e.src].name)} \u2192 {esc(nodes[e.dst].name)}: {esc(tip)}</title></path>')
        if e.label:
            mx, my = pts[len(pts) // 2] if len(pts) > 2 else ((pts[0][0] + pts[1][0]) / 2,
                                                              (pts[0][1] + pts[1][1]) / 2)
            labels.append(f'<text class="edge-label {e.kind}" data-edge="e{k}" x="{mx + 4:.1f}" '
                          f'y="{my:.1f}">{esc(e.label)}</text>')
    out.append("</g>")
    out.append('<g class="edge-labels">' + "".join(labels) + "</g>")
    out.append('<g class="nodes">')
    for n, (w, h) in zip(nodes, sizes):
        x, y = lay.x[n.index], lay.y[n.index]
        fill, line = COLORS[n.kind]
        scope, base, kind = _lines(n)
        classes = f"node {n.kind}" + (" output" if n.is_output else "")
        dash = ' stroke-dasharray="5,3"' if n.kind == "slices" else ""
        width = 2.6 if n.is_output else 1.3
        out.append(f'<g class="{classes}" id="n{n.index}" data-name="{esc(n.name)}" data-type="{esc(n.type)}" '
                   f'data-kind="{n.kind}" data-x="{x - w / 2:.1f}" data-y="{y - h / 2:.1f}" '
                   f'data-w="{w:.1f}" data-h="{h:.1f}" transform="translate({x - w / 2:.1f},{y - h / 2:.1f})">')
        out.append(f"<title>{esc(chr(10).join(n.info))}</title>")
        out.append(f'<rect width="{w:.1f}" height="{h:.1f}" rx="6" fill="{fill}" stroke="{line}" '
                   f'stroke-width="{width}"{dash}/>')
        row = 6 + _LINE - 3
        if scope:
            out.append(f'<text class="scope" x="{w / 2:.1f}" y="{row:.1f}" text-anchor="middle" '
                       f'font-size="9.5" fill="#667">{esc(scope)}</text>')
            row += _LINE
        out.append(f'<text class="name" x="{w / 2:.1f}" y="{row:.1f}" text-anchor="middle" '
                   f'font-weight="bold" fill="#222">{esc(base)}</text>')
        row += _LINE
        out.append(f'<text class="type" x="{w / 2:.1f}" y="{row:.1f}" text-anchor="middle" '
                   f'font-style="italic" fill="{line}">{esc(kind)}</text>')
        out.append("</g>")
    out.append("</g></g></svg>")
    return "".join(out), lay


_CSS = """
html, body { margin: 0; height: 100%; font: 13px system-ui, sans-serif; color: #222; }
body { display: flex; flex-direction: column; }
#bar { display: flex; gap: 14px; align-items: center; padding: 6px 10px; border-bottom: 1px solid #ccc;
       background: #fafafa; flex-wrap: wrap; }
#bar h1 { font-size: 15px; margin: 0; }
#bar .key { display: inline-flex; align-items: center; gap: 4px; }
#bar .swatch { width: 14px; height: 10px; border: 1.5px solid; border-radius: 3px; display: inline-block; }
#bar button { font-size: 12px; }
#canvas { flex: 1; overflow: hidden; position: relative; cursor: grab; }
#canvas.dragging { cursor: grabbing; }
#canvas svg { position: absolute; left: 0; top: 0; width: 100%; height: 100%; }
#info { position: absolute; right: 10px; bottom: 10px; max-width: 46%; max-height: 40%; overflow: auto;
        background: rgba(255,255,255,.95); border: 1px solid #bbb; border-radius: 6px; padding: 6px 10px;
        font: 11px ui-monospace, monospace; white-space: pre; display: none; }
.edge { fill: none; stroke: #555; stroke-width: 1.2; }
.edge.control { stroke: #999; stroke-dasharray: 2,3; }
.edge.slices { stroke: SLICES; stroke-dasharray: 6,4; stroke-width: 1.6; }
.edge-label { font-size: 9.5px; fill: SLICES; paint-order: stroke; stroke: #fff; stroke-width: 3px; }
.node { cursor: pointer; }
.dim .node:not(.hl), .dim .edge:not(.hl), .dim .edge-label:not(.hl) { opacity: .18; }
.edge.hl { stroke-width: 2.4; }
.node.found rect { stroke: #e0245e; stroke-width: 3; }
"""

_JS = r"""
(function () {
  "use strict";
  var canvas = document.getElementById("canvas");
  var svg = canvas.querySelector("svg");
  var view = svg.querySelector("g.viewport");
  var info = document.getElementById("info");
  var W = parseFloat(svg.getAttribute("width")), H = parseFloat(svg.getAttribute("height"));
  svg.removeAttribute("viewBox");
  var t = {x: 0, y: 0, s: 1};
  function apply() { view.setAttribute("transform", "translate(" + t.x + "," + t.y + ") scale(" + t.s + ")"); }
  function fit() {
    var r = canvas.getBoundingClientRect();
    t.s = Math.min(r.width / W, r.height / H, 1.5) || 1;
    t.x = (r.width - W * t.s) / 2; t.y = Math.max(0, (r.height - H * t.s) / 2);
    apply();
  }
  function zoom(f, cx, cy) { t.x = cx - (cx - t.x) * f; t.y = cy - (cy - t.y) * f; t.s *= f; apply(); }
  canvas.addEventListener("wheel", function (ev) {
    ev.preventDefault();
    var r = canvas.getBoundingClientRect();
    zoom(ev.deltaY < 0 ? 1.15 : 1 / 1.15, ev.clientX - r.left, ev.clientY - r.top);
  }, {passive: false});
  var drag = null;
  canvas.addEventListener("mousedown", function (ev) {
    drag = {x: ev.clientX - t.x, y: ev.clientY - t.y}; canvas.classList.add("dragging");
  });
  window.addEventListener("mousemove", function (ev) {
    if (drag) { t.x = ev.clientX - drag.x; t.y = ev.clientY - drag.y; apply(); }
  });
  window.addEventListener("mouseup", function () { drag = null; canvas.classList.remove("dragging"); });
  var edges = Array.prototype.slice.call(svg.querySelectorAll("path.edge"));
  var labels = {};
  Array.prototype.forEach.call(svg.querySelectorAll("text.edge-label"), function (l) {
    labels[l.getAttribute("data-edge")] = l;
  });
  var nodes = Array.prototype.slice.call(svg.querySelectorAll("g.node"));
  var byId = {};
  nodes.forEach(function (n) { byId[n.id] = n; });
  function highlight(n) {
    svg.classList.add("dim");
    n.classList.add("hl");
    edges.forEach(function (e) {
      var s = e.getAttribute("data-src"), d = e.getAttribute("data-dst");
      if (s === n.id || d === n.id) {
        e.classList.add("hl");
        if (labels[e.id]) { labels[e.id].classList.add("hl"); }
        byId[s === n.id ? d : s].classList.add("hl");
      }
    });
  }
  function clear() {
    svg.classList.remove("dim");
    Array.prototype.forEach.call(svg.querySelectorAll(".hl"), function (x) { x.classList.remove("hl"); });
  }
  nodes.forEach(function (n) {
    n.addEventListener("mouseenter", function () { highlight(n); });
    n.addEventListener("mouseleave", clear);
    n.addEventListener("mousedown", function (ev) { ev.stopPropagation(); });
    n.addEventListener("click", function () {
      info.textContent = n.querySelector("title").textContent;
      info.style.display = "block";
    });
  });
  canvas.addEventListener("click", function (ev) { if (ev.target === svg) { info.style.display = "none"; } });
  var search = document.getElementById("search");
  search.addEventListener("input", function () {
    var q = search.value.toLowerCase();
    var first = null;
    nodes.forEach(function (n) {
      var hit = q.length > 0 && (n.getAttribute("data-name").toLowerCase().indexOf(q) >= 0 ||
                                 n.getAttribute("data-type").toLowerCase().indexOf(q) >= 0);
      n.classList.toggle("found", hit);
      if (hit && first === null) { first = n; }
    });
    if (first !== null) {
      var r = canvas.getBoundingClientRect();
      var x = parseFloat(first.getAttribute("data-x")) + parseFloat(first.getAttribute("data-w")) / 2;
      var y = parseFloat(first.getAttribute("data-y")) + parseFloat(first.getAttribute("data-h")) / 2;
      t.x = r.width / 2 - x * t.s; t.y = r.height / 2 - y * t.s; apply();
    }
  });
  document.getElementById("fit").addEventListener("click", fit);
  document.getElementById("zin").addEventListener("click", function () { zoom(1.25, 0, 0); });
  document.getElementById("zout").addEventListener("click", function () { zoom(0.8, 0, 0); });
  fit();
  // For tests and tools: how many nodes have a drawn box with a name and a type.
  var drawn = nodes.filter(function (n) {
    var b = n.getBBox();
    return b.width > 0 && b.height > 0 && n.querySelector("text.name").textContent.length > 0 &&
           n.querySelector("text.type").textContent.length > 0;
  }).length;
  document.body.setAttribute("data-nodes", String(nodes.length));
  document.body.setAttribute("data-drawn", String(drawn));
  document.body.setAttribute("data-ready", "1");
})();
"""


def _page(pic):
    svg, _ = _svg(pic)
    esc = html.escape
    keys = "".join(
        f'<span class="key"><span class="swatch" style="background:{fill};border-color:{line}"></span>{label}</span>'
        for label, (fill, line) in (("forward op", COLORS["forward"]), ("backward op (gradients)", COLORS["backward"]),
                                    ("name scope", COLORS["scope"]), ("IndexedSlices", COLORS["slices"])))
    counts = {}
    for n in pic.nodes:
        counts[n.kind] = counts.get(n.kind, 0) + 1
    words = {"forward": "forward ops", "backward": "backward ops", "scope": "name scopes",
             "slices": "IndexedSlices"}
    summary = ", ".join(f"{counts[k]} {words[k]}" for k in words if k in counts)
    css = _CSS.replace("SLICES", COLORS["slices"][1])
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{esc(pic.title)} \u2014 segflow graph</title><style>{css}</style>"
            "</head><body>"
            f'<div id="bar"><h1>{esc(pic.title)}</h1><span>{esc(summary)}</span>{keys}'
            '<span class="key"><svg width="30" height="8"><line x1="0" y1="4" x2="30" y2="4" '
            f'stroke="{COLORS["slices"][1]}" stroke-dasharray="6,4" stroke-width="1.6"/></svg>IndexedSlices part</span>'
            '<input id="search" type="search" placeholder="find a node\u2026">'
            '<button id="fit">fit</button><button id="zin">+</button><button id="zout">\u2212</button></div>'
            f'<div id="canvas">{svg}<div id="info"></div></div>'
            f"<script>{_JS}</script></body></html>\n")


def to_html(target, *args, group_scopes=False, title=None):
    """One self-contained HTML page picturing `target` (arguments as for `sf.viz.to_dot`).

    The layout is computed in Python and the page loads nothing from elsewhere. Every node is a
    `<g class="node ...">` with `data-name` and `data-type`, showing its name and op type;
    backward ops are orange, IndexedSlices parts travel on dashed purple edges labelled
    values/indices/dense_shape. In a browser: drag to pan, wheel to zoom, hover to see an op's
    edges, click for its details, type in the box to find a node.
    """
    return _page(picture(target, args, group_scopes=group_scopes, title=title))


def save_html(path, target, *args, group_scopes=False, title=None):
    """Writes `to_html(target, *args, ...)` to `path` (UTF-8) and returns the path."""
    text = to_html(target, *args, group_scopes=group_scopes, title=title)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


_NOTEBOOK_MAX_OPS = 400


def _notebook_html(target):
    """A notebook's inline picture: the SVG alone, scrollable (a notebook cell runs no page script);
    a graph of more than 400 ops is drawn with its name scopes collapsed."""
    pic = picture(target)
    note = ""
    ops = sum(1 for n in pic.nodes if n.kind != "slices")
    if ops > _NOTEBOOK_MAX_OPS:
        pic = picture(target, group_scopes=True)
        note = (f'<div style="font:12px sans-serif;color:#555">{ops} ops: name scopes collapsed; '
                "sf.viz.to_html(...) draws every op</div>")
    svg, _ = _svg(pic)
    slices = COLORS["slices"][1]
    rules = (".sfviz-inline .edge { fill: none; stroke: #555; stroke-width: 1.2; } "
             ".sfviz-inline .edge.control { stroke: #999; stroke-dasharray: 2,3; } "
             f".sfviz-inline .edge.slices {{ stroke: {slices}; stroke-dasharray: 6,4; stroke-width: 1.6; }} "
             f".sfviz-inline .edge-label {{ font-size: 9.5px; fill: {slices}; }}")
    return (f'<div class="sfviz-inline" style="max-height:560px;overflow:auto;border:1px solid #ddd">'
            f"<style>{rules}</style>{note}{svg}</div>")


hooks.graph_html = _notebook_html

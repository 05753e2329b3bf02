"""Pictures of graphs (`sf.viz`): Graphviz DOT text, SVG through Graphviz's `dot`, and a
self-contained HTML page laid out in Python.

    sf.viz.to_html(graph)             # or a ConcreteFunction, fetches, or fn plus example args
    sf.viz.save_html("g.html", loss_fn, x, y)
    sf.viz.to_dot(grads)              # the ops the gradients depend on

The backward ops `gradients()` built are drawn orange, forward ops blue; edges that carry the
values, indices or dense_shape of an IndexedSlices are dashed and labelled. For a large graph,
`group_scopes=True` (or a depth) draws each name scope as one node. In a notebook a Graph or a
ConcreteFunction shows its picture inline (`_repr_html_`). TensorFlow has no such
module (it pictures graphs in TensorBoard); this one needs nothing installed except for `to_svg`.
"""
from segflow.viz.dot import to_dot, to_svg
from segflow.viz.html import save_html, to_html, to_inline_svg
from segflow.viz.model import picture

__all__ = ["to_dot", "to_svg", "to_html", "save_html", "to_inline_svg", "picture"]

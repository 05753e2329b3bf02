"""Graphviz output: `to_dot` (DOT text, needs nothing) and `to_svg` (runs Graphviz's `dot`)."""
from segflow.viz.model import picture
from segflow.viz.style import COLORS

__all__ = ["to_dot", "to_svg"]


def _quote(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _node_attrs(node):
    fill, line = COLORS[node.kind]
    attrs = {"label": f"{node.name}\n{node.type}", "fillcolor": fill, "color": line,
             "tooltip": "\n".join(node.info), "class": node.kind}
    if node.kind == "scope":
        attrs["shape"] = "box3d"
    elif node.kind == "slices":
        attrs["shape"] = "parallelogram"
        attrs["style"] = "filled,dashed"
    if node.is_output:
        attrs["penwidth"] = "2.5"
    return attrs


def _edge_attrs(edge):
    if edge.kind == "slices":
        return {"style": "dashed", "label": edge.label, "color": COLORS["slices"][1],
                "fontcolor": COLORS["slices"][1], "class": "slices"}
    if edge.kind == "control":
        return {"style": "dotted", "color": "#888888", "arrowhead": "odot", "class": "control"}
    return {"tooltip": ", ".join(edge.tensors), "class": "data"}


def _attrs(attrs):
    return ", ".join(f"{k}={_quote(v)}" for k, v in attrs.items())


def to_dot(target, *args, group_scopes=False, title=None):
    """Graphviz DOT text picturing `target`.

    Args:
      target: a Graph; a traced function (ConcreteFunction or `sf.function`), or a Python function
        followed by example arguments (traced with `sf.function`); or graph tensors, ops,
        IndexedSlices or variables (nested lists allowed): the ops they depend on.
      *args: example arguments for a function.
      group_scopes: True (or a depth) draws each name scope at that depth as one node.
      title: the graph's label (default: the graph's or function's name).
    Returns:
      DOT text: one node per op labelled "name\\ntype"; the backward ops that gradients() built
      filled orange (`class="backward"`), forward ops blue; edges that carry the parts of an
      IndexedSlices dashed and labelled values/indices/dense_shape; control edges dotted.
    """
    pic = picture(target, args, group_scopes=group_scopes, title=title)
    lines = [f"digraph {_quote(pic.title)} {{",
             f"  graph [rankdir=TB, fontname=Helvetica, fontsize=12, label={_quote(pic.title)}, labelloc=t];",
             '  node [shape=box, style="rounded,filled", fontname=Helvetica, fontsize=10];',
             "  edge [fontname=Helvetica, fontsize=9, arrowsize=0.7];"]
    for node in pic.nodes:
        lines.append(f"  n{node.index} [{_attrs(_node_attrs(node))}];")
    for edge in pic.edges:
        lines.append(f"  n{edge.src} -> n{edge.dst} [{_attrs(_edge_attrs(edge))}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_svg(target, *args, group_scopes=False, title=None, timeout=60):
    """SVG text of `to_dot(target, ...)` laid out by Graphviz's `dot` program.

    Raises:
      RuntimeError: `dot` is not installed (the message says how to install it), or it failed.
    """
    import shutil        # stdlib modules `import segflow` need not pay for
    import subprocess
    text = to_dot(target, *args, group_scopes=group_scopes, title=title)
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError("sf.viz.to_svg needs Graphviz's `dot` program, which is not on PATH: install "
                           "Graphviz (`apt-get install graphviz`, `brew install graphviz` or `conda install "
                           "graphviz`), or use sf.viz.to_html, which draws the graph with nothing installed")
    done = subprocess.run([exe, "-Tsvg"], input=text.encode(), capture_output=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"sf.viz.to_svg: `dot -Tsvg` failed ({done.returncode}): "
                           f"{done.stderr.decode(errors='replace').strip()}")
    return done.stdout.decode()

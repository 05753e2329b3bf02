"""HTML for notebooks (`_repr_html_` of tensors, IndexedSlices and variables): a header naming the
object, its shape and dtype, and its values as a table cut to a corner of at most 10 x 10 with
ellipses, so a 1e6-row table renders as quickly as a small one. No styles beyond inline ones, no
scripts: the output is safe to embed anywhere."""
import numpy as np

__all__ = ["card", "values_table", "indexed_rows_table"]

_EDGE = 5          # rows / columns shown at each end of a long axis
_CELL = 'style="padding:1px 6px;text-align:right;font-family:monospace"'
_GAP = '<td style="padding:1px 6px;color:#888">&hellip;</td>'


def escape(text):
    """`html.escape(text)`, without importing the html package (and its 2,000-entry table of named
    entities) at `import segflow`."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
            .replace("'", "&#x27;"))


def _cut(n):
    """The positions shown along an axis of length n: all of them, or the first and last _EDGE
    with None marking the gap."""
    if n <= 2 * _EDGE:
        return list(range(n))
    return list(range(_EDGE)) + [None] + list(range(n - _EDGE, n))


def _fmt(x):
    if isinstance(x, (bytes, np.bytes_)):
        return escape(repr(bytes(x)))
    if isinstance(x, (float, np.floating)):
        return escape(np.format_float_positional(x, precision=6, trim="-")
                      if abs(x) >= 1e-4 or x == 0 else f"{x:.4g}")
    return escape(str(x))


def _row(cells):
    return "<tr>" + "".join(_GAP if c is None else f"<td {_CELL}>{c}</td>" for c in cells) + "</tr>"


def values_table(value, row_labels=None):
    """An HTML table of a NumPy value: a scalar as text, 1-D as one row, 2-D as rows and columns;
    higher ranks show their leading 2-D slice `[0, ..., 0, :, :]` with a note. `row_labels`
    replaces the row numbers (the indices of an IndexedSlices)."""
    a = np.asarray(value)
    if a.ndim == 0:
        return f"<code>{_fmt(a[()])}</code>"
    note = ""
    if a.ndim > 2:
        note = f"<div style='color:#888'>slice [{', '.join(['0'] * (a.ndim - 2))}, :, :] of {a.shape}</div>"
        a = a[(0,) * (a.ndim - 2)]
    if a.ndim == 1:
        a = a[None, :]
        labels = [""]
    else:
        labels = [str(i) for i in range(a.shape[0])] if row_labels is None else [str(i) for i in row_labels]
    rows = []
    for i in _cut(a.shape[0]):
        if i is None:
            rows.append(_row([None] * (len(_cut(a.shape[1])) + 1)))
            continue
        cells = [f"<b>{escape(labels[i])}</b>" if labels[i] else ""]
        cells += [None if j is None else _fmt(a[i, j]) for j in _cut(a.shape[1])]
        rows.append(_row(cells))
    return note + "<table style='border-collapse:collapse'>" + "".join(rows) + "</table>"


def indexed_rows_table(indices, values):
    """The rows of an IndexedSlices value, each labelled by its index."""
    return values_table(values, row_labels=np.asarray(indices).reshape(-1))


def card(title, fields, body=""):
    """A titled box: `title` (text), `fields` (name, text) pairs on one line, then `body` (HTML)."""
    head = " &middot; ".join(f"{escape(k)} <code>{escape(str(v))}</code>" for k, v in fields)
    return ("<div style='border:1px solid #ccc;border-radius:4px;padding:4px 8px;display:inline-block'>"
            f"<div><b>{escape(title)}</b> {head}</div>{body}</div>")

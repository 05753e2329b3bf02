"""Draws the side-by-side tables of benchmarks/RESULTS*.md as PNG bar charts in benchmarks/plots/
(run last by `make bench`; `python benchmarks/plots.py` redraws them from the recorded tables).

For each results file, the first Markdown table that has at least two timing columns named after a
library (segflow, JAX, torch, TF / TensorFlow, NumPy, scikit-learn, LightGBM) is drawn: one group of
horizontal bars per row, one bar per library, on a log scale (the tables' own unit). Ratio columns
("a / b", "ratio") are left out, and so are quality tables (those with a "metric" column). Needs matplotlib (the `bench` extra); without it the script says so
and exits 0.
"""
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
LIBRARIES = ("segflow", "jax", "torch", "tf", "tensorflow", "numpy", "scikit-learn", "lightgbm")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?", re.IGNORECASE)


def tables(text):
    """The Markdown tables of `text`: a list of (header cells, rows of cells)."""
    out, block = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            block.append([c.strip() for c in line.strip().strip("|").split("|")])
            continue
        if len(block) >= 3 and set("".join(block[1])) <= set("-:| "):
            out.append((block[0], block[2:]))
        block = []
    return out


def number(cell):
    """The first number in a cell ("11.25 (`np.take`)" -> 11.25, "**0.78**" -> 0.78), or None
    ("-", empty)."""
    m = _NUMBER.search(cell.replace("*", ""))
    return float(m.group()) if m else None


def library_columns(header):
    """Indices of the timing columns named after a library (not ratios)."""
    cols = []
    for i, name in enumerate(header[1:], start=1):
        low = name.lower()
        if "/" in low or "ratio" in low or "target" in low or "met" == low:
            continue
        if any(re.search(rf"(^|[^a-z]){re.escape(lib)}([^a-z]|$)", low) for lib in LIBRARIES):
            cols.append(i)
    return cols


def chart_data(text):
    """(case labels, {library column: values}) of the first drawable table, or None."""
    for header, rows in tables(text):
        if any(h.lower() == "metric" for h in header):
            continue
        cols = library_columns(header)
        if len(cols) < 2:
            continue
        labels, series = [], {header[c]: [] for c in cols}
        for row in rows:
            if len(row) != len(header):
                continue
            values = [number(row[c]) for c in cols]
            if all(v is None for v in values):
                continue
            labels.append(row[0].replace("`", ""))
            for c, v in zip(cols, values):
                series[header[c]].append(v)
        if labels:
            return labels, series
    return None


def draw(path, out_dir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = chart_data(path.read_text())
    if data is None:
        return None
    labels, series = data
    n, k = len(labels), len(series)
    fig, ax = plt.subplots(figsize=(10, 0.35 * n * max(k, 2) / 2 + 1.5))
    height = 0.8 / k
    for j, (name, values) in enumerate(series.items()):
        ys = [i + j * height for i in range(n)]
        xs = [v if v is not None and v > 0 else float("nan") for v in values]
        ax.barh(ys, xs, height=height, label=name)
    ax.set_yticks([i + 0.4 - height / 2 for i in range(n)])
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("time, the table's unit (log scale; shorter is faster)")
    ax.set_title(path.name, fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    out = out_dir / (path.stem + ".png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main(argv=None):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("plots.py: matplotlib is not installed (pip install -e '.[bench]'); no plots drawn")
        return 0
    out_dir = HERE / "plots"
    out_dir.mkdir(exist_ok=True)
    for path in sorted(HERE.glob("RESULTS*.md")):
        out = draw(path, out_dir)
        print(f"{path.name}: {'-> ' + str(out.relative_to(HERE.parent)) if out else 'no side-by-side table'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

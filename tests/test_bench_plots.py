"""benchmarks/plots.py's reading of the RESULTS tables (the drawing itself needs matplotlib, a bench extra)."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bench_plots", ROOT / "benchmarks" / "plots.py")
plots = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(plots)

TEXT = """# Title

| case | a | b |
|---|---|---|
| x | 1 | 2 |

Some prose.

| case | segflow public op | JAX jit | torch | TF | public / fastest |
|---|---|---|---|---|---|
| sum D=1 | 2.55 | 2.10 | **2.86** | - | 1.21 |
| gather | 7.95 (`sf.gather`) | 1e+01 | 7.61 | 13.73 | 2.86x |
"""


def test_tables_are_found_with_their_rows():
    found = plots.tables(TEXT)
    assert [h[0] for h, _ in found] == ["case", "case"]
    assert found[0][1] == [["x", "1", "2"]] and len(found[1][1]) == 2


def test_numbers_are_read_from_decorated_cells():
    assert plots.number("**0.78**") == 0.78 and plots.number("11.25 (`np.take`)") == 11.25
    assert plots.number("1e+01") == 10.0 and plots.number("-") is None and plots.number("") is None


def test_the_first_table_with_library_columns_is_drawn_without_ratio_columns():
    labels, series = plots.chart_data(TEXT)
    assert labels == ["sum D=1", "gather"]
    assert list(series) == ["segflow public op", "JAX jit", "torch", "TF"]
    assert series["torch"] == [2.86, 7.61] and series["TF"] == [None, 13.73] and series["JAX jit"] == [2.10, 10.0]


def test_the_recorded_results_files_parse():
    drawn = {}
    for path in (ROOT / "benchmarks").glob("RESULTS*.md"):
        data = plots.chart_data(path.read_text())
        if data is not None:
            labels, series = data
            assert labels and all(len(v) == len(labels) for v in series.values())
            drawn[path.name] = series
    # the side-by-side tables the docs show are among them, each with segflow and a peer
    for name in ("RESULTS.md", "RESULTS_segment.md", "RESULTS_sparse.md"):
        assert name in drawn and any("segflow" in k for k in drawn[name]) and len(drawn[name]) >= 2

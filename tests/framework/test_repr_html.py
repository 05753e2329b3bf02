"""Notebook reprs (`_repr_html_`) of tensors, IndexedSlices and variables, and the public namespace's
`__all__` / `dir()`."""
import re

import numpy as np

import segflow as sf
from segflow.framework import ops


def _cells(page):
    """The text of every table cell, in order."""
    return [re.sub("<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", page)]


def test_eager_tensor_shows_shape_dtype_and_every_value_of_a_small_matrix():
    a = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    page = sf.constant(a)._repr_html_()
    assert "(2, 3)" in page and "float32" in page
    cells = _cells(page)
    # each row: its label, then the values
    assert cells == ["0", "0", "0.25", "0.5", "1", "0.75", "1", "1.25"]


def test_large_tensor_is_cut_to_its_corners():
    a = np.arange(1_000_000, dtype=np.int64).reshape(1000, 1000)
    page = sf.constant(a)._repr_html_()
    cells = _cells(page)
    assert "999999" in cells and "0" in cells and "500500" not in cells
    assert page.count("&hellip;") > 0 and len(cells) < 200


def test_strings_are_escaped():
    page = sf.constant(["<script>alert(1)</script>"])._repr_html_()
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_indexed_slices_label_rows_with_their_indices():
    v = sf.Variable(np.arange(12.0).reshape(4, 3))
    with sf.GradientTape() as tape:
        y = sf.reduce_sum(sf.gather(v, [3, 1]) * 2.0)
    g = tape.gradient(y, v)
    assert isinstance(g, sf.IndexedSlices)
    cells = _cells(g._repr_html_())
    assert cells == ["3", "2", "2", "2", "1", "2", "2", "2"]


def test_variable_and_graph_objects():
    v = sf.Variable([1.5, 2.5], name="weights")
    page = v._repr_html_()
    assert "weights" in page and _cells(page) == ["", "1.5", "2.5"]
    with ops.Graph().as_default():
        p = sf.compat.v1.placeholder(sf.float32, [None, 2], name="inputs")
        page = p._repr_html_()
        assert "inputs:0" in page and "Placeholder" in page and "(None, 2)" in page


def test_public_namespace_hides_the_private_layers():
    names = dir(sf)
    assert not [n for n in names if n.startswith("_") and n != "__version__"]
    for n in ("constant", "GradientTape", "Session", "math", "nn", "train", "compat", "unsorted_segment_sum"):
        assert n in names and n in sf.__all__
    assert all(hasattr(sf, n) for n in sf.__all__)
    scope = {}
    exec("from segflow import *", scope)
    assert scope["unsorted_segment_sum"] is sf.math.unsorted_segment_sum and "_core" not in scope

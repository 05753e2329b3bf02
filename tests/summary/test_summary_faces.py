"""The summary faces (sf.summary, sf.summary.experimental, sf.compat.v1.summary, ops.summary_ops_v2)
are static modules holding only imports and __all__, over the _ops summary modules."""
import ast
import importlib
import pathlib

import pytest

import segflow as sf
from segflow._ops import summary, summary_file_writer, summary_v1, summary_writer

FACES = ["segflow.summary", "segflow.summary.experimental", "segflow.compat.v1.summary", "segflow.ops.summary_ops_v2"]


@pytest.mark.parametrize("name", FACES)
def test_face_holds_only_imports_and_all(name):
    m = importlib.import_module(name)
    tree = ast.parse(pathlib.Path(m.__file__).read_text())
    assert isinstance(tree.body[0], ast.Expr)
    bound = []
    for node in tree.body[1:]:
        if isinstance(node, ast.ImportFrom):
            bound.extend(a.asname or a.name for a in node.names)
        else:
            assert isinstance(node, ast.Assign) and node.targets[0].id == "__all__", ast.dump(node)
    assert sorted(bound) == sorted(m.__all__)
    assert {n for n in vars(m) if not n.startswith("_")} == set(m.__all__)


def test_names():
    from segflow.summary.experimental import get_step, set_step
    assert sf.summary.experimental.set_step is set_step is summary_writer.set_step and get_step is summary_writer.get_step
    assert sf.summary.scalar is summary.scalar and sf.summary.create_file_writer is summary_writer.create_file_writer
    assert sf.compat.v1.summary.scalar is summary_v1.scalar and sf.compat.v1.summary is not sf.summary
    assert sf.compat.v1.summary.FileWriter is summary_file_writer.FileWriter
    assert sf.compat.v1.RunOptions.FULL_TRACE == 3 and sf.compat.v1.Summary is sf.compat.v1.summary.Summary

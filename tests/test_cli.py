"""The command line: `python -m segflow tour | bench | version`."""
import subprocess
import sys

import pytest

from segflow._cli import bench, main


def test_version_names_segflow_and_numpy(capsys):
    import numpy
    import segflow
    assert main(["version"]) == 0
    out = capsys.readouterr().out
    assert f"segflow {segflow.__version__}" in out and f"numpy {numpy.__version__}" in out


def test_no_command_prints_help_and_fails(capsys):
    assert main([]) == 2
    assert "tour" in capsys.readouterr().out


def test_tour_runs_every_step_and_its_checks(capsys):
    assert main(["tour", "--quick"]) == 0
    out = capsys.readouterr().out
    for n in range(1, 7):
        assert f"[{n}/6]" in out
    assert out.count("ok: ") == 7
    # Twice in one process: the tour's op is registered once.
    assert main(["tour", "--quick"]) == 0


def test_bench_lists_the_scripts_of_run_all(capsys):
    folder = bench.benchmarks_dir()
    assert folder is not None and (folder / "run_all.py").exists()
    assert main(["bench", "--list"]) == 0
    listed = capsys.readouterr().out.split()
    assert "segment.py" in listed and all((folder / s).exists() for s in listed)


def test_bench_refuses_an_unknown_script(capsys):
    assert main(["bench", "no_such_benchmark"]) == 2
    assert "no benchmark named no_such_benchmark.py" in capsys.readouterr().err


def test_python_dash_m_entry_point():
    r = subprocess.run([sys.executable, "-m", "segflow", "version"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("segflow ")

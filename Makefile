# Set-up is part of every target: a fresh clone needs only Python.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test demo bench fuzz clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

# -n auto: one pytest-xdist worker a core (tests/conftest.py gives each its own Numba cache);
# --dist loadfile keeps a file's tests, and so most of the kernels they compile, on one worker.
test: $(STAMP)
	$(PY) -m pytest -n auto --dist loadfile

demo: $(STAMP)
	$(PY) -m segflow tour

# The peers (TensorFlow, PyTorch, JAX, scikit-learn, LightGBM) are the `bench` extra; a peer that
# cannot be installed here is skipped by the benchmarks, which say so.
bench: $(STAMP)
	$(PY) -m pip install -q -e '.[bench]' || $(PY) -m pip install -q scipy jax scikit-learn || true
	$(PY) -m segflow bench

fuzz: $(STAMP)
	$(PY) tests/fuzz/run_fuzz.py --cases 100000 --workers 2

clean:
	rm -rf $(VENV)

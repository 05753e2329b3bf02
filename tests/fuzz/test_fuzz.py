"""The bounded fuzz sample of the hardening suite (the long run is tests/fuzz/run_fuzz.py).

- test_family: hypothesis draws cases of each family (cases.py) in each mode, leaving out the
  inputs that once crashed the process or allocate huge arrays, and runs them in this process.
  Each must match the NumPy reference or raise a segflow error (and leave state unchanged).
- test_known_case: the bugs seen once (cases.KNOWN_CASES), as fixed cases, in this process.
- test_known_dangerous: each case of cases.KNOWN_DANGEROUS (NaN / float indices into variable
  ops and sparse optimizer steps, huge sizes, integer division traps) in its own subprocess under
  a memory limit, so a segfault, an abort or a hang fails the test instead of killing pytest.
- test_runner_sample: a short run of run_fuzz.py (everything, dangerous inputs included, in
  worker processes).

SEGFLOW_FUZZ_EXAMPLES (default 40) sets hypothesis' examples per family and mode;
SEGFLOW_FUZZ_RUNNER_CASES (default 300) the size of the runner sample (0 skips it).
"""
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import cases  # noqa: E402

EXAMPLES = int(os.environ.get("SEGFLOW_FUZZ_EXAMPLES", "40"))
RUNNER_CASES = int(os.environ.get("SEGFLOW_FUZZ_RUNNER_CASES", "300"))
MEM_GB = 3            # the address-space limit of a subprocess: a huge request fails at once
CASE_TIMEOUT = 10     # seconds a dangerous case may take before it counts as a hang


def _explain(case, out):
    return (f"{out['kind']}: {out.get('detail', '')}\n--- reproducer ({case.op}, {case.mode}) ---\n"
            f"{case.reproducer()}")


@pytest.mark.parametrize("mode", ["eager", "graph"])
@pytest.mark.parametrize("family", sorted(cases.FAMILIES))
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
@given(data=st.data())
def test_family(family, mode, data):
    case = cases.make_case(None, family, mode, safe=True, source=cases.HypSource(data, safe=True))
    assume(not case.dangerous)
    out = cases.execute(case)
    assert out["status"] != "fail", _explain(case, out)


@pytest.mark.parametrize("name", sorted(cases.KNOWN_CASES))
def test_known_case(name):
    case = cases.explicit_case(name)
    out = cases.execute(case)
    assert out["status"] != "fail", _explain(case, out)


@pytest.fixture(scope="module")
def dangerous_outcomes():
    """Every known-dangerous case, in two worker processes of run_fuzz.py (a worker that crashes or
    hangs is reported and replaced)."""
    import run_fuzz
    args = run_fuzz.parse_args(["--workers", "2", "--timeout", str(CASE_TIMEOUT), "--mem-gb", str(MEM_GB)])
    results = run_fuzz.run_items(list(cases.KNOWN_DANGEROUS), args)
    return {o["seed"]: o for o in results.outcomes}


@pytest.mark.parametrize("name", sorted(cases.KNOWN_DANGEROUS))
def test_known_dangerous(name, dangerous_outcomes):
    out = dangerous_outcomes[name]
    assert out["status"] != "fail", _explain(cases.explicit_case(name), out)


@pytest.mark.skipif(RUNNER_CASES <= 0, reason="SEGFLOW_FUZZ_RUNNER_CASES=0")
def test_runner_sample():
    env = dict(os.environ)
    cmd = [sys.executable, os.path.join(HERE, "run_fuzz.py"), "--cases", str(RUNNER_CASES), "--workers", "2",
           "--start", "0", "--timeout", str(CASE_TIMEOUT), "--mem-gb", str(MEM_GB)]
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-6000:] + p.stderr[-2000:]

"""Start-up cost and the thread pool: what `import segflow` loads, when Numba is imported, how its
pool is started, and that work pulled in chunks gives the same bits as one thread.

Each check that depends on what a fresh process has imported runs in a subprocess.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from segflow.kernels import _common, _malloc
from segflow.kernels import segment as seg
from segflow.kernels.segment import plan


def _fresh(code, **env):
    """Runs `code` in a fresh interpreter; returns the JSON it prints last."""
    full_env = dict(os.environ)
    for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
        full_env.pop(k, None)
    full_env.update(env)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full_env,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_import_and_small_ops_do_not_import_numba():
    got = _fresh("""
import json, sys
import numpy as np
import segflow as sf
after_import = 'numba' in sys.modules
r = sf.math.unsorted_segment_sum(np.arange(12.0).reshape(6, 2), np.array([0, 2, 0, 1, 2, 2]), 3)
s = sf.math.segment_max(np.array([3.0, 1.0, 4.0, 1.0, 5.0]), np.array([0, 0, 1, 1, 3]))
print(json.dumps({"after_import": after_import, "after_small": 'numba' in sys.modules,
                  "sum": np.asarray(r).tolist(), "max": np.asarray(s).tolist()}))
""")
    assert not got["after_import"], "import segflow imported numba"
    assert not got["after_small"], "a small segment op imported numba"
    data = np.arange(12.0).reshape(6, 2)
    ref = np.zeros((3, 2))
    np.add.at(ref, [0, 2, 0, 1, 2, 2], data)
    assert got["sum"] == ref.tolist()
    assert got["max"] == [3.0, 4.0, 0.0, 5.0]      # segment 2 is empty: 0, as in TF


def test_import_leaves_the_optional_families_unloaded_until_first_use():
    got = _fresh("""
import json, sys
import segflow as sf
loaded = lambda *names: {n: any(m == n or m.startswith(n + ".") for m in sys.modules) for n in names}
names = ("segflow._training", "segflow.compat", "segflow.viz", "segflow.summary", "segflow.data", "html")
before = loaded(*names)
g = sf.Graph()
with g.as_default():
    sf.constant(1.0) + 2.0
page = g._repr_html_()               # the notebook picture loads segflow.viz
opt = sf.train.AdamOptimizer(0.1)    # and sf.train the optimizers
v1 = sf.compat.v1
print(json.dumps({"before": before, "after": loaded(*names), "svg": "<svg" in page,
                  "same": v1.train.AdamOptimizer is type(opt)}))
""")
    assert not any(got["before"].values()), got["before"]
    after = got["after"]
    assert after["segflow._training"] and after["segflow.compat"] and after["segflow.viz"], after
    assert got["svg"] and got["same"]


def test_import_leaves_ml_dtypes_unloaded_until_a_bfloat16_or_float8_type_is_used():
    # ml_dtypes 0.7 takes 0.5-0.7 s to import: segflow imports it when one of its types is used.
    got = _fresh("""
import json, sys
import numpy as np
import segflow as sf
after_import = "ml_dtypes" in sys.modules
x = sf.constant([1.0, 2.0]) * 3.0                  # float32 work, a gradient: still not loaded
v = sf.Variable([1.0, 2.0])
with sf.GradientTape() as tape:
    y = sf.reduce_sum(v * v)
g = tape.gradient(y, v)
after_float32 = "ml_dtypes" in sys.modules
facts = [sf.bfloat16.size, sf.bfloat16.is_floating, sf.bfloat16 == "bfloat16", sf.dtypes.float8_e5m2.size]
after_facts = "ml_dtypes" in sys.modules           # name, size and kind need no ml_dtypes
b = sf.cast(sf.constant([1.5, -2.25]), sf.bfloat16)
named = np.array([1.5, -2.25]).astype("bfloat16")  # NumPy knows the names once it is loaded
print(json.dumps({"import": after_import, "float32": after_float32, "facts": facts,
                  "after_facts": after_facts, "after_cast": "ml_dtypes" in sys.modules,
                  "b": np.asarray(b).astype(np.float32).tolist(), "dtype": b.dtype.name,
                  "named": sf.as_dtype(named.dtype).name, "g": np.asarray(g).tolist(),
                  "f8": np.dtype("float8_e4m3fn").itemsize}))
""")
    assert not got["import"] and not got["float32"] and not got["after_facts"], got
    assert got["facts"] == [2, True, True, 1]
    assert got["after_cast"]
    assert got["b"] == [1.5, -2.25] and got["dtype"] == "bfloat16" and got["named"] == "bfloat16"
    assert got["g"] == [2.0, 4.0] and got["f8"] == 1


def test_tensorflows_dtypes_module_name_makes_numpy_know_the_names():
    # TF's tests import tensorflow.python.framework.dtypes (segflow.framework.dtypes through the
    # import shim) and then write `x.astype("bfloat16")`, as TF's own module imports ml_dtypes.
    got = _fresh("""
import json, sys
import numpy as np
import segflow as sf
before = "ml_dtypes" in sys.modules
from segflow.framework import dtypes
x = np.array([1.5, -2.25]).astype("bfloat16")
print(json.dumps({"before": before, "dtype": dtypes.as_dtype(x.dtype).name,
                  "same": dtypes.bfloat16 is sf.bfloat16, "values": x.astype(np.float32).tolist(),
                  "f8": np.dtype("float8_e4m3fn").itemsize}))
""")
    assert got == {"before": False, "dtype": "bfloat16", "same": True, "values": [1.5, -2.25], "f8": 1}


def test_arrays_of_ml_dtypes_types_made_by_the_program_reach_segflow_ops():
    # The program imported ml_dtypes itself and hands segflow its arrays before any segflow code
    # touched those types: the op's dtype check, from_numpy and a gradient still know them.
    got = _fresh("""
import json
import ml_dtypes
import numpy as np
import segflow as sf
a = np.array([1.0, 2.0, 3.0], dtype=ml_dtypes.bfloat16)
s = sf.reduce_sum(a)
seg = sf.math.unsorted_segment_sum(a, np.array([0, 1, 0]), 2)
v = sf.Variable(a)
with sf.GradientTape() as tape:
    y = sf.reduce_sum(v * v)
g = tape.gradient(y, v)
f8 = sf.gather(np.array([1.0, 2.0, 4.0], dtype=ml_dtypes.float8_e5m2), [2, 0])
print(json.dumps({"sum": float(np.asarray(s)), "dtype": s.dtype.name,
                  "seg": np.asarray(seg).astype(np.float32).tolist(),
                  "g": np.asarray(g).astype(np.float32).tolist(), "gdtype": g.dtype.name,
                  "f8": np.asarray(f8).astype(np.float32).tolist(), "f8dtype": f8.dtype.name,
                  "as_dtype": [sf.as_dtype(ml_dtypes.bfloat16).name,
                               sf.as_dtype(np.dtype(ml_dtypes.float8_e4m3fn)).name]}))
""")
    assert got["sum"] == 6.0 and got["dtype"] == "bfloat16"
    assert got["seg"] == [4.0, 2.0]
    assert got["g"] == [2.0, 4.0, 6.0] and got["gdtype"] == "bfloat16"
    assert got["f8"] == [4.0, 1.0] and got["f8dtype"] == "float8_e5m2"
    assert got["as_dtype"] == ["bfloat16", "float8_e4m3fn"]


def test_a_large_op_compiles_and_every_kernel_becomes_a_dispatcher():
    got = _fresh("""
import json, sys
import numpy as np
import segflow as sf
from segflow.kernels import _common, _malloc
from segflow.kernels.segment import loops
rng = np.random.default_rng(0)
data = rng.standard_normal((50000, 3))
ids = rng.integers(0, 100, 50000)
r = np.asarray(sf.math.unsorted_segment_sum(data, ids, 100))
ref = np.zeros((100, 3)); np.add.at(ref, ids, data)
print(json.dumps({"numba": 'numba' in sys.modules, "err": float(np.abs(r - ref).max()),
                  "lazy_left": [k for k, v in vars(loops).items() if isinstance(v, _common._Lazy)],
                  "prange": type(loops.prange).__name__}))
""")
    assert got["numba"]
    assert got["err"] < 1e-9
    assert got["lazy_left"] == []
    assert got["prange"] != "_PrangePlaceholder"


def test_pool_starts_with_passive_waiting_and_leaves_the_environment_as_it_was():
    code = """
import json, os
import numpy as np
from segflow.kernels import segment as seg, _common
seg.unsorted_segment_reduce("sum", np.ones(200000), np.arange(200000) % 7, 7)
import numba
print(json.dumps({"env": {k: os.environ.get(k) for k in ("GOMP_SPINCOUNT", "OMP_WAIT_POLICY")},
                  "layer": numba.threading_layer(), "started": _common._pool_started}))
"""
    got = _fresh(code)
    assert got["env"] == {"GOMP_SPINCOUNT": None, "OMP_WAIT_POLICY": None}
    assert got["started"]
    assert got["layer"] in ("omp", "tbb", "workqueue")
    kept = _fresh(code, OMP_WAIT_POLICY="ACTIVE")            # the user's own setting is kept
    assert kept["env"] == {"GOMP_SPINCOUNT": None, "OMP_WAIT_POLICY": "ACTIVE"}


def test_planned_workers_does_not_start_the_pool():
    got = _fresh("""
import json, sys
from segflow.kernels import _common, _malloc
n = _common.planned_workers()
print(json.dumps({"n": n, "numba": 'numba' in sys.modules, "started": _common._pool_started}))
""", NUMBA_NUM_THREADS="3")
    assert got == {"n": 3, "numba": False, "started": False}


def test_chunk_count_depends_on_the_shape_only():
    assert _common.chunk_count(0, 100) == 1
    assert _common.chunk_count(99, 100) == 1
    assert _common.chunk_count(1000, 100) == 10
    assert _common.chunk_count(10**9, 100) == 256
    assert _common.chunk_count(10**9, 100, limit=64) == 64


@pytest.mark.parametrize("case", ["private", "bucketed", "bucketed-moved", "runs", "check"])
def test_pulled_chunks_give_the_bits_of_one_thread(case):
    """Every chunk of a pulled loop is done exactly once: the parallel result is bit-identical to
    the one-thread result (and to NumPy's for sums of floats in a fixed order)."""
    rng = np.random.default_rng(3)
    n = 1_200_000        # enough work for two threads, and 9.6 MB of ids for the chunked check
    if case == "private":
        data, ids, S = rng.standard_normal((n, 4)), rng.integers(0, 50, n), 50
    elif case == "bucketed":      # 12.8 MB of accumulators (past the L3 band), rows by number
        data, ids, S = rng.standard_normal((n, 8)), rng.integers(0, 200_000, n), 200_000
    elif case == "bucketed-moved":  # rows of 32 bytes: the partition moves the rows themselves
        data, ids, S = rng.standard_normal((n, 4)), rng.integers(0, 400_000, n), 400_000
    elif case == "runs":
        data, ids, S = rng.standard_normal((n, 2)), np.sort(rng.integers(0, 5000, n)), 5000
    else:
        data, ids, S = rng.standard_normal(n), rng.integers(0, 10, n), 10
        ids[123_456] = 10                      # one bad id: the chunked check must find it
        assert plan.check_chunks(n, 2, ids.itemsize) > 1
        with pytest.raises(Exception, match="10"):
            seg.unsorted_segment_reduce("sum", data, ids, S, num_threads=2)
        return
    if case.startswith(("private", "bucketed")):
        loop, nt = plan.reduce_strategy(plan.plan_for("sum", "unsorted", data.dtype), n, data[0].size, S, 2,
                                        False)[:2]
        assert (loop, nt) == (case.split("-")[0], 2)
        if loop == "bucketed":
            assert plan.move_rows(n, data[0].size, data.itemsize) == case.endswith("moved")
    one = seg.unsorted_segment_reduce("max", data, ids, S, num_threads=1)
    two = seg.unsorted_segment_reduce("max", data, ids, S, num_threads=2)
    assert one.tobytes() == two.tobytes()
    ref = np.full((S,) + data.shape[1:], -np.inf)
    np.maximum.at(ref, ids, data)
    ref[np.bincount(ids, minlength=S) == 0] = np.finfo(np.float64).min   # TF: empty -> lowest
    np.testing.assert_array_equal(two, ref)
    s1 = seg.unsorted_segment_reduce("sum", data, ids, S, num_threads=1)
    s2 = seg.unsorted_segment_reduce("sum", data, ids, S, num_threads=2)
    assert s1.tobytes() == s2.tobytes()
    np.testing.assert_allclose(s2, _np_sum(data, ids, S), rtol=1e-12, atol=1e-12)


def _np_sum(data, ids, S):
    out = np.zeros((S,) + data.shape[1:])
    np.add.at(out, ids, data)
    return out


def test_tiny_inputs_take_numpy_and_match_the_compiled_loops():
    """Below plan._TINY elements the NumPy path runs; just above it the compiled serial loops. For
    unsorted sums both add in row order in float64, so they agree bit for bit."""
    rng = np.random.default_rng(5)
    for n in (plan._TINY - 1, plan._TINY + 1):
        data = rng.standard_normal(n).astype(np.float32)
        ids = rng.integers(0, 37, n)
        got = seg.unsorted_segment_reduce("sum", data, ids, 37)
        ref = np.zeros(37)
        np.add.at(ref, ids, data.astype(np.float64))
        assert got.tobytes() == ref.astype(np.float32).tobytes()


_FAULTS = """
import json, resource, sys
import numpy as np
import segflow as sf
from segflow.kernels import _malloc
rng = np.random.default_rng(0)      # a large op: the first compiled kernel loads (and tunes malloc)
sf.math.unsorted_segment_sum(rng.standard_normal((50000, 2)), rng.integers(0, 10, 50000), 10)

def burst():            # what an eager step does: several arrays of a few MB made and dropped
    arrays = [np.ones((10000, 64), np.float32) for _ in range(8)]
    del arrays

def big():             # a large output (a 64 MB gradient) made and dropped
    out = np.ones((1000000, 16), np.float32)
    del out

def faults(step):
    step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(5):
        step()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 5

print(json.dumps({"tuned": _malloc.tuned, "faults": faults(burst), "big_faults": faults(big)}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc settings are Linux-only")
def test_freed_arrays_are_reused_instead_of_faulted_in_again():
    tuned = _fresh(_FAULTS)
    if not tuned["tuned"]:
        pytest.skip("not glibc: malloc is left as it is")
    # 8 arrays of 2.5 MB are 5,000 pages; reused memory needs (almost) none
    assert tuned["faults"] < 200, tuned
    default = _fresh(_FAULTS, SEGFLOW_MALLOC="default")
    assert default["tuned"] is False
    assert default["faults"] > 1000, default      # what the setting saves (glibc's own behaviour)
    # A 64 MB array is reused too on a machine of 8 GiB or more. Fresh, it is 16,000 pages, or 32
    # huge pages where NumPy's madvise gets them (fewer faults, the same zero-filling of 64 MB).
    if _malloc.thresholds(_malloc._memory_bytes())[0] > 64 << 20:
        assert tuned["big_faults"] < 20, tuned
        assert default["big_faults"] > 20, default


def test_malloc_thresholds_scale_with_a_small_machine():
    assert _malloc.thresholds(64 << 30) == (128 << 20, 256 << 20)
    assert _malloc.thresholds(4 << 30) == (64 << 20, 128 << 20)
    assert _malloc.thresholds(1 << 30) == (32 << 20, 64 << 20)
    assert _malloc.thresholds(0) == (32 << 20, 64 << 20)       # memory size unknown


def test_users_malloc_settings_are_left_alone():
    got = _fresh("import json; from segflow.kernels import _malloc, _common; _common.load_numba(); "
                 "print(json.dumps(_malloc.tuned))", MALLOC_TRIM_THRESHOLD_="1000000")
    assert got is False


def test_kernels_of_a_module_imported_after_numba_loaded_work():
    """A module first imported after a large op loaded Numba (segflow.models here) gets real
    dispatchers, and its compiled kernels run."""
    got = _fresh("""
import json, sys
import numpy as np
import segflow as sf
rng = np.random.default_rng(0)
sf.math.unsorted_segment_sum(rng.standard_normal((50000, 2)), rng.integers(0, 10, 50000), 10)
assert 'numba' in sys.modules and 'segflow.models' not in sys.modules
from segflow.models import GradientBoostedTreesRegressor
from segflow.kernels import histogram
X = rng.standard_normal((400, 3)); y = X[:, 0] * 2.0 + rng.standard_normal(400) * 0.01
model = GradientBoostedTreesRegressor(n_estimators=30, max_depth=3).fit(X, y)
err = float(np.sqrt(np.mean((model.predict(X) - y) ** 2)))
print(json.dumps({"err": err, "kind": type(histogram._hist_rows).__name__}))
""")
    assert got["kind"] != "_Lazy"
    assert got["err"] < 0.5 * 2.0       # the fit learned y from x0 (std of y is about 2)


def test_first_kernels_called_from_several_threads_at_once():
    """Numba is loaded once, under a lock, while other threads call kernels: all results correct."""
    got = _fresh("""
import json, threading
import numpy as np
from segflow.kernels import segment as seg
rng = np.random.default_rng(1)
data = rng.standard_normal((60000, 3)); ids = rng.integers(0, 40, 60000)
ref = np.zeros((40, 3)); np.add.at(ref, ids, data)
errors, results = [], []
def work():
    try:
        results.append(float(np.abs(seg.unsorted_segment_reduce("sum", data, ids, 40) - ref).max()))
    except Exception as e:
        errors.append(repr(e))
threads = [threading.Thread(target=work) for _ in range(6)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps({"errors": errors, "worst": max(results) if results else None, "n": len(results)}))
""")
    assert got["errors"] == [] and got["n"] == 6
    assert got["worst"] < 1e-9

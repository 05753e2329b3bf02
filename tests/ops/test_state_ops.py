"""state_ops: assign and scatter updates of variables, against NumPy references, in both modes."""
import numpy as np
import pytest

import reference as R
import segflow as sf
from segflow.framework import errors
from segflow.ops import array_ops, state_ops
from segflow.ops import variables


def _init(mode):
    if not mode.eager:
        mode.session.run(variables.global_variables_initializer())


def ref_scatter(x, indices, updates, how):
    """The obvious NumPy version: every index in order (the last duplicate wins for update)."""
    out = x.copy()
    flat = np.asarray(indices).reshape(-1)
    upd = np.asarray(updates).reshape((flat.size,) + x.shape[1:])
    for i, r in enumerate(flat):
        if how == "update":
            out[r] = upd[i]
        elif how == "add":
            out[r] = out[r] + upd[i]
        elif how == "sub":
            out[r] = out[r] - upd[i]
        elif how == "mul":
            out[r] = out[r] * upd[i]
        elif how == "div":
            out[r] = out[r] / upd[i]
        elif how == "min":
            out[r] = np.minimum(out[r], upd[i])
        elif how == "max":
            out[r] = np.maximum(out[r], upd[i])
    return out


SCATTERS = {"update": state_ops.scatter_update, "add": state_ops.scatter_add, "sub": state_ops.scatter_sub,
            "mul": state_ops.scatter_mul, "div": state_ops.scatter_div, "min": state_ops.scatter_min,
            "max": state_ops.scatter_max}

X0 = np.array([[1.0, -2.0], [3.0, 4.0], [-5.0, 6.0], [7.0, 0.5]])
IDS = np.array([2, 0, 2, 3, 2])                       # 2 appears three times
UPD = np.array([[1.5, 2.0], [0.5, -1.0], [4.0, 0.25], [2.0, 2.0], [-3.0, 8.0]])


@pytest.mark.parametrize("how", sorted(SCATTERS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_scatter_values_with_duplicates(mode, how, dtype):
    v = sf.Variable(X0.astype(dtype))
    _init(mode)
    got = mode.evaluate(SCATTERS[how](v, IDS, UPD.astype(dtype)))
    want = ref_scatter(X0.astype(dtype), IDS, UPD.astype(dtype), how)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(mode.evaluate(v.read_value()), want, rtol=1e-6)


@pytest.mark.parametrize("how", ["update", "add", "sub", "min", "max", "mul"])
def test_scatter_int_values(mode, how):
    x = np.arange(8, dtype=np.int64).reshape(4, 2)
    ids = np.array([[1, 1], [3, 0]], np.int32)         # 2-D indices
    upd = np.array([[[5, -1], [2, 2]], [[9, 9], [-4, 3]]], np.int64)
    v = sf.Variable(x)
    _init(mode)
    np.testing.assert_array_equal(mode.evaluate(SCATTERS[how](v, ids, upd)), ref_scatter(x, ids, upd, how))


def test_scatter_update_last_duplicate_wins_many(mode):
    rng = np.random.default_rng(0)
    ids = rng.integers(0, 5, size=200)
    upd = rng.normal(size=(200, 3))
    v = sf.Variable(np.zeros((5, 3)))
    _init(mode)
    np.testing.assert_array_equal(mode.evaluate(state_ops.scatter_update(v, ids, upd)),
                                  ref_scatter(np.zeros((5, 3)), ids, upd, "update"))


def test_scatter_scalar_update_broadcasts(mode):
    v = sf.Variable(np.zeros((3, 2)))
    _init(mode)
    np.testing.assert_array_equal(mode.evaluate(state_ops.scatter_add(v, [1, 1], np.float64(2.0))),
                                  [[0, 0], [4, 4], [0, 0]])


def test_scatter_empty_indices(mode):
    v = sf.Variable(X0)
    _init(mode)
    got = mode.evaluate(state_ops.scatter_add(v, np.zeros(0, np.int32), np.zeros((0, 2))))
    np.testing.assert_array_equal(got, X0)


@pytest.mark.parametrize("how", sorted(SCATTERS))
def test_scatter_out_of_range_leaves_variable_unchanged(mode, how):
    v = sf.Variable(X0)
    _init(mode)
    with pytest.raises(errors.InvalidArgumentError, match=r"ResourceScatter\w+ 'bad'.*indices\[2\] = 4 is not in \[0, 4\)"):
        mode.evaluate(SCATTERS[how](v, [0, 1, 4, 1], np.ones((4, 2)), name="bad"))
    with pytest.raises(errors.InvalidArgumentError, match=r"indices\[1\] = -1"):
        mode.evaluate(SCATTERS[how](v, [0, -1], np.ones((2, 2))))
    np.testing.assert_array_equal(mode.evaluate(v.read_value()), X0)


def test_scatter_bad_updates(mode):
    v = sf.Variable(X0)
    _init(mode)
    with pytest.raises(errors.InvalidArgumentError, match="updates"):
        mode.evaluate(state_ops.scatter_add(v, [0, 1], np.ones((3, 2))))
    with pytest.raises((errors.InvalidArgumentError, TypeError), match="dtype"):
        mode.evaluate(state_ops.scatter_add(v, [0], sf.constant(np.ones((1, 2), np.float32))))  # a tensor: no cast
    np.testing.assert_array_equal(mode.evaluate(v.read_value()), X0)


def test_scatter_needs_a_variable():
    with pytest.raises(TypeError, match="Variable"):
        state_ops.scatter_add(sf.constant([1.0]), [0], [1.0])


def test_variable_scatter_methods_take_indexed_slices(mode):
    v = sf.Variable(X0)
    _init(mode)
    delta = sf.IndexedSlices(sf.constant(UPD[:2]), sf.constant([3, 3]))
    got = mode.evaluate(v.scatter_add(delta))
    np.testing.assert_allclose(got, ref_scatter(X0, [3, 3], UPD[:2], "add"))
    got = mode.evaluate(v.scatter_max(delta))
    np.testing.assert_allclose(got, ref_scatter(ref_scatter(X0, [3, 3], UPD[:2], "add"), [3, 3], UPD[:2], "max"))
    with pytest.raises(TypeError, match="IndexedSlices"):
        v.scatter_update(UPD)


# -- assign


def test_assign_family(mode):
    v = sf.Variable([1.0, 2.0])
    _init(mode)
    np.testing.assert_array_equal(mode.evaluate(state_ops.assign(v, [5.0, 6.0])), [5.0, 6.0])
    np.testing.assert_array_equal(mode.evaluate(state_ops.assign_add(v, [1.0, 1.0])), [6.0, 7.0])
    np.testing.assert_array_equal(mode.evaluate(state_ops.assign_sub(v, [0.5, 0.5], use_locking=True)), [5.5, 6.5])
    np.testing.assert_array_equal(mode.evaluate(v.assign_add(1.0)), [6.5, 7.5])


def test_assign_errors(mode):
    v = sf.Variable([1.0, 2.0])
    _init(mode)
    with pytest.raises((errors.InvalidArgumentError, ValueError), match="shape"):
        mode.evaluate(state_ops.assign(v, [1.0, 2.0, 3.0]))
    with pytest.raises((errors.InvalidArgumentError, TypeError), match="dtype"):
        mode.evaluate(state_ops.assign(v, sf.constant(np.array([1.0, 2.0]))))     # a float64 tensor
    np.testing.assert_array_equal(mode.evaluate(v.read_value()), [1.0, 2.0])
    # a float64 NumPy value is converted with the variable's dtype, as TF does
    mode.evaluate(state_ops.assign(v, np.array([3.0, 4.0])))
    np.testing.assert_array_equal(mode.evaluate(v.read_value()), np.array([3.0, 4.0], np.float32))


def test_assign_read_value_false_returns_op():
    with sf.Graph().as_default():
        v = sf.Variable([1.0])
        op = v.assign([2.0], read_value=False)
        assert isinstance(op, sf.Operation)
        with sf.Session() as sess:
            sess.run(v.initializer)
            sess.run(op)
            np.testing.assert_array_equal(sess.run(v), [2.0])


def test_graph_update_runs_only_when_evaluated():
    with sf.Graph().as_default():
        v = sf.Variable([1.0, 2.0])
        inc = state_ops.assign_add(v, [1.0, 1.0])
        with sf.Session() as sess:
            sess.run(v.initializer)
            np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
            np.testing.assert_array_equal(sess.run(inc), [2.0, 3.0])
            sess.run(inc.op)
            np.testing.assert_array_equal(sess.run(v), [3.0, 4.0])


def test_chained_updates_and_gather_run_in_order():
    # The optimizer pattern: m_t = scatter_update(m, ...); m_t = scatter_add(m_t, ...); gather(m_t, ...)
    with sf.Graph().as_default():
        m = sf.Variable(np.ones((4, 2)))
        idx = sf.constant([1, 3])
        m_t = state_ops.scatter_update(m, idx, array_ops.gather(m, idx) * 0.5)
        m_t = state_ops.scatter_add(m_t, idx, np.full((2, 2), 2.0))
        rows = array_ops.gather(m_t, idx)
        with sf.Session() as sess:
            sess.run(variables.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(rows), np.full((2, 2), 2.5))
            np.testing.assert_array_equal(sess.run(m), [[1, 1], [2.5, 2.5], [1, 1], [2.5, 2.5]])


# -- scatter_nd on variables


@pytest.mark.parametrize("how,fn", [("update", state_ops.scatter_nd_update), ("add", state_ops.scatter_nd_add),
                                    ("sub", state_ops.scatter_nd_sub)])
def test_scatter_nd_with_duplicates(mode, how, fn):
    x = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    ind = np.array([[1, 2], [0, 0], [1, 2]])          # slices of the last dim; (1, 2) twice
    upd = np.arange(12, dtype=np.float64).reshape(3, 4) * 10
    v = sf.Variable(x)
    _init(mode)
    ref = getattr(R, f"tensor_scatter_nd_{how}")
    np.testing.assert_array_equal(mode.evaluate(fn(v, ind, upd)), ref(x, ind, upd))
    ind1 = np.array([[0, 1, 3], [0, 1, 3]])           # full-depth elements
    got = mode.evaluate(fn(v, ind1, np.array([1.0, 2.0])))
    np.testing.assert_array_equal(got, ref(ref(x, ind, upd), ind1, np.array([1.0, 2.0])))


def test_scatter_nd_out_of_range_leaves_variable_unchanged(mode):
    x = np.zeros((2, 3))
    v = sf.Variable(x)
    _init(mode)
    with pytest.raises(errors.InvalidArgumentError, match=r"ResourceScatterNdAdd.*indices\[1\] = \[1, 3\]"):
        mode.evaluate(state_ops.scatter_nd_add(v, [[0, 0], [1, 3]], [1.0, 1.0]))
    np.testing.assert_array_equal(mode.evaluate(v.read_value()), x)


def test_scatter_converts_numpy_updates_to_the_variable_dtype(mode):
    # TF converts a scatter's NumPy values with the variable's dtype (int64 -> int32, float64 ->
    # float32); integers that do not fit are still refused.
    v = sf.Variable(np.zeros(4, np.int32))
    w = sf.Variable(np.zeros(3, np.float32))
    mode.evaluate(variables.variables_initializer([v, w])) if not mode.eager else None
    mode.evaluate(state_ops.scatter_add(v, [1, 2], np.array([3, 4], np.int64)))
    mode.evaluate(state_ops.scatter_update(w, [0], np.array([1.5], np.float64)))
    np.testing.assert_array_equal(mode.evaluate(v.read_value()), [0, 3, 4, 0])
    np.testing.assert_array_equal(mode.evaluate(w.read_value()), np.array([1.5, 0, 0], np.float32))
    with pytest.raises((errors.InvalidArgumentError, TypeError)):
        mode.evaluate(state_ops.scatter_add(v, [1], np.array([2**40], np.int64)))

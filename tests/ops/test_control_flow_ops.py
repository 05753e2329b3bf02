"""control_flow_ops: no_op, group, tuple, with_dependencies in graphs (Operations that run their
dependencies) and eagerly (None / pass-through)."""
import numpy as np
import pytest

import segflow as sf
from segflow.framework import ops
from segflow.ops import control_flow_ops


def _seeded_draw():
    """A seeded random op: its value sequence shows whether (and how often) it has run."""
    sf.set_random_seed(1)
    return sf.random.uniform([2], name="draw")


def _reference_sequence(n):
    with sf.Graph().as_default():
        x = _seeded_draw()
        with sf.Session() as sess:
            return [sess.run(x) for _ in range(n)]


def test_no_op_graph_and_eager():
    assert sf.no_op() is None
    with sf.Graph().as_default() as g:
        op = sf.no_op(name="nothing")
        assert isinstance(op, ops.Operation)
        assert op.type == "NoOp" and op.name == "nothing" and op.outputs == [] and op.graph is g
        with sf.Session() as sess:
            assert sess.run(op) is None


def test_group_is_an_operation_with_control_inputs():
    with sf.Graph().as_default():
        a = sf.constant(1.0)
        b = sf.constant(2.0) + a
        g = sf.group(a, [b, b.op], name="both")
        assert isinstance(g, ops.Operation) and g.type == "NoOp" and g.name == "both"
        assert set(g.control_inputs) == {a.op, b.op}
        assert sf.group().control_inputs == []


def test_group_runs_its_inputs():
    want = _reference_sequence(3)
    with sf.Graph().as_default():
        x = _seeded_draw()
        step = sf.group(x)
        with sf.Session() as sess:
            assert sess.run(step) is None           # runs the draw once
            assert sess.run([step, step]) == [None, None]   # once more (one plan, one run)
            np.testing.assert_array_equal(sess.run(x), want[2])


def test_group_eager_returns_none():
    assert sf.group(sf.constant(1.0), sf.constant(2.0)) is None


def test_group_rejects_non_tensors():
    with sf.Graph().as_default():
        with pytest.raises(TypeError, match="Tensors or Operations"):
            sf.group(sf.constant(1.0), 3)


def test_with_dependencies_runs_dependency_first():
    want = _reference_sequence(2)
    with sf.Graph().as_default():
        x = _seeded_draw()
        c = sf.constant([5.0, 6.0])
        y = control_flow_ops.with_dependencies([x], c)
        with sf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y), [5.0, 6.0])
            np.testing.assert_array_equal(sess.run(x), want[1])   # x already ran once for y
    assert control_flow_ops.with_dependencies([], 4.0) == 4.0


def test_with_dependencies_keeps_indexed_slices():
    with sf.Graph().as_default():
        d = sf.constant(1.0)
        s = ops.IndexedSlices(sf.constant([[1.0, 2.0]]), sf.constant([1]), sf.constant([3, 2]))
        out = control_flow_ops.with_dependencies([d], s)
        assert isinstance(out, ops.IndexedSlices) and out.indices is s.indices
        assert d.op in out.values.op.control_inputs
        with sf.Session() as sess:
            v = sess.run(out)
        np.testing.assert_array_equal(v.values, [[1.0, 2.0]])


def test_tuple_gates_every_output():
    want = _reference_sequence(2)
    with sf.Graph().as_default():
        x = _seeded_draw()
        c = sf.constant(3.0)
        tx, none, tc = sf.tuple([x, None, c])
        assert none is None
        with sf.Session() as sess:
            # fetching only tc still runs x (through the gate)
            assert sess.run(tc) == 3.0
            np.testing.assert_array_equal(sess.run(x), want[1])
    eager = sf.tuple([sf.constant(1.0), None])
    assert len(eager) == 2 and eager[1] is None and float(eager[0]) == 1.0


def test_session_accepts_group_from_control_dependencies():
    with sf.Graph().as_default():
        x = _seeded_draw()
        with sf.control_dependencies([x]):
            g = sf.no_op()
        assert g.control_inputs == [x.op]

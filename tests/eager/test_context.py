"""Execution mode: eager by default, graph building inside as_default()/graph_mode()."""
import pytest

import segflow as sf
from segflow.eager import context
from segflow.framework import ops


def _is_symbolic(t):
    return isinstance(t, ops.Tensor) and not isinstance(t, ops.EagerTensor)


def test_executing_eagerly_in_and_out_of_graphs():
    assert context.executing_eagerly() and sf.executing_eagerly()
    g1, g2 = ops.Graph(), ops.Graph()
    with g1.as_default():
        assert not context.executing_eagerly()
        assert ops.get_default_graph() is g1
        with g2.as_default():
            assert ops.get_default_graph() is g2
            assert sf.constant(1.0).graph is g2
        assert ops.get_default_graph() is g1
    assert context.executing_eagerly()
    assert isinstance(sf.constant(1.0), ops.EagerTensor)


def test_graph_mode_and_eager_mode_nest():
    with context.graph_mode():
        assert not context.executing_eagerly()
        outer_graph = ops.get_default_graph()
        assert _is_symbolic(sf.constant(1.0))
        with context.eager_mode():
            assert context.executing_eagerly()
            assert float(sf.constant(2.0) * 3.0) == 6.0
            with context.graph_mode():
                assert not context.executing_eagerly()
                assert _is_symbolic(sf.constant(1.0))
            assert context.executing_eagerly()
        assert not context.executing_eagerly()
        assert ops.get_default_graph() is outer_graph
        with context.graph_mode():         # already building: stays in the same graph
            assert ops.get_default_graph() is outer_graph
    assert context.executing_eagerly()


def test_eager_mode_inside_a_graph_block():
    g = ops.Graph()
    with g.as_default():
        with context.eager_mode():
            assert context.executing_eagerly()
            assert isinstance(sf.constant(1.0), ops.EagerTensor)
            with context.graph_mode():       # back to building g, as in TF
                assert ops.get_default_graph() is g
                assert sf.constant(1.0).graph is g
        assert not context.executing_eagerly()
        assert ops.get_default_graph() is g


def test_mode_is_restored_after_an_exception():
    g = ops.Graph()
    with pytest.raises(KeyError, match="boom"):
        with g.as_default():
            raise KeyError("boom")
    assert context.executing_eagerly()
    with pytest.raises(KeyError, match="boom"):
        with context.eager_mode():
            with context.graph_mode():
                raise KeyError("boom")
    assert context.executing_eagerly()


def test_disable_and_enable_eager_execution():
    try:
        ops.disable_eager_execution()
        assert not context.executing_eagerly()
        assert _is_symbolic(sf.constant(1.0))
        with context.eager_mode():
            assert context.executing_eagerly()
        assert not context.executing_eagerly()
        g = ops.Graph()
        with g.as_default():
            assert not context.executing_eagerly()
        assert not context.executing_eagerly()
    finally:
        ops.enable_eager_execution()
    assert context.executing_eagerly()
    assert isinstance(sf.constant(1.0), ops.EagerTensor)


def test_scopes_are_no_ops_eagerly():
    with ops.name_scope("s") as scope:
        assert scope == "s/"
    with ops.device("/gpu:0"), ops.colocate_with(sf.constant(1.0)), ops.control_dependencies([sf.constant(1.0)]):
        assert float(sf.constant(1.0) + 1.0) == 2.0


"""Graph, Operation, Tensor and EagerTensor: names, scopes, devices, collections, conversions."""
import numpy as np
import pytest

import segflow as sf
from segflow.framework import ops


@pytest.fixture
def g():
    graph = ops.Graph()
    with graph.as_default():
        yield graph


def test_get_operations_in_creation_order(g):
    a = sf.constant(1.0, name="a")
    b = sf.constant(2.0, name="b")
    c = sf.add(a, b, name="c")
    assert [op.name for op in g.get_operations()] == ["a", "b", "c"]
    assert c.op.inputs == [a, b] and a.consumers() == [c.op]


def test_lookup_errors_name_what_is_missing(g):
    a = sf.constant(1.0, name="a")
    assert g.get_operation_by_name("a") is a.op
    assert g.get_tensor_by_name("a:0") is a
    with pytest.raises(KeyError, match="'nope' refers to an Operation not in the graph"):
        g.get_operation_by_name("nope")
    with pytest.raises(KeyError, match="'a:3'.*has 1 outputs"):
        g.get_tensor_by_name("a:3")
    with pytest.raises(KeyError, match="'nope'"):
        g.get_tensor_by_name("nope:0")
    with pytest.raises(ValueError, match="'a' looks like an.*Operation name"):
        g.get_tensor_by_name("a")


def test_as_graph_element(g):
    a = sf.constant(1.0, name="a")
    assert g.as_graph_element("a:0") is a
    assert g.as_graph_element("a") is a.op
    assert g.as_graph_element(a) is a and g.as_graph_element(a.op) is a.op
    with pytest.raises(ValueError, match="'a:0' appears to refer to a Tensor, not an Operation"):
        g.as_graph_element("a:0", allow_tensor=False)
    with pytest.raises(ValueError, match="'a' refers to an Operation, not a Tensor"):
        g.as_graph_element("a", allow_operation=False)
    with pytest.raises(TypeError, match="Can not convert a int"):
        g.as_graph_element(1)
    other = ops.Graph()
    with other.as_default():
        d = sf.constant(1.0, name="d")
    with pytest.raises(ValueError, match="d:0 is not an element of this graph"):
        g.as_graph_element(d)


def test_unique_names_and_name_scopes(g):
    a = sf.constant(1.0, name="a")
    with ops.name_scope("s") as s_scope:
        b = sf.constant(2.0, name="b")
        b2 = sf.constant(2.0, name="b")
        with ops.name_scope("t") as inner:
            c = a + b
    with ops.name_scope("s") as s_again:
        d = sf.constant(3.0, name="b")
    with ops.name_scope(inner):          # re-entering a captured scope string
        e = sf.constant(3.0, name="e")
    with ops.name_scope(s_scope):
        f = sf.constant(3.0, name="b")
        with ops.name_scope(None):
            top = sf.constant(3.0, name="top")
    assert (s_scope, inner, s_again) == ("s/", "s/t/", "s_1/")
    names = [t.op.name for t in (a, b, b2, c, d, e, f, top)]
    assert names == ["a", "s/b", "s/b_1", "s/t/AddV2", "s_1/b", "s/t/e", "s/b_2", "top"]
    assert len(set(op.name for op in g.get_operations())) == len(g.get_operations())
    assert a.name == "a:0"


def test_name_scope_default_name_and_values(g):
    x = sf.constant(1.0)
    with ops.name_scope(None, "default", [x]) as scope:
        assert scope == "default/"
    other = ops.Graph()
    with other.as_default():
        y = sf.constant(1.0)
    with pytest.raises(ValueError, match="same graph"):
        with ops.name_scope("s", values=[y]):
            pass


def test_device_stack(g):
    a = sf.constant(1.0)
    with ops.device("/cpu:0"):
        x1 = sf.constant(1.0)
        with ops.device("/gpu:1"):
            x2 = sf.constant(1.0)
        with ops.device(None):
            x3 = sf.constant(1.0)
        x4 = sf.constant(1.0)
    assert (a.device, x1.device, x2.device, x3.device, x4.device) == ("", "/cpu:0", "/gpu:1", "", "/cpu:0")


def test_colocate_with_sets_device_and_group(g):
    with ops.device("/cpu:0"):
        anchor = sf.constant(1.0, name="anchor")
    with ops.device("/gpu:0"):
        with ops.colocate_with(anchor):
            y = anchor * 2.0
        z = anchor * 3.0
    assert y.device == "/cpu:0" and z.device == "/gpu:0"
    assert y.op.colocation_groups() == [b"loc:@anchor"]
    assert z.op.colocation_groups() == [b"loc:@" + z.op.name.encode()]


def test_control_dependencies_nest_and_none_clears(g):
    a = sf.constant(1.0, name="a")
    b = sf.constant(2.0, name="b")
    with ops.control_dependencies([a]):
        z1 = sf.constant(1.0) + 1.0
        with ops.control_dependencies([b.op]):
            z2 = sf.constant(2.0)
            with ops.control_dependencies(None):
                z3 = sf.constant(3.0)
            z4 = sf.constant(4.0)
    assert [op.name for op in z1.op.control_inputs] == ["a"]
    assert [op.name for op in z2.op.control_inputs] == ["a", "b"]
    assert z3.op.control_inputs == []
    assert [op.name for op in z4.op.control_inputs] == ["a", "b"]
    with pytest.raises(TypeError, match="Control input must be an Operation or Tensor"):
        with ops.control_dependencies([3]):
            pass


def test_control_dependency_runs_first(g):
    v = sf.Variable(1.0)
    inc = v.assign_add(10.0)
    with ops.control_dependencies([inc]):
        read = sf.identity(v.read_value())
    with sf.Session() as s:
        s.run(sf.global_variables_initializer())
        assert float(s.run(read)) == 11.0


def test_collections(g):
    a = sf.constant(1.0, name="a")
    with ops.name_scope("s"):
        b = sf.constant(2.0, name="b")
    ops.add_to_collection("k", a)
    ops.add_to_collection("k", b)
    ops.add_to_collection("k", 5)
    assert ops.get_collection("k") == [a, b, 5]
    assert ops.get_collection("k", scope="s") == [b]
    assert ops.get_collection("missing") == []
    copy = ops.get_collection("k")
    copy.append("x")
    assert len(ops.get_collection("k")) == 3
    ref = ops.get_collection_ref("k")
    ref.append("x")
    assert ops.get_collection("k")[-1] == "x"
    g.add_to_collections(["m", "n"], a)
    assert g.get_collection("m") == [a] and g.get_collection("n") == [a]
    assert set(g.get_all_collection_keys()) >= {"k", "m", "n"}


def test_finalize_prevents_new_ops():
    graph = ops.Graph()
    with graph.as_default():
        sf.constant(1.0)
    graph.finalize()
    assert graph.finalized
    with graph.as_default():
        with pytest.raises(RuntimeError, match="finalized"):
            sf.constant(2.0)


def test_tensors_from_two_graphs_in_one_op_raise(g):
    a = sf.constant(1.0)
    other = ops.Graph()
    with other.as_default():
        b = sf.constant(1.0, name="foreign")
    with pytest.raises(ValueError, match="AddV2.*foreign:0.*different graph"):
        a + b


def test_set_shape_merges_and_raises(g):
    p = sf.placeholder(sf.float32, [None, 3])
    p.set_shape([2, None])
    assert p.shape.as_list() == [2, 3]
    with pytest.raises(ValueError, match="not compatible"):
        p.set_shape([3, 3])
    with pytest.raises(ValueError, match="not compatible"):
        ops.EagerTensor(np.zeros(2)).set_shape([3])


def test_graph_tensor_iteration_len_and_bool(g):
    m = sf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    assert len(m) == 3
    rows = list(m)
    assert len(rows) == 3 and all(r.shape.as_list() == [2] for r in rows)
    with sf.Session() as s:
        np.testing.assert_array_equal(s.run(rows[2]), [5.0, 6.0])
    unknown = sf.placeholder(sf.float32, [None])
    with pytest.raises(TypeError, match="len is not well defined.*None"):
        len(unknown)
    with pytest.raises(TypeError, match="first dimension is unknown"):
        iter(unknown)
    with pytest.raises(TypeError, match="scalar"):
        iter(sf.constant(1.0))
    with pytest.raises(TypeError, match="as a Python `bool` is not allowed"):
        bool(m)
    with pytest.raises(TypeError, match="as a Python `bool` is not allowed"):
        if m:
            pass
    with pytest.raises(NotImplementedError, match="numpy.*eager"):
        m.numpy()


def test_tensor_identity_semantics(g):
    a = sf.constant(1.0)
    b = sf.constant(1.0)
    assert a == a and a != b
    assert {a: 1, b: 2}[a] == 1
    assert a.ref().deref() is a and a.ref() == a.ref()


def test_eager_tensor_python_protocols():
    e = sf.constant([[1, 2], [3, 4]])
    np.testing.assert_array_equal(e.numpy(), [[1, 2], [3, 4]])
    arr = np.asarray(e)
    assert arr.dtype == np.int32 and arr.tolist() == [[1, 2], [3, 4]]
    assert np.asarray(e, dtype=np.float64).dtype == np.float64
    assert "[3, 4]" in repr(e) and "int32" in repr(e) and "(2, 2)" in repr(e)
    assert len(e) == 2
    rows = list(e)
    assert [r.numpy().tolist() for r in rows] == [[1, 2], [3, 4]]
    s = sf.constant(2.5)
    assert float(s) == 2.5 and f"{s:.2f}" == "2.50"
    assert int(sf.constant(3)) == 3
    assert bool(sf.constant(0)) is False and bool(sf.constant(True)) is True
    assert [10, 20, 30][sf.constant(1)] == 20
    assert str(e).startswith("sf.Tensor(") and "shape=(2, 2)" in format(e)
    with pytest.raises(TypeError, match="only integer scalar tensors can be used as an index"):
        [1, 2][sf.constant(1.0)]
    with pytest.raises(TypeError, match="Scalar tensor has no `len"):
        len(s)
    with pytest.raises(TypeError, match="scalar"):
        iter(s)
    with pytest.raises(AttributeError, match="eager"):
        s.op
    with pytest.raises(AttributeError, match="eager"):
        s.name


def test_registry_names_first_registration():
    reg = ops.Registry("thing")
    reg.register(len, "x")
    assert reg.lookup("x") is len and "x" in reg and reg.list() == ["x"]
    with pytest.raises(KeyError, match="two thing with name 'x'.*Previous registration"):
        reg.register(len, "x")
    with pytest.raises(LookupError, match="thing registry has no entry for: y"):
        reg.lookup("y")


def test_reset_default_graph_inside_as_default_raises(g):
    with pytest.raises(AssertionError, match="reset_default_graph"):
        ops.reset_default_graph()


def test_apply_op_argument_errors_name_the_op(mode):
    from segflow.framework import errors
    from segflow._core import apply as op_def
    with pytest.raises(errors.InvalidArgumentError, match=r"AddV2: takes 2 inputs \('x', 'y'\), got 1"):
        op_def.apply_op("AddV2", sf.constant(1.0))
    with pytest.raises(errors.InvalidArgumentError, match="AddN: input 'inputs': expects a list"):
        op_def.apply_op("AddN", sf.constant(1.0))
    with pytest.raises(errors.InvalidArgumentError, match="AddV2: input 'y': cannot convert object"):
        sf.add(sf.constant(1.0), object())


def test_symbolic_tensor_in_eager_op_names_it():
    from segflow.framework import errors
    with ops.Graph().as_default():
        x = sf.placeholder(sf.float32, [2], name="sym")
    with pytest.raises(errors.InvalidArgumentError, match="AddV2: input 'x': symbolic tensor sym:0"):
        sf.add(x, 1.0)


def test_eager_name_scopes_nest_like_tf():
    assert sf.executing_eagerly()
    with sf.name_scope("a") as outer:
        with sf.name_scope("b") as inner:
            assert inner == "a/b/"
        with sf.name_scope("c") as other:
            assert other == "a/c/"
    assert outer == "a/"
    with sf.name_scope("d") as again:
        assert again == "d/"

"""GradientTape and eager.backprop behaviours TF's own tests rely on: attribute kinds (op_attr_type,
make_attr), the order of watched variables, variables and strings as targets, watching composites,
batch_jacobian's rank checks, repeated arguments, and the multiplication dispatch."""
import numpy as np
import pytest

import segflow as sf
from segflow import pywrap_tfe
from segflow.eager import backprop
from segflow.framework import tensor_shape
from segflow.ops import math_ops, sparse_ops


# -- op_attr_type / make_attr


def test_attr_kinds_have_tfs_numbers():
    assert (pywrap_tfe.TF_ATTR_STRING, pywrap_tfe.TF_ATTR_INT, pywrap_tfe.TF_ATTR_FLOAT, pywrap_tfe.TF_ATTR_BOOL,
            pywrap_tfe.TF_ATTR_TYPE, pywrap_tfe.TF_ATTR_SHAPE) == (0, 1, 2, 3, 4, 5)


def test_op_attr_type_of_dtype_and_default_attrs():
    assert backprop.op_attr_type("AddV2", "T") == pywrap_tfe.TF_ATTR_TYPE
    assert backprop.op_attr_type("Add", "T") == pywrap_tfe.TF_ATTR_TYPE
    assert backprop.op_attr_type("MatMul", "transpose_a") == pywrap_tfe.TF_ATTR_BOOL
    assert backprop.op_attr_type("LeakyRelu", "alpha") == pywrap_tfe.TF_ATTR_FLOAT
    with pytest.raises(ValueError, match="no attribute 'nope'"):
        backprop.op_attr_type("AddV2", "nope")
    with pytest.raises(sf.errors.NotFoundError):
        backprop.op_attr_type("NoSuchOp", "T")


def test_make_attr_types_shapes_and_strings():
    assert backprop.make_attr(pywrap_tfe.TF_ATTR_TYPE, 1) == sf.float32
    assert backprop.make_attr([pywrap_tfe.TF_ATTR_TYPE], [1, 3]) == [sf.float32, sf.int32]
    assert backprop.make_attr(pywrap_tfe.TF_ATTR_STRING, "ab") == b"ab"
    assert backprop.make_attr(pywrap_tfe.TF_ATTR_INT, 7) == 7
    for s in ([], None, [1, 2, 3], [None, None], [1, None, 3]):
        proto = backprop.make_attr(pywrap_tfe.TF_ATTR_SHAPE, s)
        assert proto == tensor_shape.TensorShape(s).as_proto()
        assert tensor_shape.TensorShape(proto) == tensor_shape.TensorShape(s)
    assert backprop.make_attr([pywrap_tfe.TF_ATTR_SHAPE], [[1], None]) == \
        [tensor_shape.TensorShape([1]).as_proto(), tensor_shape.TensorShape(None).as_proto()]


def test_shape_proto_fields():
    proto = tensor_shape.TensorShape([2, None]).as_proto()
    assert [d.size for d in proto.dim] == [2, -1] and not proto.unknown_rank
    assert tensor_shape.TensorShape(None).as_proto().unknown_rank
    assert tensor_shape.TensorShape([2]).as_proto() != tensor_shape.TensorShape([3]).as_proto()
    assert tensor_shape.TensorShape([]).as_proto() != tensor_shape.TensorShape(None).as_proto()


# -- variables


def test_watched_variables_come_in_creation_order():
    v0, v1 = sf.Variable(1.0), sf.Variable(2.0)
    with sf.GradientTape() as tape:
        y = v1 * v1 + v0 * v0
    assert tape.watched_variables() == (v0, v1)
    grads = backprop.implicit_grad(lambda: v1 * v1 + v0 * v0)()
    assert [v for _, v in grads] == [v0, v1]
    assert [float(g) for g, _ in grads] == [2.0, 4.0]
    assert float(tape.gradient(y, v1)) == 4.0


def test_variable_as_target_is_its_own_gradient():
    xs = [sf.Variable(2.0), sf.Variable(3.0), sf.Variable(5.0)]
    with sf.GradientTape() as tape:
        top = max(xs)
    grads = tape.gradient(top, xs)
    assert grads[0] is None and grads[1] is None and float(grads[2]) == 1.0
    v = sf.Variable([[1.0, 2.0]])
    with sf.GradientTape() as tape:
        tape.watch(v)
    g = tape.gradient(v, v)
    assert g.dtype == sf.float32 and g.numpy().tolist() == [[1.0, 1.0]]


def test_variable_target_in_a_graph_tape():
    with sf.Graph().as_default():
        v = sf.Variable([1.0, 2.0, 3.0])
        with sf.GradientTape() as tape:
            tape.watch(v)
        g = tape.gradient(v, v)
        with sf.Session() as sess:
            sess.run(v.initializer)
            assert sess.run(g).tolist() == [1.0, 1.0, 1.0]


# -- strings, bad things, composites


def test_string_sources_and_targets_get_none():
    x, y = sf.constant(3.0), sf.constant(5.0)
    s = sf.constant("unknown")
    with sf.GradientTape() as tape:
        tape.watch([x, y, s])
        z = y * y
    grads = tape.gradient([x, y, z, s], [x, y, s])
    assert [float(g) for g in grads[:2]] == [1.0, 11.0]
    assert grads[2] is None
    with sf.GradientTape() as tape:
        tape.watch(s)
    assert tape.gradient(s, s) is None


def test_watch_refuses_non_tensors_naming_their_type():
    tape = sf.GradientTape()
    with pytest.raises(ValueError, match="ndarray"):
        tape.watch(np.array(1.0))
    with sf.GradientTape() as tape:
        with pytest.raises(ValueError, match="'str'"):
            tape.watch("x")


def test_watching_a_sparse_tensor_watches_its_values():
    values = sf.constant([1.0, 2.0])
    with sf.GradientTape() as tape:
        sp = sf.SparseTensor(indices=[[0, 0], [1, 2]], values=values, dense_shape=[3, 4])
        tape.watch(sp)
        z = sparse_ops.sparse_reduce_sum_v2(sp)
        w = sparse_ops.sparse_reduce_sum_v2(sp, axis=1)
    assert float(z) == 3.0
    assert tape.gradient(z, values).numpy().tolist() == [1.0, 1.0]
    assert w.numpy().tolist() == [1.0, 2.0, 0.0]


def test_sparse_reduce_sum_matches_numpy():
    dense = np.array([[0, 1.5, 0], [2, 0, -1]], np.float32)
    sp = sf.sparse.from_dense(dense)
    for axis in (None, 0, 1, -1):
        for keepdims in (False, True):
            got = sparse_ops.sparse_reduce_sum(sp, axis=axis, keepdims=keepdims).numpy()
            np.testing.assert_allclose(got, dense.sum(axis=axis, keepdims=keepdims))
    out = sparse_ops.sparse_reduce_sum_v2(sp, axis=0, output_is_sparse=True)
    assert out.indices.numpy().tolist() == [[0], [1], [2]] and out.values.numpy().tolist() == [2, 1.5, -1]


# -- batch_jacobian, repeated arguments, _mul_dispatch


def test_batch_jacobian_needs_rank_two():
    x = sf.random.uniform([2])
    with sf.GradientTape() as tape:
        y = sf.random.uniform([2, 2])
    with pytest.raises(ValueError, match="must have rank at least 2"):
        tape.batch_jacobian(y, x)
    x = sf.random.uniform([2, 2])
    with sf.GradientTape() as tape:
        y = sf.random.uniform([2])
    with pytest.raises(ValueError, match="must have rank at least 2"):
        tape.batch_jacobian(y, x)
    x = sf.random.uniform([2, 3])
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = sf.concat([x, x], axis=0)
    with pytest.raises(ValueError, match="Need first dimension"):
        tape.batch_jacobian(y, x)


def test_same_object_for_two_arguments_gets_one_gradient_each():
    g = backprop.gradients_function(lambda a, b: a * b)
    for x in (sf.constant(2.0), sf.constant([[3.0]])):
        da, db = g(x, x)
        assert da.numpy().tolist() == x.numpy().tolist() == db.numpy().tolist()
    v = sf.constant(3.0)
    vjp_result, vjp = backprop.make_vjp(lambda a, b: a * b * b)(v, v)
    assert [float(t) for t in vjp()] == [9.0, 18.0]


def test_mul_dispatch_dense_and_sparse():
    assert float(backprop.gradients_function(lambda x: math_ops._mul_dispatch(x, x))(3.0)[0]) == 6.0
    sp = sf.SparseTensor([[0, 1], [1, 0]], [2.0, 3.0], [2, 2])
    out = math_ops._mul_dispatch(sf.constant([[10.0, 20.0], [30.0, 40.0]]), sp)
    assert out.values.numpy().tolist() == [40.0, 90.0]
    assert out.indices.numpy().tolist() == [[0, 1], [1, 0]]
    assert math_ops._mul_dispatch(sf.constant(2.0), sp).values.numpy().tolist() == [4.0, 6.0]


def test_legacy_add_op_adds_numbers_and_joins_strings():
    from segflow._core.apply import apply_op
    assert apply_op("Add", sf.constant([b"a", b"b"]), sf.constant(b"c")).numpy().tolist() == [b"ac", b"bc"]
    x = sf.constant([1.0, 2.0])
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = apply_op("Add", x, sf.constant(3.0))
    assert y.numpy().tolist() == [4.0, 5.0]
    assert tape.gradient(y, x).numpy().tolist() == [1.0, 1.0]

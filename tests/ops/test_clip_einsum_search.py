"""clip_by_value / clip_by_norm / clip_by_global_norm, einsum / tensordot, searchsorted, and the
tf.sparse additions (sparse_dense_matmul, reorder, TF2 segment signatures): values against NumPy,
gradients against central differences."""
import numpy as np
import pytest

import segflow as sf
from segflow.ops import gradient_checker_v2 as gc


def _check_grad(fn, *arrays, tol=1e-6):
    theoretical, numerical = gc.compute_gradient(fn, [sf.constant(a) for a in arrays])
    for t, n in zip(theoretical, numerical):
        np.testing.assert_allclose(t, n, rtol=tol, atol=tol)


rng = np.random.default_rng(7)


# ------------------------------------------------------------------------------------------ clip
def test_clip_by_value_values_and_gradient():
    x = np.array([-2.0, -0.5, 0.25, 0.9, 3.0])
    np.testing.assert_array_equal(sf.clip_by_value(x, -1.0, 1.0).numpy(), np.clip(x, -1, 1))
    lo, hi = np.array([0.0, 0, 0, 0, 0]), np.array([1.0, 1, 0.1, 1, 5])
    np.testing.assert_array_equal(sf.clip_by_value(x, lo, hi).numpy(), np.minimum(np.maximum(x, lo), hi))
    xt = sf.constant(x)
    with sf.GradientTape() as tape:
        tape.watch(xt)
        y = sf.reduce_sum(sf.clip_by_value(xt, -1.0, 1.0) * np.arange(1.0, 6.0))
    np.testing.assert_array_equal(tape.gradient(y, xt).numpy(), [0, 2, 3, 4, 0])


def test_clip_by_norm_and_axes():
    x = np.array([[3.0, 4.0], [0.3, 0.4]])
    np.testing.assert_allclose(sf.clip_by_norm(x, 1.0).numpy(), x / np.linalg.norm(x))
    rows = sf.clip_by_norm(x, 1.0, axes=[1]).numpy()
    np.testing.assert_allclose(rows, [[0.6, 0.8], [0.3, 0.4]])
    np.testing.assert_array_equal(sf.clip_by_norm(np.zeros(3), 1.0).numpy(), np.zeros(3))
    _check_grad(lambda t: sf.clip_by_norm(t, 1.0), rng.random((2, 3)) + 1.0)


def test_clip_by_global_norm():
    a, b = np.array([3.0]), np.array([[4.0]])
    (ca, cb), norm = sf.clip_by_global_norm([a, b], 1.0)
    assert norm.numpy() == pytest.approx(5.0)
    np.testing.assert_allclose(ca.numpy(), [0.6])
    np.testing.assert_allclose(cb.numpy(), [[0.8]])
    (ua, none), _ = sf.clip_by_global_norm([a, None], 10.0)
    assert none is None and ua.numpy()[0] == 3.0
    (na,), _ = sf.clip_by_global_norm([np.array([np.inf])], 1.0)
    assert np.isnan(na.numpy()).all()
    slices = sf.IndexedSlices(sf.constant([[3.0, 4.0]]), sf.constant([1]), sf.constant([4, 2]))
    (cs,), _ = sf.clip_by_global_norm([slices], 1.0)
    assert isinstance(cs, sf.IndexedSlices)
    np.testing.assert_allclose(cs.values.numpy(), [[0.6, 0.8]])
    with pytest.raises(TypeError):
        sf.clip_by_global_norm(sf.constant([1.0]), 1.0)


# ---------------------------------------------------------------------------------------- einsum
@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij->", [(3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...j,jk", [(2, 3, 4), (4, 5)]),
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("ijk,k->ij", [(2, 3, 4), (4,)]),
])
def test_einsum_matches_numpy_and_gradients(eq, shapes):
    arrays = [rng.random(s) for s in shapes]
    np.testing.assert_allclose(sf.einsum(eq, *arrays).numpy(), np.einsum(eq, *arrays), rtol=1e-12)
    _check_grad(lambda *ts: sf.einsum(eq, *ts), *arrays)


def test_einsum_in_a_graph_and_errors():
    with sf.Graph().as_default():
        a = sf.compat.v1.placeholder(sf.float64, [None, 3])
        b = sf.constant(rng.random((3, 2)))
        c = sf.einsum("ij,jk->ik", a, b)
        assert c.shape.as_list() == [None, 2]
        with sf.compat.v1.Session() as sess:
            av = rng.random((4, 3))
            np.testing.assert_allclose(sess.run(c, {a: av}), av @ sess.run(b))
    with pytest.raises(ValueError, match="operand"):
        sf.einsum("ij,jk->ik", np.ones((2, 2)))
    with pytest.raises(ValueError, match="rank"):
        sf.einsum("ijk->i", np.ones((2, 2)))


@pytest.mark.parametrize("axes", [1, 0, 2, [[1], [0]], [[0, 2], [2, 0]]])
def test_tensordot_matches_numpy(axes):
    a = rng.random((3, 4, 5))
    b = rng.random((5, 4, 3)) if axes == [[0, 2], [2, 0]] else rng.random((4, 5, 6))
    if axes == 1:
        a, b = rng.random((3, 4)), rng.random((4, 5))
    if axes == [[1], [0]]:
        a, b = rng.random((3, 4)), rng.random((4, 2))
    np.testing.assert_allclose(sf.tensordot(a, b, axes).numpy(), np.tensordot(a, b, axes), rtol=1e-12)
    _check_grad(lambda x, y: sf.tensordot(x, y, axes), a, b)


# ---------------------------------------------------------------------------------- searchsorted
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_rows(side):
    seq = np.sort(rng.integers(0, 10, (3, 6)), axis=1).astype(np.float32)
    vals = rng.integers(-1, 11, (3, 4)).astype(np.float32)
    got = sf.searchsorted(seq, vals, side=side).numpy()
    want = np.stack([np.searchsorted(seq[i], vals[i], side=side) for i in range(3)])
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int32
    assert sf.searchsorted(seq, vals, side=side, out_type=sf.int64).numpy().dtype == np.int64


def test_searchsorted_errors():
    with pytest.raises(ValueError, match="side"):
        sf.searchsorted([1.0, 2.0], [1.0], side="middle")
    with pytest.raises(sf.errors.InvalidArgumentError, match="leading dimensions|must match"):
        sf.searchsorted(np.ones((2, 3)), np.ones((3, 3)))


# ---------------------------------------------------------------------------------------- sparse
def _random_sparse(shape, nnz):
    idx = np.stack([rng.integers(0, d, nnz) for d in shape], 1)
    vals = rng.random(nnz)
    dense = np.zeros(shape)
    np.add.at(dense, tuple(idx.T), vals)
    return idx, vals, dense


@pytest.mark.parametrize("adjoint_a,adjoint_b", [(False, False), (True, False), (False, True), (True, True)])
def test_sparse_dense_matmul(adjoint_a, adjoint_b):
    idx, vals, dense = _random_sparse((4, 3), 6)
    a = dense.T if adjoint_a else dense
    b = rng.random((5, a.shape[1])) if adjoint_b else rng.random((a.shape[1], 5))
    sp = sf.SparseTensor(idx, vals, [4, 3])
    got = sf.sparse.sparse_dense_matmul(sp, b, adjoint_a=adjoint_a, adjoint_b=adjoint_b).numpy()
    np.testing.assert_allclose(got, a @ (b.T if adjoint_b else b), rtol=1e-12)

    def f(v, bb):
        return sf.sparse.sparse_dense_matmul(sf.SparseTensor(idx, v, [4, 3]), bb, adjoint_a=adjoint_a,
                                             adjoint_b=adjoint_b)
    _check_grad(f, vals, b)


def test_reorder_sorts_row_major_and_keeps_values():
    sp = sf.SparseTensor([[2, 0], [0, 1], [1, 1], [0, 0]], [1.0, 2.0, 3.0, 4.0], [3, 2])
    r = sf.sparse.reorder(sp)
    assert r.indices.numpy().tolist() == [[0, 0], [0, 1], [1, 1], [2, 0]]
    assert r.values.numpy().tolist() == [4.0, 2.0, 3.0, 1.0]
    np.testing.assert_array_equal(sf.sparse.to_dense(r).numpy(), sf.sparse.to_dense(sp).numpy())


def test_tf2_sparse_segment_signatures():
    data = np.arange(12.0).reshape(4, 3)
    got = sf.sparse.segment_sum(data, [0, 2, 3], [0, 0, 1], 3).numpy()
    np.testing.assert_array_equal(got, [data[0] + data[2], data[3], np.zeros(3)])
    np.testing.assert_allclose(sf.sparse.segment_mean(data, [0, 2], [0, 0]).numpy(), [(data[0] + data[2]) / 2])
    np.testing.assert_allclose(sf.sparse.segment_sqrt_n(data, [0, 2], [0, 0]).numpy(),
                               [(data[0] + data[2]) / np.sqrt(2)])


def test_namespaces_have_the_tf2_names():
    assert sf.math.divide_no_nan(sf.constant(1.0), sf.constant(0.0)).numpy() == 0.0
    assert sf.linalg.einsum is sf.einsum and sf.compat.v1.einsum is sf.einsum
    assert sf.is_tensor(sf.constant(1.0)) and not sf.is_tensor(1.0)
    assert sf.linalg.global_norm([sf.constant([3.0, 4.0])]).numpy() == pytest.approx(5.0)


# ------------------------------------------------------------------------------------------ norm
@pytest.mark.parametrize("ord_,axis", [("euclidean", None), ("euclidean", 1), (1, 0), (np.inf, 1), (3, 1),
                                      ("fro", (0, 1)), (1, (0, 1)), (np.inf, (0, 1)), ("euclidean", (1, 2))])
def test_norm_matches_numpy(ord_, axis):
    x = rng.normal(size=(3, 4, 2)) if axis == (1, 2) else rng.normal(size=(3, 4))
    got = sf.norm(x, ord=ord_, axis=axis).numpy()
    if axis is None:
        want = np.linalg.norm(x.ravel())
    elif isinstance(axis, tuple):
        want = np.linalg.norm(x, ord="fro" if ord_ in ("fro", "euclidean") else ord_, axis=axis)
    else:
        want = np.linalg.norm(x, ord=2 if ord_ == "euclidean" else ord_, axis=axis)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert sf.norm(x, ord=ord_, axis=axis, keepdims=True).shape.rank == x.ndim
    _check_grad(lambda t: sf.norm(t, ord=ord_, axis=axis), x + 0.1)


def test_norm_errors_and_faces():
    from segflow.ops import linalg_ops
    assert linalg_ops.norm is sf.norm is sf.linalg.norm
    with pytest.raises(ValueError, match="matrix norm"):
        sf.norm(np.ones((2, 2)), ord=3, axis=(0, 1))
    with pytest.raises(ValueError, match="vector norm"):
        sf.norm(np.ones(2), ord=-1)

"""join_ops: transpose, expand_dims, squeeze, unstack, slice, strided slicing (`t[...]`), split, tile,
pad. Values against NumPy, gradients against numerical Jacobians in both modes."""
import numpy as np
import pytest

import segflow as sf
from segflow.framework import errors
from gradcheck import check_gradients

X = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
RNG = np.random.default_rng(0)
XR = RNG.normal(size=(2, 3, 4))


def grad_of_square(f):
    """x -> d sum(f(x)^2) / dx, built with a tape (eager) or sf.gradients (graph): checking its
    gradient checks that f's gradient is itself differentiable."""
    def g(x):
        if sf.executing_eagerly():
            with sf.GradientTape() as tape:
                tape.watch(x)
                y = sf.reduce_sum(sf.square(f(x)))
            return sf.convert_to_tensor(tape.gradient(y, x))
        return sf.convert_to_tensor(sf.gradients(sf.reduce_sum(sf.square(f(x))), x)[0])
    return g


# -- transpose
def check_gradient(mode, f, *xs, tol=1e-6):
    check_gradients(mode, f, xs, tol=tol)


@pytest.mark.parametrize("perm", [None, [1, 0, 2], [2, 0, 1], [0, 1, 2]])
def test_transpose(mode, perm):
    np.testing.assert_array_equal(mode.evaluate(sf.transpose(X, perm)), np.transpose(X, perm))


def test_transpose_error(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"Transpose.*input 'perm'.*not a permutation"):
        mode.evaluate(sf.transpose(X, [0, 0, 1]))


def test_transpose_gradient(mode):
    w = RNG.normal(size=(4, 2, 3))
    check_gradient(mode, lambda t: sf.transpose(t, [2, 0, 1]) * w, XR)


# -- expand_dims, squeeze
@pytest.mark.parametrize("axis", [0, 1, 3, -1, -4])
def test_expand_dims(mode, axis):
    np.testing.assert_array_equal(mode.evaluate(sf.expand_dims(X, axis)), np.expand_dims(X, axis))


def test_expand_dims_error(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"ExpandDims.*input 'dim'.*out of range"):
        mode.evaluate(sf.expand_dims(X, 4))


def test_squeeze(mode):
    z = np.arange(6.0).reshape(1, 2, 1, 3, 1)
    np.testing.assert_array_equal(mode.evaluate(sf.squeeze(z)), z.reshape(2, 3))
    np.testing.assert_array_equal(mode.evaluate(sf.squeeze(z, [0, -1])), z.reshape(2, 1, 3))
    np.testing.assert_array_equal(mode.evaluate(sf.squeeze(z, axis=2)), z.reshape(1, 2, 3, 1))


def test_squeeze_error(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"Squeeze.*input 'input'.*dimension of 1"):
        mode.evaluate(sf.squeeze(np.zeros((1, 2)), [1]))


def test_expand_dims_squeeze_gradients(mode):
    w = RNG.normal(size=(3, 1, 2))
    check_gradient(mode, lambda t: sf.expand_dims(t, 1) * w, RNG.normal(size=(3, 2)))
    check_gradient(mode, lambda t: sf.squeeze(t) * w[:, 0], RNG.normal(size=(3, 1, 2)))


# -- unstack
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unstack(mode, axis):
    got = mode.evaluate(sf.unstack(X, axis=axis))
    want = [np.take(X, i, axis=axis) for i in range(X.shape[axis])]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_unstack_gradient_with_unused_pieces(mode):
    # Only pieces 0 and 2 are used: piece 1 gets a zero gradient.
    def f(t):
        a, b, c = sf.unstack(t, axis=1)
        return a * 2.0 + c * c
    check_gradient(mode, f, RNG.normal(size=(2, 3)))


# -- slice
def test_slice(mode):
    got = mode.evaluate(sf.slice(X, [0, 1, 1], [-1, 2, 2]))
    np.testing.assert_array_equal(got, X[0:, 1:3, 1:3])


def test_slice_error(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"Slice.*out of range"):
        mode.evaluate(sf.slice(X, [0, 2, 0], [1, 2, 4]))


def test_slice_gradient(mode):
    w = RNG.normal(size=(1, 2, 3))
    check_gradient(mode, lambda t: sf.slice(t, [1, 0, 1], [1, 2, -1]) * w, XR)


# -- strided slicing through t[...]
SPECS = [
    (1,), (-1,), (slice(None),), (0, 2), (-1, -2, -3),
    (slice(1, None), slice(None, None, 2)),
    (slice(None), slice(None, None, -1)),
    (slice(None), slice(2, 0, -1), slice(None, None, -2)),
    (slice(-2, None), 1),
    (Ellipsis, 1), (Ellipsis, slice(1, 3)), (0, Ellipsis, slice(None, None, 3)),
    (None,), (None, 1, None), (slice(None), None, Ellipsis, None),
    (slice(10, -10, -1),),        # clamped bounds
    (slice(0, 0),),               # empty
    (1, slice(-1, None, -1), 3),
]


@pytest.mark.parametrize("spec", SPECS, ids=[repr(s) for s in SPECS])
def test_getitem_values(mode, spec):
    got = mode.evaluate(sf.constant(X)[spec])
    want = X[spec]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_getitem_static_shape_graph():
    with sf.Graph().as_default():
        t = sf.placeholder(sf.float32, [2, 3, 4])
        assert t[1, ::2, None].shape.as_list() == [2, 1, 4]
        assert t[..., 1:3].shape.as_list() == [2, 3, 2]


def test_getitem_scalar_int_tensor(mode):
    t = sf.constant(X)
    i = sf.constant(1)
    j = sf.constant(-1, sf.int64)
    np.testing.assert_array_equal(mode.evaluate(t[i]), X[1])
    np.testing.assert_array_equal(mode.evaluate(t[0, j]), X[0, -1])
    np.testing.assert_array_equal(mode.evaluate(t[:, i:]), X[:, 1:])


def test_getitem_fed_index():
    with sf.Graph().as_default():
        t = sf.constant(X)
        i = sf.placeholder(sf.int32, [])
        y = t[:, i]
        with sf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y, {i: 2}), X[:, 2])
            np.testing.assert_array_equal(sess.run(y, {i: -3}), X[:, -3])
            with pytest.raises(errors.InvalidArgumentError, match="StridedSlice"):
                sess.run(y, {i: 3})


def test_getitem_errors(mode):
    t = sf.constant(X)
    with pytest.raises(errors.InvalidArgumentError, match=r"StridedSlice.*out of bounds"):
        mode.evaluate(t[2])
    with pytest.raises(errors.InvalidArgumentError, match=r"StridedSlice.*-4.*out of bounds"):
        mode.evaluate(t[0, -4])
    with pytest.raises(errors.InvalidArgumentError, match=r"StridedSlice.*strides.*non-zero"):
        mode.evaluate(t[::0])
    with pytest.raises(TypeError, match="list"):
        t[[0, 1]]
    with pytest.raises(TypeError, match="valid indices"):
        t[1.5]
    with pytest.raises(TypeError, match="slice indices"):
        t[0.5:]


GRAD_SPECS = [(1,), (slice(None), slice(None, None, -2)), (Ellipsis, slice(3, 0, -2)), (None, 0, slice(1, 3)),
              (slice(-1, None, -1), None, 2, slice(1, None, 2))]


@pytest.mark.parametrize("spec", GRAD_SPECS, ids=[repr(s) for s in GRAD_SPECS])
def test_getitem_gradient(mode, spec):
    w = RNG.normal(size=XR[spec].shape)
    check_gradient(mode, lambda t: t[spec] * w, XR)


def test_getitem_second_order(mode):
    # d sum(t[spec]^2)/dt = 2 t masked to the slice: its own gradient runs through StridedSliceGrad.
    check_gradient(mode, grad_of_square(lambda t: t[:, ::-2, 1:] * 3.0), XR)


def test_getitem_gradient_matches_hand_mask(mode):
    x = sf.constant(X)
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = sf.reduce_sum(x[1, ::2, -1]) + sf.reduce_sum(x[1, 0, :])
        g = tape.gradient(y, x)
    else:
        g = sf.gradients(sf.reduce_sum(x[1, ::2, -1]) + sf.reduce_sum(x[1, 0, :]), x)[0]
    want = np.zeros_like(X)
    want[1, ::2, -1] += 1
    want[1, 0, :] += 1
    np.testing.assert_array_equal(mode.evaluate(g), want)


# -- split
@pytest.mark.parametrize("n,axis", [(2, 0), (3, 1), (4, -1), (1, 2)])
def test_split_even(mode, n, axis):
    got = mode.evaluate(sf.split(X, n, axis=axis))
    want = np.split(X, n, axis=axis)
    assert len(got) == n
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("sizes,axis", [([1, 3], -1), ([1, -1, 1], 2), ([0, 3], 1), (np.array([2], np.int64), 0)])
def test_split_sizes(mode, sizes, axis):
    got = mode.evaluate(sf.split(X, sizes, axis=axis))
    sizes = np.asarray(sizes)
    if -1 in sizes:
        sizes = np.where(sizes == -1, X.shape[axis] - sizes[sizes != -1].sum(), sizes)
    want = np.split(X, np.cumsum(sizes)[:-1], axis=axis)
    assert [g.shape for g in got] == [w.shape for w in want]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_split_static_shapes_graph():
    with sf.Graph().as_default():
        t = sf.placeholder(sf.float32, [None, 6])
        a, b = sf.split(t, 2, axis=1)
        c, d = sf.split(t, [1, -1], axis=1)
        assert a.shape.as_list() == [None, 3]
        assert d.shape.as_list() == [None, 5]


def test_split_errors(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"Split.*input 'value'.*evenly"):
        mode.evaluate(sf.split(X, 5, axis=1))
    with pytest.raises(errors.InvalidArgumentError, match=r"SplitV.*input 'size_splits'.*add up"):
        mode.evaluate(sf.split(X, [1, 2], axis=2))
    with pytest.raises(errors.InvalidArgumentError, match=r"SplitV.*input 'size_splits'.*one -1"):
        mode.evaluate(sf.split(X, [-1, -1], axis=2))
    with pytest.raises(errors.InvalidArgumentError, match=r"Split.*input 'split_dim'.*out of range"):
        mode.evaluate(sf.split(X, 2, axis=3))


def test_split_gradient(mode):
    def f(t):
        a, b, c = sf.split(t, 3, axis=1)
        return a * c * 2.0 + b     # all pieces used, nonlinear
    check_gradient(mode, f, RNG.normal(size=(2, 3)))

    def g(t):
        a, _, c = sf.split(t, [2, -1, 1], axis=-1)   # middle piece unused: zero gradient
        return sf.concat([a, c * c], 1)
    check_gradient(mode, g, RNG.normal(size=(2, 5)))


# -- tile
@pytest.mark.parametrize("multiples", [[1, 1, 1], [2, 1, 3], [1, 0, 2]])
def test_tile(mode, multiples):
    got = mode.evaluate(sf.tile(X, multiples))
    np.testing.assert_array_equal(got, np.tile(X, multiples))


def test_tile_errors(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"Tile.*input 'multiples'.*one per dimension"):
        mode.evaluate(sf.tile(X, [2, 2]))
    with pytest.raises(errors.InvalidArgumentError, match=r"Tile.*input 'multiples'.*non-negative"):
        mode.evaluate(sf.tile(X, [1, -1, 1]))


def test_tile_gradient(mode):
    w = RNG.normal(size=(4, 6))
    check_gradient(mode, lambda t: sf.tile(t, [2, 3]) * w, RNG.normal(size=(2, 2)))


def test_tile_gradient_from_indexed_slices(mode):
    # gather on axis 0 sends an IndexedSlices back into Tile; rows fold back mod the input's rows.
    idx = np.array([0, 5, 3, 5, 1])
    w = RNG.normal(size=(5, 4))
    check_gradient(mode, lambda t: sf.gather(sf.tile(t, [3, 2]), idx) * w, RNG.normal(size=(2, 2)))


def test_tile_gradient_of_indexed_slices_by_hand(mode):
    # x: 2 rows tiled 3x -> rows 0..5; rows 1, 3, 3 picked -> x row 1 gets 3 (1 + 1 + 1), row 0 gets 0.
    x = sf.constant(np.zeros((2, 1)))
    if mode.eager:
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = sf.reduce_sum(sf.gather(sf.tile(x, [3, 1]), [1, 3, 3]))
        g = tape.gradient(y, x)
    else:
        g = sf.gradients(sf.reduce_sum(sf.gather(sf.tile(x, [3, 1]), [1, 3, 3])), x)[0]
    np.testing.assert_array_equal(mode.evaluate(g), [[0.0], [3.0]])


def test_tile_second_order(mode):
    check_gradient(mode, grad_of_square(lambda t: sf.tile(t, [2, 1]) * np.arange(1.0, 5.0)[:, None]),
                   RNG.normal(size=(2, 3)))


# -- pad
@pytest.mark.parametrize("mode_name", ["CONSTANT", "reflect", "SYMMETRIC"])
def test_pad(mode, mode_name):
    x = np.arange(12.0).reshape(3, 4)
    p = [[1, 2], [2, 1]]
    got = mode.evaluate(sf.pad(x, p, mode=mode_name))
    np.testing.assert_array_equal(got, np.pad(x, p, mode=mode_name.lower()))


def test_pad_constant_values(mode):
    x = np.array([[1, 2]], np.int32)
    got = mode.evaluate(sf.pad(x, [[0, 1], [1, 0]], constant_values=7))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [[7, 1, 2], [7, 7, 7]])


def test_pad_errors(mode):
    x = np.zeros((2, 3))
    with pytest.raises(errors.InvalidArgumentError, match=r"Pad.*input 'paddings'.*shape"):
        mode.evaluate(sf.pad(x, [[1, 1]]))
    with pytest.raises(errors.InvalidArgumentError, match=r"Pad.*input 'paddings'.*non-negative"):
        mode.evaluate(sf.pad(x, [[1, 1], [-1, 0]]))
    with pytest.raises(errors.InvalidArgumentError, match=r"MirrorPad.*input 'paddings'.*at most 2"):
        mode.evaluate(sf.pad(x, [[0, 0], [3, 0]], mode="REFLECT"))
    with pytest.raises(ValueError, match="unknown mode"):
        sf.pad(x, [[0, 0], [1, 0]], mode="WRAP")


@pytest.mark.parametrize("mode_name", ["CONSTANT", "REFLECT", "SYMMETRIC"])
def test_pad_gradient(mode, mode_name):
    w = RNG.normal(size=(5, 6))
    check_gradient(mode, lambda t: sf.pad(t, [[1, 1], [2, 1]], mode=mode_name) * w, RNG.normal(size=(3, 3)))


def test_pad_v2_gradient(mode):
    w = RNG.normal(size=(4, 3))
    check_gradient(mode, lambda t: sf.pad(t, [[2, 0], [0, 1]], constant_values=2.5) * w, RNG.normal(size=(2, 2)))


@pytest.mark.parametrize("mode_name", ["CONSTANT", "REFLECT"])
def test_pad_second_order(mode, mode_name):
    w = RNG.normal(size=(4, 5))
    check_gradient(mode, grad_of_square(lambda t: sf.pad(t, [[1, 0], [1, 1]], mode=mode_name) * w),
                   RNG.normal(size=(3, 3)))


def test_empty_inputs(mode):
    e = np.zeros((0, 4))
    pieces = mode.evaluate(sf.split(e, 2, axis=1))
    assert [p.shape for p in pieces] == [(0, 2), (0, 2)]
    got = mode.evaluate([sf.tile(e, [3, 2]), sf.pad(e, [[1, 0], [0, 1]]), sf.transpose(e), sf.constant(e)[:, 1:],
                         sf.slice(e, [0, 1], [-1, 2])])
    assert [g.shape for g in got] == [(0, 8), (1, 5), (4, 0), (0, 3), (0, 2)]
    np.testing.assert_array_equal(got[1], np.zeros((1, 5)))


def test_squeeze_and_unstack_axis_out_of_range(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"Squeeze.*input 'input'.*out of range"):
        mode.evaluate(sf.squeeze(np.zeros((1, 1)), [3]))
    with pytest.raises(errors.InvalidArgumentError, match=r"Unpack.*input 'value'.*out of range"):
        mode.evaluate(sf.unstack(X, num=2, axis=3))
    with pytest.raises(ValueError, match="out of range"):
        sf.unstack(X, axis=-4)


def test_split_scalar_tensor_count(mode):
    got = mode.evaluate(sf.split(X, sf.constant(2), axis=2))
    np.testing.assert_array_equal(got[1], X[..., 2:])


# -- reverse
@pytest.mark.parametrize("axis", [[0], [1, 2], [-1], []])
def test_reverse(mode, axis):
    got = mode.evaluate(sf.reverse(X, axis))
    np.testing.assert_array_equal(got, np.flip(X, tuple(axis)) if axis else X)


def test_reverse_errors(mode):
    with pytest.raises(errors.InvalidArgumentError, match=r"ReverseV2.*input 'axis'.*out of range"):
        mode.evaluate(sf.reverse(X, [3]))
    with pytest.raises(errors.InvalidArgumentError, match=r"ReverseV2.*input 'axis'.*twice"):
        mode.evaluate(sf.reverse(X, [1, -2]))


def test_reverse_gradient(mode):
    w = RNG.normal(size=(2, 3, 4))
    check_gradient(mode, lambda t: sf.reverse(t, [0, 2]) * w, XR)

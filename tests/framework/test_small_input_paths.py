"""Shortcuts for small eager inputs give what the general paths give.

Short flat lists of Python numbers convert in one step (`convert.flat_numbers`, also taken by
`apply._to_tensor`), slices of Python ints build their begin / end / strides without NumPy
reductions, a few ids are range-checked with Python's min / max, and once Numba is loaded even a
few segment ids take the compiled check. Each exists for speed only: these tests compare each
against the general computation (the shortcut switched off) or against NumPy, errors included.
"""
import numpy as np
import pytest

import segflow as sf
from segflow._core import apply, convert
from segflow.kernels import BadInput
from segflow.kernels import ids as kids
from segflow.kernels import segment as seg

LISTS = [[1, 2, 3], [0], (4, 5), [2**31 - 1, -2**31], [2**31], [-2**31 - 1, 0], [2**63 - 1, -2**63],
         [2**63], [-2**63 - 1], [1.5, 0.1, -0.0], [1e40], [1, 2.0], [2.0, 1], [True, 2], [True],
         [[1, 2], [3, 4]], list(range(64)), list(range(65)), list(range(63)) + [2**31],
         [1, np.int64(2)], [1.0, float("nan")]]


def _convert(value):
    """sf.convert_to_tensor's array and dtype for `value`, or the error's type."""
    try:
        t = sf.convert_to_tensor(value)
        return t.numpy(), t.dtype
    except (TypeError, ValueError, OverflowError) as e:
        return type(e), None


@pytest.fixture
def general(monkeypatch):
    """Runs a function with the list shortcut switched off (both places it is taken)."""
    def run(fn, *args):
        with monkeypatch.context() as m:
            m.setattr(convert, "flat_numbers", lambda values: None)
            m.setattr(apply, "flat_numbers", lambda values: None)
            return fn(*args)
    return run


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")  # 1e40 as float32
@pytest.mark.parametrize("value", LISTS, ids=lambda v: repr(v)[:30])
def test_short_lists_convert_as_the_general_path_does(value, general):
    fast, want = _convert(value), general(_convert, value)
    assert fast[1] == want[1]
    if want[1] is None:
        assert fast[0] is want[0]
    else:
        assert fast[0].dtype == want[0].dtype
        np.testing.assert_array_equal(fast[0], want[0])


def test_the_shortcut_is_taken_and_follows_tfs_default_dtypes():
    assert convert.flat_numbers([1, 2]).dtype == np.int32
    assert convert.flat_numbers([1, 2**31]).dtype == np.int64
    assert convert.flat_numbers([0.5]).dtype == np.float32
    for other in ([], [1, 2.0], [True], [[1]], list(range(65)), [2**63]):
        assert convert.flat_numbers(other) is None


def test_list_operands_of_ops_match_numpy_and_keep_a_tensors_dtype(general):
    params = np.arange(20, dtype=np.float64).reshape(5, 4)
    for idx in ([4, 0, 2], [1], [0, 0, 4, 4]):
        np.testing.assert_array_equal(sf.gather(params, idx).numpy(), np.take(params, idx, axis=0))
    with pytest.raises(sf.errors.InvalidArgumentError, match=r"indices\[1\] = 5 is not in \[0, 5\)"):
        sf.gather(params, [1, 5])
    np.testing.assert_array_equal(sf.gather(params, [3, 0], axis=1).numpy(), params[:, [3, 0]])
    np.testing.assert_array_equal(sf.gather(params, [[1], [2]], axis=-1).numpy(), params[:, [[1], [2]]])
    with pytest.raises((TypeError, sf.errors.InvalidArgumentError), match="indices"):
        sf.gather(params, [1.0, 2.0])            # float indices: refused, as by the general path
    traced = sf.function(lambda p: sf.gather(p, [2, 1]) + sf.gather(p, [0, 0], axis=0))
    np.testing.assert_array_equal(traced(sf.constant(params)).numpy(), params[[2, 1]] + params[[0, 0]])
    x = sf.constant([1.0, 2.0], dtype=sf.float64)
    got = x + [1, 2]       # the list takes the tensor's dtype (a hint: not the shortcut)
    assert got.dtype == sf.float64
    np.testing.assert_array_equal(got.numpy(), [2.0, 4.0])
    r, want = sf.reshape(params, [2, 10]), general(sf.reshape, params, [2, 10])
    np.testing.assert_array_equal(r.numpy(), want.numpy())


SLICES = [np.s_[1:3], np.s_[::-1], np.s_[-2:], np.s_[1], np.s_[:, 2], np.s_[..., 1:2],
          np.s_[None, 1:], np.s_[1:4:2, ::-2], np.s_[2**31:], np.s_[-2**31:], np.s_[:2**40],
          np.s_[-1, -1], np.s_[3:1], np.s_[:, None, 0]]


@pytest.mark.parametrize("spec", SLICES, ids=repr)
def test_slices_of_python_ints_match_numpy(spec):
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    got = sf.constant(a)[spec].numpy()
    want = a[spec]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_slices_in_a_graph_and_of_tensors_still_work():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    g = sf.Graph()
    with g.as_default():
        t = sf.constant(a)
        y = t[1:, ::2]
    with sf.compat.v1.Session(graph=g) as sess:
        np.testing.assert_array_equal(sess.run(y), a[1:, ::2])
    t = sf.constant(a)
    np.testing.assert_array_equal(t[sf.constant(1):sf.constant(3, sf.int64)].numpy(), a[1:3])
    with pytest.raises((IndexError, ValueError, sf.errors.InvalidArgumentError)):
        t[5]
    for bad in (True, 1.0, slice(0, 1.5)):        # bools and floats are not indices
        with pytest.raises(TypeError):
            t[bad]


@pytest.mark.parametrize("size", [1, 2, 31, 32, 33, 100])
def test_range_check_of_few_ids_names_the_first_bad_one(size):
    x = np.arange(size, dtype=np.int64) % 7
    kids.check_in_range(x, 0, 7)
    kids.check_in_range(x.reshape(1, -1), -3, 7)
    for bad, pos in ((7, size - 1), (-1, 0), (100, size // 2)):
        y = x.copy()
        y[pos] = bad
        if pos + 1 < size:
            y[pos + 1:] = 9           # later bad ids: the first one is named
        with pytest.raises(BadInput, match=rf"indices\[{pos}\] = {bad} is out of range \[0, 7\)"):
            kids.check_in_range(y, 0, 7)


@pytest.mark.parametrize("n,width", [(10, 1), (256, 16)])   # NumPy path, compiled path
def test_few_segment_ids_are_checked_once_numba_is_loaded(n, width):
    seg.unsorted_sum(np.ones((1 << 13, 1), np.float32), np.zeros(1 << 13, np.int32), 1)  # loads it
    from segflow.kernels import _common
    assert _common.numba_loaded() or not _common.HAVE_NUMBA
    rng = np.random.default_rng(n)
    data = rng.standard_normal((n, width)).astype(np.float32)
    for dt in (np.int32, np.int64):
        ids = rng.integers(-1, 5, n).astype(dt)
        want = np.zeros((5, width), np.float64)
        np.add.at(want, ids[ids >= 0], data[ids >= 0].astype(np.float64))
        np.testing.assert_allclose(seg.unsorted_sum(data, ids, 5), want.astype(np.float32), rtol=1e-6)
        ids[n // 2] = 5
        with pytest.raises(BadInput, match=rf"segment_ids\[{n // 2}\] = 5 is out of range \[0, 5\)"):
            seg.unsorted_sum(data, ids, 5)
        ids = np.sort(np.abs(ids) % 5)
        np.testing.assert_allclose(seg.sorted_segment_reduce("sum", data, ids),
                                   np.add.reduceat(data.astype(np.float64), np.searchsorted(ids, np.arange(ids[-1] + 1)))
                                   * (np.bincount(ids)[:, None] > 0), rtol=1e-6)
        ids[3], ids[4] = 4, 1
        with pytest.raises(BadInput, match=r"segment_ids\[4\] = 1 follows 4"):
            seg.sorted_segment_reduce("sum", data, ids)

"""Eager ops read NumPy inputs in place (no copy), with the semantics of a copy: a later in-place
change of the caller's array changes no result already returned, no gradient a tape computes
later and no variable."""
import numpy as np
import pytest

import segflow as sf

_SEEN = {}


def _spy_kernel(x):
    _SEEN["input"] = x
    return x * 2


sf.register_op("TestBorrowSpy", inputs=("x",), kernel=_spy_kernel,
               infer=lambda op, x: [sf.TensorSpec(x.shape, x.dtype)])


def test_the_kernel_reads_the_callers_array_without_a_copy_and_cannot_write_it():
    a = np.arange(6.0).reshape(2, 3)
    out = sf.apply_op("TestBorrowSpy", a)
    seen = _SEEN["input"]
    assert np.shares_memory(seen, a)            # no copy was made
    assert not seen.flags.writeable             # a kernel could never write into the caller's array
    assert a.flags.writeable                    # the caller's own array is untouched
    np.testing.assert_array_equal(out.numpy(), a * 2)


def test_copies_are_still_made_where_needed():
    fortran = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    sf.apply_op("TestBorrowSpy", fortran)
    assert not np.shares_memory(_SEEN["input"], fortran)     # not C-contiguous: converted as before
    swapped = np.arange(3.0).astype(">f8")
    sf.apply_op("TestBorrowSpy", swapped)
    assert _SEEN["input"].dtype.isnative


@pytest.mark.parametrize("op", [
    lambda a: sf.identity(a),
    lambda a: sf.reshape(a, [-1]),
    lambda a: sf.transpose(a),
    lambda a: sf.squeeze(sf.expand_dims(a, 0), [0]),
    lambda a: sf.strided_slice(a, [0, 0], [2, 2]),
    lambda a: sf.gather(a, [1, 0]),
    lambda a: sf.math.unsorted_segment_sum(a, [0, 0], 1),
    lambda a: sf.stop_gradient(a),
])
def test_results_never_alias_the_callers_array(op):
    a = np.arange(6.0).reshape(2, 3)
    got = op(a)
    before = got.numpy().copy()
    a[...] = -1.0
    np.testing.assert_array_equal(got.numpy(), before)
    assert got.numpy().flags.writeable


def test_a_tape_keeps_its_own_copy():
    w = np.array([3.0, 4.0])
    x = sf.constant([1.0, 2.0])
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = sf.reduce_sum(x * w)
    w[:] = 100.0                     # changed after the forward pass
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [3.0, 4.0])


def test_an_op_no_tape_records_reads_in_place_under_a_tape():
    # Only an op with a watched input is recorded, and a borrowed array is never watched: an op of
    # NumPy inputs alone under a tape keeps no copy (and its result still does not alias).
    a = np.arange(6.0).reshape(2, 3)
    x = sf.constant([1.0, 2.0], sf.float64)
    with sf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        out = sf.apply_op("TestBorrowSpy", a)
        assert np.shares_memory(_SEEN["input"], a)
        alias = sf.identity(a)
        y = sf.reduce_sum(x * out[0, :2])           # the unrecorded result feeds a recorded op
    a[...] = -1.0
    np.testing.assert_array_equal(alias.numpy(), np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [0.0, 2.0])
    assert tape.gradient(out, x) is None


def test_variables_never_alias_the_callers_array():
    init = np.array([1.0, 2.0])
    v = sf.Variable(init)
    init[0] = 50.0
    assert v.numpy().tolist() == [1.0, 2.0]
    new = np.array([5.0, 6.0])
    v.assign(new)
    new[0] = -5.0
    assert v.numpy().tolist() == [5.0, 6.0]
    rows = np.array([9.0])
    v.scatter_update(sf.IndexedSlices(sf.constant(rows), sf.constant([1])))
    rows[0] = 0.0
    assert v.numpy().tolist() == [5.0, 9.0]


def test_constant_keeps_tf_copy_semantics():
    a = np.array([1.0, 2.0])
    c = sf.constant(a)
    a[0] = 7.0
    assert c.numpy().tolist() == [1.0, 2.0]

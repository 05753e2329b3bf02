"""sf.data.Dataset eagerly: every transformation's values and order against NumPy, specs, dtypes,
cardinality, and shuffle's buffer semantics."""
import collections

import numpy as np
import pytest

import segflow as sf

D = sf.data.Dataset


def values(ds):
    return list(ds.as_numpy_iterator())


def spec(shape, dtype):
    return sf.TensorSpec(shape, dtype)


# -- sources and dtypes
def test_range_forms_and_dtype():
    assert values(D.range(5)) == list(range(5))
    assert values(D.range(2, 9)) == list(range(2, 9))
    assert values(D.range(1, 10, 3)) == [1, 4, 7]
    assert values(D.range(5, 0, -2)) == [5, 3, 1]
    assert values(D.range(0)) == []
    assert D.range(3).element_spec == spec([], sf.int64)
    assert D.range(3, output_type=sf.int32).element_spec == spec([], sf.int32)
    x = next(iter(D.range(3)))
    assert isinstance(x, sf.Tensor) and x.dtype == sf.int64 and x.numpy() == 0
    with pytest.raises(sf.errors.InvalidArgumentError, match="step"):
        D.range(0, 5, 0)
    with pytest.raises(ValueError, match="1 to 3"):
        D.range()


def test_from_tensor_slices_python_lists_follow_tf_dtypes():
    assert D.from_tensor_slices([1, 2, 3]).element_spec == spec([], sf.int32)
    assert D.from_tensor_slices([1.0, 2.0]).element_spec == spec([], sf.float32)
    assert D.from_tensor_slices([True, False]).element_spec == spec([], sf.bool)
    assert D.from_tensor_slices([2 ** 40, 1]).element_spec == spec([], sf.int64)
    assert D.from_tensor_slices([[1, 2], [3, 4]]).element_spec == spec([2], sf.int32)
    assert D.from_tensor_slices(np.arange(3)).element_spec == spec([], sf.int64)
    assert D.from_tensor_slices(np.arange(3.0)).element_spec == spec([], sf.float64)
    for x in D.from_tensor_slices(np.arange(6.0, dtype=np.float32).reshape(3, 2)):
        assert x.dtype == sf.float32 and x.shape == (2,)


def test_from_tensor_slices_nested_structures():
    x = np.arange(12.0).reshape(4, 3)
    y = np.array([3, 1, 4, 1])
    ds = D.from_tensor_slices({"x": x, "pair": (y, [[1, 2]] * 4)})
    assert ds.element_spec == {"x": spec([3], sf.float64), "pair": (spec([], sf.int64), spec([2], sf.int32))}
    got = values(ds)
    assert len(got) == 4
    for i, e in enumerate(got):
        np.testing.assert_array_equal(e["x"], x[i])
        assert e["pair"][0] == y[i] and list(e["pair"][1]) == [1, 2]
    Point = collections.namedtuple("Point", "a b")
    e = next(iter(D.from_tensor_slices(Point(np.arange(3), np.arange(3.0)))))
    assert isinstance(e, Point) and e.b.dtype == sf.float64
    t = sf.constant([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(values(D.from_tensor_slices(t))[1], [3.0, 4.0])


def test_from_tensor_slices_copies_and_checks():
    x = np.arange(4)
    ds = D.from_tensor_slices(x)
    x[:] = 9
    assert values(ds) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="not compatible"):
        D.from_tensor_slices(([1, 2], [1, 2, 3]))
    with pytest.raises(ValueError, match="rank >= 1"):
        D.from_tensor_slices(1)
    assert values(D.from_tensor_slices(np.zeros((0, 3)))) == []


def test_from_tensors_is_one_element():
    ds = D.from_tensors(([1, 2, 3], 4.0))
    assert ds.element_spec == (spec([3], sf.int32), spec([], sf.float32))
    assert len(ds) == 1
    (a, b), = values(ds)
    assert list(a) == [1, 2, 3] and b == 4.0


# -- batching
@pytest.mark.parametrize("n,b", [(10, 3), (9, 3), (2, 5), (7, 1)])
def test_batch_values_and_remainder(n, b):
    x = np.arange(n * 2).reshape(n, 2)
    got = values(D.from_tensor_slices(x).batch(b))
    want = [x[i:i + b] for i in range(0, n, b)]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    dropped = values(D.from_tensor_slices(x).batch(b, drop_remainder=True))
    assert len(dropped) == n // b and all(g.shape == (b, 2) for g in dropped)


def test_batch_specs_and_cardinality():
    assert D.range(10).batch(3).element_spec == spec([None], sf.int64)
    assert D.range(10).batch(3, drop_remainder=True).element_spec == spec([3], sf.int64)
    assert len(D.range(10).batch(3)) == 4 and len(D.range(10).batch(3, drop_remainder=True)) == 3
    with pytest.raises(sf.errors.InvalidArgumentError, match="batch_size"):
        D.range(3).batch(0)


def test_batch_after_map_stacks_and_refuses_ragged():
    got = values(D.range(7).map(lambda x: (x * 2, sf.cast(x, sf.float32))).batch(3))
    np.testing.assert_array_equal(got[0][0], [0, 2, 4])
    assert got[2][1].dtype == np.float32 and list(got[2][1]) == [6.0]
    ragged = D.range(1, 4).map(lambda x: sf.range(x)).batch(3)
    assert ragged.element_spec == spec([None, None], sf.int64)
    with pytest.raises(sf.errors.InvalidArgumentError, match="different shapes"):
        values(ragged)


def test_batch_of_slices_shares_no_memory_with_the_source():
    x = np.arange(6)
    b = next(iter(D.from_tensor_slices(x).batch(6)))
    assert isinstance(b.numpy(), np.ndarray) and b.numpy().base is None


def test_padded_batch():
    ds = D.range(1, 5).map(lambda x: sf.fill([x], x))
    got = values(ds.padded_batch(2))
    np.testing.assert_array_equal(got[0], [[1, 0], [2, 2]])
    np.testing.assert_array_equal(got[1], [[3, 3, 3, 0], [4, 4, 4, 4]])
    got = values(ds.padded_batch(3, padded_shapes=[5], padding_values=np.int64(-1), drop_remainder=True))
    assert len(got) == 1
    np.testing.assert_array_equal(got[0], [[1, -1, -1, -1, -1], [2, 2, -1, -1, -1], [3, 3, 3, -1, -1]])
    assert ds.padded_batch(3, padded_shapes=[5], drop_remainder=True).element_spec == spec([3, 5], sf.int64)


def test_unbatch_inverts_batch():
    x = np.arange(10)
    assert values(D.from_tensor_slices(x).batch(3).unbatch()) == list(x)
    ds = D.from_tensor_slices(np.arange(12).reshape(2, 3, 2)).unbatch()
    assert ds.element_spec == spec([2], sf.int64) and len(ds) == 6
    assert D.range(7).batch(3).unbatch().cardinality().numpy() == sf.data.UNKNOWN_CARDINALITY


# -- shuffle
def test_shuffle_is_a_permutation_reproducible_by_seed():
    a = values(D.range(100).shuffle(100, seed=7))
    b = values(D.range(100).shuffle(100, seed=7))
    c = values(D.range(100).shuffle(100, seed=8))
    assert sorted(a) == list(range(100)) and a == b and a != c and a != list(range(100))


def test_shuffle_reshuffles_each_iteration_unless_told_not_to():
    ds = D.range(50).shuffle(50, seed=1)
    first, second = values(ds), values(ds)
    assert sorted(first) == sorted(second) == list(range(50)) and first != second
    epochs = values(D.range(50).shuffle(50, seed=1).repeat(2))
    assert epochs[:50] == first and epochs[50:] == second      # the same sequence of epochs, reproducibly
    fixed = D.range(50).shuffle(50, seed=1, reshuffle_each_iteration=False)
    assert values(fixed) == values(fixed)
    twice = values(D.range(50).shuffle(50, seed=2, reshuffle_each_iteration=False).repeat(2))
    assert twice[:50] == twice[50:]


def test_shuffle_buffer_semantics():
    # With a buffer of b, output i is one of the first i + b inputs; the first output is uniform on
    # the first b inputs (checked over many seeds).
    n, b = 200, 10
    firsts = []
    for seed in range(300):
        out = values(D.range(n).shuffle(b, seed=seed))
        assert sorted(out) == list(range(n))
        assert all(v < i + b for i, v in enumerate(out))
        firsts.append(out[0])
    counts = np.bincount(firsts, minlength=n)
    assert counts[b:].sum() == 0 and counts[:b].min() > 10        # about 30 each
    assert values(D.range(5).shuffle(1, seed=3)) == [0, 1, 2, 3, 4]    # a buffer of one keeps the order


def test_shuffle_of_pairs_keeps_them_together_and_batches():
    x = np.arange(40)
    got = values(D.from_tensor_slices((x, x * 10.0)).shuffle(16, seed=0).batch(8))
    assert len(got) == 5
    xs = np.concatenate([g[0] for g in got])
    assert sorted(xs) == list(x)
    for a, b in got:
        np.testing.assert_array_equal(b, a * 10.0)


def test_shuffle_uses_the_global_seed():
    sf.random.set_seed(11)
    a = values(D.range(30).shuffle(30))
    sf.random.set_seed(11)
    b = values(D.range(30).shuffle(30))
    sf.random.set_seed(None)
    assert a == b


# -- repeat, take, skip, concatenate, zip, enumerate
def test_repeat_take_skip_counts():
    assert values(D.range(3).repeat(3)) == [0, 1, 2] * 3
    assert values(D.range(3).repeat(0)) == []
    assert values(D.range(3).repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert values(D.range(10).take(4)) == [0, 1, 2, 3]
    assert values(D.range(10).take(-1)) == list(range(10))
    assert values(D.range(10).skip(7)) == [7, 8, 9]
    assert values(D.range(10).skip(-1)) == []
    assert values(D.range(10).skip(30)) == []
    assert values(D.range(5).map(lambda x: x + 1).skip(2).take(2)) == [3, 4]
    card = lambda ds: int(ds.cardinality().numpy())    # noqa: E731
    assert card(D.range(3).repeat()) == sf.data.INFINITE_CARDINALITY
    assert card(D.range(3).repeat(4)) == 12 and card(D.range(3).repeat().take(5)) == 5
    assert card(D.range(10).skip(4)) == 6 and card(D.range(10).take(30)) == 10
    assert card(D.range(10).filter(lambda x: x > 2)) == sf.data.UNKNOWN_CARDINALITY


def test_len_like_tf():
    assert len(D.range(10).batch(4)) == 3
    with pytest.raises(TypeError, match="infinite"):
        len(D.range(3).repeat())
    with pytest.raises(TypeError, match="unknown"):
        len(D.range(3).filter(lambda x: x > 1))


def test_concatenate_zip_enumerate():
    assert values(D.range(3).concatenate(D.range(10, 12))) == [0, 1, 2, 10, 11]
    with pytest.raises(TypeError, match="Incompatible"):
        D.range(3).concatenate(D.from_tensor_slices([1.0]))
    z = D.zip((D.range(3), D.from_tensor_slices(np.arange(5.0))))
    assert z.element_spec == (spec([], sf.int64), spec([], sf.float64)) and len(z) == 3
    assert values(z) == [(0, 0.0), (1, 1.0), (2, 2.0)]
    assert values(D.zip(D.range(2), D.range(5, 9))) == [(0, 5), (1, 6)]
    zd = values(D.zip({"a": D.range(2), "b": D.range(2).map(lambda x: x * 3)}).batch(2))
    np.testing.assert_array_equal(zd[0]["b"], [0, 3])
    assert values(D.range(3).enumerate(start=5)) == [(5, 0), (6, 1), (7, 2)]
    assert values(D.zip((D.range(6).batch(4).unbatch(), D.range(100))).skip(2).take(2)) == [(2, 2), (3, 3)]


# -- user functions
def test_map_unpacks_tuples_and_passes_dicts():
    ds = D.from_tensor_slices((np.arange(4), np.arange(4.0)))
    assert values(ds.map(lambda a, b: sf.cast(a, sf.float64) + b)) == [0.0, 2.0, 4.0, 6.0]
    dd = D.from_tensor_slices({"a": np.arange(3), "b": np.arange(3)})
    assert values(dd.map(lambda d: d["a"] * d["b"])) == [0, 1, 4]
    nested = D.range(3).map(lambda x: (x, {"y": x * 2})).map(lambda a, d: a + d["y"])
    assert values(nested) == [0, 3, 6]
    listed = D.range(2).map(lambda x: [x, x + 1])
    assert listed.element_spec == (spec([], sf.int64), spec([], sf.int64))


def test_map_uses_segflow_ops_and_gets_eager_tensors():
    seen = []

    def f(x):
        seen.append(type(x))
        return sf.reduce_sum(sf.square(x)), sf.shape(x)

    ds = D.from_tensor_slices(np.arange(6.0).reshape(3, 2)).map(f)
    assert ds.element_spec == (spec([], sf.float64), spec([1], sf.int32))
    got = values(ds)
    assert [g[0] for g in got] == [1.0, 13.0, 41.0]
    assert any(issubclass(t, sf.Tensor) for t in seen)


def test_map_fn_that_needs_values_runs_on_the_first_element():
    def f(x):
        return x * 2 if int(x.numpy()) % 2 else x     # Python control flow on a value: not traceable
    ds = D.range(4).map(f)
    assert ds.element_spec == spec([], sf.int64)
    assert values(ds) == [0, 2, 2, 6]


def test_map_output_dtype_is_checked_against_the_trace():
    ds = D.range(3).map(lambda x: x if sf.executing_eagerly() else sf.cast(x, sf.float32))
    assert ds.element_spec == spec([], sf.float32)
    with pytest.raises(sf.errors.InvalidArgumentError, match="map: component 0 has dtype int64"):
        values(ds)


def test_filter_and_flat_map():
    assert values(D.range(10).filter(lambda x: sf.equal(x % 3, 0))) == [0, 3, 6, 9]
    with pytest.raises(ValueError, match="bool"):
        D.range(3).filter(lambda x: x)
    assert values(D.range(4).flat_map(lambda x: D.range(x))) == [0, 0, 1, 0, 1, 2]
    fm = D.from_tensor_slices(np.arange(6).reshape(3, 2)).flat_map(D.from_tensor_slices)
    assert values(fm) == list(range(6))


def test_cache_fills_once():
    calls = []

    def f(x):
        calls.append(1)
        return x + 1
    ds = D.range(4).map(f).cache()
    calls.clear()
    assert values(ds) == [1, 2, 3, 4] and len(calls) == 4
    assert values(ds) == [1, 2, 3, 4] and len(calls) == 4


def test_prefetch_options_autotune_accepted():
    assert sf.data.AUTOTUNE == sf.data.experimental.AUTOTUNE == -1
    opts = sf.data.Options()
    opts.experimental_deterministic = True
    ds = D.range(4).map(lambda x: x, num_parallel_calls=sf.data.AUTOTUNE).prefetch(sf.data.AUTOTUNE)
    assert values(ds.with_options(opts)) == [0, 1, 2, 3]


def test_iterator_next_and_end():
    it = iter(D.range(2))
    assert next(it).numpy() == 0 and it.get_next().numpy() == 1
    with pytest.raises(sf.errors.OutOfRangeError):
        it.get_next()
    with pytest.raises(StopIteration):
        next(it)


def test_strings():
    ds = D.from_tensor_slices(["a", "bc"])
    assert ds.element_spec == spec([], sf.string)
    assert values(ds) == [b"a", b"bc"]


def test_from_generator():
    def gen():
        yield 1, [1.0, 2.0]
        yield 2, [3.0, 4.0, 5.0]
    ds = D.from_generator(gen, output_types=(sf.int64, sf.float32), output_shapes=((), (None,)))
    assert ds.element_spec == (spec([], sf.int64), spec([None], sf.float32))
    assert ds.cardinality().numpy() == sf.data.UNKNOWN_CARDINALITY
    for _ in range(2):                          # each pass calls the generator again
        got = values(ds)
        assert [g[0] for g in got] == [1, 2] and got[1][1].dtype == np.float32
        assert got[1][1].tolist() == [3.0, 4.0, 5.0]
    fixed = D.from_generator(gen, output_signature=(spec([], sf.int64), spec([2], sf.float32)))
    with pytest.raises(sf.errors.InvalidArgumentError, match=r"shape \(3,\) where an element of shape \(2,\)"):
        values(fixed)
    counted = D.from_generator(lambda n: iter(range(n)), output_types=sf.int32, args=(3,)).batch(2)
    assert [v.tolist() for v in values(counted)] == [[0, 1], [2]]


def test_function_errors_like_tf():
    with pytest.raises(ValueError, match="must be a callable"):
        D.range(3).map(3)
    with pytest.raises(sf.errors.InvalidArgumentError, match="returned None"):
        D.range(3).map(lambda x: None)
    with pytest.raises(TypeError, match="must return a Dataset"):
        D.range(3).flat_map(lambda x: x)


def test_sf_function_as_map_fn():
    f = sf.function(lambda x: x * 3 + 1)
    assert values(D.range(3).map(f)) == [1, 4, 7]


def test_padded_batch_of_nested_elements():
    ds = D.range(1, 4).map(lambda x: (sf.fill([x], x), x, {"m": sf.fill([x, 2], sf.cast(x, sf.float32))}))
    b = ds.padded_batch(2, padded_shapes=([4], [], {"m": [None, 3]}),
                        padding_values=(np.int64(-1), np.int64(0), {"m": 9.0}))
    assert b.element_spec == (spec([None, 4], sf.int64), spec([None], sf.int64), {"m": spec([None, None, 3],
                                                                                            sf.float32)})
    first = values(b)[0]
    np.testing.assert_array_equal(first[0], [[1, -1, -1, -1], [2, 2, -1, -1]])
    np.testing.assert_array_equal(first[1], [1, 2])
    np.testing.assert_array_equal(first[2]["m"], [[[1, 1, 9], [9, 9, 9]], [[2, 2, 9], [2, 2, 9]]])
    with pytest.raises(ValueError, match="structure"):
        ds.padded_batch(2, padded_shapes=([4], []))


@pytest.mark.parametrize("n,k,i", [(10, 3, 0), (10, 3, 2), (7, 7, 6), (2, 5, 3)])
def test_shard(n, k, i):
    want = list(range(n))[i::k]
    ds = D.range(n).shard(k, i)
    assert values(ds) == want and len(ds) == len(want)
    assert values(D.range(n).map(lambda x: x).shard(k, i)) == want
    assert values(D.range(n).batch(2).unbatch().shard(k, i)) == want


def test_shard_checks_its_arguments():
    with pytest.raises(sf.errors.InvalidArgumentError, match="num_shards"):
        D.range(3).shard(0, 0)
    with pytest.raises(sf.errors.InvalidArgumentError, match="index"):
        D.range(3).shard(2, 2)

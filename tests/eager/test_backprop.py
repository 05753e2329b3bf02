"""GradientTape and the eager gradient helpers: the contract, against hand-derived numbers."""
import collections

import numpy as np
import pytest

import segflow as sf
from segflow.eager import backprop
from segflow.client.session import Session
from segflow.framework import ops

Pair = collections.namedtuple("Pair", "a b")


def _np(t):
    return None if t is None else np.asarray(t)


def test_non_persistent_tape_gives_one_gradient():
    x = sf.constant(3.0)
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 6.0)
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.gradient(y, x)


def test_non_persistent_tape_second_call_inside_block_raises():
    x = sf.constant(3.0)
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        tape.gradient(y, x)
        with pytest.raises(RuntimeError, match="non-persistent"):
            tape.gradient(y, x)


def test_persistent_tape_gives_many_gradients():
    x = sf.constant(3.0)
    with sf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * x
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 6.0)     # 2x
    np.testing.assert_allclose(tape.gradient(z, x).numpy(), 27.0)    # 3x^2
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 6.0)


def test_unwatched_constant_gets_none():
    x = sf.constant(3.0)
    with sf.GradientTape() as tape:
        y = x * x
    assert tape.gradient(y, x) is None


def test_watch_nest_of_tensors():
    a, b, c = sf.constant(1.0), sf.constant(2.0), sf.constant(5.0)
    with sf.GradientTape() as tape:
        tape.watch({"a": a, "rest": [b, (c,)]})
        y = a * b * c
    ga, gb, gc = tape.gradient(y, [a, b, c])
    assert (float(ga), float(gb), float(gc)) == (10.0, 5.0, 2.0)


def test_variables_are_watched_when_read():
    v = sf.Variable(3.0)
    with sf.GradientTape() as tape:
        y = v * v
    np.testing.assert_allclose(tape.gradient(y, v).numpy(), 6.0)
    assert tape.watched_variables() == (v,)


def test_watch_accessed_variables_false():
    v, w = sf.Variable(3.0), sf.Variable(4.0)
    with sf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(w)
        y = v * w
    gv, gw = tape.gradient(y, [v, w])
    assert gv is None
    np.testing.assert_allclose(gw.numpy(), 3.0)


def test_watch_rejects_non_tensors():
    with sf.GradientTape() as tape:
        with pytest.raises(ValueError, match="str"):
            tape.watch("x")


def test_stop_recording():
    x = sf.constant(2.0)
    with sf.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            z = x * x          # not recorded: a constant to the tape
        y = x * 3.0 + z * x    # dy/dx = 3 + z = 7
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), 7.0)


def test_reset_forgets_records():
    x = sf.constant(2.0)
    with sf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        tape.reset()
        tape.watch(x)
        z = x * 5.0
    assert tape.gradient(y, x) is None
    np.testing.assert_allclose(tape.gradient(z, x).numpy(), 5.0)


def test_nested_targets_and_sources():
    a, b = sf.constant(2.0), sf.constant(3.0)
    with sf.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y = a * b       # d/da = b = 3, d/db = a = 2
        z = a + b       # 1, 1
    g = tape.gradient({"y": y, "z": z}, {"a": a, "b": b})
    assert set(g) == {"a", "b"}
    assert (float(g["a"]), float(g["b"])) == (4.0, 3.0)
    g = tape.gradient((y, z), Pair(a, b))
    assert isinstance(g, Pair) and (float(g.a), float(g.b)) == (4.0, 3.0)
    g = tape.gradient([y], (a, [b]))
    assert isinstance(g, tuple) and float(g[0]) == 3.0 and float(g[1][0]) == 2.0


def test_output_gradients_weight_each_target():
    a, b = sf.constant(2.0), sf.constant(3.0)
    with sf.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y = a * b
        z = a + b
    # a: 2*b + 10*1 = 16; b: 2*a + 10 = 14
    g = tape.gradient([y, z], [a, b], output_gradients=[sf.constant(2.0), sf.constant(10.0)])
    assert [float(t) for t in g] == [16.0, 14.0]
    g = tape.gradient({"y": y, "z": z}, Pair(a, b),
                      output_gradients={"y": sf.constant(2.0), "z": sf.constant(10.0)})
    assert (float(g.a), float(g.b)) == (16.0, 14.0)
    v = sf.constant([1.0, 2.0])
    with sf.GradientTape(persistent=True) as tape:
        tape.watch(v)
        w = v * v
    with pytest.raises(ValueError, match="output_gradients has 2 entries for 1 targets"):
        tape.gradient(w, v, output_gradients=[3.0, 5.0])   # one per target, not one per element
    np.testing.assert_allclose(tape.gradient(w, v, output_gradients=np.array([3.0, 5.0], np.float32)).numpy(), [6.0, 20.0])
    np.testing.assert_allclose(tape.gradient(w, v, output_gradients=[sf.constant([3.0, 5.0])]).numpy(), [6.0, 20.0])


def test_unconnected_gradients():
    a, c = sf.constant(2.0), sf.constant([5.0, 6.0])
    with sf.GradientTape(persistent=True) as tape:
        tape.watch([a, c])
        y = a * a
    ga, gc = tape.gradient(y, [a, c])
    assert float(ga) == 4.0 and gc is None
    ga, gc = tape.gradient(y, [a, c], unconnected_gradients="zero")
    np.testing.assert_array_equal(gc.numpy(), [0.0, 0.0])
    assert gc.dtype == sf.float32
    _, gc = tape.gradient(y, [a, c], unconnected_gradients=sf.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(gc.numpy(), [0.0, 0.0])
    with pytest.raises(ValueError, match="unconnected_gradients.*'bogus'"):
        tape.gradient(y, a, unconnected_gradients="bogus")


def test_integer_sources_get_none():
    i = sf.constant(3)
    with sf.GradientTape() as tape:
        tape.watch(i)
        y = sf.cast(i, sf.float32) * 2.0
    assert tape.gradient(y, i) is None


def test_nested_tapes_give_higher_derivatives_of_cube():
    # f = x^3 at x = 2: f' = 3x^2 = 12, f'' = 6x = 12, f''' = 6.
    x = sf.constant(2.0)
    with sf.GradientTape() as t3:
        t3.watch(x)
        with sf.GradientTape() as t2:
            t2.watch(x)
            with sf.GradientTape() as t1:
                t1.watch(x)
                y = x * x * x
            d1 = t1.gradient(y, x)
        d2 = t2.gradient(d1, x)
    d3 = t3.gradient(d2, x)
    assert (float(d1), float(d2), float(d3)) == (12.0, 12.0, 6.0)


def test_nested_tapes_through_pow():
    x = sf.constant(3.0)
    with sf.GradientTape() as outer:
        outer.watch(x)
        with sf.GradientTape() as inner:
            inner.watch(x)
            y = x ** 3
        d1 = inner.gradient(y, x)
    d2 = outer.gradient(d1, x)
    assert (float(d1), float(d2)) == (27.0, 18.0)


def test_jacobian_values_and_shape():
    x = sf.constant([1.0, 2.0, 3.0])
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = x[:2] * x[1:]          # [x0 x1, x1 x2]
    j = tape.jacobian(y, x)
    assert j.shape == (2, 3)
    np.testing.assert_array_equal(j.numpy(), [[2.0, 1.0, 0.0], [0.0, 3.0, 2.0]])


def test_jacobian_of_matmul_has_target_then_source_shape():
    w = sf.constant(np.arange(6.0).reshape(2, 3))
    v = np.array([[1.0], [2.0], [3.0]])
    with sf.GradientTape() as tape:
        tape.watch(w)
        y = sf.matmul(w, sf.constant(v))       # [2, 1]
    j = tape.jacobian(y, w).numpy()
    assert j.shape == (2, 1, 2, 3)
    # d y[i, 0] / d w[k, l] = [i == k] * v[l]
    expected = np.zeros((2, 1, 2, 3))
    for i in range(2):
        expected[i, 0, i, :] = v[:, 0]
    np.testing.assert_array_equal(j, expected)


def test_jacobian_of_unconnected_source_is_none_or_zeros():
    x, c = sf.constant([1.0, 2.0]), sf.constant([7.0, 8.0, 9.0])
    with sf.GradientTape(persistent=True) as tape:
        tape.watch([x, c])
        y = x * 2.0
    jx, jc = tape.jacobian(y, [x, c])
    np.testing.assert_array_equal(jx.numpy(), [[2.0, 0.0], [0.0, 2.0]])
    assert jc is None           # TF's default, unconnected_gradients="none"
    j = tape.jacobian(y, {"x": x, "c": c}, unconnected_gradients="zero")
    np.testing.assert_array_equal(j["c"].numpy(), np.zeros((2, 3)))
    np.testing.assert_array_equal(j["x"].numpy(), [[2.0, 0.0], [0.0, 2.0]])
    with pytest.raises(ValueError, match="unconnected_gradients.*'nope'"):
        tape.jacobian(y, x, unconnected_gradients="nope")


def test_jacobian_non_persistent_once():
    x = sf.constant([1.0, 2.0])
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    np.testing.assert_array_equal(tape.jacobian(y, x).numpy(), [[2.0, 0.0], [0.0, 4.0]])
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.jacobian(y, x)


def test_gradients_function_as_in_the_seed_file():
    var = sf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    ids = [1, 0, 1]

    def fn(data):
        return sf.math.unsorted_segment_sum(data * data, ids, 2)

    g = backprop.gradients_function(fn, [0])(var)[0]
    np.testing.assert_array_equal(g.numpy(), 2 * var.numpy())


def test_gradients_function_selected_params_and_python_args():
    g = backprop.gradients_function(lambda a, b: a * b * b, [1])(3.0, 4.0)
    assert len(g) == 1 and float(g[0]) == 24.0      # 2ab
    g = backprop.gradients_function(lambda a, b: a * b)(3.0, 4.0)
    assert [float(t) for t in g] == [4.0, 3.0]


def test_gradients_function_of_variable():
    v = sf.Variable([1.0, 2.0])
    g = backprop.gradients_function(lambda a: sf.reduce_sum(a * a), [0])(v)[0]
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])


def test_value_and_gradients_function():
    value, grads = backprop.value_and_gradients_function(lambda a, b: a * a * b)(3.0, 4.0)
    assert float(value) == 36.0
    assert [float(t) for t in grads] == [24.0, 9.0]


def test_split_with_one_output_used_fills_zeros():
    x = sf.constant([[1.0, 2.0], [3.0, 4.0]])
    with sf.GradientTape() as tape:
        tape.watch(x)
        top, _ = sf.split(x, 2, axis=0)
        y = top * 3.0
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[3.0, 3.0], [0.0, 0.0]])


def test_unstack_with_one_output_used_fills_zeros():
    x = sf.constant([[1.0, 2.0], [3.0, 4.0]])
    with sf.GradientTape() as tape:
        tape.watch(x)
        _, second = sf.unstack(x)
        y = second * second
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [[0.0, 0.0], [6.0, 8.0]])


def test_unstack_of_vector_gives_scalars_and_gradient():
    # The pieces of a vector are scalars (shape ()), eagerly as statically.
    x = sf.constant([2.0, 5.0])
    with sf.GradientTape() as tape:
        tape.watch(x)
        a, b = sf.unstack(x)
        y = a * b
    assert a.shape == () and b.shape == ()
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [5.0, 2.0])


def test_gather_gives_indexed_slices():
    params = sf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with sf.GradientTape() as tape:
        tape.watch(params)
        y = sf.reduce_sum(sf.gather(params, [2, 0]) * 3.0)
    g = tape.gradient(y, params)
    assert isinstance(g, ops.IndexedSlices)
    np.testing.assert_array_equal(g.indices.numpy(), [2, 0])
    np.testing.assert_array_equal(g.values.numpy(), np.full((2, 2), 3.0))
    np.testing.assert_array_equal(g.dense_shape.numpy(), [3, 2])


def _dense(slices, n_rows):
    out = np.zeros((n_rows,) + slices.values.shape[1:])
    np.add.at(out, slices.indices.numpy(), slices.values.numpy())
    return out


def test_sparse_plus_sparse_stays_indexed_slices():
    params = sf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with sf.GradientTape() as tape:
        tape.watch(params)
        y = sf.reduce_sum(sf.gather(params, [2, 0])) + sf.reduce_sum(sf.gather(params, [2]) * 2.0)
    g = tape.gradient(y, params)
    assert isinstance(g, ops.IndexedSlices)
    # Concatenated, not summed: three rows for the three gathered rows.
    assert sorted(g.indices.numpy().tolist()) == [0, 2, 2]
    np.testing.assert_array_equal(_dense(g, 3), [[1.0, 1.0], [0.0, 0.0], [3.0, 3.0]])


def test_sparse_plus_dense_densifies():
    params = sf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    with sf.GradientTape() as tape:
        tape.watch(params)
        y = sf.reduce_sum(sf.gather(params, [2, 2])) + sf.reduce_sum(params * params)
    g = tape.gradient(y, params)
    assert not isinstance(g, ops.IndexedSlices)
    np.testing.assert_array_equal(g.numpy(), 2 * params.numpy() + [[0, 0], [0, 0], [2, 2]])


def test_scalar_used_three_times_aggregates():
    # Three gradients of rank 0 reach x: AddN of scalars.
    x = sf.constant(2.0)
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = x * 1.0 + x * 2.0 + x * 4.0
    assert float(tape.gradient(y, x)) == 7.0


def test_gradient_tape_in_graph_mode_builds_the_backward_graph():
    # y = sum(x^2 v): dy/dx = 2 x v, dy/dv = x^2; the inner tape's d(x^3)/dx = 3 x^2 is itself
    # recorded by the outer tape, whose gradient of it is 6 x.
    xv = np.array([1.0, 2.0, 3.0], np.float32)
    vv = np.array([0.5, -1.0, 2.0], np.float32)
    with ops.Graph().as_default():
        x = sf.constant(xv)
        v = sf.Variable(vv)
        with sf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = sf.reduce_sum(x * x * v)
            with sf.GradientTape() as inner:
                inner.watch(x)
                z = x * x * x
            dz = inner.gradient(z, x)
            rows = sf.reduce_sum(sf.gather(v, [0, 2, 2]))
        gx, gv = tape.gradient(y, [x, v])
        second = tape.gradient(dz, x)
        sparse = tape.gradient(rows, v)
        jac = tape.jacobian(x * 1.0, x)       # built outside the block: not recorded, so None
        assert isinstance(gx, ops.Tensor) and not isinstance(gx, ops.EagerTensor)
        assert isinstance(sparse, ops.IndexedSlices)
        assert jac is None
        assert list(tape.watched_variables()) == [v]
        with Session() as sess:
            sess.run(v.initializer)
            got = sess.run([gx, gv, dz, second, sf.convert_to_tensor(sparse)])
    np.testing.assert_allclose(got[0], 2 * xv * vv)
    np.testing.assert_allclose(got[1], xv * xv)
    np.testing.assert_allclose(got[2], 3 * xv * xv)
    np.testing.assert_allclose(got[3], 6 * xv)
    np.testing.assert_allclose(got[4], [1.0, 0.0, 2.0])


def test_gradient_tape_in_graph_mode_jacobian():
    xv = np.array([1.0, -2.0, 3.0])
    with ops.Graph().as_default():
        x = sf.constant(xv)
        with sf.GradientTape() as tape:
            tape.watch(x)
            y = x * x
        jac = tape.jacobian(y, x)
        with Session() as sess:
            np.testing.assert_allclose(sess.run(jac), np.diag(2 * xv))


def test_unwatched_constant_next_to_a_watched_variable_gets_none():
    x = sf.constant(2.0)
    v = sf.Variable(3.0)
    with sf.GradientTape() as tape:
        y = v * x            # the Mul is recorded (v is watched), but x is not a source
    g = tape.gradient(y, Pair(v, x))
    assert float(g.a) == 2.0 and g.b is None


def test_persistent_tape_can_be_reentered():
    x = sf.constant(2.0)
    tape = sf.GradientTape(persistent=True)
    with tape:
        tape.watch(x)
        y = x * x
    z0 = y * x               # not recorded: between the blocks
    with tape:
        z = y * x
    assert float(tape.gradient(z, x)) == 12.0      # 3x^2 through both blocks
    assert tape.gradient(z0, x) is None
    with tape:
        with pytest.raises(ValueError, match="still recording"):
            tape.__enter__()


def test_watched_variables_listed_once():
    v = sf.Variable(1.0)
    frozen = sf.Variable(1.0, trainable=False)
    with sf.GradientTape() as tape:
        tape.watch(v)
        tape.watch([v])
        y = v * 2.0 + frozen
        tape.watch(v)
    assert tape.watched_variables() == (v,)
    assert float(tape.gradient(y, v)) == 2.0


def test_jacobian_with_respect_to_variables():
    v = sf.Variable([1.0, 2.0])
    w = sf.Variable([[1.0, 2.0, 3.0]])
    x = sf.constant(3.0)
    with sf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = v * v * x
    np.testing.assert_array_equal(tape.jacobian(y, v).numpy(), [[6.0, 0.0], [0.0, 12.0]])   # diag(2 v x)
    jw = tape.jacobian(y, w, unconnected_gradients="zero")
    assert jw.shape == (2, 1, 3) and not np.any(jw.numpy())
    assert tape.jacobian(y, w) is None


def test_implicit_grad_and_make_vjp():
    v, w = sf.Variable(3.0), sf.Variable(2.0)
    (g_v, var_v), (g_w, var_w) = backprop.implicit_grad(lambda x: v * v * x + w)(sf.constant(2.0))
    assert var_v is v and var_w is w
    assert (float(g_v), float(g_w)) == (12.0, 1.0)      # 2 v x, 1
    result, vjp = backprop.make_vjp(lambda a, b: a * b)(2.0, 5.0)
    assert float(result) == 10.0
    assert [float(g) for g in vjp()] == [5.0, 2.0]
    assert [float(g) for g in vjp(sf.constant(3.0))] == [15.0, 6.0]


def test_persistent_tape_records_its_own_gradient_inside_the_block():
    # As TF: gradient() inside a persistent tape's block is recorded, giving a second derivative.
    x = sf.constant(2.0)
    with sf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x * x
        dy = tape.gradient(y, x)
    d2y = tape.gradient(dy, x)
    assert (float(dy), float(d2y)) == (12.0, 12.0)


def test_indexed_slices_target_stands_for_its_dense_form():
    p = sf.constant([5.0, 6.0, 7.0])
    with sf.GradientTape(persistent=True) as tape:
        tape.watch(p)
        s = ops.IndexedSlices(p * sf.constant([1.0, 2.0, 3.0]), sf.constant([2, 0, 2]), sf.constant([4]))
    np.testing.assert_array_equal(tape.gradient(s, p).numpy(), [1.0, 2.0, 3.0])
    g = tape.gradient(s, p, output_gradients=sf.constant([10.0, 20.0, 30.0, 40.0]))
    np.testing.assert_array_equal(g.numpy(), [30.0, 20.0, 90.0])     # [1, 2, 3] * dy[[2, 0, 2]]


def test_val_and_grad_function_and_make_vjp():
    val, (dx, dy) = backprop.val_and_grad_function(lambda a, b: a * b)(2.0, 3.0)
    assert float(val.numpy()) == 6.0 and float(dx.numpy()) == 3.0 and float(dy.numpy()) == 2.0
    val, grads = backprop.val_and_grad_function(lambda a, b: a * b, params=[1])(2.0, 3.0)
    assert len(grads) == 1 and float(grads[0].numpy()) == 2.0
    result, vjp = backprop.make_vjp(lambda x: x * x, persistent=False)(sf.constant(3.0))
    assert float(result.numpy()) == 9.0 and float(vjp(2.0)[0].numpy()) == 12.0    # 2 * dy * x
    with pytest.raises(RuntimeError, match="non-persistent"):
        vjp(2.0)
    _, vjp = backprop.make_vjp(lambda x: x * x, persistent=True)(sf.constant(3.0))
    assert float(vjp(2.0)[0].numpy()) == float(vjp(2.0)[0].numpy()) == 12.0
    assert float(backprop.gradients_function(lambda x: x * x)(3.0, dy=sf.constant(0.5))[0].numpy()) == 3.0


def test_implicit_val_and_grad_and_functions_returning_none():
    x = sf.Variable(2.0)
    loss, grads_and_vars = backprop.implicit_val_and_grad(lambda v: 3.0 * v.read_value())(x)
    assert float(loss.numpy()) == 6.0
    assert [(float(g.numpy()), v) for g, v in grads_and_vars] == [(3.0, x)]
    for make in (backprop.implicit_val_and_grad, backprop.val_and_grad_function):
        with pytest.raises(ValueError, match="returns None"):
            make(lambda a, b: None)(sf.constant(1.0), sf.constant(2.0))


def test_batch_jacobian_both_modes(mode):
    xv = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    yv = np.array([[3.0, 4.0], [5.0, 6.0]], np.float32)
    with sf.GradientTape(persistent=True) as tape:
        x = sf.constant(xv)
        tape.watch(x)
        z = x * x * sf.constant(yv)
    got = mode.evaluate(tape.batch_jacobian(z, x))
    np.testing.assert_allclose(got, np.stack([np.diag(2 * xv[b] * yv[b]) for b in range(2)]))
    with pytest.raises(ValueError, match="Need first dimension"):
        tape.batch_jacobian(sf.concat([x, x], 0), x)


def test_aggregate_indexed_slices_gradients(mode):
    from segflow.ops import math_ops
    a = np.array([[1.0, 2.0], [0.0, 0.0], [3.0, 4.0]])
    b = np.array([[0.0, 0.0], [5.0, 6.0], [7.0, 8.0]])
    assert backprop.aggregate_indexed_slices_gradients([]) is None
    t0 = math_ops._as_indexed_slices(sf.constant(a))
    assert isinstance(t0, ops.IndexedSlices)
    assert backprop.aggregate_indexed_slices_gradients([t0, None]) is t0
    total = backprop.aggregate_indexed_slices_gradients([t0, sf.constant(b), None])
    assert isinstance(total, ops.IndexedSlices)
    np.testing.assert_allclose(mode.evaluate(sf.convert_to_tensor(total)), a + b)

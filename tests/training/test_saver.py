"""sf.train.Saver and the checkpoint-finding functions: round trips eagerly and in a Session,
max_to_keep and the state file, restoring into another graph, partitioned variables, dict
var_lists, optimizer slots, every dtype, and errors that leave every variable unchanged."""
import os

import ml_dtypes
import numpy as np
import pytest

import segflow as sf

tf1 = sf.compat.v1


def _graph_model(partitions=None, shape=(5, 2)):
    """w (optionally partitioned), b and the global step in the current graph, with known values."""
    value = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    if partitions is None:
        w = tf1.get_variable("w", list(shape), initializer=tf1.constant_initializer(value))
    else:     # a whole-value initializer is sliced for each shard
        w = tf1.get_variable("w", initializer=sf.constant(value), partitioner=tf1.fixed_size_partitioner(partitions))
    b = tf1.get_variable("b", [2], initializer=tf1.constant_initializer([0.5, -0.5]))
    step = tf1.train.get_or_create_global_step()
    return w, b, step


# ----------------------------------------------------------------------------------------------
# eager


def test_eager_round_trip_and_paths(tmp_path):
    v = sf.Variable([1.0, 2.0], name="v")
    n = sf.Variable(np.int64(3), name="n")
    saver = sf.train.Saver([v, n])
    prefix = str(tmp_path / "model")
    path = saver.save(None, prefix, global_step=7)
    assert path == prefix + "-7"
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model-7.data-00000-of-00001", "model-7.index"]
    v.assign([9.0, 9.0])
    n.assign(0)
    saver.restore(None, path)
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])
    assert n.numpy() == 3 and n.numpy().dtype == np.int64
    assert sf.train.latest_checkpoint(str(tmp_path)) == path
    assert sf.train.list_variables(str(tmp_path)) == [("n", []), ("v", [2])]
    np.testing.assert_array_equal(sf.train.load_variable(path, "v:0"), [1.0, 2.0])
    reader = sf.train.load_checkpoint(path)
    assert reader.has_tensor("v") and not reader.has_tensor("w")
    assert reader.get_variable_to_shape_map() == {"v": [2], "n": []}
    assert reader.get_variable_to_dtype_map() == {"v": sf.float32, "n": sf.int64}
    assert sf.train.checkpoint_exists(path) and not sf.train.checkpoint_exists(prefix)


def test_global_step_as_variable_and_tensor_and_padding(tmp_path):
    v = sf.Variable([1.0], name="v")
    saver = sf.train.Saver([v], pad_step_number=True)
    assert saver.save(None, str(tmp_path / "m"), global_step=sf.Variable(np.int64(12))) == str(tmp_path / "m-00000012")
    plain = sf.train.Saver([v])
    assert plain.save(None, str(tmp_path / "m"), global_step=sf.constant(5)) == str(tmp_path / "m-5")
    assert plain.save(None, str(tmp_path / "m")) == str(tmp_path / "m")


def test_max_to_keep_deletes_old_files_and_writes_the_state_file(tmp_path):
    v = sf.Variable([1.0], name="v")
    saver = sf.train.Saver([v], max_to_keep=2)
    prefix = str(tmp_path / "model")
    paths = [saver.save(None, prefix, global_step=i) for i in range(4)]
    assert saver.last_checkpoints == paths[2:]
    assert not sf.train.checkpoint_exists(paths[0]) and not sf.train.checkpoint_exists(paths[1])
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "model-2.data-00000-of-00001", "model-2.index",
                                            "model-3.data-00000-of-00001", "model-3.index"]
    text = (tmp_path / "checkpoint").read_text()
    assert text == (f'model_checkpoint_path: "{paths[3]}"\nall_model_checkpoint_paths: "{paths[2]}"\n'
                    f'all_model_checkpoint_paths: "{paths[3]}"\n')
    state = sf.train.get_checkpoint_state(str(tmp_path))
    assert state.model_checkpoint_path == paths[3] and state.all_model_checkpoint_paths == paths[2:]
    # saving the same path again moves it to the end instead of keeping it twice
    saver.save(None, prefix, global_step=2)
    assert saver.last_checkpoints == [paths[3], paths[2]]
    # relative paths in the state file, resolved against the directory
    rel = sf.train.Saver([v], save_relative_paths=True)
    rel.save(None, str(tmp_path / "r"), latest_filename="state")
    assert (tmp_path / "state").read_text().startswith('model_checkpoint_path: "r"\n')
    assert sf.train.latest_checkpoint(str(tmp_path), "state") == str(tmp_path / "r")


def test_max_to_keep_none_keeps_every_file(tmp_path):
    v = sf.Variable([1.0], name="v")
    saver = sf.train.Saver([v], max_to_keep=None)
    paths = [saver.save(None, str(tmp_path / "m"), global_step=i) for i in range(3)]
    assert all(sf.train.checkpoint_exists(p) for p in paths)
    assert saver.last_checkpoints == []
    assert sf.train.latest_checkpoint(str(tmp_path)) == paths[-1]


def test_dict_var_list_with_renamed_keys(tmp_path):
    a = sf.Variable([1.0, 2.0], name="a")
    b = sf.Variable([[3]], name="b")
    path = sf.train.Saver({"model/alpha": a, "beta": b}).save(None, str(tmp_path / "d"))
    assert sf.train.list_variables(path) == [("beta", [1, 1]), ("model/alpha", [2])]
    x = sf.Variable([0.0, 0.0], name="x")
    y = sf.Variable([[0]], name="y")
    sf.train.Saver({"model/alpha": x, "beta": y}).restore(None, path)
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(y.numpy(), [[3]])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
                                   np.uint8, np.uint16, np.uint32, np.uint64, np.bool_, np.complex64,
                                   np.complex128, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, "qint8"])
def test_every_numeric_dtype_round_trips(tmp_path, dtype):
    sf_dtype = sf.as_dtype(dtype)
    value = (np.arange(6) % 3 + 1).reshape(2, 3).astype(np.int8 if sf_dtype.is_quantized else dtype)
    v = sf.Variable(value, name="v", dtype=sf_dtype)
    saver = sf.train.Saver([v])
    path = saver.save(None, str(tmp_path / "m"))
    assert sf.train.load_checkpoint(path).get_variable_to_dtype_map() == {"v": sf_dtype}
    zero = np.zeros_like(value)
    v.assign(zero.view(sf_dtype.np) if sf_dtype.is_quantized else zero)
    saver.restore(None, path)
    got = np.asarray(v.numpy())
    assert got.dtype.itemsize == value.dtype.itemsize and got.tobytes() == value.tobytes()


def test_strings_and_empty_tensors_round_trip(tmp_path):
    s = sf.Variable([b"ab", b"", "\u00e9t\u00e9"], name="s")
    e = sf.Variable(np.zeros((0, 3), np.float32), name="e")
    saver = sf.train.Saver([s, e])
    path = saver.save(None, str(tmp_path / "m"))
    s.assign([b"x", b"y", b"z"])
    saver.restore(None, path)
    assert list(s.numpy()) == [b"ab", b"", "\u00e9t\u00e9".encode()]
    assert sf.train.load_variable(path, "e").shape == (0, 3)


# ----------------------------------------------------------------------------------------------
# graph mode


def test_graph_default_var_list_round_trip_into_a_new_graph(tmp_path):
    g = sf.Graph()
    with g.as_default():
        w, b, step = _graph_model()
        saver = sf.train.Saver()
        inc = step.assign_add(3)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            sess.run([w.assign(w * 2.0), inc])
            path = saver.save(sess, str(tmp_path / "model"), global_step=step)
    assert path == str(tmp_path / "model-3")
    assert [n for n, _ in sf.train.list_variables(path)] == ["b", "global_step", "w"]
    with sf.Graph().as_default():
        w2, b2, step2 = _graph_model()
        saver2 = sf.train.Saver()
        with tf1.Session() as sess:      # no initializer run: restore initializes
            saver2.restore(sess, sf.train.latest_checkpoint(str(tmp_path)))
            got_w, got_b, got_step = sess.run([w2, b2, step2])
    np.testing.assert_array_equal(got_w, np.arange(10, dtype=np.float32).reshape(5, 2) * 2)
    np.testing.assert_array_equal(got_b, [0.5, -0.5])
    assert got_step == 3


def test_partitioned_variable_saves_whole_and_restores_into_other_partitionings(tmp_path):
    with sf.Graph().as_default():
        w, _, _ = _graph_model(partitions=2)
        saver = sf.train.Saver()
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "p"))
    assert dict(sf.train.list_variables(path))["w"] == [5, 2]
    expected = np.arange(10, dtype=np.float32).reshape(5, 2)
    np.testing.assert_array_equal(sf.train.load_variable(path, "w"), expected)
    for partitions in (3, None):
        with sf.Graph().as_default():
            w3 = tf1.get_variable("w", [5, 2], partitioner=None if partitions is None else
                                  tf1.fixed_size_partitioner(partitions))
            with tf1.Session() as sess:
                sf.train.Saver([w3]).restore(sess, path)
                np.testing.assert_array_equal(sess.run(sf.convert_to_tensor(w3)), expected)


def test_optimizer_slots_round_trip_graph(tmp_path):
    x = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)

    def build():
        w = tf1.get_variable("w", [2, 1], initializer=tf1.constant_initializer([[0.5], [-0.25]]))
        loss = sf.reduce_sum(sf.square(sf.matmul(x, w) - 1.0))
        train = tf1.train.AdamOptimizer(0.1).minimize(loss)
        return w, train

    with sf.Graph().as_default():
        w, train = build()
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            straight = sess.run(w)
    with sf.Graph().as_default():
        w, train = build()
        saver = sf.train.Saver()
        assert {"w/Adam", "w/Adam_1", "beta1_power", "beta2_power"} <= {
            s.key for s in saver._saveables}
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            sess.run(train)
            sess.run(train)
            path = saver.save(sess, str(tmp_path / "adam"))
    with sf.Graph().as_default():
        w, train = build()
        saver = sf.train.Saver()
        with tf1.Session() as sess:
            saver.restore(sess, path)
            sess.run(train)
            np.testing.assert_allclose(sess.run(w), straight, rtol=1e-6)


def test_graph_save_needs_a_session(tmp_path):
    with sf.Graph().as_default():
        sf.Variable([1.0], name="v")
        saver = sf.train.Saver()
        with pytest.raises(TypeError, match="'sess' must be a Session"):
            saver.save(None, str(tmp_path / "m"))


# ----------------------------------------------------------------------------------------------
# errors


def test_eager_var_list_required_and_names_unique():
    with pytest.raises(RuntimeError, match="var_list"):
        sf.train.Saver()
    a, b = sf.Variable(1.0, name="same"), sf.Variable(2.0, name="same")
    with pytest.raises(ValueError, match="same name: same"):
        sf.train.Saver([a, b])
    with pytest.raises(TypeError, match="not a Variable"):
        sf.train.Saver([sf.constant(1.0)])


def test_missing_variable_raises_not_found_and_changes_nothing(tmp_path):
    a = sf.Variable([1.0], name="a")
    path = sf.train.Saver([a]).save(None, str(tmp_path / "m"))
    a2 = sf.Variable([5.0], name="a")
    z = sf.Variable([6.0], name="zz")
    with pytest.raises(sf.errors.NotFoundError, match=r"'zz' not found in checkpoint .*m"):
        sf.train.Saver([a2, z]).restore(None, path)
    assert a2.numpy()[0] == 5.0 and z.numpy()[0] == 6.0


def test_shape_mismatch_names_variable_and_both_shapes_and_changes_nothing(tmp_path):
    a = sf.Variable([1.0, 2.0], name="a")
    b = sf.Variable([3.0, 4.0], name="b")
    path = sf.train.Saver([a, b]).save(None, str(tmp_path / "m"))
    a2 = sf.Variable([7.0, 7.0], name="a")      # fits, comes first: still unchanged afterwards
    b2 = sf.Variable([8.0, 8.0, 8.0], name="b")
    with pytest.raises(sf.errors.InvalidArgumentError, match=r"'b'.*shape \(2,\).*shape \(3,\)"):
        sf.train.Saver([a2, b2]).restore(None, path)
    with pytest.raises(ValueError):             # TF raises ValueError eagerly: both catch it
        sf.train.Saver([a2, b2]).restore(None, path)
    np.testing.assert_array_equal(a2.numpy(), [7.0, 7.0])
    np.testing.assert_array_equal(b2.numpy(), [8.0, 8.0, 8.0])
    # reshape=True lets the same number of elements through
    c = sf.Variable([[0.0], [0.0]], name="a")
    sf.train.Saver({"a": c}, reshape=True).restore(None, path)
    np.testing.assert_array_equal(c.numpy(), [[1.0], [2.0]])


def test_dtype_mismatch_and_graph_failure_leave_session_values(tmp_path):
    with sf.Graph().as_default():
        v = sf.Variable([1.0, 2.0], name="v")
        w = sf.Variable([1, 2], name="w")
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            path = sf.train.Saver().save(sess, str(tmp_path / "g"))
    with sf.Graph().as_default():
        v = sf.Variable([5.0, 5.0], name="v")
        w = sf.Variable([5.0, 5.0], name="w")        # float32 here, int32 in the checkpoint
        saver = sf.train.Saver()
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            with pytest.raises(sf.errors.InvalidArgumentError, match="'w'.*float32.*int32"):
                saver.restore(sess, path)
            np.testing.assert_array_equal(sess.run([v, w]), [[5.0, 5.0], [5.0, 5.0]])


def test_missing_files_and_bad_paths(tmp_path):
    v = sf.Variable([1.0], name="v")
    saver = sf.train.Saver([v])
    with pytest.raises(ValueError, match="not a valid checkpoint"):
        saver.restore(None, str(tmp_path / "nothing"))
    with pytest.raises(ValueError, match="save_path when it is None"):
        saver.restore(None, None)
    with pytest.raises(ValueError, match="Parent directory of .* doesn't exist"):
        saver.save(None, str(tmp_path / "no" / "such" / "m"))
    with pytest.raises(sf.errors.NotFoundError, match="Failed to find any matching files"):
        sf.train.load_checkpoint(str(tmp_path / "nothing"))
    with pytest.raises(ValueError, match="Couldn't find 'checkpoint' file"):
        sf.train.list_variables(str(tmp_path))
    assert sf.train.latest_checkpoint(str(tmp_path)) is None
    path = saver.save(None, str(tmp_path / "m"))
    with pytest.raises(sf.errors.NotFoundError, match="Key nope not found"):
        sf.train.load_checkpoint(path).get_tensor("nope")


def test_corrupt_data_is_a_data_loss_error_and_changes_nothing(tmp_path):
    v = sf.Variable(np.arange(4, dtype=np.float32), name="v")
    saver = sf.train.Saver([v])
    path = saver.save(None, str(tmp_path / "m"))
    data = tmp_path / "m.data-00000-of-00001"
    raw = bytearray(data.read_bytes())
    raw[-1] ^= 0xFF
    data.write_bytes(bytes(raw))
    v.assign(np.full(4, 9.0, np.float32))
    with pytest.raises(sf.errors.DataLossError, match="checksum"):
        saver.restore(None, path)
    np.testing.assert_array_equal(v.numpy(), np.full(4, 9.0))
    # no temporary files are left behind by saving
    saver.save(None, str(tmp_path / "m"))
    assert not [f for f in os.listdir(tmp_path) if ".tmp" in f]


def test_index_is_json_without_pickle(tmp_path):
    import json
    v = sf.Variable([[1.0, 2.0]], name="layer/v")
    path = sf.train.Saver([v]).save(None, str(tmp_path / "m"))
    index = json.loads((tmp_path / "m.index").read_text())
    assert index["format"] == "segflow-checkpoint" and index["version"] == 1
    assert index["tensors"]["layer/v"]["dtype"] == "float32" and index["tensors"]["layer/v"]["shape"] == [1, 2]
    e = index["tensors"]["layer/v"]
    raw = (tmp_path / "m.data-00000-of-00001").read_bytes()[e["offset"]:e["offset"] + e["size"]]
    np.testing.assert_array_equal(np.frombuffer(raw, np.float32), [1.0, 2.0])
    assert path == str(tmp_path / "m")


def test_a_save_interrupted_before_the_index_is_in_place_leaves_no_checkpoint(tmp_path, monkeypatch):
    v = sf.Variable([1.0], name="v")
    saver = sf.train.Saver([v])
    path = saver.save(None, str(tmp_path / "m"))
    real_replace = os.replace

    def failing_replace(src, dst):
        if str(dst).endswith(".index"):
            raise OSError("disk full")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", failing_replace)
    v.assign([2.0])
    with pytest.raises(OSError, match="disk full"):
        saver.save(None, path)
    monkeypatch.setattr(os, "replace", real_replace)
    assert not sf.train.checkpoint_exists(path)          # no index describing the wrong data
    assert not [f for f in os.listdir(tmp_path) if ".tmp" in f]
    with pytest.raises(ValueError, match="not a valid checkpoint"):
        saver.restore(None, path)
    assert v.numpy()[0] == 2.0

"""sf.train.Checkpoint and CheckpointManager: object-based keys, round trips eagerly and in a
Session, optimizer slots (made at restore time), restore statuses, numbering and the state file,
and errors that leave every variable unchanged."""
import os

import numpy as np
import pytest

import segflow as sf
from segflow.layers import core as dense_layers

tf1 = sf.compat.v1

X = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]], np.float32)
Y = np.array([[1.0], [0.0], [2.0]], np.float32)


class Net(sf.Module):
    def __init__(self, scale=1.0):
        super().__init__()
        self.w = sf.Variable(np.array([[0.5], [-0.25]], np.float32) * scale, name="w")
        self.layers = [sf.Variable(np.float32(3.0) * scale, name="c"), {"a": sf.Variable([4.0 * scale], name="a")}]
        self.sub = sf.Module()
        self.sub.k = sf.Variable(np.float32(0.1) * scale, name="k")

    def loss(self):
        pred = sf.matmul(X, self.w) + self.sub.k
        return sf.reduce_sum(sf.square(pred - Y))


def _values(net):
    return [net.w.numpy(), net.layers[0].numpy(), net.layers[1]["a"].numpy(), net.sub.k.numpy()]


def _assert_same(a, b):
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_keys_follow_the_object_paths(tmp_path):
    net = Net()
    opt = tf1.train.AdamOptimizer(0.1)
    opt.minimize(net.loss, var_list=[net.w, net.sub.k])
    ckpt = sf.train.Checkpoint(model=net, opt=opt, extra=[sf.Variable(1)], nested=sf.train.Checkpoint(
        q=sf.Variable(2.0)))
    path = ckpt.save(str(tmp_path / "ck"))
    assert path == str(tmp_path / "ck-1")
    v = "/.ATTRIBUTES/VARIABLE_VALUE"
    assert [n for n, _ in sf.train.list_variables(path)] == [
        "_CHECKPOINTABLE_OBJECT_GRAPH", "extra/0" + v, "model/layers/0" + v, "model/layers/1/a" + v,
        "model/sub/k" + v, "model/sub/k/.OPTIMIZER_SLOT/opt/m" + v, "model/sub/k/.OPTIMIZER_SLOT/opt/v" + v,
        "model/w" + v, "model/w/.OPTIMIZER_SLOT/opt/m" + v, "model/w/.OPTIMIZER_SLOT/opt/v" + v,
        "nested/q" + v, "opt/beta1_power" + v, "opt/beta2_power" + v, "save_counter" + v]
    assert sf.train.load_variable(path, "save_counter" + v) == 1
    np.testing.assert_allclose(sf.train.load_variable(path, "opt/beta1_power" + v), 0.9 * 0.9)   # after one step


def test_eager_round_trip_and_numbering(tmp_path):
    net = Net()
    ckpt = sf.train.Checkpoint(model=net)
    saved = _values(net)
    first = ckpt.save(str(tmp_path / "run"))
    net.w.assign(net.w * 3.0)
    second = ckpt.save(str(tmp_path / "run"))
    assert (first, second) == (str(tmp_path / "run-1"), str(tmp_path / "run-2"))
    assert (tmp_path / "checkpoint").read_text() == ('model_checkpoint_path: "run-2"\n'
                                                     'all_model_checkpoint_paths: "run-2"\n')
    assert sf.train.latest_checkpoint(str(tmp_path)) == second
    written = ckpt.write(str(tmp_path / "plain"))     # no number, no state file, no count
    assert written == str(tmp_path / "plain") and sf.train.latest_checkpoint(str(tmp_path)) == second
    assert int(ckpt.save_counter.numpy()) == 2
    for v in net.variables:
        v.assign(v * 0.0)
    status = ckpt.restore(first)
    status.assert_consumed().assert_existing_objects_matched().assert_nontrivial_match()
    _assert_same(_values(net), saved)
    assert int(ckpt.save_counter.numpy()) == 1          # restored too
    # a fresh model built the same way gets the same values; a directory means its latest
    other = Net(scale=0.0)
    sf.train.Checkpoint(model=other).read(str(tmp_path)).assert_consumed()
    np.testing.assert_array_equal(other.w.numpy(), saved[0] * 3.0)


def test_shared_variable_is_saved_once_and_dense_layers_are_tracked(tmp_path):
    shared = sf.Variable([1.0, 2.0], name="s")
    layer = dense_layers.Dense(2)
    layer(np.ones((1, 3), np.float32))
    ckpt = sf.train.Checkpoint(a=[shared], b={"again": shared}, layer=layer)
    path = ckpt.write(str(tmp_path / "w"))
    names = [n for n, _ in sf.train.list_variables(path)]
    assert "a/0/.ATTRIBUTES/VARIABLE_VALUE" in names and not any(n.startswith("b/") for n in names)
    assert {"layer/kernel/.ATTRIBUTES/VARIABLE_VALUE", "layer/bias/.ATTRIBUTES/VARIABLE_VALUE"} <= set(names)
    kernel = layer.kernel.numpy().copy()
    layer.kernel.assign(np.zeros((3, 2), np.float32))
    ckpt.restore(path).assert_consumed()
    np.testing.assert_array_equal(layer.kernel.numpy(), kernel)


@pytest.mark.parametrize("make_opt", [lambda: tf1.train.AdamOptimizer(0.1),
                                      lambda: tf1.train.MomentumOptimizer(0.05, 0.9),
                                      lambda: tf1.train.RMSPropOptimizer(0.01, momentum=0.5)])
def test_optimizer_slots_round_trip_eager(tmp_path, make_opt):
    straight = Net()
    opt = make_opt()
    for _ in range(3):
        opt.minimize(straight.loss, var_list=[straight.w, straight.sub.k])
    net = Net()
    opt = make_opt()
    for _ in range(2):
        opt.minimize(net.loss, var_list=[net.w, net.sub.k])
    path = sf.train.Checkpoint(model=net, optimizer=opt).save(str(tmp_path / "o"))
    fresh, fresh_opt = Net(scale=0.0), make_opt()
    assert fresh_opt.get_slot_names() == []
    status = sf.train.Checkpoint(model=fresh, optimizer=fresh_opt).restore(path)
    status.assert_consumed()                  # the slots were made at restore time
    assert fresh_opt.get_slot_names() == opt.get_slot_names()
    for name in opt.get_slot_names():
        np.testing.assert_array_equal(fresh_opt.get_slot(fresh.w, name).numpy(), opt.get_slot(net.w, name).numpy())
    fresh_opt.minimize(fresh.loss, var_list=[fresh.w, fresh.sub.k])
    np.testing.assert_allclose(fresh.w.numpy(), straight.w.numpy(), rtol=1e-6)
    np.testing.assert_allclose(fresh.sub.k.numpy(), straight.sub.k.numpy(), rtol=1e-6)
    assert not np.allclose(fresh.w.numpy(), net.w.numpy())      # the step really moved it


def test_statuses_for_partial_checkpoints(tmp_path):
    net = Net()
    path = sf.train.Checkpoint(model=net, extra=sf.Variable(1.0)).save(str(tmp_path / "p"))
    fewer = Net(scale=2.0)
    status = sf.train.Checkpoint(model=fewer).restore(path)
    with pytest.raises(AssertionError, match="extra"):
        status.assert_consumed()
    status.assert_existing_objects_matched()
    assert status.expect_partial() is status
    np.testing.assert_array_equal(fewer.w.numpy(), net.w.numpy())
    more = Net(scale=2.0)
    more.extra_var = sf.Variable([7.0])
    status = sf.train.Checkpoint(model=more).restore(path)
    with pytest.raises(AssertionError, match="model/extra_var"):
        status.assert_existing_objects_matched()
    np.testing.assert_array_equal(more.extra_var.numpy(), [7.0])
    nothing = sf.train.Checkpoint(other=sf.Variable(0.0)).restore(path)
    with pytest.raises(AssertionError, match="Nothing except the root"):
        nothing.assert_nontrivial_match()
    init_only = sf.train.Checkpoint(model=Net()).restore(None)
    with pytest.raises(AssertionError, match="No checkpoint specified"):
        init_only.assert_consumed()
    assert init_only.expect_partial() is init_only


def test_errors_leave_every_variable_unchanged(tmp_path):
    net = Net()
    path = sf.train.Checkpoint(model=net).save(str(tmp_path / "e"))
    wrong = Net(scale=5.0)
    wrong.sub.k = sf.Variable([1.0, 2.0, 3.0], name="k")      # the last key (sorted) does not fit
    before = _values(wrong)
    with pytest.raises(sf.errors.InvalidArgumentError, match=r"model/sub/k.*shape \(\).*shape \(3,\)"):
        sf.train.Checkpoint(model=wrong).restore(path)
    with pytest.raises(ValueError):
        sf.train.Checkpoint(model=wrong).restore(path)
    _assert_same(_values(wrong), before)
    with pytest.raises(sf.errors.NotFoundError, match="Error when restoring from checkpoint"):
        sf.train.Checkpoint(model=Net()).restore(str(tmp_path / "missing-1"))
    with pytest.raises(ValueError, match="expecting bad to be a trackable object"):
        sf.train.Checkpoint(bad=3)


def test_name_based_restore_of_a_saver_checkpoint(tmp_path):
    a = sf.Variable([1.0, 2.0], name="a")
    path = sf.train.Saver([a]).save(None, str(tmp_path / "s"))
    holder = sf.Module()
    holder.x = sf.Variable([0.0, 0.0], name="a")
    sf.train.Checkpoint(m=holder).restore(path).assert_existing_objects_matched()
    np.testing.assert_array_equal(holder.x.numpy(), [1.0, 2.0])


def test_checkpoint_manager(tmp_path):
    v = sf.Variable([0.0], name="v")
    ckpt = sf.train.Checkpoint(v=v)
    directory = str(tmp_path / "mgr")
    manager = sf.train.CheckpointManager(ckpt, directory, max_to_keep=2)
    assert manager.latest_checkpoint is None
    assert manager.restore_or_initialize() is None
    paths = []
    for i in range(3):
        v.assign([float(i)])
        paths.append(manager.save())
    assert paths == [os.path.join(directory, f"ckpt-{i}") for i in (1, 2, 3)]
    assert manager.checkpoints == paths[1:] and manager.latest_checkpoint == paths[2]
    assert not sf.train.checkpoint_exists(paths[0])
    assert sorted(os.listdir(directory)) == ["checkpoint", "ckpt-2.data-00000-of-00001", "ckpt-2.index",
                                             "ckpt-3.data-00000-of-00001", "ckpt-3.index"]
    assert manager.save(checkpoint_number=10) == os.path.join(directory, "ckpt-10")
    assert int(ckpt.save_counter.numpy()) == 4      # incremented even with a number given
    state = sf.train.get_checkpoint_state(directory)
    assert state.all_model_checkpoint_paths == [paths[2], os.path.join(directory, "ckpt-10")]
    assert len(state.all_model_checkpoint_timestamps) == 2 and state.last_preserved_timestamp > 0
    text = (tmp_path / "mgr" / "checkpoint").read_text()
    assert text.startswith('model_checkpoint_path: "ckpt-10"\nall_model_checkpoint_paths: "ckpt-3"\n')
    # a new manager on the directory carries on: same list, deletes the oldest on the next save
    again = sf.train.CheckpointManager(ckpt, directory, max_to_keep=2)
    assert again.checkpoints == manager.checkpoints and again.latest_checkpoint == manager.latest_checkpoint
    v.assign([-1.0])
    assert again.restore_or_initialize() == os.path.join(directory, "ckpt-10")
    np.testing.assert_array_equal(v.numpy(), [2.0])
    again.save()
    assert not sf.train.checkpoint_exists(paths[2])
    with pytest.raises(ValueError, match="positive integer"):
        sf.train.CheckpointManager(ckpt, directory, max_to_keep=0)


def test_graph_mode_with_a_session(tmp_path):
    def build():
        w = sf.Variable(np.array([[0.5], [-0.25]], np.float32), name="w")
        opt = tf1.train.AdamOptimizer(0.1)
        train = opt.minimize(sf.reduce_sum(sf.square(sf.matmul(X[:, :2], w) - Y)))
        return w, opt, train

    with sf.Graph().as_default():
        w, opt, train = build()
        ckpt = sf.train.Checkpoint(w=w, opt=opt)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            sess.run(train)
            path = ckpt.save(str(tmp_path / "g"), session=sess)
            saved = sess.run(w)
            sess.run(train)
            straight = sess.run(w)
    assert path == str(tmp_path / "g-1")
    with sf.Graph().as_default():
        w, opt, train = build()
        status = sf.train.Checkpoint(w=w, opt=opt).restore(path)
        status.assert_consumed()
        with tf1.Session() as sess:
            status.initialize_or_restore(sess)
            np.testing.assert_array_equal(sess.run(w), saved)
            sess.run(train)
            np.testing.assert_allclose(sess.run(w), straight, rtol=1e-6)
    with sf.Graph().as_default():
        w = sf.Variable(np.zeros((2, 1), np.float32), name="w")
        status = sf.train.Checkpoint(w=w).restore(path)
        with tf1.Session() as sess:
            status.run_restore_ops(sess)
            np.testing.assert_array_equal(sess.run(w), saved)
        with pytest.raises(RuntimeError, match="no default session"):
            sf.train.Checkpoint(w=w).save(str(tmp_path / "x"))


def test_graph_mode_slots_made_at_restore_time(tmp_path):
    x = np.ones((2, 2), np.float32)
    with sf.Graph().as_default():
        w = sf.Variable(np.array([[1.0], [2.0]], np.float32), name="w")
        opt = tf1.train.AdamOptimizer(0.1)
        train = opt.minimize(sf.reduce_sum(sf.square(sf.matmul(x, w))))
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            sess.run(train)
            path = sf.train.Checkpoint(w=w, opt=opt).save(str(tmp_path / "g"), session=sess)
            sess.run(train)
            straight = sess.run(w)
    with sf.Graph().as_default():
        w = sf.Variable(np.zeros((2, 1), np.float32), name="w")
        opt = tf1.train.AdamOptimizer(0.1)
        status = sf.train.Checkpoint(w=w, opt=opt).restore(path)
        assert opt.get_slot_names() == ["m", "v"]
        train = opt.minimize(sf.reduce_sum(sf.square(sf.matmul(x, w))))
        status.assert_consumed()
        with tf1.Session() as sess:
            status.initialize_or_restore(sess)
            sess.run(train)
            np.testing.assert_allclose(sess.run(w), straight, rtol=1e-6)


def test_saver_restores_an_object_based_checkpoint_by_variable_name(tmp_path):
    net = Net()
    path = sf.train.Checkpoint(model=net).save(str(tmp_path / "o"))
    other = Net(scale=0.0)
    sf.train.Saver([other.w, other.sub.k]).restore(None, path)
    np.testing.assert_array_equal(other.w.numpy(), net.w.numpy())
    np.testing.assert_array_equal(other.sub.k.numpy(), net.sub.k.numpy())


def test_checkpoint_manager_in_graph_mode_uses_the_default_session(tmp_path):
    with sf.Graph().as_default():
        v = sf.Variable([1.5], name="v")
        ckpt = sf.train.Checkpoint(v=v)
        manager = sf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=1)
        sess = tf1.Session()            # not the default session until `as_default()`
        sess.run(v.initializer)
        with pytest.raises(RuntimeError, match="no default session"):
            manager.save()
        with sess.as_default():
            first, second = manager.save(), manager.save()
        sess.close()
        assert (first, second) == (str(tmp_path / "ckpt-1"), str(tmp_path / "ckpt-2"))
        assert manager.checkpoints == [second] and not sf.train.checkpoint_exists(first)
    np.testing.assert_array_equal(sf.train.load_variable(second, "v/.ATTRIBUTES/VARIABLE_VALUE"), [1.5])

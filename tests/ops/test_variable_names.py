"""Variable names as TensorFlow 2.21 gives them (each expectation below was read off TF itself):
eagerly a name takes the name scope's prefix and is not made unique; optimizer slots are named
after their primary alone, outside the caller's name scope, "w/Adam" then "w/Adam_1"."""
import os

import segflow as sf

v1 = sf.compat.v1


def test_eager_variables_take_the_name_scope_and_stay_ununiquified():
    with sf.name_scope("a"):
        v = sf.Variable(1.0, name="v")
        anonymous = sf.Variable(2.0)
        with sf.name_scope("b"):
            u = sf.Variable(3.0, name="u")
        again = sf.Variable(1.0, name="v")
    outside = sf.Variable(1.0, name="v")
    with sf.name_scope("s/"):          # an absolute scope replaces the prefix
        y = sf.Variable(1.0, name="y")
    assert [v.name, anonymous.name, u.name, again.name] == ["a/v:0", "a/Variable:0", "a/b/u:0", "a/v:0"]
    assert outside.name == "v:0" and y.name == "s/y:0"


def test_eager_variable_scope_module_scope_and_get_variable():
    with v1.variable_scope("vs"):
        z = sf.Variable(1.0, name="z")
        g = v1.get_variable("g", [1])
        with sf.name_scope("ns"):       # get_variable follows the variable scope only
            g2 = v1.get_variable("g2", [1])
    m = sf.Module(name="mod")
    with m.name_scope:
        q = sf.Variable(1.0, name="q")
    assert [z.name, g.name, g2.name, q.name] == ["vs/z:0", "vs/g:0", "vs/g2:0", "mod/q:0"]


def _adam_names(w):
    with sf.name_scope("train"):
        opt = v1.train.AdamOptimizer(0.1)
        opt.apply_gradients([(sf.constant([1.0, 1.0]), w)])
    return opt, sorted(x.name for x in opt.variables())


def test_eager_slots_ignore_the_callers_name_scope_and_are_unique(tmp_path):
    # The counters live as long as the process (as TF's): a name no other test gives a variable.
    w = sf.Variable([1.0, 2.0], name="names_test_w")
    opt, names = _adam_names(w)
    assert names == ["names_test_w/Adam:0", "names_test_w/Adam_1:0", "train/beta1_power:0",
                     "train/beta2_power:0"]
    assert opt.get_slot(w, "m").name == "names_test_w/Adam:0"
    assert opt.get_slot(w, "v").name == "names_test_w/Adam_1:0"
    again, _ = _adam_names(w)        # a second optimizer's slots: the next free names
    assert again.get_slot(w, "m").name == "names_test_w/Adam_2:0"
    # distinct names: a TF1 Saver over the optimizer's variables saves and restores them
    saver = v1.train.Saver([w] + opt.variables())
    path = saver.save(None, os.path.join(tmp_path, "m"))
    m_before = opt.get_slot(w, "m").numpy().copy()
    opt.get_slot(w, "m").assign([9.0, 9.0])
    saver.restore(None, path)
    assert opt.get_slot(w, "m").numpy().tolist() == m_before.tolist()


def test_graph_slots_ignore_the_callers_name_scope():
    with sf.Graph().as_default():
        w = v1.get_variable("w", [2])
        _, names = _adam_names(w)
        assert sorted(v.name for v in v1.global_variables()) == [
            "train/beta1_power:0", "train/beta2_power:0", "w/Adam:0", "w/Adam_1:0", "w:0"]
        assert names == ["train/beta1_power:0", "train/beta2_power:0", "w/Adam:0", "w/Adam_1:0"]

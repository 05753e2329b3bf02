"""variable_scope / get_variable (TF2's tf.compat.v1 rules: names, reuse, AUTO_REUSE, captured
scopes, default names, name scopes, defaults, errors, collections, eager stores) and partitioned
variables (partitioners, shard shapes and names, PartitionedVariable, embedding lookups)."""
import math

import numpy as np
import pytest

import segflow as sf
from segflow.compat import v1
from segflow.framework import ops
from segflow.ops import embedding_ops, init_ops, partitioned_variables, variable_scope as vs
from segflow.ops import variables


def _init(mode):
    if not mode.eager:
        mode.session.run(variables.global_variables_initializer())


@pytest.fixture
def graph():
    g = ops.Graph()
    with g.as_default():
        yield g


# -- names and scopes
def test_nested_names(mode):
    with vs.variable_scope("foo"):
        with vs.variable_scope("bar"):
            v = vs.get_variable("v", [1])
            assert vs.get_variable_scope().name == "foo/bar"
    assert v.name == "foo/bar/v:0"
    assert vs.get_variable_scope().name == ""


def test_variable_scope_opens_a_unique_name_scope(graph):
    with vs.variable_scope("foo") as scope:
        v = vs.get_variable("v", [1])
        c = sf.constant(1.0, name="c")
    with vs.variable_scope("foo", reuse=True):
        assert vs.get_variable("v", [1]) is v
        c2 = sf.constant(1.0, name="c")
    with sf.name_scope("outer"):
        with vs.variable_scope("inner"):
            w = vs.get_variable("w", [1])            # names do not take the name scope
            c3 = sf.constant(1.0, name="c")
    assert (v.name, c.name, c2.name, w.name, c3.name) == ("foo/v:0", "foo/c:0", "foo_1/c:0", "inner/w:0",
                                                          "outer/inner/c:0")
    assert scope.original_name_scope == "foo/"
    # re-entering a captured scope without a new name scope, then its original one
    with vs.variable_scope(scope, auxiliary_name_scope=False) as scope1:
        with sf.name_scope(scope1.original_name_scope):
            c4 = sf.constant(1.0, name="c")
    assert c4.name == "foo/c_1:0"


def test_default_names_are_made_unique_and_restart_in_a_reentered_scope(mode):
    with vs.variable_scope("dn") as scope:
        with vs.variable_scope(None, default_name="bar"):
            a = vs.get_variable("a", [1])
        with vs.variable_scope(None, default_name="bar"):
            b = vs.get_variable("b", [1])
    with vs.variable_scope(scope):
        with vs.variable_scope(None, default_name="bar"):
            c = vs.get_variable("c", [1])
    assert (a.name, b.name, c.name) == ("dn/bar/a:0", "dn/bar_1/b:0", "dn/bar/c:0")


def test_captured_scope_keeps_name_and_defaults(graph):
    with vs.variable_scope("cap", initializer=init_ops.constant_initializer(0.25)) as scope:
        pass
    with vs.variable_scope("elsewhere"):
        with vs.variable_scope(scope):
            v = vs.get_variable("v", [2])
    assert v.name == "cap/v:0"
    with sf.compat.v1.Session(graph=graph) as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(v), [0.25, 0.25])


def test_scope_argument_errors():
    with pytest.raises(TypeError, match="If default_name is None then name_or_scope is required"):
        vs.variable_scope(None)
    with pytest.raises(ValueError, match="The reuse parameter must be True or False or None"):
        vs.variable_scope("x", reuse="yes")
    with pytest.raises(ValueError, match="reuse=True cannot be used without a name_or_scope"):
        with vs.variable_scope(None, default_name="d", reuse=True):
            pass
    with pytest.raises(TypeError, match="name_or_scope must be a string or VariableScope"):
        with vs.variable_scope(3):
            pass


# -- reuse (graph mode: the store keeps variables)
def test_reuse_rules_and_messages(graph):
    with vs.variable_scope("r"):
        v = vs.get_variable("v", [2, 3])
        with pytest.raises(ValueError, match=r"^Variable r/v already exists, disallowed\. Did you mean to set "
                                             r"reuse=True or reuse=tf\.AUTO_REUSE in VarScope\?$"):
            vs.get_variable("v", [2, 3])
    with vs.variable_scope("r", reuse=True):
        assert vs.get_variable("v", [2, 3]) is v
        assert vs.get_variable("v") is v                       # shape may be omitted when reusing
        with pytest.raises(ValueError, match=r"^Variable r/w does not exist, or was not created with "
                                             r"tf\.get_variable\(\)\. Did you mean to set reuse=tf\.AUTO_REUSE "
                                             r"in VarScope\?$"):
            vs.get_variable("w", [1])
        with vs.variable_scope("sub"):                         # reuse is inherited
            assert vs.get_variable_scope().reuse is True
        with pytest.raises(ValueError, match="Trying to share variable r/v, but specified shape"):
            vs.get_variable("v", [3, 2])
        with pytest.raises(ValueError, match="Trying to share variable r/v, but specified dtype float64"):
            vs.get_variable("v", [2, 3], dtype=sf.float64)
    with vs.variable_scope("r", reuse=False):                  # False means inherit (None)
        assert vs.get_variable_scope().reuse is False


def test_auto_reuse_and_reuse_variables(graph):
    def make():
        with vs.variable_scope("auto", reuse=vs.AUTO_REUSE):
            return vs.get_variable("v", [1])
    assert make() is make()
    with vs.variable_scope("rv") as scope:
        v = vs.get_variable("v", [1])
        scope.reuse_variables()
        assert vs.get_variable("v", [1]) is v
    assert v1.AUTO_REUSE is vs.AUTO_REUSE


def test_one_store_per_graph():
    names = []
    for _ in range(2):
        with ops.Graph().as_default():
            names.append(vs.get_variable("same", [1]).name)   # no clash with the other graph's
    assert names == ["same:0", "same:0"]


def test_collections(graph):
    with vs.variable_scope("c"):
        a = vs.get_variable("a", [1])
        b = vs.get_variable("b", [1], trainable=False)
        loc = vs.get_local_variable("l", [1])
        mine = vs.get_variable("m", [1], collections=["mine", ops.GraphKeys.GLOBAL_VARIABLES])
        scope = vs.get_variable_scope()
    assert variables.global_variables() == [a, b, mine]
    assert variables.trainable_variables() == [a, mine]
    assert variables.local_variables() == [loc] and not loc.trainable
    assert ops.get_collection("mine") == [mine]
    assert scope.global_variables() == [a, b, mine] and scope.trainable_variables() == [a, mine]


# -- initializers and dtypes
def test_default_initializers(mode):
    f = vs.get_variable("def_f", [200, 300])
    i = vs.get_variable("def_i", [3], dtype=sf.int32)
    b = vs.get_variable("def_b", [2], dtype=sf.bool)
    _init(mode)
    fv, iv, bv = mode.evaluate([f, i, b])
    limit = math.sqrt(6.0 / 500)                       # glorot_uniform
    assert fv.dtype == np.float32 and np.abs(fv).max() <= limit * (1 + 1e-6) and fv.std() > limit / 3
    assert iv.dtype == np.int32 and np.array_equal(iv, [0, 0, 0])
    assert bv.dtype == np.bool_ and not bv.any()
    with pytest.raises(ValueError, match="An initializer for variable def_c of sf.complex64 is required"):
        vs.get_variable("def_c", [2], dtype=sf.complex64)


def test_initializer_values_give_the_shape(mode):
    a = vs.get_variable("val_a", initializer=np.arange(6, dtype=np.float32).reshape(2, 3))
    t = vs.get_variable("val_t", initializer=sf.constant([[1, 2]], dtype=sf.int64))
    c = vs.get_variable("val_c", [2, 2], initializer=init_ops.constant_initializer([1, 2, 3, 4]))
    k = vs.get_variable("val_k", initializer=lambda: sf.constant([5.0, 6.0]))      # no shape: called as is
    z = vs.get_variable("val_z", [3], initializer=init_ops.Zeros)                  # a class is instantiated
    _init(mode)
    assert a.shape.as_list() == [2, 3] and t.dtype == sf.int64
    np.testing.assert_array_equal(mode.evaluate(a), np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(mode.evaluate(t), [[1, 2]])
    np.testing.assert_array_equal(mode.evaluate(c), [[1, 2], [3, 4]])
    np.testing.assert_array_equal(mode.evaluate(k), [5, 6])
    np.testing.assert_array_equal(mode.evaluate(z), [0, 0, 0])


def test_initializer_errors(mode):
    with pytest.raises(ValueError, match="If initializer is a constant, do not specify shape."):
        vs.get_variable("err_a", [2], initializer=np.zeros(2, np.float32))
    with pytest.raises(ValueError, match="Initializer type 'sf.float64' and explicit dtype 'sf.float32' don't match"):
        vs.get_variable("err_b", initializer=np.zeros(2), dtype=sf.float32)
    with pytest.raises(ValueError, match="The initializer passed is not valid"):
        vs.get_variable("err_c", initializer=init_ops.Ones())          # an initializer needs a shape


def test_scope_defaults_are_inherited(mode):
    with vs.variable_scope("dflt", initializer=init_ops.constant_initializer(3.0), dtype=sf.float64):
        a = vs.get_variable("a", [2])
        with vs.variable_scope("in", initializer=init_ops.ones_initializer()):
            b = vs.get_variable("b", [2])
        c = vs.get_variable("c", [2], initializer=init_ops.zeros_initializer())
    _init(mode)
    assert a.dtype == sf.float64 and b.dtype == sf.float64
    np.testing.assert_array_equal(mode.evaluate([a, b, c]), [[3, 3], [1, 1], [0, 0]])


def test_regularizer(graph):
    with vs.variable_scope("reg", regularizer=lambda w: 0.5 * sf.reduce_sum(w * w)):
        v = vs.get_variable("v", initializer=np.array([1.0, 2.0], np.float32))
        vs.get_variable("u", [1], regularizer=vs.no_regularizer)
    losses = ops.get_collection("regularization_losses")
    assert len(losses) == 1 and losses[0].name.startswith("reg/v/Regularizer/")
    with sf.compat.v1.Session(graph=graph) as sess:
        sess.run(v.initializer)
        assert sess.run(losses[0]) == pytest.approx(2.5)


def test_custom_getter(graph):
    seen = []

    def suffixed(getter, name, *args, **kwargs):        # TF passes `getter` by keyword
        seen.append(name)
        return getter(name + "_x", *args, **kwargs)

    with vs.variable_scope("cg", custom_getter=suffixed):
        v = vs.get_variable("v", [1])
    assert seen == ["cg/v"] and v.name == "cg/v_x:0"


# -- eager: TF2's rules
def test_eager_get_variable_makes_new_variables_and_stores_keep_them():
    with vs.variable_scope("eg", reuse=True) as scope:          # eagerly scopes always AUTO_REUSE
        a = vs.get_variable("v", [2])
        b = vs.get_variable("v", [2])
    assert scope.reuse is vs.AUTO_REUSE
    assert a is not b and a.name == b.name == "eg/v:0"
    store = vs.EagerVariableStore()
    try:
        with store.as_default():
            c = vs.get_variable("ev", [2])
            d = vs.get_variable("ev", [2], trainable=False)
            e = vs.get_variable("ew", [1], trainable=False)
        with store.as_default():
            assert vs.get_variable("ev", [2]) is c
        assert c is d and store.variables() == [c, e]
        assert store.trainable_variables() == [c] and store.non_trainable_variables() == [e]
        copied = store.copy()
        assert [v.name for v in copied.variables()] == ["ev:0", "ew:0"]
        np.testing.assert_array_equal(copied.variables()[0].numpy(), c.numpy())
    finally:
        for key in (ops.GraphKeys.GLOBAL_VARIABLES, ops.GraphKeys.TRAINABLE_VARIABLES):
            ref = ops.get_collection_ref(key)
            ref[:] = [v for v in ref if v not in (c, e)]


# -- partitioners
@pytest.mark.parametrize("dim,num,sizes", [(10, 3, [4, 3, 3]), (7, 7, [1] * 7), (5, 8, [1] * 5), (9, 2, [5, 4]),
                                           (12, 4, [3, 3, 3, 3]), (6, 1, [6])])
def test_fixed_size_partitioner_shards(mode, dim, num, sizes):
    full = np.arange(dim * 3, dtype=np.float32).reshape(dim, 3)
    pv = vs.get_variable(f"fx{dim}_{num}", initializer=full,
                         partitioner=partitioned_variables.fixed_size_partitioner(num))
    assert isinstance(pv, partitioned_variables.PartitionedVariable)
    shards = list(pv)
    assert [s.shape.as_list() for s in shards] == [[n, 3] for n in sizes]
    assert [s.name for s in shards] == [f"fx{dim}_{num}/part_{i}:0" for i in range(len(sizes))]
    assert len(pv) == len(sizes) and pv.get_partitions() == [len(sizes), 1] and pv._get_variable_list() == shards
    assert pv.shape.as_list() == [dim, 3] and pv.dtype == sf.float32 and pv.name == f"fx{dim}_{num}"
    offsets = [s._save_slice_info.var_offset[0] for s in shards]
    assert offsets == list(np.cumsum([0] + sizes[:-1]))
    _init(mode)
    np.testing.assert_array_equal(mode.evaluate(pv.as_tensor()), full)
    np.testing.assert_array_equal(mode.evaluate(sf.convert_to_tensor(pv)), full)
    np.testing.assert_array_equal(np.concatenate(mode.evaluate(shards)), full)


def test_partition_along_axis_1(mode):
    full = np.arange(20, dtype=np.float32).reshape(2, 10)
    pv = vs.get_variable("ax1", initializer=full, partitioner=partitioned_variables.fixed_size_partitioner(4, axis=1))
    assert [s.shape.as_list() for s in pv] == [[2, 3], [2, 3], [2, 2], [2, 2]]
    _init(mode)
    np.testing.assert_array_equal(mode.evaluate(pv.as_tensor()), full)


def test_min_max_and_axis_size_partitioners():
    shape = sf.TensorShape([1024, 1024])
    # (1024 * 1024 * 4 bytes) / 256 KiB = 16 shards, capped by max_partitions
    assert partitioned_variables.min_max_variable_partitioner(max_partitions=32)(shape, sf.float32) == [16, 1]
    assert partitioned_variables.min_max_variable_partitioner(max_partitions=5)(shape, sf.float32) == [5, 1]
    assert partitioned_variables.min_max_variable_partitioner(8, min_slice_size=1)(sf.TensorShape([3, 4]),
                                                                                   sf.float32) == [3, 1]
    assert partitioned_variables.min_max_variable_partitioner(10, axis=1, min_slice_size=4)(
        sf.TensorShape([2, 6]), sf.float64) == [1, 6]
    # 16-byte strings: 100 rows of 10 -> 160 bytes a row; 500-byte shards hold 3 rows -> 34 shards
    p = partitioned_variables.variable_axis_size_partitioner(500)
    assert p(sf.TensorShape([100, 10]), sf.string) == [34, 1]
    assert p(sf.TensorShape([100, 10]), sf.float32) == [9, 1]          # 40 bytes a row, 12 rows a shard
    assert partitioned_variables.variable_axis_size_partitioner(500, max_shards=4)(
        sf.TensorShape([100, 10]), sf.float32) == [4, 1]
    with pytest.raises(ValueError, match="must be positive"):
        partitioned_variables.variable_axis_size_partitioner(0)
    with pytest.raises(ValueError, match="Cannot partition variable along axis 2"):
        partitioned_variables.min_max_variable_partitioner(axis=2)(sf.TensorShape([3, 4]), sf.float32)


def test_partitioned_reuse_and_errors(graph):
    p = partitioned_variables.fixed_size_partitioner(2)
    with vs.variable_scope("pr"):
        pv = vs.get_variable("e", [6, 2], partitioner=p)
        with pytest.raises(ValueError, match="Partitioned variable with name pr/e already exists"):
            vs.get_variable("e", [6, 2], partitioner=p)
        with pytest.raises(ValueError, match="No partitioner was provided, but a partitioned version"):
            vs.get_variable("e", [6, 2])
        vs.get_variable("plain", [4, 2])
        with pytest.raises(ValueError, match="A partitioner was provided, but an unpartitioned version"):
            vs.get_variable("plain", [4, 2], partitioner=p)
    with vs.variable_scope("pr", reuse=True):
        assert vs.get_variable("e", [6, 2], partitioner=p) is pv
        assert vs.get_variable("e") is pv                        # no partitioner needed to reuse
        with pytest.raises(ValueError, match="but specified partitions"):
            vs.get_variable("e", [6, 2], partitioner=partitioned_variables.fixed_size_partitioner(3))
        with pytest.raises(ValueError, match="PartitionedVariable pr/f does not exist"):
            vs.get_variable("f", [6, 2], partitioner=p)
    with vs.variable_scope("pr2", partitioner=p):                # the scope's partitioner
        assert len(vs.get_variable("g", [4, 3])) == 2
        scalar = vs.get_variable("s", [])                        # scalars are never partitioned
        assert not isinstance(scalar, partitioned_variables.PartitionedVariable) and scalar.name == "pr2/s:0"
    with pytest.raises(ValueError, match="must be fully defined"):
        vs.get_variable("h", partitioner=p, initializer=init_ops.zeros_initializer())


def test_initializers_see_the_partition(mode):
    infos = []

    def init(shape, dtype=None, partition_info=None):
        infos.append((list(shape), list(partition_info.full_shape), list(partition_info.var_offset)))
        return sf.fill(shape, sf.constant(float(partition_info.var_offset[0]), dtype=dtype))

    pv = vs.get_variable("seen", [5, 2], initializer=init, partitioner=partitioned_variables.fixed_size_partitioner(2))
    assert infos == [([3, 2], [5, 2], [0, 0]), ([2, 2], [5, 2], [3, 0])]
    _init(mode)
    np.testing.assert_array_equal(mode.evaluate(pv.as_tensor())[:, 0], [0, 0, 0, 3, 3])
    # glorot on a shard uses the whole variable's fans
    g = vs.get_variable("seen_glorot", [3000, 10], partitioner=partitioned_variables.fixed_size_partitioner(3))
    _init(mode)
    x = np.concatenate(mode.evaluate(list(g)))
    assert np.abs(x).max() <= math.sqrt(6 / 3010) * (1 + 1e-6) and np.abs(x).max() > 0.9 * math.sqrt(6 / 3010)


def test_partitioned_assign(mode):
    pv = vs.get_variable("asg", [5, 2], partitioner=partitioned_variables.fixed_size_partitioner(2),
                         initializer=init_ops.zeros_initializer())
    _init(mode)
    value = np.arange(10, dtype=np.float32).reshape(5, 2)
    updates = pv.assign(value)
    if not mode.eager:
        mode.session.run([u.op for u in updates])
    np.testing.assert_array_equal(mode.evaluate(pv.as_tensor()), value)


def test_create_partitioned_variables(mode):
    value = np.arange(12, dtype=np.float32).reshape(6, 2)
    shards = partitioned_variables.create_partitioned_variables([6, 2], [3, 1], value, name="cpv")
    assert [v.name for v in shards] == ["cpv/part_0:0", "cpv/part_1:0", "cpv/part_2:0"]
    _init(mode)
    np.testing.assert_array_equal(np.concatenate(mode.evaluate(shards)), value)
    with pytest.raises(ValueError, match="must have the length"):
        partitioned_variables.create_partitioned_variables([6, 2], [3], value)


@pytest.mark.parametrize("strategy", ["mod", "div"])
def test_embedding_lookup_over_partitioned_variable(mode, strategy):
    table = np.random.default_rng(1).standard_normal((11, 4)).astype(np.float32)
    pv = vs.get_variable(f"emb_{strategy}", [11, 4], partitioner=partitioned_variables.fixed_size_partitioner(3),
                         initializer=init_ops.zeros_initializer())
    _init(mode)
    # shards as embedding_lookup's strategy lays the rows out
    n = 3
    if strategy == "mod":
        parts = [table[i::n] for i in range(n)]
    else:
        parts = np.split(table, np.cumsum([s.shape.as_list()[0] for s in pv])[:-1])
    assert [p.shape[0] for p in parts] == [s.shape.as_list()[0] for s in pv]
    for shard, part in zip(pv, parts):
        assign = shard.assign(part)
        if not mode.eager:
            mode.session.run(assign.op)
    ids = np.array([[0, 10, 5], [3, 3, 7]])
    got = mode.evaluate(embedding_ops.embedding_lookup(list(pv), ids, partition_strategy=strategy))
    np.testing.assert_allclose(got, table[ids])
    if strategy == "div":                                     # the whole table in row order
        np.testing.assert_allclose(mode.evaluate(embedding_ops.embedding_lookup(pv, ids, partition_strategy="div")),
                                   table[ids])


def test_embedding_lookup_unpacks_a_partitioned_variable_as_tf():
    table = np.arange(10, dtype=np.float32).reshape(5, 2)
    pv = vs.get_variable("emb_unpack", initializer=table, partitioner=partitioned_variables.fixed_size_partitioner(2))
    # shards: rows 0-2 and 3-4; "mod": id 1 -> shard 1 row 0, id 2 -> shard 0 row 1
    np.testing.assert_array_equal(embedding_ops.embedding_lookup(pv, [1, 2]).numpy(), [[6, 7], [2, 3]])


def test_faces():
    assert v1.get_variable is vs.get_variable is sf.get_variable
    assert v1.variable_scope is vs.variable_scope and v1.get_variable_scope is vs.get_variable_scope
    assert v1.fixed_size_partitioner is partitioned_variables.fixed_size_partitioner
    assert v1.min_max_variable_partitioner is sf.min_max_variable_partitioner
    assert v1.create_partitioned_variables is partitioned_variables.create_partitioned_variables
    assert v1.VariableScope is vs.VariableScope and v1.no_regularizer is vs.no_regularizer

"""shape/size/rank of SparseTensors, zeros/ones of a scalar shape in a graph, tile's static shape
with partly known multiples, and Graph.as_graph_def."""
import numpy as np
import pytest

import segflow as sf
from segflow.ops import array_ops


@pytest.mark.parametrize("dims", [(2,), (2, 3), (2, 3, 5, 7)])
def test_shape_size_rank_of_a_sparse_tensor(mode, dims):
    x = np.random.default_rng(0).standard_normal(dims)
    x[x < 0.5] = 0
    sp = sf.sparse.from_dense(sf.constant(x))
    shape, shape64 = array_ops.shape(sp), array_ops.shape(sp, out_type=sf.int64)
    size, rank = array_ops.size(sp), array_ops.rank(sp)
    assert shape.dtype == sf.int32 and shape64.dtype == sf.int64 and size.dtype == sf.int32
    assert shape.shape.as_list() == [len(dims)] and size.shape.as_list() == [] and rank.shape.as_list() == []
    got = mode.evaluate([shape, shape64, size, rank])
    assert got[0].tolist() == got[1].tolist() == list(dims)
    assert int(got[2]) == x.size and int(got[3]) == len(dims)
    assert int(mode.evaluate(array_ops.size(sp, out_type=sf.int64))) == x.size


def test_zeros_and_ones_take_a_scalar_shape(mode):
    got = mode.evaluate([array_ops.ones(3, sf.int64), array_ops.zeros(sf.constant(2))])
    assert got[0].tolist() == [1, 1, 1] and got[0].dtype == np.int64 and got[1].tolist() == [0.0, 0.0]


def test_tile_static_shape_with_partly_known_multiples():
    with sf.Graph().as_default():
        inp = sf.constant(0.0, shape=[1, 3])
        n = sf.placeholder(sf.int32)
        tiled = sf.tile(inp, [n, 7])
        assert tiled.shape.as_list() == [None, 21]
        assert sf.tile(inp, sf.placeholder(sf.int32)).shape.as_list() == [None, None]
        assert sf.tile(sf.placeholder(sf.float32), [n, 2, 2]).shape.as_list() == [None, None, None]
        with pytest.raises(ValueError, match="has 3 entries"):
            sf.tile(sf.placeholder(sf.float32, [None, None]), sf.placeholder(sf.int32, [3]))
        with sf.Session() as sess:
            assert sess.run(tiled, {n: 2}).shape == (2, 21)


def test_as_graph_def_lists_the_nodes():
    g = sf.Graph()
    with g.as_default():
        x = sf.placeholder(sf.float32, [None, 3], name="x")
        a, b = sf.split(x, [1, 2], axis=1)
        with sf.control_dependencies([a.op]):
            y = sf.identity(b, name="y")
    gdef = g.as_graph_def()
    assert [n.name for n in gdef.node] == [op.name for op in g.get_operations()]
    node = {n.name: n for n in gdef.node}
    assert node["y"].op == "Identity" and node["y"].input == [b.name, "^" + a.op.name]
    assert b.name.endswith(":1") and node[a.op.name].input[0] == "x"
    assert node["y"].attr["T"] == sf.float32 and node["x"].attr["shape"].as_list() == [None, 3]
    text = str(gdef)
    assert 'name: "y"' in text and 'op: "Placeholder"' in text and "type: DT_FLOAT" in text
    shapes = g.as_graph_def(add_shapes=True).node[0].attr["_output_shapes"]
    assert [s.as_list() for s in shapes] == [[None, 3]]
    assert len(g.as_graph_def(from_version=len(g.get_operations()) - 1).node) == 1


def test_zeros_and_ones_take_dimensions(mode):
    x = sf.zeros([5, 3])
    got = mode.evaluate([array_ops.ones(x.shape[0]), array_ops.zeros([x.shape[1], 2], sf.int32)])
    assert got[0].tolist() == [1.0] * 5 and got[1].tolist() == [[0, 0]] * 3

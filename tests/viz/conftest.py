"""The graphs the viz tests picture: a small model with gradients, whose embedding lookup gives an
IndexedSlices gradient."""
import numpy as np
import pytest

import segflow as sf

v1 = sf.compat.v1


def build_model():
    """(graph, loss, gradients of [emb, w]) for loss = sum((embedding_lookup(emb, ids) @ w) ** 2)."""
    g = sf.Graph()
    with g.as_default():
        emb = v1.get_variable("emb", initializer=sf.constant(np.arange(12.0, dtype=np.float32).reshape(6, 2)))
        w = v1.Variable([[1.0], [-2.0]], name="w")
        ids = v1.placeholder(sf.int32, [None], name="ids")
        with sf.name_scope("model"):
            e = sf.nn.embedding_lookup(emb, ids)
            y = sf.matmul(e, w)
            loss = sf.reduce_sum(y * y, name="loss")
        grads = sf.gradients(loss, [emb, w])
    return g, loss, grads


@pytest.fixture
def model():
    return build_model()

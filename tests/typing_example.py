"""A short user script that tests/test_typing.py type-checks with mypy (it must report no error)
and runs (so it is real code): eager ops, a graph in a Session, a tape, an optimizer step."""
import numpy as np

import segflow as sf

# eager ops
x = sf.constant([[1.0, 2.0], [3.0, 4.0]], dtype=sf.float32)
ids = np.array([0, 1, 0], dtype=np.int32)
data = sf.convert_to_tensor(np.arange(6.0, dtype=np.float32).reshape(3, 2))
sums = sf.math.unsorted_segment_sum(data, ids, num_segments=2)
means = sf.math.segment_mean(data, [0, 0, 1])
total = sf.reduce_sum(sf.multiply(x, 2.0), axis=1, keepdims=True)
y = sf.matmul(x, sf.transpose(x))
rows = sf.gather(data, [2, 0])
flat = sf.reshape(sf.cast(x, sf.float64), [-1])
hot = sf.one_hot([0, 2], depth=3)
uniq = sf.unique(sf.constant([3, 1, 3]))
parts = sf.dynamic_partition(data, [0, 1, 0], num_partitions=2)
both = sf.concat([x, x], axis=0)
emb = sf.nn.embedding_lookup(sf.ones([4, 3]), [1, 3])
print(sums.numpy(), means.numpy(), total.numpy(), y.numpy(), rows.numpy(), flat.numpy(), hot.numpy(),
      uniq.y.numpy(), len(parts), both.shape, emb.shape, sf.sqrt(x).numpy())

# a tape
w = sf.Variable(np.ones((2, 1), dtype=np.float32), name="w")
with sf.GradientTape() as tape:
    loss = sf.reduce_mean(sf.square(sf.matmul(x, w)))
grad = tape.gradient(loss, w)
scaled = -(w * 2.0 + 1.0) / x[0, 0] @ sf.transpose(w)   # operators on variables and tensors
print(grad, scaled.shape)

# an optimizer step (eager)
opt = sf.compat.v1.train.GradientDescentOptimizer(learning_rate=0.1)
opt.apply_gradients([(grad, w)])
w.assign_add(sf.zeros([2, 1]))
print(w.numpy())

# a graph in a Session
with sf.Graph().as_default():
    p = sf.compat.v1.placeholder(sf.float32, shape=[None, 2], name="p")
    v = sf.compat.v1.Variable(np.zeros((2,), dtype=np.float32))
    out = sf.reduce_sum(p * v + 1.0)
    g = sf.compat.v1.gradients(out, [v])
    step = sf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(out, var_list=[v])
    with sf.compat.v1.Session() as sess:
        sess.run(sf.compat.v1.global_variables_initializer())
        value = sess.run(out, feed_dict={p: [[1.0, 2.0]]})
        sess.run(step, feed_dict={p: [[1.0, 2.0]]})
        print(value, sess.run(g, feed_dict={p: [[1.0, 2.0]]}))

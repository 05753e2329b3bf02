"""A two-layer graph convolutional network (Kipf & Welling) whose neighbourhood aggregation is
`tf.math.unsorted_segment_sum` over the edge list, written the TF1 way (graph, Session, flags,
summaries, a checkpoint).

    python examples/gcn.py [--quick] [--logdir DIR] [--steps N]

The graph is a stochastic block model: `--communities` groups of nodes, dense inside a group and
sparse between groups; node features are weak, noisy hints of the group. A few nodes per group are
labelled; the network learns to label the rest. Each layer computes

    h'[v] = act(sum over edges (u -> v) of  h[u] W / sqrt(deg(u) deg(v)))     (self-loops included)

as a gather of the source rows, a scale by the edge weights and an unsorted_segment_sum into the
destination rows, so the gradient flows back through the segment sum's gradient (a gather) and the
gather's (an IndexedSlices, summed). The program reports the accuracy on the unlabelled nodes
beside a logistic regression on the features alone.
"""
import json
import os

import numpy as np

import segflow.compat.v1 as tf

tf.disable_v2_behavior()
flags = tf.app.flags
flags.DEFINE_string("logdir", "/tmp/segflow_gcn", "where the events and the checkpoint go")
flags.DEFINE_integer("nodes", 3000, "nodes")
flags.DEFINE_integer("communities", 4, "groups in the block model")
flags.DEFINE_integer("features", 32, "features per node")
flags.DEFINE_integer("hidden", 16, "hidden units")
flags.DEFINE_integer("labelled", 10, "labelled nodes per group")
flags.DEFINE_integer("steps", 200, "training steps")
flags.DEFINE_boolean("quick", False, "a small run (make test runs this)")
FLAGS = flags.FLAGS


def block_model(nodes, communities, features, p_in=0.02, p_out=0.002, seed=0):
    """(src, dst, weight) of the normalised adjacency with self-loops, features, labels."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, communities, nodes)
    n_pairs = int(nodes * nodes * (p_in / communities + p_out) * 0.6)
    a, b = rng.integers(0, nodes, n_pairs), rng.integers(0, nodes, n_pairs)
    keep_p = np.where(labels[a] == labels[b], p_in, p_out) / (p_in / communities + p_out)
    keep = (a != b) & (rng.random(n_pairs) < keep_p / keep_p.max())
    a, b = a[keep], b[keep]
    src = np.concatenate([a, b, np.arange(nodes)])          # both directions and self-loops
    dst = np.concatenate([b, a, np.arange(nodes)])
    pairs = np.unique(np.stack([src, dst], 1), axis=0)
    src, dst = pairs[:, 0], pairs[:, 1]
    deg = np.bincount(dst, minlength=nodes).astype(np.float64)
    weight = (1.0 / np.sqrt(deg[src] * deg[dst])).astype(np.float32)
    centers = rng.normal(size=(communities, features))
    x = (0.4 * centers[labels] + rng.normal(size=(nodes, features))).astype(np.float32)
    return src.astype(np.int32), dst.astype(np.int32), weight, x, labels


def graph_conv(h, src, dst, weight, num_nodes, units, name, activation=None):
    with tf.variable_scope(name):
        w = tf.get_variable("w", [h.shape[-1], units], initializer=tf.glorot_uniform_initializer())
        messages = tf.gather(tf.matmul(h, w), src) * weight[:, None]
        out = tf.math.unsorted_segment_sum(messages, dst, num_nodes)
        return activation(out) if activation else out


def main(argv):
    nodes = 800 if FLAGS.quick else FLAGS.nodes
    steps = 100 if FLAGS.quick else FLAGS.steps
    src, dst, weight, x, labels = block_model(nodes, FLAGS.communities, FLAGS.features)
    rng = np.random.default_rng(1)
    train_nodes = np.concatenate([rng.choice(np.flatnonzero(labels == c), FLAGS.labelled, replace=False)
                                  for c in range(FLAGS.communities)])
    test_mask = np.ones(nodes, bool)
    test_mask[train_nodes] = False
    tf.set_random_seed(0)

    features = tf.constant(x)
    keep_prob = tf.placeholder_with_default(1.0, [])
    h = graph_conv(tf.nn.dropout(features, keep_prob=keep_prob), src, dst, weight, nodes, FLAGS.hidden, "gc1",
                   tf.nn.relu)
    logits = graph_conv(tf.nn.dropout(h, keep_prob=keep_prob), src, dst, weight, nodes, FLAGS.communities, "gc2")
    train_logits = tf.gather(logits, train_nodes)
    loss = tf.losses.sparse_softmax_cross_entropy(labels[train_nodes], train_logits)
    loss += 5e-4 * tf.add_n([tf.nn.l2_loss(v) for v in tf.trainable_variables()])
    predicted = tf.argmax(logits, axis=1)
    test_accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.boolean_mask(predicted, test_mask),
                                                    labels[test_mask]), tf.float32))
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=global_step)
    tf.summary.scalar("loss", loss)
    tf.summary.scalar("test_accuracy", test_accuracy)
    tf.summary.histogram("hidden", h)
    merged = tf.summary.merge_all()
    saver = tf.train.Saver()

    with tf.Session() as sess, tf.summary.FileWriter(FLAGS.logdir, sess.graph) as writer:
        sess.run(tf.global_variables_initializer())
        for step in range(steps):
            _, loss_value = sess.run([train_op, loss], {keep_prob: 0.5})
            if step % 10 == 0:
                writer.add_summary(sess.run(merged), step)
        accuracy = float(sess.run(test_accuracy))
        path = saver.save(sess, os.path.join(FLAGS.logdir, "model.ckpt"), global_step=global_step)
    result = {"test_accuracy": accuracy, "features_only_accuracy": features_only_accuracy(x, labels, train_nodes,
                                                                                         test_mask),
              "chance": 1.0 / FLAGS.communities, "edges": int(src.size), "checkpoint": path}
    print(json.dumps(result))
    return 0


def features_only_accuracy(x, labels, train_nodes, test_mask):
    """Nearest class mean on the raw features (what the graph adds is the difference)."""
    means = np.stack([x[train_nodes][labels[train_nodes] == c].mean(0) for c in range(labels.max() + 1)])
    pred = np.argmin(((x[test_mask, None, :] - means[None]) ** 2).sum(-1), axis=1)
    return float(np.mean(pred == labels[test_mask]))


if __name__ == "__main__":
    tf.app.run(main)

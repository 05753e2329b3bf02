"""word2vec skip-gram with noise-contrastive estimation, written the TF1 way (a graph, a Session,
`tf.app.run` with flags), on a generated corpus whose words belong to topics.

    python examples/word2vec.py [--quick] [--logdir DIR] [--steps N]

The corpus: `--topics` topics, each with its own slice of the vocabulary; every sentence picks a
topic and draws its words from that topic's slice (Zipf-distributed) plus a few common "stop
words". Skip-gram pairs (word, a neighbour within `--window`) train the embeddings with
`tf.nn.nce_loss`, whose gradient reaches the embedding and NCE tables as IndexedSlices. At the end
the program reports how often a word's nearest neighbours (cosine) share its topic: far above the
1 / topics of random embeddings once training worked. Loss and learning rate go to TensorBoard
(`tensorboard --logdir DIR`), the variables to a checkpoint in DIR.
"""
import json
import os
import sys

import numpy as np

import segflow.compat.v1 as tf

tf.disable_v2_behavior()
flags = tf.app.flags
flags.DEFINE_string("logdir", "/tmp/segflow_word2vec", "where the events and the checkpoint go")
flags.DEFINE_integer("steps", 3000, "training steps")
flags.DEFINE_integer("vocab", 2000, "vocabulary size")
flags.DEFINE_integer("topics", 8, "topics in the generated corpus")
flags.DEFINE_integer("dim", 32, "embedding size")
flags.DEFINE_integer("batch", 256, "skip-gram pairs per step")
flags.DEFINE_integer("window", 2, "context window on each side")
flags.DEFINE_integer("num_sampled", 32, "negative samples per batch")
flags.DEFINE_boolean("quick", False, "a small run (make test runs this)")
FLAGS = flags.FLAGS

STOP_WORDS = 20          # the most frequent ids, shared by every topic


def generate_corpus(vocab, topics, sentences, length=12, seed=0):
    """(corpus: 1-D int array of word ids, topic_of: topic per word id, -1 for stop words)."""
    rng = np.random.default_rng(seed)
    per_topic = (vocab - STOP_WORDS) // topics
    topic_of = np.full(vocab, -1)
    for t in range(topics):
        topic_of[STOP_WORDS + t * per_topic: STOP_WORDS + (t + 1) * per_topic] = t
    ranks = np.arange(1, per_topic + 1)
    p = 1.0 / ranks
    p /= p.sum()
    words = []
    for _ in range(sentences):
        t = rng.integers(topics)
        w = STOP_WORDS + t * per_topic + rng.choice(per_topic, size=length, p=p)
        stop = rng.random(length) < 0.15
        w[stop] = rng.integers(0, STOP_WORDS, stop.sum())
        words.append(w)
    return np.concatenate(words), topic_of


def skipgram_pairs(corpus, window):
    """All (center, context) pairs within `window` words (sentence edges ignored)."""
    centers, contexts = [], []
    for off in range(1, window + 1):
        centers += [corpus[:-off], corpus[off:]]
        contexts += [corpus[off:], corpus[:-off]]
    return np.concatenate(centers).astype(np.int32), np.concatenate(contexts).astype(np.int64)


def neighbour_topic_purity(emb, topic_of, k=5, sample=300, seed=1):
    """How often the k nearest neighbours (cosine) of a topical word share its topic."""
    rng = np.random.default_rng(seed)
    topical = np.flatnonzero(topic_of >= 0)
    probe = rng.choice(topical, size=min(sample, topical.size), replace=False)
    unit = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
    sims = unit[probe] @ unit.T
    sims[np.arange(probe.size), probe] = -np.inf
    sims[:, topic_of < 0] = -np.inf             # stop words are nobody's topic
    nearest = np.argsort(-sims, axis=1)[:, :k]
    return float(np.mean(topic_of[nearest] == topic_of[probe][:, None]))


def main(argv):
    steps, vocab = (500, 300) if FLAGS.quick else (FLAGS.steps, FLAGS.vocab)
    corpus, topic_of = generate_corpus(vocab, FLAGS.topics, sentences=2000 if FLAGS.quick else 20000)
    centers, contexts = skipgram_pairs(corpus, FLAGS.window)
    rng = np.random.default_rng(2)
    tf.set_random_seed(0)            # the negative samples and initial values: the same run every time

    inputs = tf.placeholder(tf.int32, [None], name="inputs")
    labels = tf.placeholder(tf.int64, [None, 1], name="labels")
    embeddings = tf.get_variable("embeddings", [vocab, FLAGS.dim],
                                 initializer=tf.random_uniform_initializer(-0.5, 0.5))
    nce_weights = tf.get_variable("nce_weights", [vocab, FLAGS.dim],
                                  initializer=tf.truncated_normal_initializer(stddev=1.0 / np.sqrt(FLAGS.dim)))
    nce_biases = tf.get_variable("nce_biases", [vocab], initializer=tf.zeros_initializer())
    embed = tf.nn.embedding_lookup(embeddings, inputs)
    loss = tf.reduce_mean(tf.nn.nce_loss(weights=nce_weights, biases=nce_biases, labels=labels, inputs=embed,
                                         num_sampled=FLAGS.num_sampled, num_classes=vocab))
    global_step = tf.train.get_or_create_global_step()
    learning_rate = tf.train.exponential_decay(1.0, global_step, steps // 4, 0.8)
    train_op = tf.train.AdagradOptimizer(learning_rate).minimize(loss, global_step=global_step)
    tf.summary.scalar("loss", loss)
    tf.summary.scalar("learning_rate", learning_rate)
    merged = tf.summary.merge_all()
    saver = tf.train.Saver(max_to_keep=2)

    losses = []
    with tf.Session() as sess, tf.summary.FileWriter(FLAGS.logdir, sess.graph) as writer:
        sess.run(tf.global_variables_initializer())
        for step in range(steps):
            pick = rng.integers(0, centers.size, FLAGS.batch)
            _, loss_value, summary = sess.run([train_op, loss, merged],
                                              {inputs: centers[pick], labels: contexts[pick, None]})
            losses.append(float(loss_value))
            if step % 20 == 0:
                writer.add_summary(summary, step)
            if step % max(1, steps // 5) == 0:
                tf.logging.info("step %d: loss %.3f", step, loss_value)
        path = saver.save(sess, os.path.join(FLAGS.logdir, "model.ckpt"), global_step=global_step)
        final = sess.run(embeddings)
    purity = neighbour_topic_purity(final, topic_of)
    result = {"first_loss": float(np.mean(losses[:20])), "last_loss": float(np.mean(losses[-20:])),
              "neighbour_topic_purity": purity, "chance": 1.0 / FLAGS.topics, "checkpoint": path}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    tf.logging.set_verbosity(tf.logging.INFO)
    tf.app.run(main)

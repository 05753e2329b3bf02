"""A matrix-factorisation recommender, written the TF1 way: a `tf.data` pipeline feeding a graph,
embedding lookups whose gradients are IndexedSlices, Adam on those sparse gradients, summaries and
a checkpoint.

    python examples/matrix_factorization.py [--quick] [--logdir DIR] [--epochs N]

The ratings are generated from hidden low-rank user and item factors plus noise, so the best
achievable test RMSE (the noise level) is known. The model predicts
`mu + b_user + b_item + <p_user, q_item>` with L2 on the looked-up rows, trains on 90% of the
ratings and reports the test RMSE beside two baselines (the global mean, and the noise floor).
"""
import json
import os

import numpy as np

import segflow.compat.v1 as tf

tf.disable_v2_behavior()
flags = tf.app.flags
flags.DEFINE_string("logdir", "/tmp/segflow_mf", "where the events and the checkpoint go")
flags.DEFINE_integer("users", 3000, "users")
flags.DEFINE_integer("items", 2000, "items")
flags.DEFINE_integer("ratings", 200_000, "observed ratings")
flags.DEFINE_integer("rank", 8, "rank of the hidden factors and of the model")
flags.DEFINE_integer("epochs", 10, "passes over the training ratings")
flags.DEFINE_integer("batch", 1024, "ratings per step")
flags.DEFINE_float("noise", 0.3, "standard deviation of the rating noise")
flags.DEFINE_boolean("quick", False, "a small run (make test runs this)")
FLAGS = flags.FLAGS


def generate_ratings(users, items, ratings, rank, noise, seed=0):
    """(user ids, item ids, ratings) from hidden factors: r = 3 + b_u + b_i + <p_u, q_i> + noise."""
    rng = np.random.default_rng(seed)
    p = rng.normal(scale=1.0 / np.sqrt(rank), size=(users, rank))
    q = rng.normal(scale=1.0, size=(items, rank))
    bu, bi = rng.normal(scale=0.3, size=users), rng.normal(scale=0.3, size=items)
    u = rng.integers(0, users, ratings)
    i = np.minimum(rng.zipf(1.3, ratings) - 1, items - 1)        # popular items get most ratings
    r = 3.0 + bu[u] + bi[i] + np.sum(p[u] * q[i], axis=1) + rng.normal(scale=noise, size=ratings)
    return u.astype(np.int64), i.astype(np.int64), r.astype(np.float32)


def main(argv):
    if FLAGS.quick:
        users, items, n, epochs = 800, 500, 40_000, 6
    else:
        users, items, n, epochs = FLAGS.users, FLAGS.items, FLAGS.ratings, FLAGS.epochs
    u, i, r = generate_ratings(users, items, n, FLAGS.rank, FLAGS.noise)
    split = int(0.9 * n)
    mu = float(r[:split].mean())
    tf.set_random_seed(0)

    train = (tf.data.Dataset.from_tensor_slices((u[:split], i[:split], r[:split]))
             .shuffle(10_000, seed=1).batch(FLAGS.batch).repeat(epochs))
    user, item, rating = train.make_one_shot_iterator().get_next()

    with tf.variable_scope("model", initializer=tf.random_normal_initializer(stddev=0.1)):
        user_factors = tf.get_variable("user_factors", [users, FLAGS.rank])
        item_factors = tf.get_variable("item_factors", [items, FLAGS.rank])
        user_bias = tf.get_variable("user_bias", [users], initializer=tf.zeros_initializer())
        item_bias = tf.get_variable("item_bias", [items], initializer=tf.zeros_initializer())

    def predict(user, item):
        p = tf.nn.embedding_lookup(user_factors, user)
        q = tf.nn.embedding_lookup(item_factors, item)
        pred = mu + tf.nn.embedding_lookup(user_bias, user) + tf.nn.embedding_lookup(item_bias, item)
        return pred + tf.reduce_sum(p * q, axis=1), p, q

    pred, p, q = predict(user, item)
    mse = tf.losses.mean_squared_error(rating, pred)
    loss = mse + 0.02 * (tf.nn.l2_loss(p) + tf.nn.l2_loss(q)) / tf.cast(tf.shape(p)[0], tf.float32)
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=global_step)
    tf.summary.scalar("train_rmse", tf.sqrt(mse))
    merged = tf.summary.merge_all()

    test_user = tf.placeholder(tf.int64, [None])
    test_item = tf.placeholder(tf.int64, [None])
    test_rating = tf.placeholder(tf.float32, [None])
    test_pred, _, _ = predict(test_user, test_item)
    test_rmse = tf.sqrt(tf.reduce_mean(tf.square(test_pred - test_rating)))
    test_summary = tf.summary.scalar("test_rmse", test_rmse, collections=[])
    saver = tf.train.Saver()

    test_feed = {test_user: u[split:], test_item: i[split:], test_rating: r[split:]}
    steps_per_epoch = -(-split // FLAGS.batch)
    with tf.Session() as sess, tf.summary.FileWriter(FLAGS.logdir, sess.graph) as writer:
        sess.run(tf.global_variables_initializer())
        step = 0
        while True:
            try:
                _, summary = sess.run([train_op, merged])
            except tf.errors.OutOfRangeError:
                break
            step += 1
            if step % 20 == 0:
                writer.add_summary(summary, step)
            if step % steps_per_epoch == 0:
                rmse, summary = sess.run([test_rmse, test_summary], test_feed)
                writer.add_summary(summary, step)
                tf.logging.info("epoch %d: test RMSE %.4f", step // steps_per_epoch, rmse)
        final = float(sess.run(test_rmse, test_feed))
        path = saver.save(sess, os.path.join(FLAGS.logdir, "model.ckpt"), global_step=global_step)
    result = {"test_rmse": final, "global_mean_rmse": float(np.sqrt(np.mean((r[split:] - mu) ** 2))),
              "noise": FLAGS.noise, "steps": step, "checkpoint": path}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    tf.logging.set_verbosity(tf.logging.INFO)
    tf.app.run(main)

"""The TF1-style programs in examples/, run as a user runs them (`python examples/X.py --quick`),
each checked for what it claims: it learned, it logged to TensorBoard, it left a checkpoint."""
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import segflow as sf
from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"


def run_example(name, logdir):
    r = subprocess.run([sys.executable, str(EXAMPLES / name), "--quick", f"--logdir={logdir}"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def scalars(logdir, tag):
    """[(step, value)] of a scalar summary, read back with TensorBoard's own loader."""
    out = []
    for path in sorted(pathlib.Path(logdir).glob("events.out.tfevents.*")):
        for event in LegacyEventFileLoader(str(path)).Load():
            if event.HasField("summary"):
                out += [(event.step, v.simple_value) for v in event.summary.value if v.tag == tag]
    return out


def graph_logged(logdir):
    return any(e.HasField("graph_def") for p in pathlib.Path(logdir).glob("events.out.tfevents.*")
               for e in LegacyEventFileLoader(str(p)).Load())


def test_word2vec_learns_topics_with_nce(tmp_path):
    res = run_example("word2vec.py", tmp_path)
    # nearest neighbours share the topic far more often than the 1/8 of random embeddings
    assert res["neighbour_topic_purity"] > 3 * res["chance"], res
    assert res["last_loss"] < res["first_loss"] / 3
    losses = scalars(tmp_path, "loss")
    assert len(losses) >= 10 and losses[-1][1] < losses[0][1] and graph_logged(tmp_path)
    assert sf.train.latest_checkpoint(str(tmp_path)) == res["checkpoint"]
    reader = sf.train.load_checkpoint(res["checkpoint"])
    emb = reader.get_tensor("embeddings")
    assert emb.shape == (300, 32) and np.isfinite(emb).all()
    assert reader.get_tensor("global_step") == 500


def test_matrix_factorization_beats_the_mean_and_restores(tmp_path):
    res = run_example("matrix_factorization.py", tmp_path)
    assert res["test_rmse"] < 0.7 * res["global_mean_rmse"], res
    assert res["test_rmse"] > res["noise"] * 0.9       # cannot beat the noise it was generated with
    test = scalars(tmp_path, "test_rmse")
    assert len(test) >= 3 and test[-1][1] < test[0][1]
    # The checkpoint restores into a fresh graph built the same way.
    with sf.Graph().as_default():
        with sf.compat.v1.variable_scope("model"):
            uf = sf.compat.v1.get_variable("user_factors", [800, 8])
        saver = sf.compat.v1.train.Saver([uf])
        with sf.compat.v1.Session() as sess:
            saver.restore(sess, res["checkpoint"])
            restored = sess.run(uf)
    np.testing.assert_array_equal(restored, sf.train.load_variable(res["checkpoint"], "model/user_factors"))
    assert np.abs(restored).max() > 0.05        # trained, not the initial zeros-ish values


def test_gcn_uses_the_graph(tmp_path):
    res = run_example("gcn.py", tmp_path)
    assert res["test_accuracy"] > res["features_only_accuracy"] + 0.05, res
    assert res["test_accuracy"] > 2 * res["chance"]
    acc = scalars(tmp_path, "test_accuracy")
    assert acc and acc[-1][1] == pytest.approx(res["test_accuracy"], abs=0.05)
    reader = sf.train.load_checkpoint(res["checkpoint"])
    assert reader.get_tensor("gc1/w").shape == (32, 16) and reader.get_tensor("gc2/w").shape == (16, 4)

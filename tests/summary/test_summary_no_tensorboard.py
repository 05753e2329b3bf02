"""Without TensorBoard: `import segflow` never imports it (or protobuf), and every summary is a
no-op after exactly one warning that says what to install (TensorBoard's import made to fail)."""
import subprocess
import sys
import textwrap

CODE = textwrap.dedent("""
    import os, sys, tempfile, warnings
    import segflow as sf
    assert "tensorboard" not in sys.modules and "google.protobuf" not in sys.modules
    sys.modules["tensorboard"] = None            # `import tensorboard...` now raises ImportError
    logdir = tempfile.mkdtemp()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w = sf.summary.create_file_writer(logdir)
        with w.as_default(step=1):
            assert bool(sf.summary.scalar("a", 1.0)) is False
            assert bool(sf.summary.histogram("h", [1.0, 2.0])) is False
        v1 = sf.compat.v1
        assert v1.summary.scalar("s", 2.0).numpy() == b""
        with sf.Graph().as_default() as g:
            v1.summary.scalar("loss", 1.0)
            v1.summary.histogram("h", [1.0])
            merged = v1.summary.merge_all()
            with v1.Session(graph=g) as sess, v1.summary.FileWriter(logdir, g) as writer:
                out = sess.run(merged)
                writer.add_summary(out, 3)
                writer.add_run_metadata(v1.RunMetadata(), "t")
        assert out == b"", out
    messages = [str(c.message) for c in caught]
    assert len(messages) == 1, messages
    assert "pip install" in messages[0] and "tensorboard" in messages[0], messages
    assert os.listdir(logdir) == [], os.listdir(logdir)
    print("ok")
""")


def test_summaries_without_tensorboard_are_noops_with_one_warning():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.strip() == "ok"

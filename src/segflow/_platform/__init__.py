"""TF's `tensorflow.python.platform` pieces that TF1 programs use: the entry point (`app.run`), its
flags (absl's, imported on first use, never by `import segflow`), and logging (`tf_logging`)."""

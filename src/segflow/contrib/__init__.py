"""Ports of TensorFlow 1.x contrib modules (`tensorflow.contrib.*` -> `segflow.contrib.*`)."""

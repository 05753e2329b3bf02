"""Ports of TensorFlow 1.x contrib modules that older code imports (`tensorflow.contrib.*` -> `segflow.contrib.*`)."""

"""TensorFlow's `layers` package name (TF1's `tf.layers`): faces over segflow._ops."""

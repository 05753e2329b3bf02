"""TensorFlow's `module` package name."""

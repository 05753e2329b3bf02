"""TensorFlow's `debug.lib` package name: faces over segflow._ops."""

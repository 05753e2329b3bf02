"""TensorFlow's `debug` package name: faces over segflow._ops."""

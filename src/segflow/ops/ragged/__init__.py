"""TensorFlow's `ops.ragged` package names: faces over segflow._ops.ragged."""

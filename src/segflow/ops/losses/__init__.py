"""TensorFlow's `ops.losses` package names (losses, losses_impl, util): faces over segflow._ops.losses."""

"""TensorFlow's `moving_averages` module name: a face over segflow._training.moving_averages."""
from segflow._training.moving_averages import ExponentialMovingAverage, assign_moving_average

__all__ = ["ExponentialMovingAverage", "assign_moving_average"]

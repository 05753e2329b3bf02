"""TensorFlow's `ops.losses.util` module name: the loss collections, a face over segflow._ops.losses."""
from segflow._ops.losses import (add_loss, get_losses, get_regularization_loss, get_regularization_losses,
                                 get_total_loss)

__all__ = ["add_loss", "get_losses", "get_regularization_loss", "get_regularization_losses", "get_total_loss"]

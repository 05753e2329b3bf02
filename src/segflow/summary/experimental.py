"""`sf.summary.experimental` (TF's `tf.summary.experimental`): the default step and summary scopes."""
from segflow._ops.summary import summary_scope
from segflow._ops.summary_writer import get_step, set_step

__all__ = ["get_step", "set_step", "summary_scope"]

"""TensorFlow's `tensorflow.python.ops.summary_ops_v2`: the TF2 summary writers, state and ops."""
from segflow._ops.summary import all_v2_summary_ops, flush, summary_scope, write
from segflow._ops.summary_writer import (SummaryWriter, create_file_writer_v2, create_noop_writer, get_step,
                                         has_default_writer, record_if, set_step, should_record_summaries)

__all__ = ["SummaryWriter", "all_v2_summary_ops", "create_file_writer_v2", "create_noop_writer", "flush",
           "get_step", "has_default_writer", "record_if", "set_step", "should_record_summaries",
           "summary_scope", "write"]

"""`sf.summary` (TensorFlow 2's `tf.summary`): TensorBoard summaries written to the default writer.

    writer = sf.summary.create_file_writer("/tmp/logs")
    with writer.as_default(step=0):
        sf.summary.scalar("loss", 0.25)

Needs TensorBoard (`pip install segflow[summary]`); without it summaries are no-ops after one
warning. Not here yet: `image`, `audio`, `graph` and the `trace_*` profiler functions.
"""
from segflow._ops.summary import flush, histogram, scalar, text, write
from segflow._ops.summary_writer import (SummaryWriter, create_file_writer, create_noop_writer, record_if,
                                         should_record_summaries)
from segflow.summary import experimental

__all__ = ["SummaryWriter", "create_file_writer", "create_noop_writer", "experimental", "flush", "histogram",
           "record_if", "scalar", "should_record_summaries", "text", "write"]

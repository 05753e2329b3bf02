"""`sf.compat.v1.summary` (TF's `tf.compat.v1.summary`): TF1's summary ops, which compute serialized
`Summary` protos, and the `FileWriter` that writes them (with graphs and run metadata) for
TensorBoard. Needs TensorBoard (`pip install segflow[summary]`); without it they are no-ops after
one warning. Not here yet: `image`, `audio`, `get_summary_description`."""
from segflow._ops.summary import all_v2_summary_ops
from segflow._ops.summary_file_writer import FileWriter, FileWriterCache
from segflow._ops.summary_proto import Event, SessionLog, Summary, SummaryDescription, TaggedRunMetadata
from segflow._ops.summary_v1 import histogram, merge, merge_all, scalar, tensor_summary, text

__all__ = ["Event", "FileWriter", "FileWriterCache", "SessionLog", "Summary", "SummaryDescription",
           "TaggedRunMetadata", "all_v2_summary_ops", "histogram", "merge", "merge_all", "scalar",
           "tensor_summary", "text"]

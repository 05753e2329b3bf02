"""Reads back event files with TensorBoard's own loaders (the code TensorBoard serves them with)."""
import pathlib

from tensorboard.backend.event_processing.event_file_loader import EventFileLoader, LegacyEventFileLoader
from tensorboard.util import tensor_util


def event_files(logdir):
    return sorted(str(p) for p in pathlib.Path(logdir).glob("events.out.tfevents.*"))


def events(logdir, legacy=False):
    """Every event of every file in `logdir`, in file order; legacy=True: as written (TF1's
    simple_value / histo), else migrated to tensors as TensorBoard's backend sees them."""
    loader = LegacyEventFileLoader if legacy else EventFileLoader
    out = []
    for path in event_files(logdir):
        out.extend(loader(path).Load())
    return out


def values(logdir, legacy=False):
    """[(step, tag, Summary.Value)] of every summary value in `logdir`."""
    return [(e.step, v.tag, v) for e in events(logdir, legacy) if e.HasField("summary") for v in e.summary.value]


def tensor(value):
    return tensor_util.make_ndarray(value.tensor)

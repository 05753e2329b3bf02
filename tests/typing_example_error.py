"""Deliberate type errors for tests/test_typing.py: mypy must report each marked line."""
import segflow as sf

data = sf.constant([1.0, 2.0, 3.0])
sf.math.unsorted_segment_sum(data, [0, 1, 0], num_segments="2")  # error: num_segments
sf.reduce_sum(data, name=3)  # error: name
sf.one_hot([0, 1], depth=2.5)  # error: depth

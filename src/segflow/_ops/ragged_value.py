"""RaggedTensorValue: a ragged tensor's value in NumPy (TF's `tf.compat.v1.ragged.RaggedTensorValue`),
what Session.run returns for a RaggedTensor."""
import numpy as np

__all__ = ["RaggedTensorValue", "RowPartitioned"]


class RowPartitioned:
    """What a ragged tensor and its NumPy value share: `values` partitioned into rows by
    `row_splits`, where `values` may itself be partitioned (one more ragged dimension)."""

    __slots__ = ()

    @property
    def values(self):
        return self._values

    @property
    def row_splits(self):
        return self._row_splits

    @property
    def flat_values(self):
        v = self._values
        while isinstance(v, RowPartitioned):
            v = v.values
        return v

    @property
    def nested_row_splits(self):
        out, v = [self._row_splits], self._values
        while isinstance(v, RowPartitioned):
            out.append(v.row_splits)
            v = v.values
        return tuple(out)

    @property
    def ragged_rank(self):
        return len(self.nested_row_splits)

    @property
    def dtype(self):
        return self.flat_values.dtype


class RaggedTensorValue(RowPartitioned):
    """`values` (a NumPy array, or another RaggedTensorValue) partitioned into rows by `row_splits`."""

    def __init__(self, values, row_splits):
        self._values = values
        self._row_splits = np.asarray(row_splits)

    @property
    def shape(self):
        """(nrows, None for each ragged dimension, the flat values' inner dimensions...)."""
        return (self._row_splits.shape[0] - 1,) + (None,) * self.ragged_rank + tuple(np.shape(self.flat_values)[1:])

    def row_lengths(self):
        return np.diff(self._row_splits)

    def value_rowids(self):
        return np.repeat(np.arange(self._row_splits.size - 1, dtype=self._row_splits.dtype),
                         np.diff(self._row_splits))

    def nrows(self):
        return self._row_splits.shape[0] - 1

    def _value_rows(self, a, b):
        """Rows a..b of `values` (a RaggedTensorValue of them when values is ragged)."""
        v = self._values
        if isinstance(v, RaggedTensorValue):
            splits = v.row_splits[a:b + 1]
            return RaggedTensorValue(v._value_rows(int(splits[0]), int(splits[-1])), splits - splits[0])
        return v[a:b]

    def _rows(self):
        s = self._row_splits
        return [self._value_rows(int(s[i]), int(s[i + 1])) for i in range(s.size - 1)]

    def to_list(self):
        """The rows as nested Python lists."""
        return [row.to_list() if isinstance(row, RaggedTensorValue) else np.asarray(row).tolist()
                for row in self._rows()]

    def numpy(self):
        """An object array of the rows (each a NumPy array, or for nested rows another object array)."""
        rows = self._rows()
        out = np.empty(len(rows), dtype=object)
        for i, row in enumerate(rows):
            out[i] = row.numpy() if isinstance(row, RaggedTensorValue) else np.asarray(row)
        return out

    def __repr__(self):
        return f"tf.RaggedTensorValue(values={self._values!r}, row_splits={self._row_splits!r})"

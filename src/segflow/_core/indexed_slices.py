"""IndexedSlices: a sparse gradient (rows `values` at `indices` of a dense tensor of `dense_shape`)."""

from segflow._core import fold as tensor_util, html, shapes as tensor_shape

__all__ = ['IndexedSlices', 'IndexedSlicesValue']

# ----------------------------------------------------------------------------------------------
# IndexedSlices


class IndexedSlices:
    """A sparse slice of a dense tensor: rows `indices` of a tensor of shape `dense_shape` hold
    `values` (repeated indices add up). The gradient of gather and embedding lookups.

    Turning one into a dense tensor is explicit (`convert_to_tensor`, or any op taking a dense input)
    and warns, naming the op that made it, when the dense result is large or of unknown shape.
    """

    __array_priority__ = 100

    def __init__(self, values, indices, dense_shape=None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self):
        return self._values

    @property
    def indices(self):
        return self._indices

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def name(self):
        return self._values.name

    @property
    def device(self):
        return self._values.device

    @property
    def op(self):
        return self._values.op

    @property
    def graph(self):
        return self._values.graph

    @property
    def shape(self):
        if self._dense_shape is None:
            return tensor_shape.unknown_shape()
        known = tensor_util.constant_value(self._dense_shape)
        if known is not None:
            return tensor_shape.TensorShape([int(d) for d in known])
        return tensor_shape.unknown_shape(rank=self._values.shape.rank)

    def get_shape(self):
        return self.shape

    def __neg__(self):
        return IndexedSlices(-self._values, self._indices, self._dense_shape)

    def __repr__(self):
        return (f"IndexedSlices(indices={self._indices!r}, values={self._values!r}"
                f"{'' if self._dense_shape is None else f', dense_shape={self._dense_shape!r}'})")

    def _repr_html_(self):
        fields = [("rows", self._values.shape[0]), ("dense_shape", self.shape),
                  ("dtype", self._values.dtype.name)]
        values, indices = getattr(self._values, "_value", None), getattr(self._indices, "_value", None)
        body = "" if values is None or indices is None else html.indexed_rows_table(indices, values)
        return html.card("sf.IndexedSlices", fields, body)


class IndexedSlicesValue:
    """The value of an IndexedSlices fetched from a Session: NumPy values, indices, dense_shape."""

    def __init__(self, values, indices, dense_shape):
        self.values = values
        self.indices = indices
        self.dense_shape = dense_shape

    def __iter__(self):
        return iter((self.values, self.indices, self.dense_shape))

    def __repr__(self):
        return f"IndexedSlicesValue(values={self.values!r}, indices={self.indices!r}, dense_shape={self.dense_shape!r})"

    def _repr_html_(self):
        return html.card("sf.IndexedSlicesValue", [("rows", len(self.indices)), ("dense_shape", self.dense_shape)],
                         html.indexed_rows_table(self.indices, self.values))

"""The type aliases of segflow's public signatures (issue 15), shared by `_core`, `_ops` and `_training`.

Annotated modules use `from __future__ import annotations`, so their hints are strings that cost
nothing at import time; this module is imported for real (so that `typing.get_type_hints` resolves
them) and holds only aliases and protocols: importing it costs well under a millisecond.

The aliases are deliberately broad where segflow converts its input (anything `convert_to_tensor`
takes is `TensorLike`) and narrow where a wrong kind of value is a plain mistake (a count is an
`IntLike`, a name a `str`). TensorFlow ships no hints; these follow segflow's behaviour.
"""

from __future__ import annotations

from typing import Any, Optional, Protocol, Sequence, Union

import numpy as np

from segflow._core.dtypes import DType
from segflow._core.indexed_slices import IndexedSlices
from segflow._core.operation import Operation
from segflow._core.shapes import Dimension, TensorShape
from segflow._core.tensor import Tensor

__all__ = ["SupportsArray", "TensorLike", "IntLike", "AxisLike", "DTypeLike", "ShapeLike", "Name",
           "GradientLike", "UnaryOp", "BinaryOp", "Fetchable"]


class SupportsArray(Protocol):
    """Anything NumPy can turn into an array: variables, NumPy arrays, array-likes of other libraries."""

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray: ...


# What an op accepts as a tensor input: a Tensor, anything with `__array__` (a Variable, an ndarray),
# a Python scalar, string or (nested) list/tuple of them.
TensorLike = Union[Tensor, SupportsArray, np.ndarray, np.generic, bool, int, float, complex, str, bytes,
                   Sequence[Any]]

# An integer input (a count, a depth, a number of segments): a Python or NumPy int, or a tensor/array of them.
IntLike = Union[int, np.integer, Tensor, SupportsArray, np.ndarray]

# An axis argument: one int, several, or an int tensor.
AxisLike = Union[int, np.integer, Sequence[int], Tensor, SupportsArray, np.ndarray]

# A dtype argument: segflow's DType, a NumPy dtype or scalar type, a Python type, or a name ("float32").
DTypeLike = Union[DType, np.dtype, type, str]

# A shape argument: a TensorShape, a list/tuple of dims (None for unknown), or an int tensor.
ShapeLike = Union[TensorShape, Sequence[Union[int, None, Dimension]], int, Tensor, SupportsArray, np.ndarray]

# An op's name argument (TensorFlow's `name=None`).
Name = Optional[str]

# A gradient: dense, or sparse rows (IndexedSlices) from gathers and embedding lookups.
GradientLike = Union[Tensor, IndexedSlices]

# What Session.run fetches: a graph element, its name, or a nested list/tuple/dict of them.
Fetchable = Union[Tensor, Operation, IndexedSlices, SupportsArray, str, Sequence[Any], dict]

class UnaryOp(Protocol):
    """An elementwise op of one input (`sf.sqrt`, `sf.exp`, ...)."""

    def __call__(self, x: TensorLike, name: Name = None) -> Tensor: ...


class BinaryOp(Protocol):
    """An elementwise op of two broadcast inputs (`sf.maximum`, `sf.equal`, ...)."""

    def __call__(self, x: TensorLike, y: TensorLike, name: Name = None) -> Tensor: ...

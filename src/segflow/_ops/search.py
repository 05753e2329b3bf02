"""`searchsorted`: where values would be inserted into sorted rows (TF's LowerBound / UpperBound).
It has no gradient (its output is an index)."""
import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.apply import apply_op
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._core.registry import NotDifferentiable, TensorSpec, register_op
from segflow._core.tensor import Tensor
from segflow.kernels import BadInput

__all__ = ["searchsorted"]


def _infer_bound(op, sorted_inputs, values, out_type=dtypes.int32):
    a, v = sorted_inputs.shape, values.shape
    if a.rank is not None and a.rank < 1:
        raise errors.invalid_input(op, "sorted_inputs", f"must be at least 1-D, got shape {a}")
    if a.rank is not None and v.rank is not None:
        if a.rank != v.rank:
            raise errors.invalid_input(op, "values", f"must have the rank of sorted_inputs ({a.rank}), got shape {v}")
        if not tensor_shape.TensorShape(a.as_list()[:-1]).is_compatible_with(tensor_shape.TensorShape(v.as_list()[:-1])):
            raise errors.invalid_input(op, "values", f"leading dimensions {v} must match those of sorted_inputs {a}")
    return [TensorSpec(out_type, v)]


def _bound_kernel(side):
    def kernel(sorted_inputs, values, out_type=dtypes.int32):
        if sorted_inputs.ndim != values.ndim or sorted_inputs.shape[:-1] != values.shape[:-1]:
            raise BadInput("values", f"shape {list(values.shape)} must match the leading dimensions of "
                           f"sorted_inputs {list(sorted_inputs.shape)}")
        a = sorted_inputs.reshape(-1, sorted_inputs.shape[-1]) if sorted_inputs.ndim else sorted_inputs
        v = values.reshape(-1, values.shape[-1])
        out = np.empty(v.shape, out_type.as_numpy_dtype)
        for i in range(v.shape[0]):
            out[i] = np.searchsorted(a[i], v[i], side=side)
        return out.reshape(values.shape)
    return kernel


for _name, _side in (("LowerBound", "left"), ("UpperBound", "right")):
    register_op(_name, inputs=("sorted_inputs", "values"), attrs={"T": ("sorted_inputs", "values")},
                allowed={"T": dtypes.REAL_NUMERIC},
                infer=_infer_bound, kernel=_bound_kernel(_side), defaults={"out_type": dtypes.int32})
    NotDifferentiable(_name)


def searchsorted(sorted_sequence, values, side="left", out_type=dtypes.int32, name=None):
    """For each value, the index in its row of `sorted_sequence` (sorted along the last axis)
    before which it would be inserted: the first such place (`side="left"`) or the last ("right").
    `values` has the leading dimensions of sorted_sequence."""
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', got {side!r}")
    out_type = dtypes.as_dtype(out_type)
    if out_type not in (dtypes.int32, dtypes.int64):
        raise ValueError(f"out_type must be int32 or int64, got {out_type.name}")
    with name_scope(name, "searchsorted"):
        a = sorted_sequence if isinstance(sorted_sequence, Tensor) else convert_to_tensor(sorted_sequence)
        v = values if isinstance(values, Tensor) else convert_to_tensor(values, dtype=a.dtype)
        if a.shape.rank == 1 and v.shape.rank == 0:
            raise ValueError("searchsorted: values must be at least 1-D")
        return apply_op("LowerBound" if side == "left" else "UpperBound", a, v, out_type=out_type)

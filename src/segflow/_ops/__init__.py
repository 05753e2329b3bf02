"""The op families, one concept per module (op rows and public functions), each beside its
`*_grad.py`. Importing this package registers every op and gradient; the TF-named faces
(`segflow.ops.math_ops`, ...) and the flat API re-export the public functions."""
from segflow._ops import (  # noqa: F401 - imported for their registrations
    elementwise_grad, operators, reduce_grad, segment_grad, linalg_grad, gather_grad, scatter_grad, stitch_grad,
    sort_grad, shape_grad, slicing_grad, transpose_grad, join_grad, nn_grad, variable_grad,
)

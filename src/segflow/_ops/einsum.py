"""`einsum` (one Einsum op: NumPy's einsum, with a gradient that is an einsum again) and
`tensordot` (an einsum of generated subscripts).

The equation is made explicit before the op is built: `...` becomes letters (the operands' ranks
must be known) and a missing `->` gets NumPy's implicit output (the indices used once, sorted). The
gradient for operand i is `einsum("out,others->i's indices", grad, others)`, with the indices only
operand i has summed and broadcast back; an operand with a repeated index (a diagonal, "ii->i")
has no gradient here.
"""
import string

import numpy as np

from segflow._core import dtypes, errors, shapes as tensor_shape
from segflow._core.apply import apply_op
from segflow._core.convert import convert_to_tensor
from segflow._core.graph import name_scope
from segflow._core.registry import RegisterGradient, TensorSpec, register_op
from segflow._core.tensor import Tensor
from segflow._ops import elementwise as cw, join as join_ops, shape as shape_ops

__all__ = ["einsum", "tensordot"]

_LETTERS = string.ascii_letters


def _parse(equation, ranks):
    """(input subscripts, output subscripts) of an equation, explicit: letters only."""
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->")
        explicit = True
    else:
        lhs, out, explicit = eq, None, False
    ins = lhs.split(",")
    if len(ins) != len(ranks):
        raise ValueError(f"einsum: the equation '{equation}' names {len(ins)} operands, got {len(ranks)}")
    used = set(c for c in eq if c.isalpha())
    free = [c for c in _LETTERS if c not in used]
    ell_rank = 0
    for sub, r in zip(ins, ranks):
        if "..." in sub:
            if r is None:
                raise ValueError("einsum: '...' needs operands of known rank")
            ell_rank = max(ell_rank, r - len(sub.replace("...", "")))
    ell = "".join(free[:ell_rank])
    expanded = []
    for sub, r in zip(ins, ranks):
        if "..." in sub:
            n = r - len(sub.replace("...", ""))
            sub = sub.replace("...", ell[ell_rank - n:] if n else "")
        bad = [c for c in sub if not c.isalpha()]
        if bad:
            raise ValueError(f"einsum: invalid subscript characters {bad} in '{equation}'")
        if r is not None and len(sub) != r:
            raise ValueError(f"einsum: subscripts '{sub}' do not match an operand of rank {r} in '{equation}'")
        expanded.append(sub)
    if explicit:
        out = out.replace("...", ell)
    else:
        counts = {}
        for sub in expanded:
            for c in sub:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in ell))
    for c in out:
        if not any(c in sub for sub in expanded):
            raise ValueError(f"einsum: output subscript '{c}' appears in no input of '{equation}'")
    return expanded, out


def _infer_einsum(op, inputs, equation):
    ins, out = equation.split("->")
    ins = ins.split(",")
    dims = {}
    dtype = inputs[0].dtype
    for t, sub in zip(inputs, ins):
        if t.dtype != dtype:
            raise errors.invalid_input(op, "inputs", f"dtypes differ: {dtype.name} and {t.dtype.name}")
        if t.shape.rank is None:
            continue
        for c, d in zip(sub, t.shape.as_list()):
            if d is None:
                continue
            if dims.get(c) not in (None, d) and d != 1 and dims.get(c) != 1:
                raise errors.invalid_input(op, "inputs", f"dimension '{c}' is {dims[c]} in one operand and {d} "
                                           f"in another ('{equation}')")
            if dims.get(c) in (None, 1):
                dims[c] = d
    return [TensorSpec(dtype, tensor_shape.TensorShape([dims.get(c) for c in out]))]


def _einsum_kernel(inputs, equation):
    try:
        return np.asarray(np.einsum(equation, *inputs))
    except ValueError as e:
        raise errors.InvalidArgumentError(None, None, f"Einsum: {e} ('{equation}', operand shapes "
                                          f"{[list(np.shape(x)) for x in inputs]})") from None


register_op("Einsum", inputs=("inputs*",), attrs={"T": "inputs"},
            allowed={"T": dtypes.FLOATING + dtypes.COMPLEX + (dtypes.int32, dtypes.int64)},
            infer=_infer_einsum, kernel=_einsum_kernel, defaults={"equation": ""})


def einsum(equation, *inputs, **kwargs):
    """Sums of products over named indices (NumPy's einsum): `einsum("ij,jk->ik", a, b)` is matmul.

    `...` stands for the leading dimensions (broadcast between operands), and without `->` the
    output is the indices used once, in alphabetical order.
    """
    name = kwargs.pop("name", None)
    kwargs.pop("optimize", None)
    if kwargs:
        raise TypeError(f"einsum got unexpected keyword arguments {sorted(kwargs)}")
    if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = tuple(inputs[0])
    with name_scope(name, "einsum"):
        tensors = [x if isinstance(x, Tensor) else convert_to_tensor(x) for x in inputs]
        dtype = next((t.dtype for t in tensors if t.dtype.is_floating or t.dtype.is_complex), tensors[0].dtype)
        tensors = [t if t.dtype == dtype else convert_to_tensor(t, dtype=dtype) for t in tensors]
        ins, out = _parse(equation, [t.shape.rank for t in tensors])
        return apply_op("Einsum", tensors, equation=",".join(ins) + "->" + out)


@RegisterGradient("Einsum")
def _einsum_grad(op, grad):
    ins, out = op.get_attr("equation").split("->")
    ins = ins.split(",")
    inputs = list(op.inputs)
    grads = []
    for i, (x, sub) in enumerate(zip(inputs, ins)):
        if len(set(sub)) != len(sub):
            raise NotImplementedError(f"einsum gradient for operand '{sub}' with a repeated index (a diagonal)")
        others = [(s, t) for j, (s, t) in enumerate(zip(ins, inputs)) if j != i]
        elsewhere = set(out) | set(c for s, _ in others for c in s)
        kept = "".join(c for c in sub if c in elsewhere)
        eq = ",".join([out] + [s for s, _ in others]) + "->" + kept
        g = apply_op("Einsum", [grad] + [t for _, t in others], equation=eq)
        if kept != sub:     # indices only this operand has: summed in the forward, broadcast back
            shape = shape_ops.shape(x)
            g = shape_ops.reshape(g, _kept_shape(sub, kept, g))
            g = shape_ops.broadcast_to(g, shape)
        # broadcasting (a size-1 dimension matched a larger one): sum back to the operand's shape
        g = _sum_to(g, x)
        grads.append(g)
    return grads


def _kept_shape(sub, kept, g):
    """The shape of g with a 1 inserted for each index of `sub` that is not kept."""
    g_shape = shape_ops.shape(g)
    parts, k = [], 0
    for c in sub:
        if c in kept:
            parts.append(shape_ops.reshape(g_shape[k], [1]))
            k += 1
        else:
            parts.append(convert_to_tensor([1], dtype=g_shape.dtype))
    return join_ops.concat(parts, 0) if parts else convert_to_tensor([], dtype=dtypes.int32)


def _sum_to(g, x):
    if g.shape.is_fully_defined() and x.shape.is_fully_defined() and g.shape.as_list() == x.shape.as_list():
        return g
    return cw.sum_to_shape(g, shape_ops.shape(x))


def tensordot(a, b, axes, name=None):
    """Sum over the last `axes` dimensions of a and the first `axes` of b (an int), or over the
    axes pairs `axes = [a_axes, b_axes]`."""
    with name_scope(name, "Tensordot"):
        a = a if isinstance(a, Tensor) else convert_to_tensor(a)
        b = b if isinstance(b, Tensor) else convert_to_tensor(b)
        ra, rb = a.shape.rank, b.shape.rank
        if ra is None or rb is None:
            raise ValueError("tensordot needs operands of known rank")
        if isinstance(axes, Tensor):
            axes = axes.numpy().tolist() if hasattr(axes, "numpy") else None
            if axes is None:
                raise ValueError("tensordot: axes must be known when the graph is built")
        if isinstance(axes, (int, np.integer)):
            n = int(axes)
            if n < 0 or n > min(ra, rb):
                raise ValueError(f"tensordot: axes = {n} must be in [0, min(rank(a), rank(b))] = [0, {min(ra, rb)}]")
            a_axes, b_axes = list(range(ra - n, ra)), list(range(n))
        else:
            a_axes, b_axes = axes
            a_axes = [a_axes] if isinstance(a_axes, (int, np.integer)) else list(a_axes)
            b_axes = [b_axes] if isinstance(b_axes, (int, np.integer)) else list(b_axes)
            if len(a_axes) != len(b_axes):
                raise ValueError(f"tensordot: axes {a_axes} and {b_axes} must have the same length")
            a_axes = [x % ra for x in a_axes]
            b_axes = [x % rb for x in b_axes]
        letters = iter(_LETTERS)
        sa = [next(letters) for _ in range(ra)]
        sb = [next(letters) for _ in range(rb)]
        for i, j in zip(a_axes, b_axes):
            sb[j] = sa[i]
        out = [c for k, c in enumerate(sa) if k not in a_axes] + [c for k, c in enumerate(sb) if k not in b_axes]
        return einsum("".join(sa) + "," + "".join(sb) + "->" + "".join(out), a, b)


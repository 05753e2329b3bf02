"""Gradients of matmul. For C = P Q with P = op_a(A), Q = op_b(B) (op: none, transpose or adjoint),
dP = G Q^H and dQ = P^H G; then dA = dP, dP^T or dP^H as A was used plain, transposed or adjoined
(complex gradients are dL/d conj(A), TF's convention). Batch dimensions that were broadcast are
summed back to each input's shape."""
from segflow._core.registry import RegisterGradient
from segflow._ops import elementwise as cw
from segflow._ops import linalg as la
from segflow._ops.elementwise_grad import _unbroadcast

# How an operand enters a product: "" plain, "T" transposed, "H" adjoined, "C" conjugated.
_TRANSPOSE = {"": "T", "T": "", "H": "C", "C": "H"}   # op(X)^T as an op of X
_ADJOINT = {"": "H", "H": "", "T": "C", "C": "T"}     # op(X)^H as an op of X


def _mm(x, x_op, y, y_op):
    """op_x(x) @ op_y(y) with one matmul (a conjugate-only operand is conjugated first). For real
    operands the adjoint is the transpose, and is spelled so (`transpose_a`, as TF's gradient)."""
    if not x.dtype.is_complex:
        x_op = {"H": "T", "C": ""}.get(x_op, x_op)
    if not y.dtype.is_complex:
        y_op = {"H": "T", "C": ""}.get(y_op, y_op)
    if x_op == "C":
        x, x_op = cw.conj(x), ""
    if y_op == "C":
        y, y_op = cw.conj(y), ""
    return la.matmul(x, y, transpose_a=x_op == "T", adjoint_a=x_op == "H",
                     transpose_b=y_op == "T", adjoint_b=y_op == "H")


def _operand_op(op, side):
    if op.get_attr("adjoint_" + side):
        return "H"
    return "T" if op.get_attr("transpose_" + side) else ""


@RegisterGradient("MatMul")
@RegisterGradient("BatchMatMulV2")
def _matmul_grad(op, grad):
    a, b = op.inputs
    pa, pb = _operand_op(op, "a"), _operand_op(op, "b")
    qh = _ADJOINT[pb]   # Q^H as an op of B
    ph = _ADJOINT[pa]   # P^H as an op of A
    if pa == "":
        ga = _mm(grad, "", b, qh)                      # G Q^H
    elif pa == "T":
        ga = _mm(b, _TRANSPOSE[qh], grad, "T")         # (G Q^H)^T = (Q^H)^T G^T
    else:
        ga = _mm(b, pb, grad, "H")                     # (G Q^H)^H = Q G^H
    if pb == "":
        gb = _mm(a, ph, grad, "")                      # P^H G
    elif pb == "T":
        gb = _mm(grad, "T", a, _TRANSPOSE[ph])         # (P^H G)^T = G^T (P^H)^T
    else:
        gb = _mm(grad, "H", a, pa)                     # (P^H G)^H = G^H P
    return _unbroadcast(ga, a), _unbroadcast(gb, b)


@RegisterGradient("Diag")
def _diag_grad(op, grad):
    return la.diag_part(grad)


@RegisterGradient("DiagPart")
def _diag_part_grad(op, grad):
    return la.diag(grad)

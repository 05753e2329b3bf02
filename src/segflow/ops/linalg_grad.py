"""Gradients of matmul. For C = A B: dA = G B^H, dB = A^H G (transposes and adjoints permuted)."""
from segflow.framework import ops
from segflow.ops import cwise_ops as cw
from segflow.ops import linalg_ops as la


def _mm(a, b, ta=False, tb=False, aa=False, ab=False):
    return la.matmul(a, b, transpose_a=ta, transpose_b=tb, adjoint_a=aa, adjoint_b=ab)


@ops.RegisterGradient("MatMul")
def _matmul_grad(op, grad):
    a, b = op.inputs
    ta = op.get_attr("transpose_a") or op.get_attr("adjoint_a")
    tb = op.get_attr("transpose_b") or op.get_attr("adjoint_b")
    # Conjugating the operands turns transposes into adjoints for complex inputs (no-op when real).
    ca, cb = cw.conj(a), cw.conj(b)
    if not ta and not tb:
        return _mm(grad, cb, tb=True), _mm(ca, grad, ta=True)
    if not ta and tb:
        return _mm(grad, cb), _mm(grad, ca, ta=True)
    if ta and not tb:
        return _mm(cb, grad, tb=True), _mm(ca, grad)
    return _mm(cb, grad, ta=True, tb=True), _mm(grad, ca, ta=True, tb=True)


@ops.RegisterGradient("BatchMatMulV2")
def _batch_matmul_grad(op, grad):
    from segflow.ops.cwise_grad import _unbroadcast
    a, b = op.inputs
    ta = op.get_attr("transpose_a") or op.get_attr("adjoint_a")
    tb = op.get_attr("transpose_b") or op.get_attr("adjoint_b")
    ca, cb = cw.conj(a), cw.conj(b)
    if not ta and not tb:
        ga, gb = _mm(grad, cb, tb=True), _mm(ca, grad, ta=True)
    elif not ta and tb:
        ga, gb = _mm(grad, cb), _mm(grad, ca, ta=True)
    elif ta and not tb:
        ga, gb = _mm(cb, grad, tb=True), _mm(ca, grad)
    else:
        ga, gb = _mm(cb, grad, ta=True, tb=True), _mm(grad, ca, ta=True, tb=True)
    return _unbroadcast(ga, a), _unbroadcast(gb, b)

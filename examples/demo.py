"""A short tour of segflow: eager ops, a graph in a Session, a user-defined op with its registered
gradient, and a gradient check. Run with `make demo`."""
import numpy as np

import segflow as sf
from segflow.client.session import Session
from segflow.framework import ops
from segflow.ops import gradient_checker, gradients


def section(title):
    print(f"\n== {title} ==")


def main():
    section("Eager execution (the default)")
    data = sf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
    ids = sf.constant([0, 2, 0, -1])          # -1: the row is dropped
    sums = sf.math.unsorted_segment_sum(data, ids, 3)
    print("unsorted_segment_sum(data, [0, 2, 0, -1], 3) =\n", sums.numpy())
    with sf.GradientTape() as tape:
        tape.watch(data)
        loss = sf.reduce_sum(sf.math.unsorted_segment_sum(data * data, ids, 3))
    print("d loss / d data (2*data, zero for the dropped row) =\n", tape.gradient(loss, data).numpy())

    section("A graph run in a Session")
    with ops.Graph().as_default():
        a = sf.constant([[1, 2], [3, 4]], dtype=sf.float32)
        b = sf.constant([[6, 7, 8], [9, 10, 11]], dtype=sf.float32)
        c = sf.matmul(a, b)
        grad_a, = gradients.gradients(c, a)
        matmul_grad = ops._gradient_registry.lookup("MatMul")
        cc = c * sf.stop_gradient(c)
        grad_cc, = gradients.gradients(cc, a)
        with Session() as sess:
            print("c = a @ b =\n", sess.run(c))
            print("gradients(c, a) =\n", sess.run(grad_a))
            print("MatMul's registered gradient with ones =\n", sess.run(matmul_grad(c.op, sf.ones_like(c))[0]))
            print("gradients(c * stop_gradient(c), a) =\n", sess.run(grad_cc))

    section("A user-defined op with a registered gradient")
    sf.register_op("DemoSoftsign", inputs=("x",), attrs={"T": "x"},
                   infer=lambda op, x: [sf.TensorSpec(x.dtype, x.shape)],
                   kernel=lambda x: x / (1 + np.abs(x)))

    @sf.RegisterGradient("DemoSoftsign")
    def _softsign_grad(op, grad):
        x = op.inputs[0]
        d = 1.0 + sf.abs(x)
        return grad / (d * d)

    x = sf.constant([-2.0, 0.5, 3.0], dtype=sf.float64)
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = sf.apply_op("DemoSoftsign", x)
    print("softsign(x) =", y.numpy(), " gradient =", tape.gradient(y, x).numpy())

    section("Gradient check (graph mode, TF v1 signature)")
    with ops.Graph().as_default():
        xs = sf.placeholder(sf.float64, [3])
        ys = sf.apply_op("DemoSoftsign", xs)
        with Session().as_default():
            err = gradient_checker.compute_gradient_error(xs, [3], ys, [3], x_init_value=np.array([-2.0, 0.5, 3.0]), delta=1e-6)
    print(f"max |theoretical - numerical| Jacobian difference: {err:.2e}")
    assert err < 1e-8


if __name__ == "__main__":
    main()

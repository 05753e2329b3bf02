"""The tour (`python -m segflow tour`, `make demo`): six short steps, each printing what it shows and
checking its numbers against NumPy, so a broken install fails loudly instead of printing nonsense."""
import textwrap
import time

import numpy as np

import segflow as sf
from segflow._core.registry import list_ops
from segflow.framework import ops
from segflow.models import KMeans
from segflow.ops import gradient_checker


def _step(n, title, what):
    print(f"\n[{n}/6] {title}\n" + textwrap.fill(what, 100, initial_indent=" " * 6, subsequent_indent=" " * 6))


def _show(label, value):
    text = np.array2string(np.asarray(value), precision=4, suppress_small=True)
    pad = " " * (8 + len(label))
    print(f"      {label} = " + text.replace("\n", "\n" + pad))


def _check(ok, what):
    if not ok:
        raise AssertionError(f"tour check failed: {what}")
    print(f"      ok: {what}")


def eager():
    _step(1, "Eager execution (the default, as in TF2)",
          "unsorted_segment_sum adds the rows of `data` that share an id; id -1 drops its row.")
    data = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]], np.float32)
    ids = np.array([0, 2, 0, -1], np.int32)
    x = sf.constant(data)
    sums = sf.math.unsorted_segment_sum(x, ids, 3)
    _show("unsorted_segment_sum(data, [0, 2, 0, -1], 3)", sums)
    ref = np.zeros((3, 2), np.float32)
    np.add.at(ref, ids[ids >= 0], data[ids >= 0])
    _check(np.array_equal(sums.numpy(), ref), "equals np.add.at")
    with sf.GradientTape() as tape:
        tape.watch(x)
        loss = sf.reduce_sum(sf.math.unsorted_segment_sum(x * x, ids, 3))
    g = tape.gradient(loss, x)
    _show("d loss / d data", g)
    _check(np.allclose(g.numpy(), 2 * data * (ids >= 0)[:, None]), "gradient is 2*data, zero for the dropped row")


def graph():
    _step(2, "A graph run in a Session (TF1 style)",
          "ops build a graph; Session.run prunes it to the fetches and feeds the placeholders.")
    with ops.Graph().as_default():
        a = sf.compat.v1.placeholder(sf.float32, [None, 2], name="a")
        w = sf.constant([[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]])
        c = sf.matmul(a, w)
        grad_a, = sf.gradients(sf.reduce_sum(c * c), a)
        feed = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
        with sf.compat.v1.Session() as sess:
            c_val, g_val = sess.run([c, grad_a], {a: feed})
    _show("c = a @ w", c_val)
    _show("gradients(sum(c*c), a)", g_val)
    wn = np.array([[6, 7, 8], [9, 10, 11]], np.float32)
    _check(np.allclose(c_val, feed @ wn) and np.allclose(g_val, 2 * (feed @ wn) @ wn.T), "matches NumPy")


def _register_softsign():
    if "TourSoftsign" not in list_ops():      # the tour may run twice in one process
        sf.register_op("TourSoftsign", inputs=("x",), attrs={"T": "x"},
                       infer=lambda op, x: [sf.TensorSpec(x.dtype, x.shape)],
                       kernel=lambda x: x / (1 + np.abs(x)))

        @sf.RegisterGradient("TourSoftsign")
        def _softsign_grad(op, grad):
            d = 1.0 + sf.abs(op.inputs[0])
            return grad / (d * d)


def custom_op():
    _step(3, "Your own op and its gradient",
          "register_op gives a NumPy kernel a name; @RegisterGradient gives it a gradient, which then "
          "serves eager tapes and graphs alike.")
    print('      sf.register_op("TourSoftsign", inputs=("x",), kernel=lambda x: x / (1 + np.abs(x)), ...)\n'
          '      @sf.RegisterGradient("TourSoftsign")\n'
          '      def _softsign_grad(op, grad): return grad / (1 + sf.abs(op.inputs[0])) ** 2')
    _register_softsign()
    xv = np.array([-2.0, 0.5, 3.0])
    x = sf.constant(xv)
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = sf.apply_op("TourSoftsign", x)
    g = tape.gradient(y, x)
    _show("softsign(x)", y)
    _show("gradient", g)
    _check(np.allclose(g.numpy(), 1 / (1 + np.abs(xv)) ** 2), "gradient is 1 / (1 + |x|)^2")


def gradient_check():
    _step(4, "A gradient check",
          "compute_gradient_error compares the registered gradient with a numerical Jacobian.")
    _register_softsign()
    with ops.Graph().as_default():
        xs = sf.compat.v1.placeholder(sf.float64, [3])
        ys = sf.math.unsorted_segment_sum(sf.apply_op("TourSoftsign", xs) * xs, [1, 0, 1], 2)
        with sf.compat.v1.Session().as_default():
            err = gradient_checker.compute_gradient_error(xs, [3], ys, [2], x_init_value=np.array([-2.0, 0.5, 3.0]),
                                                          delta=1e-6)
    print(f"      max |registered - numerical| Jacobian entry: {err:.2e}")
    _check(err < 1e-7, "the registered gradients agree with finite differences")


def sparse_step():
    _step(5, "A sparse embedding step",
          "the gradient of embedding_lookup is IndexedSlices (rows + values, never a dense table); "
          "LazyAdam updates only the rows that were looked up.")
    rng = np.random.default_rng(0)
    table = sf.Variable(rng.normal(size=(100_000, 16)).astype(np.float32), name="embeddings")
    before = table.numpy().copy()
    ids = rng.integers(0, 100_000, size=256)
    opt = sf.train.LazyAdamOptimizer(learning_rate=0.01)
    with sf.GradientTape() as tape:
        rows = sf.nn.embedding_lookup(table, ids)
        loss = sf.reduce_mean(sf.square(rows - 1.0))
    grad = tape.gradient(loss, table)
    print(f"      gradient: {type(grad).__name__} with {grad.values.shape[0]} rows of a "
          f"{tuple(table.shape.as_list())} table")
    opt.apply_gradients([(grad, table)])
    changed = np.flatnonzero(np.any(table.numpy() != before, axis=1))
    print(f"      rows changed by the step: {changed.size} (distinct ids looked up: {np.unique(ids).size})")
    _check(isinstance(grad, sf.IndexedSlices) and np.array_equal(changed, np.unique(ids)),
           "only the looked-up rows moved")


def kmeans(quick=False):
    _step(6, "A k-means fit",
          "segflow.models.KMeans: each Lloyd step is a matmul, an argmin and unsorted_segment_sum.")
    rng = np.random.default_rng(1)
    k, n = 8, (20_000 if quick else 100_000)
    true_centers = rng.normal(scale=10.0, size=(k, 8))
    X = (true_centers[rng.integers(0, k, n)] + rng.normal(size=(n, 8))).astype(np.float32)
    t0 = time.perf_counter()
    km = KMeans(n_clusters=k, random_state=0, n_init=1).fit(X)
    dt = time.perf_counter() - t0
    # Each fitted center should sit next to one true center (the blobs are far apart).
    d = np.linalg.norm(km.cluster_centers_[:, None, :] - true_centers[None], axis=-1)
    print(f"      {n} x 8 points, k={k}: {km.n_iter_} iterations in {dt:.2f} s, inertia {km.inertia_:.4g}")
    _check(sorted(d.argmin(axis=1)) == list(range(k)) and d.min(axis=1).max() < 0.2,
           "every true center found within 0.2")


def run(quick=False):
    t0 = time.perf_counter()
    print(f"segflow {sf.__version__}: a tour in six steps")
    for step in (eager, graph, custom_op, gradient_check, sparse_step):
        step()
    kmeans(quick)
    print(f"\nTour done in {time.perf_counter() - t0:.1f} s. More: README.md, examples/, `python -m segflow bench`.")
    return 0

"""NumPy's side of the benchmark suite (same workloads and output format as workloads.lua)."""
import numpy as np
from common import add, run

@add("add_10_elems")
def _():
    rng = np.random.default_rng(0)
    a, b = rng.random(10), rng.random(10)
    iters = 10000

    def run():
        for _ in range(iters):
            a + b
    return run, iters


for dt in ("float64", "float32"):
    @add("add_1e6_" + dt)
    def _(dt=dt):
        rng = np.random.default_rng(0)
        a, b = rng.random(1000000).astype(dt), rng.random(1000000).astype(dt)

        def run():
            for _ in range(10):
                a + b
        return run, 10

    @add("matmul_1000_" + dt)
    def _(dt=dt):
        rng = np.random.default_rng(0)
        a, b = rng.random((1000, 1000)).astype(dt), rng.random((1000, 1000)).astype(dt)
        return (lambda: a.dot(b)), 1

    @add("two_layer_" + dt)
    def _(dt=dt):
        N, D_in, H, D_out = 64, 1000, 100, 10
        rng = np.random.default_rng(0)
        x = rng.standard_normal((N, D_in)).astype(dt)
        y = rng.standard_normal((N, D_out)).astype(dt)
        w1_0 = rng.standard_normal((D_in, H)).astype(dt)
        w2_0 = rng.standard_normal((H, D_out)).astype(dt)

        def run():
            w1, w2 = w1_0.copy(), w2_0.copy()
            for _ in range(500):
                h = x.dot(w1)
                h_relu = np.maximum(h, 0)
                y_pred = h_relu.dot(w2)
                np.square(y_pred - y).sum()
                grad_y_pred = 2.0 * (y_pred - y)
                grad_w2 = h_relu.T.dot(grad_y_pred)
                grad_h_relu = grad_y_pred.dot(w2.T)
                grad_h = grad_h_relu.copy()
                grad_h[h < 0] = 0
                grad_w1 = x.T.dot(grad_h)
                w1 -= 1e-6 * grad_w1
                w2 -= 1e-6 * grad_w2
        return run, 1

run()

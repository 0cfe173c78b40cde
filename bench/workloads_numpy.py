"""NumPy's side of the benchmark suite (same workloads, names and output as workloads.lua).
Where tide uses autograd or torch.nn, NumPy computes the same gradients explicitly."""
import os

import numpy as np
from common import add, run

N, D_in, H, D_out = 64, 1000, 100, 10


def two_layer(dt):
    """Workload 1: the seed two-layer network with hand-written backprop, 500 steps."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, D_in)).astype(dt)
    y = rng.standard_normal((N, D_out)).astype(dt)
    w1_0 = rng.standard_normal((D_in, H)).astype(dt)
    w2_0 = rng.standard_normal((H, D_out)).astype(dt)

    def fn():
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
    return fn, 1


def two_layer_products(dt):
    """Workload 1's five matrix products alone (500 steps), for their GFLOP/s."""
    rng = np.random.default_rng(0)
    x, g = rng.standard_normal((N, D_in)).astype(dt), rng.standard_normal((N, D_out)).astype(dt)
    w1, w2 = rng.standard_normal((D_in, H)).astype(dt), rng.standard_normal((H, D_out)).astype(dt)
    gh = rng.standard_normal((N, H)).astype(dt)

    def fn():
        for _ in range(500):
            h = x.dot(w1)
            h.dot(w2), h.T.dot(g), g.dot(w2.T), x.T.dot(gh)
    return fn, 1


for dt in ("float64", "float32"):
    add("w1_two_layer_" + dt)(lambda dt=dt: two_layer(dt))
    add("w1_products_" + dt)(lambda dt=dt: two_layer_products(dt))


for d in (100, 300, 1000, 2000):
    @add("w3_lstsq_grad_d%d" % d)
    def _(d=d):
        """Workload 3: the gradient of ||y - Ax||^2, explicitly -2 A^T (y - Ax)."""
        rng = np.random.default_rng(0)
        A, y, x = rng.standard_normal((10 * d, d)), rng.standard_normal(10 * d), rng.standard_normal(d)
        iters = max(1, 2000000 // (d * d))

        def fn():
            for _ in range(iters):
                -2 * A.T.dot(y - A.dot(x))
        return fn, iters


@add("w4_linear_regression")
def _():
    """Workload 4: linear regression, 100x10, 1000 epochs, gradients of the mean squared error."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 10)).astype(np.float32)
    y = (X.dot(rng.standard_normal((10, 1))) + 0.5).astype(np.float32)

    def fn():
        w = (rng.random((1, 10)) * 0.6 - 0.3).astype(np.float32)
        b = np.zeros(1, np.float32)
        for _ in range(1000):
            diff = X.dot(w.T) + b - y
            (diff ** 2).mean()
            g = diff * np.float32(2 / diff.size)
            w -= np.float32(0.01) * g.T.dot(X)
            b -= np.float32(0.01) * g.sum(0)
    return fn, 1


# Each tiny op 10^5 times per round: a round must span the collector's work that the op
# causes (tide's dead temporaries are freed by its collector, not at once as here), or the
# best round would be one without it. The autograd step makes 20 times the garbage: 10^4.
def per_op(op, iters=100000):
    def fn():
        for _ in range(iters):
            op()
    return fn, iters


@add("w5_add_10")
def _():
    rng = np.random.default_rng(0)
    a, b = rng.random(10), rng.random(10)
    return per_op(lambda: a + b)


@add("w5_matmul_8x8")
def _():
    rng = np.random.default_rng(0)
    a, b = rng.random((8, 8)), rng.random((8, 8))
    return per_op(lambda: a.dot(b))


@add("w5_sum_10")
def _():
    a = np.random.default_rng(0).random(10)
    return per_op(lambda: a.sum())


@add("w5_tiny_autograd_step")
def _():
    """One tiny training step with its gradients written out (NumPy has no autograd)."""
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((10, 16)).astype(np.float32)
    w2 = rng.standard_normal((16, 1)).astype(np.float32)
    x, y = rng.standard_normal((8, 10)).astype(np.float32), rng.standard_normal((8, 1)).astype(np.float32)

    def step():
        h = x.dot(w1)
        h_relu = np.maximum(h, 0)
        diff = h_relu.dot(w2) - y
        np.square(diff).sum()
        g = 2 * diff
        grad_w2 = h_relu.T.dot(g)
        grad_h = g.dot(w2.T)
        grad_h[h < 0] = 0
        w1[...] -= np.float32(1e-4) * x.T.dot(grad_h)
        w2[...] -= np.float32(1e-4) * grad_w2
    return per_op(step, 10000)


for n, size in ((1000000, "1e6"), (10000000, "1e7")):
    for dt in ("float32", "float64"):
        reps = 10000000 // n

        def inputs(n=n, dt=dt):
            rng = np.random.default_rng(0)
            return [rng.random(n).astype(dt) for _ in range(3)]

        def timed(op, reps=reps):
            def fn():
                for _ in range(reps):
                    op()
            return fn, reps

        @add("w6_add_%s_%s" % (size, dt))
        def _(inputs=inputs, timed=timed):
            a, b, _ = inputs()
            return timed(lambda: a + b)

        @add("w6_exp_%s_%s" % (size, dt))
        def _(inputs=inputs, timed=timed):
            a, _, _ = inputs()
            return timed(lambda: np.exp(a))

        @add("w6_chain_%s_%s" % (size, dt))
        def _(inputs=inputs, timed=timed):
            a, b, c = inputs()
            return timed(lambda: np.maximum(a * b + c, 0))

for n in (1000, 2000):
    for dt in ("float32", "float64"):
        @add("w7_matmul_%d_%s" % (n, dt))
        def _(n=n, dt=dt):
            rng = np.random.default_rng(0)
            a, b = rng.random((n, n)).astype(dt), rng.random((n, n)).astype(dt)
            return (lambda: a.dot(b)), 1


@add("w8_digits_epoch")
def _():
    """One epoch of the digits MLP (64-128-10, softmax cross-entropy, Adam, batches of 64),
    with the backward pass and Adam written out."""
    data = np.loadtxt(os.path.join(os.path.dirname(__file__), "..", "data", "digits.csv.gz"), delimiter=",")
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(data))
    n_train = int(len(data) * 0.8)
    x_train = (data[perm[:n_train], :64] / 16).astype(np.float32)
    y_train = data[perm[:n_train], 64].astype(np.int64)
    params = [(rng.random(s, np.float32) - 0.5) * 0.2 for s in ((64, 128), (128,), (128, 10), (10,))]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    state = {"t": 0}

    def adam(grads, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8):
        state["t"] += 1
        t = state["t"]
        for p, g, mi, vi in zip(params, grads, m, v):
            mi *= b1
            mi += (1 - b1) * g
            vi *= b2
            vi += (1 - b2) * g * g
            p -= lr * (mi / (1 - b1 ** t)) / (np.sqrt(vi / (1 - b2 ** t)) + eps)

    def fn():
        w1, b1, w2, b2 = params
        order = rng.permutation(n_train)
        for first in range(0, n_train, 64):
            idx = order[first:first + 64]
            xb, yb = x_train[idx], y_train[idx]
            h = xb.dot(w1) + b1
            hr = np.maximum(h, 0)
            logits = hr.dot(w2) + b2
            logits -= logits.max(1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(1, keepdims=True)
            -np.log(p[np.arange(len(yb)), yb]).mean()
            p[np.arange(len(yb)), yb] -= 1
            p /= len(yb)
            gh = p.dot(w2.T)
            gh[h < 0] = 0
            adam([xb.T.dot(gh), gh.sum(0), hr.T.dot(p), p.sum(0)])
    return fn, 1



LA_N = 500


def la_inputs():
    """Workload 11's inputs: a 500 x 500 float64 matrix, a symmetric positive definite one,
    10 right-hand sides."""
    rng = np.random.default_rng(0)
    a = rng.random((LA_N, LA_N))
    return a, a @ a.T + LA_N * np.eye(LA_N), rng.random((LA_N, 10))


for _name, _f in {"svd": lambda a, s, b: np.linalg.svd(a), "eigh": lambda a, s, b: np.linalg.eigh(s),
                  "qr": lambda a, s, b: np.linalg.qr(a), "cholesky": lambda a, s, b: np.linalg.cholesky(s),
                  "lstsq": lambda a, s, b: np.linalg.lstsq(a, b, rcond=None)}.items():
    @add("w11_%s_500_float64" % _name)
    def _(f=_f):
        a, s, b = la_inputs()
        return (lambda: f(a, s, b)), 1

FFT_N = 1 << 20


def fft_inputs():
    """Workload 12's signals: 2^20 float64 values and their complex128 transform."""
    re = np.random.default_rng(0).random(FFT_N)
    return re, np.fft.fft(re)


for _name, _f in {"fft_complex128": lambda re, c: np.fft.fft(c), "fft_float64": lambda re, c: np.fft.fft(re),
                  "rfft_float64": lambda re, c: np.fft.rfft(re)}.items():
    @add("w12_%s_2p20" % _name)
    def _(f=_f):
        re, c = fft_inputs()
        return (lambda: f(re, c)), 1

run()

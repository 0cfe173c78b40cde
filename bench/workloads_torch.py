"""PyTorch's side of the benchmark suite (same workloads, names and output as workloads.lua),
on as many threads as tide and NumPy's OpenBLAS use (this machine's cores)."""
import os

import numpy as np
import torch
from common import add, run

torch.set_num_threads(os.cpu_count())
torch.set_grad_enabled(False)
nn, optim = torch.nn, torch.optim
N, D_in, H, D_out = 64, 1000, 100, 10


def two_layer(tdt, device="cpu"):
    """Workload 1: the seed two-layer network with hand-written backprop, 500 steps."""
    torch.manual_seed(0)
    x, y = torch.randn(N, D_in, dtype=tdt, device=device), torch.randn(N, D_out, dtype=tdt, device=device)
    w1_0, w2_0 = torch.randn(D_in, H, dtype=tdt, device=device), torch.randn(H, D_out, dtype=tdt, device=device)

    def fn():
        w1, w2 = w1_0.clone(), w2_0.clone()
        for _ in range(500):
            h = x.mm(w1)
            h_relu = h.clamp(min=0)
            y_pred = h_relu.mm(w2)
            (y_pred - y).pow(2).sum().item()
            grad_y_pred = 2.0 * (y_pred - y)
            grad_w2 = h_relu.t().mm(grad_y_pred)
            grad_h_relu = grad_y_pred.mm(w2.t())
            grad_h = grad_h_relu.clone()
            grad_h[h < 0] = 0
            grad_w1 = x.t().mm(grad_h)
            w1 -= 1e-6 * grad_w1
            w2 -= 1e-6 * grad_w2
    return fn, 1


def two_layer_products(tdt):
    """Workload 1's five matrix products alone (500 steps), for their GFLOP/s."""
    torch.manual_seed(0)
    x, g = torch.randn(N, D_in, dtype=tdt), torch.randn(N, D_out, dtype=tdt)
    w1, w2, gh = torch.randn(D_in, H, dtype=tdt), torch.randn(H, D_out, dtype=tdt), torch.randn(N, H, dtype=tdt)

    def fn():
        for _ in range(500):
            h = x.mm(w1)
            h.mm(w2), h.t().mm(g), g.mm(w2.t()), x.t().mm(gh)
    return fn, 1


def autograd_two_layer(tdt, device="cpu"):
    """Workload 2: the same network with autograd, backward() and updates under no_grad."""
    torch.manual_seed(0)
    x, y = torch.randn(N, D_in, dtype=tdt, device=device), torch.randn(N, D_out, dtype=tdt, device=device)
    w1_0, w2_0 = torch.randn(D_in, H, dtype=tdt, device=device), torch.randn(H, D_out, dtype=tdt, device=device)

    def fn():
        with torch.enable_grad():
            w1, w2 = w1_0.clone().requires_grad_(), w2_0.clone().requires_grad_()
            for _ in range(500):
                loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
                loss.item()
                loss.backward()
                with torch.no_grad():
                    w1.sub_(w1.grad * 1e-6)
                    w2.sub_(w2.grad * 1e-6)
                w1.grad, w2.grad = None, None
    return fn, 1


for dt in ("float64", "float32"):
    tdt = getattr(torch, dt)
    add("w1_two_layer_" + dt)(lambda tdt=tdt: two_layer(tdt))
    add("w1_products_" + dt)(lambda tdt=tdt: two_layer_products(tdt))
    add("w2_autograd_two_layer_" + dt)(lambda tdt=tdt: autograd_two_layer(tdt))

for d in (100, 300, 1000, 2000):
    @add("w3_lstsq_grad_d%d" % d)
    def _(d=d):
        """Workload 3: the gradient of ||y - Ax||^2 with respect to x by autograd."""
        torch.manual_seed(0)
        A, y = torch.randn(10 * d, d, dtype=torch.float64), torch.randn(10 * d, dtype=torch.float64)
        x = torch.randn(d, dtype=torch.float64, requires_grad=True)
        iters = max(1, 2000000 // (d * d))

        def fn():
            with torch.enable_grad():
                for _ in range(iters):
                    r = y - A.mv(x)
                    r.dot(r).backward()
                    x.grad = None
        return fn, iters


@add("w4_linear_regression")
def _():
    """Workload 4: linear regression, 100x10, 1000 epochs of nn.Linear + MSELoss + SGD."""
    torch.manual_seed(0)
    X = torch.randn(100, 10)
    y = X.mm(torch.randn(10, 1)) + 0.5

    def fn():
        with torch.enable_grad():
            model = nn.Linear(10, 1)
            criterion = nn.MSELoss()
            opt = optim.SGD(model.parameters(), lr=0.01)
            for _ in range(1000):
                opt.zero_grad()
                loss = criterion(model(X), y)
                loss.backward()
                opt.step()
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
    a, b = torch.rand(10, dtype=torch.float64), torch.rand(10, dtype=torch.float64)
    return per_op(lambda: a + b)


@add("w5_matmul_8x8")
def _():
    a, b = torch.rand(8, 8, dtype=torch.float64), torch.rand(8, 8, dtype=torch.float64)
    return per_op(lambda: a.mm(b))


@add("w5_sum_10")
def _():
    a = torch.rand(10, dtype=torch.float64)
    return per_op(lambda: a.sum())


@add("w5_tiny_autograd_step")
def _():
    """One tiny training step: two small matmuls, relu, a squared loss, backward, an update."""
    torch.manual_seed(0)
    w1 = torch.randn(10, 16, requires_grad=True)
    w2 = torch.randn(16, 1, requires_grad=True)
    x, y = torch.randn(8, 10), torch.randn(8, 1)

    def step():
        with torch.enable_grad():
            loss = (x.mm(w1).relu().mm(w2) - y).pow(2).sum()
            loss.backward()
        w1.sub_(w1.grad * 1e-4)
        w2.sub_(w2.grad * 1e-4)
        w1.grad, w2.grad = None, None
    return per_op(step, 10000)


for n, size in ((1000000, "1e6"), (10000000, "1e7")):
    for dt in ("float32", "float64"):
        reps = 10000000 // n

        def inputs(n=n, tdt=getattr(torch, dt)):
            torch.manual_seed(0)
            return [torch.rand(n, dtype=tdt) for _ in range(3)]

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
            return timed(lambda: a.exp())

        @add("w6_chain_%s_%s" % (size, dt))
        def _(inputs=inputs, timed=timed):
            a, b, c = inputs()
            return timed(lambda: (a * b + c).relu())

for n in (1000, 2000):
    for dt in ("float32", "float64"):
        @add("w7_matmul_%d_%s" % (n, dt))
        def _(n=n, tdt=getattr(torch, dt)):
            torch.manual_seed(0)
            a, b = torch.rand(n, n, dtype=tdt), torch.rand(n, n, dtype=tdt)
            return (lambda: a.mm(b)), 1


@add("w8_digits_epoch")
def _():
    """One epoch of the digits MLP (64-128-10, cross-entropy, Adam, batches of 64)."""
    data = np.loadtxt(os.path.join(os.path.dirname(__file__), "..", "data", "digits.csv.gz"), delimiter=",")
    data = torch.from_numpy(data).float()
    torch.manual_seed(0)
    perm = torch.randperm(len(data))
    n_train = int(len(data) * 0.8)
    x_train = data[perm[:n_train], :64] / 16
    y_train = data[perm[:n_train], 64].long()
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    criterion = nn.CrossEntropyLoss()
    opt = optim.Adam(model.parameters(), lr=1e-3)

    def fn():
        with torch.enable_grad():
            order = torch.randperm(n_train)
            for first in range(0, n_train, 64):
                idx = order[first:first + 64]
                loss = criterion(model(x_train.index_select(0, idx)), y_train.index_select(0, idx))
                opt.zero_grad()
                loss.backward()
                opt.step()
    return fn, 1


@add("w16_lstm_2x128_seq35_batch20")
def _():
    """An LSTM (2 layers, input and hidden 128, sequence 35, batch 20; float32) forward and backward."""
    torch.manual_seed(0)
    lstm = nn.LSTM(128, 128, 2)
    x = torch.randn(35, 20, 128)
    h0 = (torch.zeros(2, 20, 128), torch.zeros(2, 20, 128))

    def fn():
        with torch.enable_grad():
            lstm.zero_grad()
            out, (h, c) = lstm(x, h0)
            loss = out.sum() + h.sum() + c.sum()
            loss.backward()
    return fn, 1


# Workload 15: two Conv2d layers forward and backward, 10 steps per call (as workloads.lua).
for _name, (_n, _c, _hw, _pad) in {"digits": (64, 1, 8, 0), "cifar": (64, 3, 32, 1)}.items():
    @add("w15_conv2d_%s_float32" % _name)
    def _(n=_n, c=_c, hw=_hw, pad=_pad):
        torch.manual_seed(0)
        conv1, conv2 = nn.Conv2d(c, 32, 3, padding=pad), nn.Conv2d(32, 64, 3, padding=pad)
        x = torch.randn(n, c, hw, hw)

        def fn():
            with torch.enable_grad():
                for _ in range(10):
                    conv2(conv1(x).relu()).sum().backward()
        return fn, 10


def on_cuda(make):
    """Workload 10: a workload on the GPU, every call ending with a synchronize."""
    def setup():
        if not torch.cuda.is_available():
            return None, "no CUDA device"
        fn, per = make()

        def synced():
            fn()
            torch.cuda.synchronize()
        return synced, per
    return setup


for dt in ("float32", "float64"):
    tdt = getattr(torch, dt)
    add("w10_two_layer_cuda_" + dt)(on_cuda(lambda tdt=tdt: two_layer(tdt, "cuda")))
    add("w10_autograd_two_layer_cuda_" + dt)(on_cuda(lambda tdt=tdt: autograd_two_layer(tdt, "cuda")))
    for n in (1000, 2000):
        def matmul(n=n, tdt=tdt):
            torch.manual_seed(0)
            a, b = torch.rand(n, n, dtype=tdt, device="cuda"), torch.rand(n, n, dtype=tdt, device="cuda")
            return (lambda: a.mm(b)), 1
        add("w10_matmul_%d_cuda_%s" % (n, dt))(on_cuda(matmul))


@add("w16_mha_fwd_bwd_float32")
def _():
    """Workload 16: nn.MultiheadAttention forward and backward (batch 32, sequence 64, embed 256,
    8 heads, float32; self-attention, the weights returned as by default)."""
    torch.manual_seed(0)
    m = nn.MultiheadAttention(256, 8)
    x = torch.randn(64, 32, 256, requires_grad=True)

    def fn():
        with torch.enable_grad():
            out, _ = m(x, x, x)
            out.sum().backward()
    return fn, 1


LA_N = 500


def la_inputs():
    """Workload 11's inputs (as in workloads.lua)."""
    torch.manual_seed(0)
    a = torch.rand(LA_N, LA_N, dtype=torch.float64)
    return a, a @ a.T + LA_N * torch.eye(LA_N, dtype=torch.float64), torch.rand(LA_N, 10, dtype=torch.float64)


for _name, _f in {"svd": lambda a, s, b: torch.linalg.svd(a), "eigh": lambda a, s, b: torch.linalg.eigh(s),
                  "qr": lambda a, s, b: torch.linalg.qr(a), "cholesky": lambda a, s, b: torch.linalg.cholesky(s),
                  "lstsq": lambda a, s, b: torch.linalg.lstsq(a, b, driver="gelsd")}.items():
    @add("w11_%s_500_float64" % _name)
    def _(f=_f):
        a, s, b = la_inputs()
        return (lambda: f(a, s, b)), 1


@add("w16_batchnorm2d_train_float32")
def _():
    """Workload 16 (issue 16): nn.BatchNorm2d(64) in training mode, forward and backward (into the
    input, weight and bias) of a 32 x 64 x 32 x 32 float32 batch."""
    torch.manual_seed(0)
    x = torch.randn(32, 64, 32, 32).requires_grad_()
    g = torch.randn(32, 64, 32, 32)
    bn = nn.BatchNorm2d(64)

    def fn():
        with torch.enable_grad():
            bn(x).backward(g)
    return fn, 1

FFT_N = 1 << 20


def fft_inputs():
    """Workload 12's signals (as in workloads.lua): 2^20 float64 values and their transform."""
    torch.manual_seed(0)
    re = torch.rand(FFT_N, dtype=torch.float64)
    return re, torch.fft.fft(re)


for _name, _f in {"fft_complex128": lambda re, c: torch.fft.fft(c), "fft_float64": lambda re, c: torch.fft.fft(re),
                  "rfft_float64": lambda re, c: torch.fft.rfft(re)}.items():
    @add("w12_%s_2p20" % _name)
    def _(f=_f):
        re, c = fft_inputs()
        return (lambda: f(re, c)), 1

run()

"""PyTorch's side of the benchmark suite (same workloads and output format as workloads.lua)."""
import torch
from common import add, run

torch.set_grad_enabled(False)


@add("add_10_elems")
def _():
    a, b = torch.rand(10, dtype=torch.float64), torch.rand(10, dtype=torch.float64)
    iters = 10000

    def run():
        for _ in range(iters):
            a + b
    return run, iters


for dt in ("float64", "float32"):
    tdt = getattr(torch, dt)

    @add("add_1e6_" + dt)
    def _(tdt=tdt):
        a, b = torch.rand(1000000, dtype=tdt), torch.rand(1000000, dtype=tdt)

        def run():
            for _ in range(10):
                a + b
        return run, 10

    @add("matmul_1000_" + dt)
    def _(tdt=tdt):
        a, b = torch.rand(1000, 1000, dtype=tdt), torch.rand(1000, 1000, dtype=tdt)
        return (lambda: a.mm(b)), 1

    @add("two_layer_" + dt)
    def _(tdt=tdt):
        N, D_in, H, D_out = 64, 1000, 100, 10
        torch.manual_seed(0)
        x, y = torch.randn(N, D_in, dtype=tdt), torch.randn(N, D_out, dtype=tdt)
        w1_0, w2_0 = torch.randn(D_in, H, dtype=tdt), torch.randn(H, D_out, dtype=tdt)

        def run():
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
        return run, 1


@add("autograd_tiny_step")
def _():
    torch.manual_seed(0)
    w1 = torch.randn(10, 16, requires_grad=True)
    w2 = torch.randn(16, 1, requires_grad=True)
    x, y = torch.randn(8, 10), torch.randn(8, 1)
    iters = 2000

    def run():
        with torch.enable_grad():
            for _ in range(iters):
                loss = (x.mm(w1).relu().mm(w2) - y).pow(2).sum()
                loss.backward()
                with torch.no_grad():
                    w1.sub_(w1.grad * 1e-4)
                    w2.sub_(w2.grad * 1e-4)
                w1.grad, w2.grad = None, None
    return run, iters


@add("autograd_two_layer_float32")
def _():
    N, D_in, H, D_out = 64, 1000, 100, 10
    torch.manual_seed(0)
    x, y = torch.randn(N, D_in), torch.randn(N, D_out)
    w1_0, w2_0 = torch.randn(D_in, H), torch.randn(H, D_out)

    def run():
        with torch.enable_grad():
            w1, w2 = w1_0.clone().requires_grad_(), w2_0.clone().requires_grad_()
            for _ in range(500):
                loss = (x.mm(w1).clamp(min=0).mm(w2) - y).pow(2).sum()
                loss.backward()
                with torch.no_grad():
                    w1.sub_(w1.grad * 1e-6)
                    w2.sub_(w2.grad * 1e-6)
                w1.grad, w2.grad = None, None
    return run, 1


run()

#!/usr/bin/env python3
"""Prints, with PyTorch 1.13, the reference values that tests/lua/test_autograd_function.lua and
tests/lua/test_hooks.lua assert (each block names the test it feeds). Run it with
/usr/bin/python3 and compare its output with the numbers in those tests.
(test_data.lua runs its PyTorch comparison itself.)"""
import math

import torch

f64 = torch.float64


def t(v, rg=False):
    return torch.tensor(v, dtype=f64, requires_grad=rg)


def show(name, *values):
    print(name + ":", *[v.tolist() if isinstance(v, torch.Tensor) else v for v in values])


class P3(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 0.5 * (5 * x ** 3 - 3 * x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 1.5 * (5 * x ** 2 - 1)


print("== test_autograd_function.lua")
x = t([0.5, -1.0, 2.0], True)
y = P3.apply(x)
y.sum().backward()
show("custom Function: y, x.grad", y, x.grad)


class Split(torch.autograd.Function):
    @staticmethod
    def forward(ctx, k, a, b, tag):
        ctx.k = k
        ctx.save_for_backward(a, None, b)
        idx = a.argmax()
        ctx.mark_non_differentiable(idx)
        return a * k, tag, a + b, idx

    @staticmethod
    def backward(ctx, g1, gtag, g2, gidx):
        show("several outputs: backward's gradients", g1, gtag, g2, gidx)
        return None, g1 * ctx.k + g2, g2, None


a, b = t([1.0, 3.0], True), t([10.0, 20.0])
y1, tag, y2, idx = Split.apply(2.5, a, b, "t")
y1.sum().backward()
show("several outputs: a.grad after y1.sum()", a.grad)
a.grad = None
z1, _, z2, _ = Split.apply(2.5, a, b, "t")
(z1 * 2 + z2 * 3).sum().backward()
show("several outputs: a.grad after (2 z1 + 3 z2).sum()", a.grad)


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x ** 2


x = t([1.0, -2.0], True)
(g,) = torch.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
show("create_graph: first and second derivative of Cube", g, torch.autograd.grad(g.sum(), x)[0])


class WrongGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, v):
        return v * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3


try:
    torch.autograd.gradcheck(WrongGrad.apply, (t([0.3, -1.2], True),))
except Exception as e:
    print("gradcheck message:", e)

J = torch.autograd.functional
a, b = t([1.0, 2.0]), t([[0.5, 1.5]])
show("jacobian of (a * b.sum(), a.exp())", *[j for row in J.jacobian(lambda a, b: (a * b.sum(), a.exp()), (a, b)) for j in row])
show("jacobian of v * 2 at 3.", J.jacobian(lambda v: v * 2, torch.tensor(3.0, dtype=f64)))
show("hessian of sum(v^3) + v1 v2", J.hessian(lambda v: (v ** 3).sum() + v[0] * v[1], t([1.0, 2.0])))
show("hessian of (u * v).sum()", *[h for row in J.hessian(lambda u, v: (u * v).sum(), (t([1.0, 2.0]), t([3.0, 4.0]))) for h in row])

print("== test_hooks.lua")
x = t([1.0, 2.0], True)
y = x * 2
y.register_hook(lambda g: g * 10)
y.retain_grad()
z = (y * y).sum()
show("grad(z, y) and y.grad after it", torch.autograd.grad(z, y, retain_graph=True)[0], y.grad)
z.backward()
show("hook then retain_grad: x.grad, y.grad", x.grad, y.grad)
x.grad = None
y = x * 2
y.retain_grad()
y.register_hook(lambda g: g * 10)
(y * y).sum().backward()
show("retain_grad then hook: x.grad, y.grad", x.grad, y.grad)
y = x * 2
h = y.register_hook(lambda g: g * 100)
y.retain_grad()
y.register_hook(lambda g: g * 10)
h.remove()
(y * y).sum().backward()
show("hook (removed), retain_grad, hook: y.grad", y.grad)

w = t([1.0, 1.0], True)
w.register_hook(lambda g: g + 1)
w.register_hook(lambda g: None)
w.register_hook(lambda g: g * 3)
(w * t([2.0, 5.0])).sum().backward()
show("three leaf hooks: w.grad", w.grad)
show("grad() skips a leaf's hooks", torch.autograd.grad((w * 3).sum(), w)[0])

x = t([1.0, 2.0], True)
v = x * 1
v.retain_grad()
v.mul_(3)
(v * v).sum().backward()
show("retain_grad then mul_(3): v.grad", v.grad)

a = torch.ones(3, requires_grad=True)
a.data = torch.zeros(2, dtype=f64)
print("a.data = float64 zeros:", a)


def linear():
    lin = torch.nn.Linear(2, 2).double()
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0]]))
        lin.bias.copy_(torch.tensor([0.5, -0.5]))
    return lin


lin = linear()
lin.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
lin.register_forward_hook(lambda m, args, out: out + 1)
show("forward pre-hook and forward hook", lin(t([[1.0, -1.0]])))

lin = linear()
rec = {}


def backward_hook(m, gi, go):
    rec["gi"], rec["go"] = gi[0], go[0]
    if gi[0] is not None:
        return (gi[0] * 10,)


lin.register_full_backward_hook(backward_hook)
x = t([[1.0, -1.0], [2.0, 0.5]], True)
y = lin(x)
print("grad_fn:", y.grad_fn.name())
(y ** 2).sum().backward()
show("full backward hook: grad_input, grad_output, x.grad, weight.grad", rec["gi"], rec["go"], x.grad, lin.weight.grad)
lin.zero_grad()
(lin(t([[1.0, -1.0]])) ** 2).sum().backward()
show("no input requires grad: grad_input, grad_output", rec["gi"], rec["go"])

"""PyTorch 1.13 references of the recurrent layers' rows (tests/conformance/ops_nn_rnn.lua),
imported by their `ref` expressions. Float64 throughout: the module is built with the row's
keywords (p is check.py's P: p.cls, p.kw, ...), its parameters are replaced by the case's weights (b, in named_parameters order), and
it runs on the case's input and initial states (a = [x, h0, c0] as the case has them)."""
import numpy as np
import torch

CELLS = {"RNNCell", "LSTMCell", "GRUCell"}


def _module(p, b):
    kw = dict(p.kw or {})
    m = getattr(torch.nn, p.cls)(p.input_size, p.hidden_size, **kw).double()
    with torch.no_grad():
        for (_, w), v in zip(m.named_parameters(), b):
            w.copy_(torch.from_numpy(np.array(v, dtype=np.float64)))
    m.train(bool(p.train))
    return m


def _forward(m, p, xs):
    x = xs[0]
    if len(xs) == 1:
        return m(x)
    hx = (xs[1], xs[2]) if p.cls in ("LSTM", "LSTMCell") else xs[1]
    return m(x, hx)


def _flat(out):
    """The outputs as tide returns them: output, h_n (, c_n) for a layer; h (, c) for a cell."""
    if isinstance(out, torch.Tensor):
        return [out]
    res = []
    for v in out:
        res.extend(_flat(v))
    return res


def forward(a, b, p):
    """The outputs of the layer or cell."""
    m = _module(p, b)
    xs = [torch.from_numpy(np.array(v, dtype=np.float64)) for v in a]
    return [v.detach().numpy() for v in _flat(_forward(m, p, xs))]


def backward(a, b, p):
    """The gradients of loss = sum over outputs k of sum(out_k^2) / (k + 1) with respect to
    the inputs (x and the given states) and then each parameter."""
    m = _module(p, b)
    xs = [torch.tensor(np.array(v, dtype=np.float64), requires_grad=True) for v in a]
    outs = _flat(_forward(m, p, xs))
    loss = sum((o * o).sum() / (k + 1) for k, o in enumerate(outs))
    params = list(m.parameters())
    grads = torch.autograd.grad(loss, xs + params, allow_unused=True)
    return [np.zeros(t.shape) if g is None else g.numpy() for g, t in zip(grads, xs + params)]

"""References of the attention rows (ops_nn_attn.lua) in PyTorch 1.13, float64.

PyTorch 1.13 has no F.scaled_dot_product_attention: sdpa() is the formula PyTorch 2.x
documents for it. The modules are PyTorch's own, given the case's weights by load_state_dict;
the 2.x keywords 1.13 lacks are handled here: the *is_causal hints are dropped (the rows pass
them with the causal mask they describe), and a float key_padding_mask is folded into a 3-D
float attn_mask (1.13 cannot combine two float masks; 2.x adds them).
"""
import math

import torch


def _kw(d):
    return dict(d) if isinstance(d, dict) else {}


def sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """softmax(q k^T * scale + bias) v with 2.x's bias: -inf outside the causal triangle, where a
    bool mask is false, or a float mask added."""
    L, S = q.size(-2), k.size(-2)
    scale = 1 / math.sqrt(q.size(-1)) if scale is None else scale
    bias = torch.zeros(L, S, dtype=q.dtype)
    if is_causal:
        bias = bias.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            bias = torch.where(attn_mask, bias, torch.tensor(-math.inf, dtype=q.dtype))
        else:
            bias = attn_mask + bias
    w = q @ k.transpose(-2, -1) * scale + bias
    return torch.softmax(w, dim=-1) @ v


def _activation(name):
    return {"tanh": torch.tanh, "Tanh": torch.nn.Tanh()}[name]


def _build(spec):
    """A module from {cls=, args=, act=, layer=, norm=} (the case's p)."""
    kw = _kw(spec.get("args"))
    if spec.get("act"):
        kw["activation"] = _activation(spec["act"])
    cls = getattr(torch.nn, spec["cls"])
    if spec.get("layer"):
        layer = _build(spec["layer"])
        norm = torch.nn.LayerNorm(spec["norm"]) if spec.get("norm") else None
        return cls(layer, kw["num_layers"], norm)
    return cls(**kw)


def _fold_float_kpm(m, query, fwd):
    """MultiheadAttention with a float key_padding_mask: the 3-D float attn_mask that adds it to
    the attn_mask, as 2.x does."""
    kpm = fwd.pop("key_padding_mask")
    batched = query.dim() == 3
    L = query.size(0 if not batched or not m.batch_first else 1)
    n = query.size(1 if not m.batch_first else 0) if batched else 1
    S, H = kpm.size(-1), m.num_heads
    kpm = kpm.reshape(n, 1, 1, S)
    am = fwd.get("attn_mask")
    if am is None:
        am = torch.zeros(L, S, dtype=kpm.dtype)
    elif am.dtype == torch.bool:
        am = torch.zeros(am.shape, dtype=kpm.dtype).masked_fill(am, -math.inf)
    if am.dim() == 2:
        am = am.expand(n * H, L, S)
    fwd["attn_mask"] = (am.reshape(n, H, L, S) + kpm).reshape(n * H, L, S)


def module(p, inputs, weights, masks):
    """The outputs of module p.cls (built from p, in eval mode when p.eval) with the weights named
    p.names, on the inputs (p.self: one tensor used as query, key and value) with the masks named
    p.masks and the other forward keywords p.fwd."""
    torch.manual_seed(0)
    m = _build(p.__dict__).double()
    m.load_state_dict(dict(zip(p.names, weights)), strict=True)
    if p.eval:
        m.eval()
    # inputs that require grad keep 1.13 off its inference fast paths (nested tensors)
    inputs = [x.clone().requires_grad_() for x in inputs]
    if p.self:
        inputs = [inputs[0]] * 3
    elif p.kv_same:
        inputs = [inputs[0], inputs[1], inputs[1]]
    fwd = _kw(p.fwd)
    for k in [k for k in fwd if k.endswith("is_causal")]:
        del fwd[k]
    fwd.update(zip(p.masks or [], masks or []))
    if p.cls == "MultiheadAttention":
        if fwd.get("key_padding_mask") is not None and fwd["key_padding_mask"].is_floating_point():
            _fold_float_kpm(m, inputs[0], fwd)
        out, w = m(*inputs, **fwd)
        return [out, w] if w is not None else out
    return m(*inputs, **fwd)

#!/usr/bin/env python3
"""The NumPy half of the conformance harness.

    python3 check.py WORKDIR [STDERR_LOG]

Reads what runner.lua wrote into WORKDIR (manifest.jsonl, rNNN.npz, progress, crashes),
computes each row's NumPy reference, checks dtype (by PyTorch's promotion rules), shape and
values of every output, prints one line per failing case and ends with "N passed, M failed".
Needs NumPy; the rows whose reference is PyTorch (the nn layers and losses) import torch on
first use (`torch`, `F`, `T`, `N` below).
"""
import json
import math
import os
import sys
import warnings

import numpy as np

FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64")
# The unsigned dtypes PyTorch 1.13 lacks: tide promotes them as NumPy does.
WIDE_UNSIGNED = ("uint16", "uint32", "uint64")
NPDT = {"bool": np.bool_, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
        "int8": np.int8, "int16": np.int16, "int32": np.int32,
        "int64": np.int64, "float16": np.float16, "bfloat16": np.float32, "float32": np.float32,
        "float64": np.float64, "complex64": np.complex64, "complex128": np.complex128}
BITS = {"uint8": 8, "uint16": 16, "uint32": 32, "uint64": 64, "int8": 8, "int16": 16, "int32": 32, "int64": 64,
        "float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}

# Default tolerances (rtol, atol) per result dtype; rows may override them.
TOL = {"float16": (2e-3, 1e-6), "bfloat16": (1.6e-2, 1e-6), "float32": (1e-5, 1e-7), "float64": (1e-12, 1e-15),
       "complex64": (1e-5, 1e-7), "complex128": (1e-12, 1e-15)}

MAX_LINES_PER_ROW = 5


def is_float(d):
    return d in FLOATS


def npdt(name):
    return None if name is None else np.dtype(NPDT[name])


# --------------------------------------------------------------------------------------------
# PyTorch's type promotion (c10::promoteTypes and at::native::result_type).
def promote_types(x, y):
    if x is None:
        return y
    if y is None or x == y:
        return x
    if x == "bool":
        return y
    if y == "bool":
        return x
    if x in WIDE_UNSIGNED or y in WIDE_UNSIGNED:  # bfloat16 acts as float16 there
        nx, ny = ("float16" if d == "bfloat16" else d for d in (x, y))
        return str(np.promote_types(NPDT[nx], NPDT[ny]))
    fx, fy = is_float(x), is_float(y)
    if fx and not fy:
        return x
    if fy and not fx:
        return y
    if fx and fy:
        if {x, y} == {"float16", "bfloat16"}:
            return "float32"
        return x if BITS[x] >= BITS[y] else y
    if "uint8" in (x, y):
        other = y if x == "uint8" else x
        return "int16" if other == "int8" else other
    return x if BITS[x] >= BITS[y] else y


def _combine(higher, lower):
    if higher is None:
        return lower
    if is_float(higher):
        return higher
    if lower is not None and is_float(lower):  # a float scalar or 0-dim tensor next to integers
        return lower
    if higher == "bool":
        return promote_types(higher, lower)
    return higher


def result_type(descs, default_float="float32"):
    """descs: input descriptions (tensors, Lua numbers, lists of tensors)."""
    dim = zero = wrapped = None
    for d in _flat_descs(descs):
        if d["kind"] == "tensor":
            if len(d["shape"]) > 0:
                dim = promote_types(dim, d["dtype"])
            else:
                zero = promote_types(zero, d["dtype"])
        elif d["kind"] == "scalar":
            v = d["value"]
            t = "bool" if isinstance(v, bool) else ("int64" if d.get("int") else default_float)
            wrapped = promote_types(wrapped, t)
    return _combine(dim, _combine(zero, wrapped))


def _flat_descs(descs):
    for d in descs:
        if d["kind"] == "list":
            yield from d["items"]
        else:
            yield d


def infer_dtype(v, default_float):
    flat = []

    def walk(x):
        if isinstance(x, list):
            for y in x:
                walk(y)
        else:
            flat.append(x)
    walk(v)
    if flat and all(isinstance(x, bool) for x in flat):
        return "bool"
    if not flat or any(isinstance(x, float) for x in flat):
        return default_float
    return "int64"


# --------------------------------------------------------------------------------------------
# Helpers for the reference expressions of ops.lua.
class P:
    """A case's parameters: p.name, None when absent."""

    def __init__(self, d):
        self.__dict__.update(d if isinstance(d, dict) else {})

    def __getattr__(self, name):
        return None


def ax(d, x=None):
    """1-based dim(s) (negative from the end) -> NumPy axis/axes."""
    if d is None:
        return None
    if isinstance(d, (list, tuple)):
        return tuple(ax(i, x) for i in d)
    return d - 1 if d > 0 else d


def bf16(x):
    """Rounds float32 values to bfloat16 (to nearest even), kept as float32."""
    x = np.asarray(x, dtype=np.float32)
    u = x.view(np.uint32).astype(np.uint64)
    s16 = np.uint64(16)
    r = (((u + np.uint64(0x7FFF) + ((u >> s16) & np.uint64(1))) >> s16) << s16).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), x, r)


def to_dtype(x, dt):
    x = np.asarray(x)
    if dt == "bfloat16":
        return bf16(x.astype(np.float32))
    return x.astype(NPDT[dt])


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


_erf = np.vectorize(math.erf, otypes=[np.float64])


def erf(x):
    x = np.asarray(x, dtype=np.float64)
    return _erf(x) if x.size else x.copy()


def lse(a, axis, keepdims):
    a = np.asarray(a, dtype=np.float64)
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    r = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        r = np.squeeze(r, axis=axis) if axis is not None else r.reshape(())
    return r


def vnorm(a, ord, axis, keepdims):
    x = np.abs(np.asarray(a, dtype=np.float64))
    if ord is None:
        ord = 2
    if ord == math.inf:
        return np.max(x, axis=axis, keepdims=keepdims)
    if ord == -math.inf:
        return np.min(x, axis=axis, keepdims=keepdims)
    if ord == 0:
        return np.sum(x != 0, axis=axis, keepdims=keepdims).astype(np.float64)
    if ord == 1:
        return np.sum(x, axis=axis, keepdims=keepdims)
    return np.sum(x ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def argk(f, a, dim, keepdim):
    """np.argmax/argmin with torch's dim/keepdim (flattened without a dim)."""
    if dim is None:
        return np.asarray(f(np.asarray(a).reshape(-1)))
    axis = ax(dim)
    r = f(a, axis=axis)
    if keepdim:
        r = np.expand_dims(r, axis)
    return r


def sort_ref(a, dim, descending):
    axis = ax(dim)
    if not descending:
        idx = np.argsort(a, axis=axis, kind="stable")
    else:
        n = a.shape[axis]
        idx = n - 1 - np.flip(np.argsort(np.flip(a, axis), axis=axis, kind="stable"), axis)
    return np.take_along_axis(a, idx, axis), idx + 1


def topk_ref(a, k, dim, largest):
    vals, idx = sort_ref(a, dim, largest)
    axis = ax(dim)
    sl = [slice(None)] * a.ndim
    sl[axis] = slice(0, k)
    return vals[tuple(sl)], idx[tuple(sl)]


def clamp_ref(a, lo, hi):
    r = a
    if lo is not None:
        r = np.maximum(r, lo)
    if hi is not None:
        r = np.minimum(r, hi)
    return r


def squeeze_ref(a, dim):
    if dim is None:
        return np.squeeze(a)
    axis = ax(dim)
    return np.squeeze(a, axis) if a.shape[axis] == 1 else a


def expand_ref(a, sizes):
    new = len(sizes) - a.ndim
    shape = [a.shape[i - new] if s == -1 else s for i, s in enumerate(sizes)]
    return np.broadcast_to(a, shape)


def flatten_ref(a, s, e):
    if a.ndim == 0:
        return a.reshape(1)
    if s is None:
        return a.reshape(-1)
    s0, e0 = ax(s) % a.ndim, ax(e) % a.ndim
    shape = a.shape[:s0] + (int(np.prod(a.shape[s0:e0 + 1])),) + a.shape[e0 + 1:]
    return a.reshape(shape)


def narrow_ref(a, dim, start, length):
    axis = ax(dim)
    sl = [slice(None)] * a.ndim
    sl[axis] = slice(start - 1, start - 1 + length)
    return a[tuple(sl)]


def split_ref(a, size, dim):
    axis = ax(dim)
    n = a.shape[axis]
    if isinstance(size, list):
        cuts = list(np.cumsum(size)[:-1])
    else:
        cuts = list(range(size, n, size))
    return list(np.split(a, cuts, axis=axis))


def chunk_ref(a, chunks, dim):
    axis = ax(dim)
    n = a.shape[axis]
    if n == 0:
        return [a] * chunks
    return split_ref(a, -(-n // chunks), dim)


# PyTorch's hfftn / ihfftn (NumPy has no n-dimensional Hermitian transforms): irfftn of the
# conjugate and the conjugate of rfftn, the norm's direction swapped.
def swapped_norm(norm):
    return {None: "forward", False: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}[norm]


def hfftn_ref(a, s, axes, norm):
    return np.fft.irfftn(np.conj(a), s=s, axes=axes, norm=swapped_norm(norm))


def ihfftn_ref(a, s, axes, norm):
    return np.conj(np.fft.rfftn(a, s=s, axes=axes, norm=swapped_norm(norm)))


def vr(z):
    """torch.view_as_real of a complex array: (..., 2) real and imaginary parts."""
    return np.stack((z.real, z.imag), -1)


def pyidx(spec):
    """An index spec of ops.lua (1-based, inclusive ranges) -> a NumPy index tuple."""
    out = []
    for e in spec:
        if e == ":":
            out.append(slice(None))
        elif isinstance(e, list):
            f, l = e[0], e[1]
            st = e[2] if len(e) > 2 else 1
            start = f - 1 if f > 0 else f
            if st < 0:  # from f down to l inclusive: stop one further down (None: past index 0)
                stop = (l - 2 if l - 2 >= 0 else None) if l > 0 else l - 1
            elif l > 0:
                stop = l
            else:
                stop = l + 1 if l + 1 != 0 else None
            out.append(slice(start, stop, st))
        else:
            out.append(e - 1 if e > 0 else e)
    return tuple(out)


def setitem(a, idx, v):
    r = np.array(a, copy=True)
    r[idx] = v
    return r


def _restrict(a, shape, axis=None):
    return a[tuple(slice(None) if d == axis else slice(0, s) for d, s in enumerate(shape))]


def lowmed(a, axis, keepdims):
    """torch.median's lower median along axis (None: all), NaN where a slice holds a NaN."""
    a = np.asarray(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    r = np.take(np.sort(a, axis=axis), [(a.shape[axis] - 1) // 2], axis=axis)
    if np.issubdtype(a.dtype, np.floating):
        r = np.where(np.isnan(a).any(axis=axis, keepdims=True), np.nan, r)
    return r if keepdims else np.squeeze(r, axis=axis)


def nanlowmed(a, axis, keepdims):
    """torch.nanmedian's lower median of the non-NaN values along axis."""
    a = np.asarray(a)
    k = (~np.isnan(a)).sum(axis=axis, keepdims=True) if np.issubdtype(a.dtype, np.floating) else a.shape[axis]
    idx = np.maximum((np.asarray(k) - 1) // 2, 0) * np.ones_like(np.take(a, [0], axis=axis), dtype=np.int64)
    r = np.take_along_axis(np.sort(a, axis=axis), idx, axis=axis)
    return r if keepdims else np.squeeze(r, axis=axis)


def ufunc_at(f, a, idx, b):
    """f.at on a copy of a with tide's 1-based indices; the copy."""
    a = np.array(a)
    f.at(a, [i - 1 if i > 0 else i for i in idx], np.asarray(b, dtype=a.dtype))
    return a


def ufunc_at_tuple(f, a, key, b):
    """f.at on a copy of a with a tide index tuple whose entries are ["i", [1-based indices]],
    ":" or ["r", first, last]; the copy."""
    def entry(e):
        if e == ":":
            return slice(None)
        if e[0] == "r":
            return slice(e[1] - 1, e[2])
        return np.array([i - 1 if i > 0 else i for i in e[1]], dtype=np.int64)
    a = np.array(a)
    f.at(a, tuple(entry(e) for e in key), np.asarray(b, dtype=a.dtype))
    return a


def grads(g):
    """np.gradient's result as a list (one array, or a tuple of them)."""
    return list(g) if isinstance(g, (list, tuple)) else [g]


def gather_ref(a, axis, idx):
    return np.take_along_axis(_restrict(a, idx.shape, axis), idx - 1, axis)


def _src(src, shape, dtype):
    if isinstance(src, np.ndarray) and src.ndim > 0:
        return _restrict(src, shape)
    return np.full(shape, src, dtype=dtype)


def scatter_ref(a, axis, idx, src):
    out = np.array(a, copy=True)
    view = _restrict(out, idx.shape, axis)
    np.put_along_axis(view, idx - 1, _src(src, idx.shape, a.dtype), axis)
    return out


def scatter_add_ref(a, axis, idx, src):
    out = np.array(a, copy=True)
    view = _restrict(out, idx.shape, axis)
    full = list(np.indices(idx.shape))
    full[axis] = idx - 1
    np.add.at(view, tuple(full), _src(src, idx.shape, a.dtype))
    return out


def index_fill_ref(a, axis, idx, v):
    out = np.array(a, copy=True)
    sl = [slice(None)] * a.ndim
    sl[axis] = idx - 1
    out[tuple(sl)] = v
    return out


def index_add_ref(a, axis, idx, src):
    out = np.array(a, copy=True)
    moved = np.moveaxis(out, axis, 0)
    np.add.at(moved, idx - 1, np.moveaxis(src, axis, 0))
    return out


class _Lazy:
    """A module imported on first attribute access: `torch` and `F` (torch.nn.functional) for
    the rows whose reference is PyTorch, so that the other rows need NumPy only."""

    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        import importlib
        mod = importlib.import_module(self._name)
        return getattr(mod, attr)


def T(x):
    """NumPy arrays (also inside lists) as PyTorch tensors: floating arrays as float64 (the
    reference's precision), integer and bool arrays keep their dtype; other values as they are."""
    import torch
    if isinstance(x, (list, tuple)):
        return [T(v) for v in x]
    if isinstance(x, np.generic):  # arithmetic on a 0-D array gives a NumPy scalar
        x = np.asarray(x)
    if isinstance(x, np.ndarray):
        if x.dtype.kind == "f":
            x = x.astype(np.float64)
        return torch.from_numpy(np.array(x, order="C"))  # (ascontiguousarray makes 0-D 1-D)
    return x


def N(x):
    """PyTorch tensors (also inside lists and tuples) as NumPy arrays, detached."""
    if isinstance(x, (list, tuple)):
        return [N(v) for v in x]
    if hasattr(x, "detach"):
        return x.detach().numpy()
    return x


def pad_wrap(a, pw):
    """np.pad(a, pw, mode='wrap') as NumPy >= 1.25 computes it: a strict repetition of the
    array, also where a pad is wider than the axis. NumPy 1.24 (the reference here) pads such
    widths in rounds whose period drifts (numpy#22464, fixed by numpy#22575)."""
    a = np.asarray(a)
    pw = np.broadcast_to(np.asarray(pw, dtype=np.int64), (a.ndim, 2))
    idx = [np.arange(-lo, n + hi) % n for (lo, hi), n in zip(pw, a.shape)]
    return a[np.ix_(*idx)] if a.ndim else a


def optim_steps(name, kw, params, targets, scales):
    """torch.optim.<name>(params, **kw) stepped once per scale on float64 copies of params, the
    gradient at step t being scales[t] * (p - target) (tests/conformance/ops_optim.lua)."""
    import torch
    ps = [torch.tensor(np.array(x, dtype=np.float64), requires_grad=True) for x in params]
    ts = [torch.tensor(np.array(x, dtype=np.float64)) for x in targets]
    kw = {k: tuple(v) if isinstance(v, list) else v for k, v in (kw or {}).items()}
    opt = getattr(torch.optim, name)(ps, **kw)
    for sc in scales:
        with torch.no_grad():
            for x, t in zip(ps, ts):
                x.grad = (x - t).mul(sc)
        opt.step()
    return [x.detach().numpy() for x in ps]


def lbfgs_steps(kw, x0, t, a, c, steps):
    """torch.optim.LBFGS(**kw) on f(x) = sum(a (x - t)^2 + c (x - t)^4) with its gradient written
    out, `steps` steps from x0: [x, the losses] (tests/conformance/ops_optim.lua)."""
    import torch
    x = torch.tensor(np.array(x0, dtype=np.float64), requires_grad=True)
    t, a, c = (torch.tensor(np.array(v, dtype=np.float64)) for v in (t, a, c))
    opt = torch.optim.LBFGS([x], **(kw or {}))

    def closure():
        with torch.no_grad():
            e = x - t
            x.grad = e.mul(a).mul(2).add(e.pow(3).mul(c).mul(4))
            return (e.pow(2).mul(a).add(e.pow(4).mul(c))).sum()
    losses = [float(opt.step(closure)) for _ in range(steps)]
    return [x.detach().numpy(), np.array(losses)]


def schedule(make, epochs, metrics=None):
    """The lr and momentum (or beta1) of two groups (lr 0.1 and 0.02, SGD with momentum 0.9, or
    Adam when the source names it) over `epochs` epochs of the scheduler that the Python source
    `make` (a lambda of the optimizer, with S = torch.optim.lr_scheduler) builds: one row per
    epoch, the first before any step (tests/conformance/ops_optim.lua)."""
    import torch
    S = torch.optim.lr_scheduler
    ps = [torch.zeros(1, requires_grad=True) for _ in range(2)]
    groups = [{"params": [ps[0]], "lr": 0.1}, {"params": [ps[1]], "lr": 0.02}]
    adam = "Adam" in make
    opt = torch.optim.Adam(groups, lr=1.0) if adam else torch.optim.SGD(groups, lr=1.0, momentum=0.9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched = eval(make.replace("Adam:", ""), {"S": S, "math": math})(opt)

        def record():
            return [g["lr"] for g in opt.param_groups] + [g["betas"][0] if adam else g["momentum"]
                                                          for g in opt.param_groups]
        rows = [record()]
        for e in range(epochs):
            opt.step()
            if metrics is not None:
                sched.step(metrics[e])
            else:
                sched.step()
            rows.append(record())
    return np.array(rows, dtype=np.float64)


def hooked_linear(x, w, bias):
    """A float64 nn.Linear with weight w and bias `bias` under every hook kind: a forward pre-hook
    doubling the input, a forward hook adding 1 to the output, a full backward hook tripling
    grad_input, a tensor hook halving x's gradient and retain_grad on the output; (out^2).sum()
    backward. Returns out, x.grad, weight.grad, bias.grad, out.grad (ops_optim.lua's hooks row)."""
    import torch
    lin = torch.nn.Linear(w.shape[1], w.shape[0]).double()
    with torch.no_grad():
        lin.weight.copy_(torch.from_numpy(np.array(w, dtype=np.float64)))
        lin.bias.copy_(torch.from_numpy(np.array(bias, dtype=np.float64)))
    xt = torch.tensor(np.array(x, dtype=np.float64), requires_grad=True)
    xt.register_hook(lambda g: g * 0.5)
    lin.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    lin.register_forward_hook(lambda m, args, out: out + 1)
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0] * 3,))
    out = lin(xt)
    out.retain_grad()
    (out ** 2).sum().backward()
    return [N(out), N(xt.grad), N(lin.weight.grad), N(lin.bias.grad), N(out.grad)]



def norm_layer_steps(layer, args, kw, xs, w, bias):
    """torch.nn.<layer>(*args, **kw) in float64 (weight and bias copied from w and bias when
    given; kw's momentum False is None) run in training mode on each input of xs, the first with
    (y ** 3).sum() backward, then in eval mode on xs[0] (ops_nn_norm.lua's layer rows). Returns
    the training outputs, x.grad, weight.grad and bias.grad (when affine), the eval output,
    then running_mean, running_var and num_batches_tracked (as float64) when tracked."""
    import torch
    kw = dict(kw or {})
    if kw.get("momentum") is False:
        kw["momentum"] = None
    m = getattr(torch.nn, layer)(*args, **kw).double()
    if w is not None:
        with torch.no_grad():
            m.weight.copy_(T(w))
            m.bias.copy_(T(bias))
    outs, grads = [], []
    for i, x in enumerate(xs):
        xt = T(x).requires_grad_(i == 0)
        y = m(xt)
        if i == 0:
            (y ** 3).sum().backward()
            grads = [xt.grad] + ([m.weight.grad, m.bias.grad] if w is not None else [])
        outs.append(y)
    m.eval()
    outs = outs + grads + [m(T(xs[0]))]
    if getattr(m, "running_mean", None) is not None:
        outs += [m.running_mean, m.running_var, m.num_batches_tracked.double()]
    return N(outs)

def product_ref(op, a, b, c, kw):
    """torch.<op>(a, b, c, **kw) for baddbmm / addbmm / addmv / addr. With beta = 0 into a zeroed
    out=: the plain call now and then gave a NaN that no input held (float32, beta = 0, an
    expanded batch1; not reproducible alone), which looks like PyTorch 1.13 reading its
    uninitialised result buffer there; a zeroed out= gives what beta = 0 means."""
    import torch
    f = getattr(torch, op)
    r = f(T(a), T(b), T(c), **kw)
    if kw.get("beta") == 0:
        r = torch.zeros_like(r)
        f(T(a), T(b), T(c), **kw, out=r)
    return N(r)


def pykw(p):
    """torch.gradient's keywords from a case's p (tests/conformance/ops_ops15.lua's gradient row):
    dim 1-based there, coordinates as float64 tensors."""
    import torch
    kw = {"edge_order": p.edge_order}
    if p.dim is not None:
        kw["dim"] = p.dim - 1
    if p.coords is not None:
        kw["spacing"] = [torch.tensor(c, dtype=torch.float64) for c in p.coords]
    elif p.spacing is not None:
        kw["spacing"] = p.spacing
    return kw


HELPERS = {name: obj for name, obj in globals().items()
           if callable(obj) and not name.startswith("_") and name not in ("main",)}
HELPERS.update(np=np, math=math, inf=math.inf, nan=math.nan, torch=_Lazy("torch"), F=_Lazy("torch.nn.functional"))


# --------------------------------------------------------------------------------------------
def expected_dtypes(rule, inputs, p, default_float="float32"):
    """The result dtypes a row's `out` rule gives for a case's inputs (a list, one per output;
    a trailing '*' repeats the last)."""
    descs = [it["desc"] for it in inputs]
    named = {it["name"]: it["desc"] for it in inputs}
    tensors = [d for d in _flat_descs(descs) if d["kind"] == "tensor"]
    same = tensors[0]["dtype"] if tensors else None
    out = []
    for r in rule.split(",") if not rule.startswith("py:") else [rule]:
        r = r.strip()
        if r.startswith("py:"):
            v = eval(r[3:], dict(HELPERS), {"p": p, "infer_dtype": infer_dtype})
            out.extend(v if isinstance(v, list) else [v])
            continue
        star = r.endswith("*")
        r = r.rstrip("*")
        if r == "same":
            v = same
        elif r == "float":
            v = same if is_float(same) else default_float
        elif r == "promote":
            v = result_type(descs, default_float)
        elif r == "promote_bc":
            v = result_type([named[n] for n in ("b", "c") if n in named], default_float)
        elif r == "truediv":
            v = result_type(descs, default_float)
            v = v if is_float(v) else default_float
        elif r == "sum":
            v = same if is_float(same) or same == "uint64" else "int64"
        elif r == "all":
            v = "uint8" if same == "uint8" else "bool"
        elif r == "p.dtype":
            v = p.dtype
        else:
            v = r
        out.append(v + "*" if star else v)
    return out


def numpy_promotion(raw, rule):
    """For a NumPy-spelled call: the result dtype NumPy 1.24 gives its inputs (0-dim arrays and
    Lua numbers cast by value), or None where an input has no NumPy dtype (bfloat16)."""
    vals = []
    for name, (v, desc) in raw.items():
        if rule == "promote_bc" and name not in ("b", "c"):
            continue
        if desc["kind"] == "tensor":
            if desc["dtype"] == "bfloat16":
                return None
            vals.append(np.asarray(v).astype(desc["dtype"]))
        elif desc["kind"] == "scalar":
            vals.append(v)
    return [str(np.result_type(*vals))] if vals else None


def convert_inputs(inputs, mode, dtype):
    """Inputs as the reference sees them (see `cast` in ops.lua): tensors are converted to
    `dtype` (as PyTorch converts operands to the computation dtype) and then, for floating
    dtypes with mode "result"/"common", widened to float64 so the reference is exact; Lua
    numbers become NumPy scalars of that dtype (PyTorch too rounds a number to a float16
    tensor's dtype before the op)."""
    def conv(v, desc):
        if desc["kind"] == "list":
            return [conv(x, dx) for x, dx in zip(v, desc["items"])]
        if v is None or mode == "none" or dtype is None:
            return v
        if desc["kind"] == "tensor":
            x = to_dtype(v, dtype)
        elif desc["kind"] == "scalar":
            x = to_dtype(np.array(v), dtype)
        else:
            return v
        if is_float(dtype):
            x = x.astype(np.float32 if mode == "exact" and dtype != "float64" else np.float64)
        return x[()] if desc["kind"] == "scalar" else x
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return {name: conv(v, desc) for name, (v, desc) in inputs.items()}


def describe_case(case):
    parts = []
    for item in case.get("inputs", []):
        d = item["desc"]
        parts.append(item["name"] + "=" + describe_desc(d))
    p = case.get("p")
    if p:
        parts.append("p=" + json.dumps(p, separators=(",", ":")))
    return " ".join(parts)


def describe_desc(d):
    k = d["kind"]
    if k == "tensor":
        lay = d.get("layout")
        return "%s%s%s" % (d["dtype"], tuple(d["shape"]) if len(d["shape"]) != 1 else "(%d,)" % d["shape"][0],
                           "" if lay in (None, "contig") else "[" + lay + "]")
    if k == "scalar":
        return repr(d["value"])
    if k == "list":
        return "[" + ", ".join(describe_desc(x) for x in d["items"]) + "]"
    return json.dumps(d.get("value"))


def fmt(v):
    if isinstance(v, (float, np.floating)):
        return "%.9g" % v
    return str(v)


def compare_values(got, exp, dt, tol):
    """None when equal within tolerance, else a description of the difference."""
    if got.shape != exp.shape:
        return "shape %s, expected %s" % (got.shape, exp.shape)
    if got.size == 0:
        return None
    if np.iscomplexobj(got) or np.iscomplexobj(exp):
        # Complex: |got - expected| <= atol + rtol |expected|; NaN (in either part) where the
        # reference has one, infinities equal.
        # With an infinite part, the infinite parts must be equal and the finite ones close.
        rtol, atol = tol
        g = got.astype(np.complex128)
        e = exp.astype(np.complex128)
        ng, ne = np.isnan(g.real) | np.isnan(g.imag), np.isnan(e.real) | np.isnan(e.imag)
        bad = ng != ne
        inf = (np.isinf(g.real) | np.isinf(g.imag) | np.isinf(e.real) | np.isinf(e.imag)) & ~ng & ~ne
        for gp, ep in ((g.real, e.real), (g.imag, e.imag)):
            pinf = inf & (np.isinf(gp) | np.isinf(ep))
            bad |= pinf & (gp != ep)
            pfin = inf & ~pinf
            bad |= pfin & (np.abs(np.where(pfin, gp - ep, 0.0)) > atol + rtol * np.abs(np.where(pfin, ep, 0.0)))
        fin = ~ng & ~ne & ~inf
        err = np.where(fin, np.abs(g - e), 0.0)
        bad |= fin & (err > atol + rtol * np.abs(e))
        if not bad.any():
            return None
        i = tuple(int(x) for x in np.argwhere(bad)[0]) if got.ndim else ()
        return "%d/%d values differ (max abs err %s, rtol %g atol %g); at %s expected %s, got %s" % (
            int(bad.sum()), got.size, fmt(float(err.max())), rtol, atol, i, e[i], g[i])
    if is_float(dt) or np.issubdtype(got.dtype, np.floating):
        rtol, atol = tol
        g = got.astype(np.float64)
        e = exp.astype(np.float64)
        ng, ne = np.isnan(g), np.isnan(e)
        bad = ng != ne
        inf = (np.isinf(g) | np.isinf(e)) & ~ng & ~ne
        bad |= inf & (g != e)
        fin = ~ng & ~ne & ~inf
        err = np.where(fin, np.abs(g - e), 0.0)
        bad |= fin & (err > atol + rtol * np.abs(e))
        if not bad.any():
            return None
        i = tuple(int(x) for x in np.argwhere(bad)[0])
        return "%d/%d values differ (max abs err %s, rtol %g atol %g); at %s expected %s, got %s" % (
            int(bad.sum()), got.size, fmt(float(err.max())), rtol, atol, i, fmt(e[i]), fmt(g[i]))
    bad = got != exp
    if not np.any(bad):
        return None
    i = tuple(int(x) for x in np.argwhere(bad)[0]) if got.ndim else ()
    return "%d/%d values differ; at %s expected %s, got %s" % (
        int(np.sum(bad)), got.size, i, fmt(exp[i]), fmt(got[i]))


class Checker:
    def __init__(self, work, stderr_log):
        self.work = work
        self.stderr_log = stderr_log
        self.passed = 0
        self.failed = 0
        self.row_fail = {}
        self.row_lines = {}
        self.lines = []

    def fail(self, row, msg):
        self.failed += 1
        self.row_fail[row] = self.row_fail.get(row, 0) + 1
        n = self.row_lines.get(row, 0)
        self.row_lines[row] = n + 1
        if n < MAX_LINES_PER_ROW:
            self.lines.append("FAIL %s: %s" % (row, msg))

    def run(self):
        rows, cases = {}, {}
        order = []
        row_errors = {}
        with open(os.path.join(self.work, "manifest.jsonl")) as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    rec = json.loads(line)
                except ValueError as e:
                    self.fail("harness", "unreadable manifest line (%s): %s" % (e, line[:200]))
                    continue
                t = rec.get("type")
                if t == "row":
                    rows[rec["index"]] = rec
                    order.append(rec["index"])
                    cases[rec["index"]] = []
                elif t == "case":
                    cases.setdefault(rec["row"], []).append(rec)
                elif t == "row_error":
                    row_errors[rec["row"]] = rec["error"]
        begun, ended, crashes, done = set(), set(), {}, False
        prog = os.path.join(self.work, "progress")
        if os.path.exists(prog):
            for line in open(prog):
                w = line.split()
                if not w:
                    continue
                if w[0] == "begin":
                    begun.add(int(w[1]))
                elif w[0] == "end":
                    ended.add(int(w[1]))
                elif w[0] == "crash":
                    crashes[int(w[1])] = w[2] if len(w) > 2 else "?"
                elif w[0] == "done":
                    done = True
                elif w[0] == "exit":
                    self.fail("harness", "tide exited with status %s after finishing all rows "
                              "(a sanitizer report?)%s" % (w[1], self.stderr_tail()))
        for ri in order:
            row = rows[ri]
            name = row["name"]
            if ri in begun and ri not in ended:
                self.fail(name, "tide crashed (exit status %s) while running this row%s"
                          % (crashes.get(ri, "?"), self.stderr_tail()))
                continue
            if ri in row_errors:
                for _ in cases[ri]:
                    self.fail(name, row_errors[ri])
                continue
            self.check_row(row, cases[ri])
        if not done and not crashes:
            self.fail("harness", "the tide runner did not finish%s" % self.stderr_tail())
        names_file = os.path.join(self.work, "rows.txt")
        if os.path.exists(names_file):
            seen = {rows[i]["name"] for i in order}
            for n in open(names_file).read().splitlines():
                if n and n not in seen:
                    self.fail(n, "row never ran (the runner stopped before it)")

    def stderr_tail(self):
        if not self.stderr_log or not os.path.exists(self.stderr_log):
            return ""
        tail = open(self.stderr_log, errors="replace").read().strip().splitlines()[-8:]
        return ("; stderr: " + " | ".join(tail)) if tail else ""

    def check_row(self, row, cases):
        name = row["name"]
        npz_path = os.path.join(self.work, "r%03d.npz" % row["index"])
        npz = np.load(npz_path) if os.path.exists(npz_path) else {}
        code = compile(row["ref"] or "None", "<ref of %s>" % name, "eval")
        tol = dict(TOL)
        for k, v in (row.get("tol") or {}).items():
            tol[k] = tuple(v)
        # All cases raising the same error (a missing op, typically) give one line.
        errs = [c.get("error") for c in cases]
        if cases and not row.get("expect_error") and all(errs) and len(set(errs)) == 1:
            self.failed += len(cases)
            self.row_fail[name] = len(cases)
            self.lines.append("FAIL %s: all %d cases raised: %s" % (name, len(cases), errs[0].splitlines()[0]))
            return
        for case in cases:
            try:
                msg = self.check_case(row, case, npz, code, tol)
            except Exception as e:  # a harness problem shows as a failure, not a crash
                msg = "harness error: %s: %s" % (type(e).__name__, e)
            if msg is None:
                self.passed += 1
            else:
                self.fail(name, "case %s: %s | %s" % (case.get("id"), msg, describe_case(case)))

    def load(self, desc, npz):
        k = desc["kind"]
        if k == "tensor":
            if desc.get("save_error"):
                raise RuntimeError("could not save a tensor: " + desc["save_error"])
            arr = npz[desc["key"]]
            if list(arr.shape) != list(desc["shape"]):
                raise RuntimeError("saved array has shape %s but x.shape says %s" % (arr.shape, desc["shape"]))
            return arr
        if k == "scalar":
            v = desc["value"]
            if desc.get("int"):
                v = int(v)
            elif not isinstance(v, bool):
                v = float(v)
            return v
        if k == "list":
            return [self.load(x, npz) for x in desc["items"]]
        if k == "nil":
            return None
        return desc.get("value")

    def numpy_refuses_types(self, case, npz, code):
        """Whether NumPy refuses the inputs' dtypes as well (a TypeError on the inputs as they
        are): uint64 with a signed integer promotes to float64, which the bitwise ops and the
        shifts refuse in both."""
        raw = {it["name"]: self.load(it["desc"], npz) for it in case["inputs"]}
        env = dict(HELPERS)
        env["p"] = P(case.get("p"))
        env.update({n: None for n in ("a", "b", "c")})
        env.update(raw)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                eval(code, env)
        except TypeError:
            return True
        except Exception:
            return False
        return False

    def check_case(self, row, case, npz, code, tol):
        if case.get("gen_error"):
            return "case generator failed: " + case["gen_error"].splitlines()[0]
        expect_error = row.get("expect_error")
        if expect_error is not None:
            if not case.get("error"):
                return "expected an error mentioning %r, but the op succeeded" % expect_error
            first = case["error"].splitlines()[0]
            if expect_error not in first:
                return "error message %r does not mention %r" % (first, expect_error)
            return None
        if case.get("error"):
            if self.numpy_refuses_types(case, npz, code):
                return None
            return "raised: " + case["error"].splitlines()[0]
        descs = [it["desc"] for it in case["inputs"]]
        p = P(case.get("p"))
        raw = {it["name"]: (self.load(it["desc"], npz), it["desc"]) for it in case["inputs"]}
        default_float = "float64" if (row.get("npstyle") or p.npstyle) else "float32"
        # out = "numpy": the dtype NumPy's ref gives on the inputs as they are (cast = "none").
        numpy_out = row.get("out") == "numpy"
        exp_dts = ["*"] if numpy_out else expected_dtypes(row.get("out") or "same", case["inputs"], p, default_float)
        if default_float == "float64" and row.get("out") in ("promote", "promote_bc"):
            exp_dts = numpy_promotion(raw, row["out"]) or exp_dts
        mode = row.get("cast") or "result"
        target = None
        if mode in ("result", "exact"):
            target = exp_dts[0].rstrip("*")
        elif mode == "common":
            target = result_type(descs, default_float)
        env = dict(HELPERS)
        env["p"] = p
        env.update({n: None for n in ("a", "b", "c")})
        env.update(convert_inputs(raw, mode, target))
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            ref = eval(code, env)
        refs = list(ref) if isinstance(ref, (tuple, list)) else [ref]
        outs = case.get("outputs") or []
        if len(outs) != len(refs):
            return "%d outputs, expected %d" % (len(outs), len(refs))
        problems = []
        for i, (o, r) in enumerate(zip(outs, refs)):
            label = "output %d: " % (i + 1) if len(outs) > 1 else ""
            dt = exp_dts[min(i, len(exp_dts) - 1)].rstrip("*")
            r = np.asarray(r)
            if numpy_out:
                dt = str(r.dtype)
            if o["kind"] == "scalar":  # a Lua number or boolean
                g = np.asarray(o["value"])
                if r.size != 1 or not (g == r.reshape(()) or (isinstance(o["value"], float) and
                                                              abs(o["value"] - float(r)) <= 1e-6 * max(1, abs(float(r))))):
                    problems.append("%sgot %s, expected %s" % (label, o["value"], r))
                continue
            if o["kind"] != "tensor":
                problems.append("%sgot a %s, expected a tensor" % (label, o["kind"]))
                continue
            got = self.load(o, npz)
            if o["dtype"] != dt:
                problems.append("%sdtype %s, expected %s" % (label, o["dtype"], dt))
            if tuple(got.shape) != tuple(r.shape):
                problems.append("%sshape %s, expected %s" % (label, tuple(got.shape), tuple(r.shape)))
                continue
            if row.get("compare") == "shape":
                continue
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                e = to_dtype(r, dt)
            msg = compare_values(got, e, dt, tol.get(dt, (0, 0)))
            if msg:
                problems.append(label + msg)
        return "; ".join(problems) if problems else None

    def report(self):
        for line in self.lines:
            print(line)
        for row, n in self.row_fail.items():
            shown = min(self.row_lines.get(row, n), MAX_LINES_PER_ROW)
            if self.row_lines.get(row, 0) > MAX_LINES_PER_ROW:
                print("  ... %s: %d failing cases in all (%d shown)" % (row, n, shown))
        if self.row_fail:
            print("failing rows: " + ", ".join("%s (%d)" % kv for kv in sorted(self.row_fail.items())))
        print("%d passed, %d failed" % (self.passed, self.failed))
        return self.failed == 0


def main():
    np.seterr(all="ignore")
    warnings.simplefilter("ignore")
    work = sys.argv[1]
    stderr_log = sys.argv[2] if len(sys.argv) > 2 else None
    c = Checker(work, stderr_log)
    try:
        c.run()
    except Exception:  # a bug of the harness itself still ends with the counts line
        import traceback
        traceback.print_exc()
        c.failed += 1
    sys.exit(0 if c.report() else 1)


if __name__ == "__main__":
    main()

"""Adam and AdamW with capturable=True on CUDA: PyTorch against tide on the same problem.

Run on a GPU machine by tests/gpu/on_device.sh: python3 adam_capturable.py /path/to/tide.
Ten steps of p (2x2) towards a target with the gradient (1 + i/10) * (p - target), float64
parameters (the step count is float32 in both), for Adam (plain, amsgrad, maximize, weight
decay) and AdamW. Prints the largest relative difference per configuration; fails above 1e-6.
"""
import subprocess
import sys

import torch

CONFIGS = [
    ("Adam", {"lr": 0.1}),
    ("Adam", {"lr": 0.1, "amsgrad": True}),
    ("Adam", {"lr": 0.1, "maximize": True}),
    ("Adam", {"lr": 0.1, "weight_decay": 0.1}),
    ("AdamW", {"lr": 0.1, "weight_decay": 0.1}),
]
P0 = [[1.5, -2.0], [0.25, 3.0]]
TARGET = [[0.5, 1.0], [-1.0, 2.0]]


def torch_run(name, cfg):
    p = torch.tensor(P0, dtype=torch.float64, device="cuda", requires_grad=True)
    target = torch.tensor(TARGET, dtype=torch.float64, device="cuda")
    opt = getattr(torch.optim, name)([p], capturable=True, **cfg)
    for i in range(1, 11):
        p.grad = (p.detach() - target) * (1 + i / 10)
        opt.step()
    return p.detach().cpu().flatten().tolist()


def lua_value(v):
    return ("true" if v else "false") if isinstance(v, bool) else repr(v)


def tide_run(tide, name, cfg):
    opts = ", ".join("%s = %s" % (k, lua_value(v)) for k, v in cfg.items())
    script = """
local f64 = {dtype = torch.float64}
local p = torch.tensor(%s, f64):cuda():requires_grad_()
local target = torch.tensor(%s, f64):cuda()
local opt = torch.optim.%s({p}, {capturable = true, %s})
for i = 1, 10 do
  p.grad = (p:detach() - target):mul(1 + i / 10)
  opt:step()
end
for _, v in ipairs(p:cpu():view(-1):tolist()) do print(string.format("%%.17g", v)) end
""" % (str(P0).replace("[", "{").replace("]", "}"), str(TARGET).replace("[", "{").replace("]", "}"), name, opts)
    out = subprocess.run([tide, "-e", script], capture_output=True, text=True, check=True).stdout
    return [float(x) for x in out.split()]


def main():
    tide = sys.argv[1]
    worst = 0.0
    for name, cfg in CONFIGS:
        want, got = torch_run(name, cfg), tide_run(tide, name, cfg)
        rel = max(abs(a - b) / max(1.0, abs(b)) for a, b in zip(got, want))
        worst = max(worst, rel)
        print("%s %s: largest relative difference %.3g" % (name, cfg, rel))
    print("adam_capturable: %s (worst %.3g, PyTorch %s)" % ("passed" if worst <= 1e-6 else "FAILED", worst,
                                                             torch.__version__))
    sys.exit(0 if worst <= 1e-6 else 1)


if __name__ == "__main__":
    main()

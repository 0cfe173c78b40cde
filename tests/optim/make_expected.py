"""Writes tests/optim/expected.lua and expected_nn_utils.lua: PyTorch 1.13's numbers for
tests/lua/test_optim_more.lua and tests/lua/test_nn_utils.lua.

Run with /usr/bin/python3 (torch 1.13) from the repository root:
    /usr/bin/python3 tests/optim/make_expected.py
Every problem here is written out the same way in the Lua test, which loads the table.
"""
import math
import torch
from torch.optim import lr_scheduler as S

torch.set_default_dtype(torch.float32)  # PyTorch's default; NAdam's mu_product lives in it

# --- optimizers: 10 steps on two float64 parameters, gradient SCALES[t] * (p - TARGET) -------
P0 = [[0.5, -1.25], [2.0, 0.75]]
Q0 = [0.3, -0.7, 1.1]
PT = [[1.0, 0.5], [-1.0, 0.25]]
QT = [-0.2, 0.4, 0.9]
SCALES = [2.0, 1.0, 3.0, 0.2, 1.5, -0.5, 0.7, 2.5, 1.0, 0.1]

OPTIM = [
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.1, "initial_accumulator_value": 0.2, "eps": 1e-6}),
    ("Adagrad", {"lr": 0.1, "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.8, "eps": 1e-4, "weight_decay": 0.1}),
    ("Adadelta", {"lr": 0.5, "maximize": True}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.1, "betas": (0.8, 0.9), "eps": 1e-6, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.1, "maximize": True}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.1, "betas": (0.8, 0.9), "eps": 1e-6, "weight_decay": 0.1, "momentum_decay": 0.01}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.1, "betas": (0.8, 0.9), "eps": 1e-6, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.1, "amsgrad": True, "maximize": True}),
    ("AdamW", {"lr": 0.1, "amsgrad": True, "weight_decay": 0.2}),
]


def run_optim(name, cfg, groups=False, dtype=torch.float64):
    p = torch.tensor(P0, dtype=dtype, requires_grad=True)
    q = torch.tensor(Q0, dtype=dtype, requires_grad=True)
    pt, qt = torch.tensor(PT, dtype=dtype), torch.tensor(QT, dtype=dtype)
    if groups:  # a second group with its own lr; the first group's lr changed after 4 steps
        opt = getattr(torch.optim, name)([{"params": [p]}, {"params": [q], "lr": 0.03}], **cfg)
    else:
        opt = getattr(torch.optim, name)([p, q], **cfg)
    for i, s in enumerate(SCALES):
        if groups and i == 4:
            opt.param_groups[0]["lr"] = 0.2
        with torch.no_grad():
            p.grad = (p - pt).mul(s)
            q.grad = (q - qt).mul(s)
        opt.step()
    return [p.detach().flatten().tolist(), q.detach().tolist()]


# --- LBFGS on f(x) = sum(A * (x - T)^2 + C * (x - T)^4), gradient written out ----------------
X0 = [1.5, -0.5, 2.0, 0.25, -1.0]
XT = [0.5, 0.25, -1.0, 1.0, 0.0]
XA = [1.0, 3.0, 0.5, 2.0, 10.0]
XC = [1.0, 0.0, 2.0, 0.05, 3.0]

LBFGS = [
    ({"max_iter": 5}, 4),
    ({"max_iter": 5, "line_search_fn": "strong_wolfe"}, 4),
    ({}, 2),
    ({"line_search_fn": "strong_wolfe"}, 2),
    ({"lr": 0.5, "max_iter": 4, "history_size": 2}, 4),
    ({"max_iter": 6, "history_size": 3, "line_search_fn": "strong_wolfe", "tolerance_change": 1e-12}, 3),
]


def run_lbfgs(cfg, steps):
    x = torch.tensor(X0, dtype=torch.float64, requires_grad=True)
    t, a, c = (torch.tensor(v, dtype=torch.float64) for v in (XT, XA, XC))
    opt = torch.optim.LBFGS([x], **cfg)
    evals = [0]

    def closure():
        evals[0] += 1
        with torch.no_grad():
            e = x - t
            x.grad = e.mul(a).mul(2).add(e.pow(3).mul(c).mul(4))
            return (e.pow(2).mul(a).add(e.pow(4).mul(c))).sum()
    losses = [float(opt.step(closure)) for _ in range(steps)]
    st = opt.state[x]
    return {"x": x.detach().tolist(), "losses": losses, "evals": evals[0],
            "func_evals": st["func_evals"], "n_iter": st["n_iter"]}


# --- schedules over 100 epochs, two groups (lr 0.1 and 0.02), SGD with momentum --------------
def sched_run(make, n=100, opt_name="SGD"):
    ps = [torch.zeros(1, requires_grad=True) for _ in range(2)]
    groups = [{"params": [ps[0]], "lr": 0.1}, {"params": [ps[1]], "lr": 0.02}]
    if opt_name == "SGD":
        opt = torch.optim.SGD(groups, lr=1.0, momentum=0.9)
    else:
        opt = torch.optim.Adam(groups, lr=1.0)
    sched = make(opt)
    mom = "betas" if opt_name == "Adam" else "momentum"

    def record():
        m = [g[mom][0] if mom == "betas" else g[mom] for g in opt.param_groups]
        return [g["lr"] for g in opt.param_groups] + m
    out = [record()]
    for e in range(n):
        opt.step()
        if isinstance(sched, S.ReduceLROnPlateau):
            sched.step(METRICS[e])
        else:
            sched.step()
        out.append(record())
    return out


# A metric that improves, stalls, wobbles and improves again (ReduceLROnPlateau's input).
METRICS = [1.0 / (1 + e) if e < 20 else (0.05 + 0.001 * ((e * 7) % 5) if e < 60 else 0.05 - 0.0005 * e / 10)
           for e in range(100)]

SCHEDULES = [
    ("LambdaLR", "{lr_lambda = function(e) return 0.95 ^ e end}", lambda o: S.LambdaLR(o, lambda e: 0.95 ** e)),
    ("LambdaLR_list", "{lr_lambda = {function(e) return 1 / (1 + e) end, function(e) return e // 10 end}}",
     lambda o: S.LambdaLR(o, [lambda e: 1 / (1 + e), lambda e: e // 10])),
    ("MultiplicativeLR", "{lr_lambda = function(e) return 0.97 end}", lambda o: S.MultiplicativeLR(o, lambda e: 0.97)),
    ("MultiStepLR", "{milestones = {10, 30, 30, 60}, gamma = 0.5}", lambda o: S.MultiStepLR(o, [10, 30, 30, 60], 0.5)),
    ("ExponentialLR", "{gamma = 0.95}", lambda o: S.ExponentialLR(o, 0.95)),
    ("LinearLR", "{}", lambda o: S.LinearLR(o)),
    ("LinearLR_args", "{start_factor = 0.25, end_factor = 0.75, total_iters = 20}",
     lambda o: S.LinearLR(o, 0.25, 0.75, 20)),
    ("ConstantLR", "{}", lambda o: S.ConstantLR(o)),
    ("ConstantLR_args", "{factor = 0.5, total_iters = 10}", lambda o: S.ConstantLR(o, 0.5, 10)),
    ("SequentialLR", None, lambda o: S.SequentialLR(o, [S.LinearLR(o, 0.1, 1.0, 5), S.ExponentialLR(o, 0.9),
                                                         S.StepLR(o, 7, 0.5)], milestones=[5, 40])),
    ("ChainedScheduler", None, lambda o: S.ChainedScheduler([S.ConstantLR(o, 0.1, 3), S.ExponentialLR(o, 0.97),
                                                              S.MultiStepLR(o, [50], 0.1)])),
    ("OneCycleLR", "{max_lr = 0.5, total_steps = 100}", lambda o: S.OneCycleLR(o, 0.5, total_steps=100)),
    ("OneCycleLR_args", "{max_lr = {0.5, 0.1}, epochs = 10, steps_per_epoch = 11, pct_start = 0.25, "
     "anneal_strategy = 'linear', base_momentum = 0.8, max_momentum = 0.9, div_factor = 10.0, "
     "final_div_factor = 100.0, three_phase = true}",
     lambda o: S.OneCycleLR(o, [0.5, 0.1], epochs=10, steps_per_epoch=11, pct_start=0.25, anneal_strategy="linear",
                            base_momentum=0.8, max_momentum=0.9, div_factor=10., final_div_factor=100.,
                            three_phase=True)),
    ("OneCycleLR_adam", "{max_lr = 0.01, total_steps = 101, cycle_momentum = true}",
     lambda o: S.OneCycleLR(o, 0.01, total_steps=101)),
    ("OneCycleLR_nomomentum", "{max_lr = 0.3, total_steps = 101, cycle_momentum = false}",
     lambda o: S.OneCycleLR(o, 0.3, total_steps=101, cycle_momentum=False)),
    ("CyclicLR", "{base_lr = 0.01, max_lr = 0.1, step_size_up = 7}", lambda o: S.CyclicLR(o, 0.01, 0.1, 7)),
    ("CyclicLR_triangular2", "{base_lr = {0.01, 0.001}, max_lr = {0.1, 0.05}, step_size_up = 6, step_size_down = 4, "
     "mode = 'triangular2', base_momentum = 0.7, max_momentum = 0.95}",
     lambda o: S.CyclicLR(o, [0.01, 0.001], [0.1, 0.05], 6, 4, "triangular2", base_momentum=0.7, max_momentum=0.95)),
    ("CyclicLR_exp_range", "{base_lr = 0.01, max_lr = 0.1, step_size_up = 5, mode = 'exp_range', gamma = 0.97, "
     "cycle_momentum = false}",
     lambda o: S.CyclicLR(o, 0.01, 0.1, 5, mode="exp_range", gamma=0.97, cycle_momentum=False)),
    ("CyclicLR_scale_fn", "{base_lr = 0.01, max_lr = 0.1, step_size_up = 5, scale_fn = function(x) return 1 / (1 + x) end, "
     "scale_mode = 'iterations'}",
     lambda o: S.CyclicLR(o, 0.01, 0.1, 5, scale_fn=lambda x: 1 / (1 + x), scale_mode="iterations")),
    ("CosineAnnealingWarmRestarts", "{T_0 = 10}", lambda o: S.CosineAnnealingWarmRestarts(o, 10)),
    ("CosineAnnealingWarmRestarts_args", "{T_0 = 3, T_mult = 2, eta_min = 0.001}",
     lambda o: S.CosineAnnealingWarmRestarts(o, 3, 2, 0.001)),
    ("ReduceLROnPlateau", "{}", lambda o: S.ReduceLROnPlateau(o)),
    ("ReduceLROnPlateau_args", "{mode = 'min', factor = 0.5, patience = 3, threshold = 0.01, cooldown = 2, "
     "min_lr = {0.01, 0.001}}",
     lambda o: S.ReduceLROnPlateau(o, "min", 0.5, 3, 0.01, cooldown=2, min_lr=[0.01, 0.001])),
    ("ReduceLROnPlateau_max", "{mode = 'max', factor = 0.3, patience = 2, threshold = 0.001, threshold_mode = 'abs', "
     "eps = 1e-3}",
     lambda o: S.ReduceLROnPlateau(o, "max", 0.3, 2, 0.001, "abs", eps=1e-3)),
]


def fmt(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        if isinstance(v, float) and math.isinf(v):
            return "math.huge" if v > 0 else "-math.huge"
        return repr(v) if isinstance(v, int) else "%.17g" % v
    if isinstance(v, str):
        return '"%s"' % v
    if isinstance(v, (list, tuple)):
        return "{" + ", ".join(fmt(x) for x in v) + "}"
    if isinstance(v, dict):
        return "{" + ", ".join("%s = %s" % (k, fmt(x)) for k, x in v.items()) + "}"
    raise TypeError(v)


# --- nn.utils.clip_grad_norm_ on three float64 gradients ----------------------------------
GRADS = [[[0.5, -1.5, 2.0], [0.0, 3.0, -0.25]], [1.0, -4.0, 0.125, 0.0], [[-2.5]]]
CLIP = [(1.0, 2.0), (1.0, 1.0), (0.5, 3.5), (2.0, 0.5), (1.0, math.inf), (0.1, -math.inf), (3.0, 0.0),
        (100.0, 2.0), (7.0, math.inf)]


def run_clip(max_norm, norm_type):
    ps = [torch.zeros(torch.tensor(g).shape, dtype=torch.float64, requires_grad=True) for g in GRADS]
    for p, g in zip(ps, GRADS):
        p.grad = torch.tensor(g, dtype=torch.float64)
    total = torch.nn.utils.clip_grad_norm_(ps, max_norm, norm_type)
    return {"max_norm": max_norm, "norm_type": norm_type, "total": total.item(),
            "grads": [p.grad.flatten().tolist() for p in ps]}


def write_nn_utils():
    out = ["-- Generated by tests/optim/make_expected.py from PyTorch %s; do not edit." % torch.__version__,
           "return {", "  grads = %s," % fmt(GRADS), "  clip = {"]
    for max_norm, norm_type in CLIP:
        out.append("    %s," % fmt(run_clip(max_norm, norm_type)))
    out += ["  },", "}"]
    with open("tests/optim/expected_nn_utils.lua", "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    write_nn_utils()
    out = ["-- Generated by tests/optim/make_expected.py from PyTorch %s; do not edit." % torch.__version__,
           "return {"]
    out.append("  P0 = %s, Q0 = %s, PT = %s, QT = %s, SCALES = %s," % tuple(map(fmt, (P0, Q0, PT, QT, SCALES))))
    out.append("  optim = {")
    for name, cfg in OPTIM:
        out.append("    {name = %s, cfg = %s, result = %s, groups = %s, float32 = %s}," % (
            fmt(name), fmt(cfg), fmt(run_optim(name, cfg)), fmt(run_optim(name, cfg, groups=True)),
            fmt(run_optim(name, cfg, dtype=torch.float32))))
    out.append("  },")
    out.append("  X0 = %s, XT = %s, XA = %s, XC = %s," % tuple(map(fmt, (X0, XT, XA, XC))))
    out.append("  lbfgs = {")
    for cfg, steps in LBFGS:
        out.append("    {cfg = %s, steps = %d, result = %s}," % (fmt(cfg), steps, fmt(run_lbfgs(cfg, steps))))
    out.append("  },")
    out.append("  metrics = %s," % fmt(METRICS))
    out.append("  schedules = {")
    for name, _, make in SCHEDULES:
        opt_name = "Adam" if name.endswith("_adam") else "SGD"
        n = 99 if name in ("OneCycleLR",) else 100
        out.append("    %s = %s," % (name, fmt(sched_run(make, n, opt_name))))
    out.append("  },")
    out.append("}")
    with open("tests/optim/expected.lua", "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()

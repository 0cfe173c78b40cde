#!/usr/bin/env python3
"""tide's benchmark suite: runs every workload in tide, NumPy and PyTorch, interleaved (the
order of the three alternates between rounds, so that machine drift hits all alike), keeps
each one's best time (each process times a warm-up and `--repeats` runs itself, start-up not
included), measures start-up as whole processes (wall time and peak memory), and writes
bench/results.md (the table, the targets, the machine; the file's "## " sections below them,
its measured history, are kept), bench/results.png (the ratios) and, with --readme, the same
table into README.md between its benchmark markers.

Usage: /usr/bin/python3 bench/run.py [--tide build/tide] [--python /usr/bin/python3] [--rounds 3] [--repeats 5]
                                     [--filter w6_] [--readme]
"""
import argparse
import datetime
import os
import platform
import re
import subprocess
import sys
import time

import chart

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = "/usr/bin/python3"
PEERS = ("numpy", "torch")
README_BEGIN, README_END = "<!-- bench results begin -->", "<!-- bench results end -->"

# Floating-point operations per run, for the GFLOP/s of the matrix-product rows.
FLOPS = {"w7_matmul_%d_%s" % (n, dt): 2.0 * n ** 3 for n in (1000, 2000) for dt in ("float32", "float64")}
FLOPS.update({"w10_matmul_%d_cuda_%s" % (n, dt): 2.0 * n ** 3 for n in (1000, 2000) for dt in ("float32", "float64")})
FLOPS.update({"w1_products_" + dt: 500 * 2.0 * (2 * 64 * 1000 * 100 + 3 * 64 * 100 * 10) for dt in ("float32", "float64")})

# Start-up (workload 9): a whole process that creates one tensor.
STARTUP = {
    "tide": lambda tide: [tide, "-e", "local x = torch.zeros(10)"],
    "numpy": lambda tide: [PY, "-c", "import numpy; x = numpy.zeros(10)"],
    "torch": lambda tide: [PY, "-c", "import torch; x = torch.zeros(10)"],
}


def peer_env(name):
    env = dict(os.environ)
    if name == "torch":
        # PyTorch runs its OpenMP pool on every core like tide and OpenBLAS; passive waiting
        # keeps its idle threads from spinning against the other processes of a shared VM
        # (with spinning, a 2-thread run took 30x longer whenever another job was running).
        env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return env


def run_workloads(name, cmd):
    """Runs one side's workload script; returns {workload: seconds or 'skip: reason'}."""
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=peer_env(name), cwd=HERE).stdout
    res = {}
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) == 3 and parts[1] == "skip":
            res[parts[0]] = "skipped: " + parts[2]
        elif len(parts) == 2:
            res[parts[0]] = float(parts[1])
    return res


def run_startup(cmd, env):
    """Wall seconds and peak resident memory (bytes) of one whole process."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise RuntimeError("start-up command failed: %s" % " ".join(cmd))
    return wall, usage.ru_maxrss * 1024


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def versions():
    out = subprocess.run([PY, "-c", "import numpy, torch; print(numpy.__version__, torch.__version__)"],
                         capture_output=True, text=True).stdout.split()
    return ("NumPy %s, PyTorch %s" % tuple(out)) if len(out) == 2 else "NumPy/PyTorch versions unknown"


def fmt_time(v):
    if not isinstance(v, float):
        return v if v else "-"
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if v >= scale or unit == "ns":
            return "%.3g %s" % (v / scale, unit)


def cell(best, side, w):
    v = best[side].get(w)
    if w.startswith("w9_startup_memory"):
        return "%.1f MiB" % (v / 2 ** 20) if v else "-"
    text = fmt_time(v)
    if isinstance(v, float) and w in FLOPS:
        text += " (%.1f GFLOP/s)" % (FLOPS[w] / v / 1e9)
    return text


def ratio(best, w, peer):
    t, p = best["tide"].get(w), best[peer].get(w)
    return t / p if isinstance(t, float) and isinstance(p, float) and p > 0 else None


def targets(best):
    """Each target of the issue as (what, measured value, bound, met?); a bound is an upper
    limit on a ratio of times, so lower is better everywhere."""
    rows = []

    def add(what, value, bound):
        if value is not None:
            rows.append((what, value, bound, value <= bound))

    def tide(w):
        v = best["tide"].get(w)
        return v if isinstance(v, float) else None

    def best_peer(w):
        vals = [best[p].get(w) for p in PEERS if isinstance(best[p].get(w), float)]
        return tide(w) / min(vals) if vals and tide(w) is not None else None

    for dt in ("float64", "float32"):
        add("1: two-layer %s, tide / best peer" % dt, best_peer("w1_two_layer_" + dt), 0.6)
        products, blas = tide("w1_products_" + dt), best["numpy"].get("w7_matmul_1000_" + dt)
        if products and isinstance(blas, float):
            # GFLOP/s of OpenBLAS on 1000x1000 over GFLOP/s of the network's products.
            ratio_gflops = (FLOPS["w7_matmul_1000_" + dt] / blas) / (FLOPS["w1_products_" + dt] / products)
            add("1: its products' GFLOP/s >= 70%% of OpenBLAS 1000x1000 (%s), shown as 0.7 x OpenBLAS / products" % dt,
                0.7 * ratio_gflops, 1.0)
        add("2: autograd two-layer %s, tide / PyTorch" % dt, ratio(best, "w2_autograd_two_layer_" + dt, "torch"), 0.6)
        if tide("w2_autograd_two_layer_" + dt) and tide("w1_two_layer_" + dt):
            add("2: autograd over explicit backprop (%s), tide / tide" % dt,
                tide("w2_autograd_two_layer_" + dt) / tide("w1_two_layer_" + dt), 1.10)
    add("3: least squares d=100, tide / NumPy", ratio(best, "w3_lstsq_grad_d100", "numpy"), 1.0)
    add("3: least squares d=2000, tide / NumPy", ratio(best, "w3_lstsq_grad_d2000", "numpy"), 1.05)
    add("3: least squares d=100, tide / PyTorch", ratio(best, "w3_lstsq_grad_d100", "torch"), 0.5)
    add("4: linear regression, tide / NumPy", ratio(best, "w4_linear_regression", "numpy"), 1.0)
    for w in sorted(k for k in best["tide"] if k.startswith("w5_")):
        add("5: %s, tide / NumPy" % w[3:], ratio(best, w, "numpy"), 0.5)
        add("5: %s, tide / PyTorch" % w[3:], ratio(best, w, "torch"), 0.2)
    for w in sorted(k for k in best["tide"] if k.startswith("w6_")):
        add("6: %s, tide / NumPy" % w[3:], ratio(best, w, "numpy"), 0.5)
        add("6: %s, tide / PyTorch" % w[3:], ratio(best, w, "torch"), 1.0)
    for w in sorted(k for k in best["tide"] if k.startswith("w7_")):
        r = ratio(best, w, "numpy")
        add("7: %s at >= 95%% of OpenBLAS's GFLOP/s, shown as 0.95 x tide / NumPy" % w[3:],
            0.95 * r if r else None, 1.0)
    for w in sorted(k for k in best["tide"] if k.startswith("w12_")):
        add("12: %s, tide / NumPy" % w[4:], ratio(best, w, "numpy"), 1.05)
    add("16: BatchNorm2d forward + backward (32x64x32x32 float32, training), tide / PyTorch",
        ratio(best, "w16_batchnorm2d_train_float32", "torch"), 1.0)
    add("16: LSTM 2x128, sequence 35, batch 20, forward and backward, tide / PyTorch",
        ratio(best, "w16_lstm_2x128_seq35_batch20", "torch"), 1.0)
    add("16: MultiheadAttention forward+backward, tide / PyTorch", ratio(best, "w16_mha_fwd_bwd_float32", "torch"), 1.0)
    for w in sorted(k for k in best["tide"] if k.startswith("w15_")):
        add("15: %s forward+backward, tide / PyTorch" % w[4:], ratio(best, w, "torch"), 1.0)
    # Part 3: the compiled rows against the peers' eager rows of the same workload.
    def compiled(cw, w, peer):
        t, p = tide(cw), best[peer].get(w)
        return t / p if t is not None and isinstance(p, float) and p > 0 else None

    add("18.3: compiled linear regression, tide / NumPy", compiled("c4_linear_regression", "w4_linear_regression", "numpy"), 0.4)
    add("18.3: compiled least squares d=100, tide / NumPy", compiled("c3_lstsq_grad_d100", "w3_lstsq_grad_d100", "numpy"), 0.6)
    add("18.3: compiled tiny autograd step, tide / PyTorch", compiled("c5_tiny_autograd_step", "w5_tiny_autograd_step", "torch"), 0.05)
    add("18.3: compiled (a * b + c):relu() 1e6 float32, tide / NumPy", compiled("c6_chain_1e6_float32", "w6_chain_1e6_float32", "numpy"), 0.3)
    for dt in ("float64", "float32"):
        add("18.3: compiled autograd two-layer %s, tide / PyTorch" % dt,
            compiled("c2_autograd_two_layer_" + dt, "w2_autograd_two_layer_" + dt, "torch"), 0.6)
    add("9: start-up wall time, tide / PyTorch", ratio(best, "w9_startup_wall", "torch"), 0.05)
    add("9: start-up peak memory, tide / PyTorch", ratio(best, "w9_startup_memory", "torch"), 0.1)
    return rows


def main():
    global PY
    ap = argparse.ArgumentParser()
    ap.add_argument("--tide", default=os.path.join(ROOT, "build", "tide"))
    ap.add_argument("--python", default=PY, help="the Python that has NumPy and PyTorch")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per workload in each process")
    ap.add_argument("--startup-runs", type=int, default=5, help="start-up processes per side and round")
    ap.add_argument("--filter", default="", help="only workloads whose name contains this (or one of its comma-separated parts)")
    ap.add_argument("--out", default=os.path.join(HERE, "results.md"))
    ap.add_argument("--chart", default=os.path.join(HERE, "results.png"))
    ap.add_argument("--readme", action="store_true", help="also put the table into README.md")
    args = ap.parse_args()
    PY = args.python
    tide = os.path.abspath(args.tide)
    reps = str(args.repeats)
    runners = {
        "tide": [tide, os.path.join(HERE, "workloads.lua"), args.filter, reps],
        "numpy": [PY, os.path.join(HERE, "workloads_numpy.py"), args.filter, reps],
        "torch": [PY, os.path.join(HERE, "workloads_torch.py"), args.filter, reps],
    }
    best = {k: {} for k in runners}
    order = list(runners)
    started = datetime.datetime.now(datetime.timezone.utc)
    for r in range(args.rounds):
        for name in (order if r % 2 == 0 else order[::-1]):
            for w, t in run_workloads(name, runners[name]).items():
                old = best[name].get(w)
                best[name][w] = min(t, old) if isinstance(t, float) and isinstance(old, float) else t
            if args.filter in "w9_startup":
                for _ in range(args.startup_runs):
                    wall, mem = run_startup(STARTUP[name](tide), peer_env(name))
                    best[name]["w9_startup_wall"] = min(wall, best[name].get("w9_startup_wall", wall))
                    best[name]["w9_startup_memory"] = min(float(mem), best[name].get("w9_startup_memory", mem))
            print("round %d %s done" % (r + 1, name), file=sys.stderr, flush=True)
    # (by workload number: w4 and its compiled row c4 together, eager first)
    names = sorted(best["tide"], key=lambda w: (int(re.match(r"[wc](\d+)", w).group(1)), w[0] == "c",
                                                list(best["tide"]).index(w)))
    load = os.getloadavg()[0]
    header = ("Measured %s UTC on %s (%d cores), %s, %s; load average %.1f at the end. Best of %d "
              "interleaved rounds x %d runs after a warm-up, timed inside each process; seconds per "
              "operation (per call for the per-op rows, per 500-step run for workloads 1-2, per step "
              "for workload 3, per run for 4 and 8); start-up is the whole process."
              % (started.strftime("%Y-%m-%d %H:%M"), cpu_name(), os.cpu_count(), platform.platform(terse=True),
                 versions(), load, args.rounds, args.repeats))
    lines = [header, "",
             "| workload | tide | NumPy | PyTorch | tide/NumPy | tide/PyTorch |",
             "|---|---|---|---|---|---|"]
    for w in names:
        rn, rp = ratio(best, w, "numpy"), ratio(best, w, "torch")
        lines.append("| %s | %s | %s | %s | %s | %s |" % (
            w, cell(best, "tide", w), cell(best, "numpy", w), cell(best, "torch", w),
            "%.2f" % rn if rn else "-", "%.2f" % rp if rp else "-"))
    lines += ["", "| target (ratio of times: at most the bound) | measured | bound | |", "|---|---|---|---|"]
    for what, value, bound, met in targets(best):
        lines.append("| %s | %.2f | %.2f | %s |" % (what, value, bound, "met" if met else "**missed**"))
    text = "\n".join(lines) + "\n"
    # The measured history below the table (its "## " sections, written by hand) stays.
    notes = ""
    if os.path.exists(args.out):
        old = open(args.out).read()
        at = old.find("\n## ")
        if at >= 0:
            notes = "\n\n" + old[at:].lstrip("\n")
    with open(args.out, "w") as f:
        f.write(text + notes)
    bars = []
    for w in names:
        rs = [r for r in (ratio(best, w, p) for p in PEERS) if r]
        bars.append((w, min(rs) if rs else None))
    chart.ratio_chart(args.chart, "tide time / best peer's time, %s" % started.strftime("%Y-%m-%d"), bars)
    if args.readme:
        readme = os.path.join(ROOT, "README.md")
        content = open(readme).read()
        a, b = content.index(README_BEGIN) + len(README_BEGIN), content.index(README_END)
        with open(readme, "w") as f:
            f.write(content[:a] + "\n" + text + "\n" + content[b:])
    print(text)


if __name__ == "__main__":
    main()

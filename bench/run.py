#!/usr/bin/env python3
"""Runs tide's, NumPy's and PyTorch's workloads interleaved (rounds alternate the order so
that machine drift hits all alike), keeps each one's best time, and writes a Markdown table
with ratios (tide / peer) to bench/results.md.

Usage: /usr/bin/python3 bench/run.py [--tide build/tide] [--rounds 3] [--filter add]
"""
import argparse
import datetime
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(cmd):
    env = dict(os.environ)
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    res = {}
    for line in out.splitlines():
        if "\t" in line:
            name, secs = line.split("\t")
            res[name] = float(secs)
    return res


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tide", default=os.path.join(ROOT, "build", "tide"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--filter", default="")
    ap.add_argument("--out", default=os.path.join(HERE, "results.md"))
    args = ap.parse_args()
    py = "/usr/bin/python3"
    runners = {
        "tide": [args.tide, os.path.join(HERE, "workloads.lua"), args.filter],
        "numpy": [py, os.path.join(HERE, "workloads_numpy.py"), args.filter],
        "torch": [py, os.path.join(HERE, "workloads_torch.py"), args.filter],
    }
    best = {k: {} for k in runners}
    order = list(runners)
    for r in range(args.rounds):
        for name in (order if r % 2 == 0 else order[::-1]):
            for w, t in run(runners[name]).items():
                best[name][w] = min(t, best[name].get(w, float("inf")))
            print("round %d %s done" % (r + 1, name), file=sys.stderr)
    names = list(best["tide"])
    lines = [
        "Measured %s on %s (%d cores), best of %d rounds x 5 runs; seconds per op (per call for loops)."
        % (datetime.date.today().isoformat(), cpu_name(), os.cpu_count(), args.rounds),
        "",
        "| workload | tide | NumPy | PyTorch | tide/NumPy | tide/PyTorch |",
        "|---|---|---|---|---|---|",
    ]
    for w in names:
        t, n, p = best["tide"][w], best["numpy"].get(w), best["torch"].get(w)
        fmt = lambda v: "%.3g s" % v if v is not None else "-"
        ratio = lambda v: "%.2f" % (t / v) if v else "-"
        lines.append("| %s | %s | %s | %s | %s | %s |" % (w, fmt(t), fmt(n), fmt(p), ratio(n), ratio(p)))
    text = "\n".join(lines) + "\n"
    with open(args.out, "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()

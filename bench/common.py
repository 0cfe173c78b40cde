"""The harness the Python peers share (same protocol as bench/workloads.lua): workloads are
registered with add(name)(setup); each setup returns (fn, ops_per_call), or (None, reason)
to skip. run() prints "name<TAB>seconds per op" (best of `repeats` after a warm-up) or
"name<TAB>skip<TAB>reason", for the names containing argv[1] (or one of its comma-separated
parts)."""
import sys
import time

workloads = []


def add(name):
    def deco(setup):
        workloads.append((name, setup))
        return setup
    return deco


def best_of(fn, reps):
    fn()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def run():
    filt = sys.argv[1] if len(sys.argv) > 1 else ""
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    parts = filt.split(",")
    for name, setup in workloads:
        if any(p in name for p in parts):
            fn, per = setup()
            if fn is None:
                print("%s\tskip\t%s" % (name, per), flush=True)
            else:
                print("%s\t%.9g" % (name, best_of(fn, repeats) / per), flush=True)

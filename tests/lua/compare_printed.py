"""Compares what a PyTorch example printed with what its tide port printed, line by line:
the same words, and numbers within a relative tolerance (Python and Lua print floats with
different digits and separators). Used by the example tests (test_example_*.sh).

    python3 compare_printed.py REF GOT RTOL MIN_LINES

Exits 0 when both have the same non-empty lines (at least MIN_LINES) and every number agrees.
"""
import sys


def number(w):
    try:
        return float(w)
    except ValueError:
        return None


def main():
    ref_path, got_path, rtol, min_lines = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    ref = [l for l in open(ref_path).read().split("\n") if l.strip()]
    got = [l for l in open(got_path).read().split("\n") if l.strip()]
    ok = len(ref) == len(got) and len(ref) >= min_lines
    bad = 0
    for a, b in zip(ref, got):
        wa, wb = a.split(), b.split()
        same = len(wa) == len(wb)
        for x, y in zip(wa, wb):
            nx, ny = number(x), number(y)
            if nx is None or ny is None:
                same = same and x == y
            elif abs(nx - ny) > rtol * abs(nx) + 1e-12:
                same = False
        if not same:
            ok = False
            bad += 1
            if bad <= 5:
                print("FAIL: PyTorch printed %r, tide %r" % (a, b))
    if ok:
        print("%d lines compared" % len(ref))
    else:
        print("FAIL: %d lines from PyTorch, %d from tide, %d differ" % (len(ref), len(got), bad))
    sys.exit(0 if ok else 1)


main()

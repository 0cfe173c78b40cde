"""Compares what a PyTorch example printed with what its tide port printed, line by line:
the same words, and numbers within a relative tolerance plus one unit of the last printed
decimal (Python and Lua print floats with different digits and separators; a value printed
with 2 decimals may round the other way). Used by the example tests (test_example_*.sh).

    python3 compare_printed.py REF GOT RTOL MIN_LINES [SKIP_AFTER...]

The word right after one of the words SKIP_AFTER (a timing: "ms/batch", "time:") is not
compared. Exits 0 when both have the same non-empty lines (at least MIN_LINES) and every
number agrees.
"""
import sys


def number(w):
    try:
        return float(w)
    except ValueError:
        return None


def last_unit(w):
    """One unit of the last decimal printed in w (0 for exponent notation)."""
    if "." not in w or "e" in w.lower():
        return 0.0
    return 10.0 ** -len(w.split(".")[1])


def main():
    ref_path, got_path, rtol, min_lines = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    skip_after = set(sys.argv[5:])
    ref = [l for l in open(ref_path).read().split("\n") if l.strip()]
    got = [l for l in open(got_path).read().split("\n") if l.strip()]
    ok = len(ref) == len(got) and len(ref) >= min_lines
    bad = 0
    for a, b in zip(ref, got):
        wa, wb = a.split(), b.split()
        same = len(wa) == len(wb)
        for k, (x, y) in enumerate(zip(wa, wb)):
            nx, ny = number(x), number(y)
            if k > 0 and wa[k - 1] in skip_after:
                continue
            elif nx is None or ny is None:
                same = same and x == y
            elif abs(nx - ny) > rtol * abs(nx) + max(last_unit(x), last_unit(y)) + 1e-12:
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

#!/usr/bin/env bash
# PyTorch's official DCGAN example adapted to the digits (examples/dcgan_digits): main.lua
# against main.py run by /usr/bin/python3 from the same initial weights (PyTorch's .pt file,
# read by tide's torch.load), the same order and the same noise (main.py's .npz, since the two
# frameworks draw different random numbers): every printed loss and discriminator output of
# 2 epochs (ConvTranspose2d, Conv2d, BatchNorm2d in training mode, ReLU, LeakyReLU, Tanh,
# Sigmoid, BCELoss, Adam, detach, DataLoader) and the final num_batches_tracked, running_mean
# and running_var of the discriminator's BatchNorm2d agree within a relative 1e-5. Then
# main.lua on its own (its own weights, order and noise) must run its 2 epochs to finite losses.
# Skipped without torch. Ends with "N passed, M failed".
#   bash tests/lua/test_example_dcgan.sh build/tide
set -uo pipefail
cd "$(dirname "$0")/../.."
tide=${1:-build/tide}
python=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! "$python" -c "import torch, numpy" >/dev/null 2>&1; then
  echo "skipped: $python cannot import torch and numpy"
  echo "0 passed, 0 failed"
  exit 0
fi
pass=0 fail=0
"$python" examples/dcgan_digits/main.py --epochs 2 --save-init "$tmp/init.pt" --save-noise "$tmp/noise.npz" \
  >"$tmp/ref.txt" 2>&1 || { echo "FAILED: main.py"; cat "$tmp/ref.txt"; }
"$tide" examples/dcgan_digits/main.lua --epochs 2 --init "$tmp/init.pt" --noise "$tmp/noise.npz" \
  >"$tmp/got.txt" 2>&1 || { echo "FAILED: main.lua"; cat "$tmp/got.txt"; }
if "$python" - "$tmp/ref.txt" "$tmp/got.txt" <<'PY'; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
import sys
ref, got = (open(p).read().split("\n") for p in sys.argv[1:3])
ref, got = [l for l in ref if l], [l for l in got if l]
def number(w):
    try:
        return float(w)
    except ValueError:
        return None
# 58 loss lines (2 epochs of 29 batches), then num_batches_tracked, running_mean (32 values)
# and running_var (32 values) of netD.main.3
ok = len(ref) == len(got) and len(ref) == 61 and [len(l.split()) for l in ref[-3:]] == [3, 34, 34]
for a, b in zip(ref, got):
    wa, wb = a.split(), b.split()
    if len(wa) != len(wb) or [w for w in wa if number(w) is None] != [w for w in wb if number(w) is None]:
        ok = False
        print("FAIL: PyTorch printed %r, tide %r" % (a, b))
        continue
    for x, y in zip(wa, wb):
        x, y = number(x), number(y)
        if x is not None and (y is None or abs(x - y) > 1e-5 * abs(x) + 1e-8):
            ok = False
            print("FAIL: PyTorch printed %r, tide %r" % (a, b))
            break
print("%d lines compared" % len(ref) if ok else "FAIL: %d lines from PyTorch, %d from tide" % (len(ref), len(got)))
sys.exit(0 if ok else 1)
PY
"$tide" examples/dcgan_digits/main.lua --epochs 2 >"$tmp/own.txt" 2>&1
if "$python" - "$tmp/own.txt" <<'PY'; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
import math, sys
lines = [l for l in open(sys.argv[1]).read().split("\n") if l]
ok = len(lines) == 61 and all(l.startswith("[") for l in lines[:58])
ok = ok and all(l.startswith("netD.main.3 ") for l in lines[58:])
def finite(w):
    try:
        return math.isfinite(float(w))
    except ValueError:
        return True  # not a number
ok = ok and all(finite(w) for l in lines for w in l.split())
print("main.lua alone: %d lines" % len(lines) if ok else "FAIL: main.lua alone printed:\n" + "\n".join(lines[-5:]))
sys.exit(0 if ok else 1)
PY
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

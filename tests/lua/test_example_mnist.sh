#!/usr/bin/env bash
# PyTorch's official MNIST example adapted to the digits (examples/mnist_digits): main.lua
# against main.py run by /usr/bin/python3 from the same initial weights (PyTorch's .pt file,
# read by tide's torch.load) and the same batch order, dropout off (the two frameworks draw
# different masks): every printed loss and test accuracy of 3 epochs (Conv2d, max_pool2d,
# Linear, log_softmax, nll_loss, Adadelta, StepLR, DataLoader) agree within a relative 1e-4.
# Then main.lua on its own, with dropout and a shuffling loader, must learn (test accuracy
# above 0.6 after 3 epochs; PyTorch reaches ~0.8 with its own masks and order).
# Skipped without torch. Ends with "N passed, M failed".
#   bash tests/lua/test_example_mnist.sh build/tide
# shellcheck source=example_prelude.sh
source "$(dirname "$0")/example_prelude.sh" "$@"
pass=0 fail=0
# OpenBLAS picks its kernels by CPU. On AVX-512 machines its SkylakeX kernels change the order
# of PyTorch's float32 sums (Debian's torch calls the system OpenBLAS) enough that PyTorch's own
# epoch-3 test loss moves from 0.558462 (Haswell kernels) to 0.559804, while tide's stays at
# 0.558462 with either: both sides run on the Haswell (AVX2) kernels, so that the comparison is
# of the two programs and not of OpenBLAS's kernel choice.
if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then export OPENBLAS_CORETYPE=Haswell; fi
"$python" examples/mnist_digits/main.py --epochs 3 --no-dropout --save-init "$tmp/init.pt" \
  --save-order "$tmp/order.npz" >"$tmp/ref.txt" 2>&1 || { echo "FAILED: main.py"; cat "$tmp/ref.txt"; }
"$tide" examples/mnist_digits/main.lua --epochs 3 --no-dropout --init "$tmp/init.pt" \
  --order "$tmp/order.npz" >"$tmp/got.txt" 2>&1 || { echo "FAILED: main.lua"; cat "$tmp/got.txt"; }
if "$python" - "$tmp/ref.txt" "$tmp/got.txt" <<'PY'; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
import sys
ref, got = (open(p).read().split("\n") for p in sys.argv[1:3])
ref, got = [l for l in ref if l], [l for l in got if l]
ok = len(ref) == len(got) and len(ref) > 10
for a, b in zip(ref, got):
    wa, wb = a.split(), b.split()
    if [w for w in wa if not w[0].isdigit()] != [w for w in wb if not w[0].isdigit()]:
        ok = False
    for x, y in zip(wa, wb):
        if x[0].isdigit() and abs(float(x) - float(y)) > 1e-4 * abs(float(x)) + 1e-7:
            ok = False
            print("FAIL: PyTorch printed %r, tide %r" % (a, b))
print("%d lines compared" % len(ref) if ok else "FAIL: %d lines from PyTorch, %d from tide" % (len(ref), len(got)))
sys.exit(0 if ok else 1)
PY
acc=$("$tide" examples/mnist_digits/main.lua --epochs 3 2>&1 | tail -1 | sed -E 's/.*accuracy ([0-9.]+).*/\1/')
if "$python" -c "import sys; sys.exit(0 if float('${acc:-0}') > 0.6 else 1)" 2>/dev/null; then
  pass=$((pass + 1))
else
  echo "FAIL: main.lua with dropout reached a test accuracy of '${acc}' after 3 epochs"
  fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# PyTorch's official VAE example adapted to the digits (examples/vae_digits): main.lua against
# main.py run by /usr/bin/python3 from the same initial weights (PyTorch's .pt file, read by
# tide's torch.load), the same batch order and the same reparameterisation noise (main.py's
# draws, saved with np.savez): every printed loss of 3 epochs (Linear, relu, sigmoid,
# binary_cross_entropy with reduction "sum", the KL divergence, Adam, DataLoader) agrees
# within a relative 1e-5. Then main.lua on its own, with its own noise and a shuffling
# loader, must learn: the test loss of epoch 3 below 30 (PyTorch's run: 27.6).
# Skipped without torch. Ends with "N passed, M failed".
#   bash tests/lua/test_example_vae.sh build/tide
# shellcheck source=example_prelude.sh
source "$(dirname "$0")/example_prelude.sh" "$@"
pass=0 fail=0
"$python" examples/vae_digits/main.py --epochs 3 --save-init "$tmp/init.pt" --save-order "$tmp/order.npz" \
  --save-noise "$tmp/noise.npz" >"$tmp/ref.txt" 2>&1 || { echo "FAILED: main.py"; cat "$tmp/ref.txt"; }
"$tide" examples/vae_digits/main.lua --epochs 3 --init "$tmp/init.pt" --order "$tmp/order.npz" \
  --noise "$tmp/noise.npz" >"$tmp/got.txt" 2>&1 || { echo "FAILED: main.lua"; cat "$tmp/got.txt"; }
if "$python" tests/lua/compare_printed.py "$tmp/ref.txt" "$tmp/got.txt" 1e-5 15; then
  pass=$((pass + 1))
else
  fail=$((fail + 1))
fi
loss=$("$tide" examples/vae_digits/main.lua --epochs 3 2>&1 | tail -1 | sed -E 's/.*loss: ([0-9.]+).*/\1/')
if "$python" -c "import sys; sys.exit(0 if float('${loss:-1e9}') < 30 else 1)" 2>/dev/null; then
  pass=$((pass + 1))
else
  echo "FAIL: main.lua on its own reached a test loss of '${loss}' after 3 epochs"
  fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

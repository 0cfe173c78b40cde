#!/usr/bin/env bash
# PyTorch's official time-sequence prediction example (examples/time_sequence_prediction):
# train.lua against train.py run by /usr/bin/python3 from the same initial weights (PyTorch's
# .pt file, read by tide's torch.load) on the same sine waves (NumPy's seed 2, which tide's
# np.random reproduces): every printed LBFGS closure loss and test loss of 2 steps (LSTMCell,
# Linear, MSELoss, LBFGS, no_grad prediction of 100 future steps) agrees within a relative
# 1e-6. Skipped without torch. Ends with "N passed, M failed".
#   bash tests/lua/test_example_time_sequence.sh build/tide
# shellcheck source=example_prelude.sh
source "$(dirname "$0")/example_prelude.sh" "$@"
dir=examples/time_sequence_prediction
"$python" $dir/train.py --save-init "$tmp/init.pt" >"$tmp/ref.txt" 2>&1 || { echo "FAILED: train.py"; cat "$tmp/ref.txt"; }
"$tide" $dir/train.lua --init "$tmp/init.pt" >"$tmp/got.txt" 2>&1 || { echo "FAILED: train.lua"; cat "$tmp/got.txt"; }
if "$python" tests/lua/compare_printed.py "$tmp/ref.txt" "$tmp/got.txt" 1e-6 40; then
  echo "1 passed, 0 failed"
else
  echo "0 passed, 1 failed"
  exit 1
fi

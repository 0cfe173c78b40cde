#!/usr/bin/env bash
# PyTorch's official word-level language model (examples/word_language_model) on data/tides:
# main.lua against main.py run by /usr/bin/python3 from the same initial weights (PyTorch's
# .pt file, read by tide's torch.load), dropout 0 (the two frameworks draw different masks),
# small sizes (emsize/nhid 32, batch 4, bptt 10, 3 epochs, lr 2: at the default lr 20 the
# tiny corpus makes the plain RNNs chaotic, and float32 rounding alone parts the runs): for
# --model LSTM, GRU, RNN_TANH, RNN_RELU, LSTM --tied and Transformer (its encoder layers'
# dropout 0 too, through this port's --encoder-dropout), every printed training loss and perplexity, validation loss, annealed learning rate and test loss agrees (relative 1e-4
# plus one unit of the last printed decimal; timings are not compared). Then main.lua alone
# with dropout 0.2 must learn (test perplexity below 150; the vocabulary has 255 words).
# Skipped without torch. Ends with "N passed, M failed".
#   bash tests/lua/test_example_word_language_model.sh build/tide
# shellcheck source=example_prelude.sh
source "$(dirname "$0")/example_prelude.sh" "$@"
dir=examples/word_language_model
small=(--lr 2 --emsize 32 --nhid 32 --batch_size 4 --bptt 10 --epochs 3 --log-interval 5)
pass=0 fail=0
for model in LSTM GRU RNN_TANH RNN_RELU "LSTM --tied" "Transformer --encoder-dropout 0"; do
  # shellcheck disable=SC2086
  "$python" $dir/main.py --model $model "${small[@]}" --dropout 0 --save "$tmp/ref.pt" --save-init "$tmp/init.pt" \
    >"$tmp/ref.txt" 2>&1 || { echo "FAILED: main.py --model $model"; cat "$tmp/ref.txt"; }
  # shellcheck disable=SC2086
  "$tide" $dir/main.lua --model $model "${small[@]}" --dropout 0 --save "$tmp/got.pt" --init "$tmp/init.pt" \
    >"$tmp/got.txt" 2>&1 || { echo "FAILED: main.lua --model $model"; cat "$tmp/got.txt"; }
  echo -n "--model $model: "
  if "$python" tests/lua/compare_printed.py "$tmp/ref.txt" "$tmp/got.txt" 1e-4 20 ms/batch time:; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
  fi
done
ppl=$("$tide" $dir/main.lua "${small[@]}" --save "$tmp/drop.pt" 2>&1 | grep "End of training" | sed -E 's/.*test ppl +([0-9.]+).*/\1/')
if "$python" -c "import sys; sys.exit(0 if float('${ppl:-inf}') < 150 else 1)" 2>/dev/null; then
  pass=$((pass + 1))
else
  echo "FAIL: main.lua with dropout 0.2 reached a test perplexity of '${ppl}'"
  fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

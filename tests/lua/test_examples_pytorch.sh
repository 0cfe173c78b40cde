#!/usr/bin/env bash
# PyTorch's tutorial "Learning PyTorch with Examples" (examples/pytorch_with_examples): every
# tide script against its PyTorch original, run by /usr/bin/python3 (all in one process, which
# imports torch once). Each original saves its initial weights (and dynamic_net its random
# choices) to a .npz that the tide script starts from; then the losses printed at the same
# steps and the final weights must agree within a relative 1e-4 (float64: 1e-9) plus 1e-6
# (weights near 0). dynamic_net
# runs 6000 of its 30000 steps. Skipped without torch. Ends with "N passed, M failed".
#   bash tests/lua/test_examples_pytorch.sh build/tide
set -uo pipefail
cd "$(dirname "$0")/../.."
tide=${1:-build/tide}
dir=examples/pytorch_with_examples
python=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# name, extra argument, relative tolerance
examples=(
  "polynomial_numpy - 1e-9"
  "polynomial_tensor - 1e-4"
  "polynomial_autograd - 1e-4"
  "polynomial_custom_function - 1e-4"
  "polynomial_nn - 1e-4"
  "polynomial_optim - 1e-4"
  "polynomial_module - 1e-4"
  "dynamic_net 6000 1e-4"
)

if ! "$python" -c "import torch, numpy" >/dev/null 2>&1; then
  echo "skipped: $python cannot import torch and numpy"
  echo "0 passed, 0 failed"
  exit 0
fi

# The PyTorch originals, each with sys.argv = [script, npz, extra] and stdout to NAME.ref.
"$python" - "$dir" "$tmp" "${examples[@]}" <<'PY' || { echo "FAILED: the PyTorch originals"; echo "0 passed, 1 failed"; exit 1; }
import contextlib, runpy, sys
directory, tmp = sys.argv[1], sys.argv[2]
for entry in sys.argv[3:]:
    name, extra, _ = entry.split()
    sys.argv = [f"{directory}/{name}.py", f"{tmp}/{name}.npz"] + ([] if extra == "-" else [extra])
    with open(f"{tmp}/{name}.ref", "w") as out, contextlib.redirect_stdout(out):
        runpy.run_path(sys.argv[0], run_name="__main__")
PY

pass=0
fail=0
for entry in "${examples[@]}"; do
  read -r name extra rtol <<<"$entry"
  args=("$tmp/$name.npz")
  [ "$extra" != "-" ] && args+=("$extra")
  if ! "$tide" "$dir/$name.lua" "${args[@]}" >"$tmp/$name.out" 2>&1; then
    fail=$((fail + 1))
    echo "FAILED: $name (tide exited with an error)"
    tail -n 20 "$tmp/$name.out"
    continue
  fi
  # The numbers of each line (step and loss; the final weights) agree within rtol.
  if "$python" - "$tmp/$name.out" "$tmp/$name.ref" "$rtol" <<'PY'; then
import re, sys
got, want, rtol = open(sys.argv[1]).read().splitlines(), open(sys.argv[2]).read().splitlines(), float(sys.argv[3])
number = r"-?\d+(?:\.\d*)?(?:e[-+]?\d+)?"
if len(got) != len(want):
    sys.exit(f"{len(got)} lines printed, PyTorch printed {len(want)}")
for g, w in zip(got, want):
    gn, wn = [float(v) for v in re.findall(number, g)], [float(v) for v in re.findall(number, w)]
    if len(gn) != len(wn) or any(abs(a - b) > rtol * abs(b) + 1e-6 for a, b in zip(gn, wn)):
        sys.exit(f"tide printed  {g!r}\nPyTorch printed {w!r}")
PY
    pass=$((pass + 1))
    echo "ok: $name"
  else
    fail=$((fail + 1))
    echo "FAILED: $name"
  fi
done
echo "$pass passed, $fail failed"

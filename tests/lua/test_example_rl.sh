#!/usr/bin/env bash
# The reinforcement-learning examples (examples/reinforcement_learning) against their PyTorch
# originals run by /usr/bin/python3: the cart-pole of cartpole.lua must move exactly as
# cartpole.py's (the states of 300 steps printed with 17 digits, resets included), and
# reinforce.lua and actor_critic.lua, from the initial weights their .py wrote and with the
# resets and action draws taken from the same file of uniform numbers (inverse-CDF sampling
# of the Categorical on both sides; dropout 0), must print the same episodes: the same
# rewards and each episode's loss within 1e-4 (1 + |loss|) (float32 sums in another order).
# Then each runs on its own with tide's generator (and dropout) for a few episodes.
# Skipped without torch. Ends with "N passed, M failed".
#   bash tests/lua/test_example_rl.sh build/tide
# shellcheck source=example_prelude.sh
source "$(dirname "$0")/example_prelude.sh" "$@"
pass=0 fail=0
cd examples/reinforcement_learning
"$python" -c "import numpy as np; np.save('$tmp/u.npy', np.random.default_rng(16).random(40000))"

compare() {  # compare NAME REF GOT: the same lines, numbers within 1e-4 (1 + |x|)
  "$python" - "$@" <<'PY'
import sys
name, ref, got = sys.argv[1], open(sys.argv[2]).read().split("\n"), open(sys.argv[3]).read().split("\n")
ref, got = [l for l in ref if l], [l for l in got if l]
ok = len(ref) == len(got) and len(ref) >= 8
def num(w):
    try:
        return float(w)
    except ValueError:
        return None
for a, b in zip(ref, got):
    wa, wb = a.split(), b.split()
    if len(wa) != len(wb) or [w for w in wa if num(w) is None] != [w for w in wb if num(w) is None]:
        ok = False
        print("FAIL %s: PyTorch printed %r, tide %r" % (name, a, b))
        continue
    for x, y in zip(wa, wb):
        x, y = num(x), num(y)
        if x is not None and abs(x - y) > 1e-4 * (1 + abs(x)):
            ok = False
            print("FAIL %s: PyTorch printed %r, tide %r" % (name, a, b))
            break
print("%s: %d lines compared" % (name, len(ref)) if ok else "FAIL %s: %d lines from PyTorch, %d from tide" % (name, len(ref), len(got)))
sys.exit(0 if ok else 1)
PY
}
check() { if compare "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); fi; }

# The environment alone: 300 steps (resets when an episode ends), actions from the uniforms.
"$python" - "$tmp/u.npy" >"$tmp/env_ref.txt" <<'PY'
import sys
from cartpole import CartPole, uniforms_from
u = uniforms_from(sys.argv[1])
env = CartPole(uniform=u)
env.reset()
for i in range(300):
    _, r, term, trunc, _ = env.step(1 if u() < 0.5 else 0)
    print(" ".join("%.17g" % v for v in env.state), r, int(term), int(trunc))
    if term or trunc:
        env.reset()
PY
cat >"$tmp/env.lua" <<'LUA'
local CartPole = dofile("cartpole.lua")
local u = CartPole.uniforms_from(arg[1])
local env = CartPole.new({uniform = u})
env:reset()
for _ = 1, 300 do
  local _, r, term, trunc = env:step(u() < 0.5 and 2 or 1)
  local s = {}
  for k, v in ipairs(env.state) do s[k] = string.format("%.17g", v) end
  print(table.concat(s, " ") .. " " .. string.format("%.1f", r) .. " " .. (term and 1 or 0) .. " " .. (trunc and 1 or 0))
  if term or trunc then env:reset() end
end
LUA
"$tide" "$tmp/env.lua" "$tmp/u.npy" >"$tmp/env_got.txt" 2>&1
if cmp -s "$tmp/env_ref.txt" "$tmp/env_got.txt" && [ "$(wc -l <"$tmp/env_ref.txt")" -eq 300 ]; then
  pass=$((pass + 1))
else
  echo "FAIL: cartpole.lua's states differ from cartpole.py's"; diff "$tmp/env_ref.txt" "$tmp/env_got.txt" | head -5
  fail=$((fail + 1))
fi

for ex in reinforce actor_critic; do
  extra=""
  [ "$ex" = reinforce ] && extra="--no-dropout"
  "$python" "$ex.py" --episodes 12 --log-interval 1 $extra --save-init "$tmp/$ex.pt" --uniforms "$tmp/u.npy" \
    >"$tmp/${ex}_ref.txt" 2>&1 || { echo "FAILED: $ex.py"; cat "$tmp/${ex}_ref.txt"; }
  "$tide" "$ex.lua" --episodes 12 --log-interval 1 $extra --init "$tmp/$ex.pt" --uniforms "$tmp/u.npy" \
    >"$tmp/${ex}_got.txt" 2>&1 || { echo "FAILED: $ex.lua"; cat "$tmp/${ex}_got.txt"; }
  check "$ex" "$tmp/${ex}_ref.txt" "$tmp/${ex}_got.txt"
  # on its own: tide's generator, dropout on, 5 episodes logged
  if "$tide" "$ex.lua" --episodes 5 --log-interval 1 >"$tmp/${ex}_own.txt" 2>&1 &&
     [ "$(grep -c '^Episode [1-5]	Last reward: [0-9.]*	Average reward: [0-9.]*	Loss: -\?[0-9.]*$' "$tmp/${ex}_own.txt")" -eq 5 ]; then
    pass=$((pass + 1))
  else
    echo "FAIL: $ex.lua on its own printed:"; cat "$tmp/${ex}_own.txt"
    fail=$((fail + 1))
  fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

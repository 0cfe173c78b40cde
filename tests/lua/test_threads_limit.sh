#!/usr/bin/env bash
# tide under limits where the system refuses to start threads: it must run on fewer threads
# (down to the calling thread alone) with the same results, never abort or hang.
#
#   tests/lua/test_threads_limit.sh path/to/tide
#
# The limit: each new thread's stack is as large as the stack limit (glibc's default), so a
# stack limit of ~3.8 GB with a 2 GB address-space limit refuses every new thread while the
# program itself (its main stack grows on demand, its tensors are small) runs as usual.
# That covers OpenBLAS's threads started while the program loads (OpenBLAS raises SIGINT
# when one fails), the engine's pool, and OpenBLAS's threads added by set_num_threads (it
# does not check that they started, then waits for them forever). Under AddressSanitizer
# (TIDE_SANITIZED=1) an address-space limit cannot be used: the checks are skipped.
#
# Prints "N passed, M failed" and exits non-zero when a check fails.
set -u

if [ $# -lt 1 ]; then
  echo "usage: $0 path/to/tide" >&2
  exit 2
fi
TIDE=$1
case $TIDE in /*) ;; *) TIDE=$PWD/$TIDE ;; esac

if [ "${TIDE_SANITIZED:-0}" = 1 ]; then
  echo "skipped: thread-limit checks (AddressSanitizer reserves terabytes of address space, so an address-space limit stops it from starting)"
  echo "0 passed, 0 failed"
  exit 0
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
passed=0
failed=0

# The work: a sum and a matrix product big enough to run in parallel (10^6 elements, above
# the engine's grain and OpenBLAS's threading threshold), a product small enough to need no
# engine thread but threaded by OpenBLAS, then the same after set_num_threads(4).
cat >"$TMP/work.lua" <<'EOF'
local function run()
  local x = torch.arange(1000000, {dtype = "float64"})
  local m = torch.ones(1000, 1000, {dtype = "float64"})
  local p = m:mm(m)
  local s = torch.ones(200, 200, {dtype = "float64"})
  local q = s:mm(s)
  io.write(string.format("sum %.0f mm %.0f %.0f %.0f small %.0f %.0f\n", x:sum():item(), p:min():item(),
                         p:max():item(), p:sum():item(), q:min():item(), q:max():item()))
end
run()
torch.set_num_threads(4)
io.write("threads ", torch.get_num_threads(), "\n")
run()
EOF
values="sum 499999500000 mm 1000 1000 1000000000 small 200 200"

# check NAME EXPECTED-THREADS [env VAR=...] : runs work.lua under the limit (when LIMIT=1) with a
# 120 s watchdog (a hang is a failure); stdout must be the expected values.
check() {
  local name=$1 threads=$2
  shift 2
  local expected
  expected=$(printf '%s\nthreads %s\n%s' "$values" "$threads" "$values")
  (
    if [ "$LIMIT" = 1 ]; then
      ulimit -s 4000000 && ulimit -v 2000000 || exit 99
    fi
    exec "$@" "$TIDE" "$TMP/work.lua"
  ) >"$TMP/out" 2>"$TMP/err" &
  local pid=$!
  (sleep 120 && kill -9 "$pid") 2>/dev/null &
  local watchdog=$!
  wait "$pid"
  local rc=$?
  kill "$watchdog" 2>/dev/null
  wait "$watchdog" 2>/dev/null
  if [ "$rc" = 99 ]; then
    echo "skipped: $name (cannot set the stack and address-space limits here)"
  elif [ "$rc" = 0 ] && [ "$(cat "$TMP/out")" = "$expected" ]; then
    passed=$((passed + 1))
    echo "ok - $name"
  else
    failed=$((failed + 1))
    echo "FAIL - $name (exit $rc)"
    echo "  expected: $expected"
    echo "  stdout: $(head -c 2000 "$TMP/out")"
    echo "  stderr: $(head -c 2000 "$TMP/err")"
  fi
}

LIMIT=0
check "no limit: 4 threads after set_num_threads(4)" 4 env
LIMIT=1
check "no thread can start: the calling thread alone, same results" 1 env
check "same, OpenBLAS started with no threads (it would add them in set_num_threads)" 1 \
  env OPENBLAS_NUM_THREADS=1
# A SIGINT that the process ignores does not stop OpenBLAS from carrying on after it failed
# to start a thread (it would later wait for that thread).
check "same, SIGINT ignored at start" 1 bash -c 'trap "" INT; exec "$@"' --

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

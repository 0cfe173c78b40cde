#!/usr/bin/env bash
# The long fuzzing run (docs/fuzzing.md): on each build given (default: build and build-asan),
# the Lua API fuzzer for M minutes, then the file-format fuzzer for M minutes, at low
# priority, from the seed given or one taken from the clock (printed, so a run can be
# repeated). Each distinct failure is printed with its reproducer and written under
# fuzz-findings/<build>/ (API calls as Lua files, file inputs as crash-* files).
#   bash tests/fuzz/long_run.sh [--minutes M] [--seed S] [BUILD...]
# Ends with "N passed, M failed" over every call and input of the run.
set -uo pipefail
cd "$(dirname "$0")/../.."
minutes=30
seed=$(date +%s)
builds=()
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    *) builds+=("$1"); shift ;;
  esac
done
[ ${#builds[@]} -gt 0 ] || builds=(build build-asan)
echo "long fuzzing run: seed $seed, $minutes minutes per fuzzer on ${builds[*]}"
pass=0
fail=0
count() {  # adds the "N passed, M failed" line of a log to the totals
  local line
  line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
  if [ -z "$line" ]; then fail=$((fail + 1)); return; fi
  pass=$((pass + $(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')))
  fail=$((fail + $(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')))
}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for b in "${builds[@]}"; do
  out=fuzz-findings/$(basename "$b")
  mkdir -p "$out"
  # (grep reads all of ldd's output: with pipefail, grep -q ending first would fail the pipe)
  if ldd "$b/tests/tide_fuzz_host" | grep libasan >/dev/null; then
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
    export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
    leak=(--leak-check-every 500)
  else
    leak=()
  fi
  echo "== $b: API fuzzer"
  nice -n 10 python3 tests/fuzz/run_api_fuzz.py "$b" --seed "$seed" --minutes "$minutes" --findings "$out" \
    "${leak[@]}" 2>&1 | tee "$log"
  count "$log"
  echo "== $b: file fuzzer"
  nice -n 10 "$b/tests/tide_file_fuzz" all --seed "$seed" --seconds $((minutes * 60)) --crash-dir "$out" \
    tests/fuzz/corpus tests/data 2>&1 | tee "$log"
  count "$log"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
